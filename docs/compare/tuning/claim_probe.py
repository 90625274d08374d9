"""Does the embedded model check a claimed sum, or restate it?

Why this probe exists: a debate's later rounds can only beat its first-round vote
if an expert shown a peer's answer judges it better than chance ("Debate or Vote",
NeurIPS 2025). This asks the model to recompute claimed sums (half of them false)
and counts how often its own result and its verdict follow the claim instead of
the arithmetic; ``--bare`` asks for the same sums with no claimed value, the
control for how well the model adds when it is shown no answer. Run it alone
(one embedded-model process at a time):

    python docs/compare/tuning/claim_probe.py [--terms 2] [--claims 40] [--bare]
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections import Counter

from autogen_core.models import SystemMessage, UserMessage
from pydantic import BaseModel, Field

from moot.models import ModelSpec

SYSTEM = (
    "You check arithmetic claims. In computation, compute the left side yourself, one operation at a time. "
    "In result, the number you got. Then holds: whether the claimed number equals your result."
)

BARE = (
    "You compute arithmetic. In computation, compute the expression one operation at a time. In result, the "
    "number you got. Set holds to true."
)


class Check(BaseModel):
    computation: str = Field(max_length=300)
    result: str = Field(max_length=12)
    holds: bool


def claims(terms: int, count: int, seed: int) -> list[tuple[str, int, int]]:
    """``count`` sums of ``terms`` two-digit numbers as (expression, true value, claimed value); every other
    claim is off by 1, 10 or 20."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        first, rest = rng.randint(10, 99), [(rng.choice("+-"), rng.randint(10, 99)) for _ in range(terms - 1)]
        text = str(first) + "".join(f" {sign} {n}" for sign, n in rest)
        true = first + sum(n if sign == "+" else -n for sign, n in rest)
        out.append((text, true, true if i % 2 == 0 else true + rng.choice([-20, -10, -1, 1, 10, 20])))
    return out


async def probe(spec: str, terms: int, count: int, seed: int, bare: bool) -> None:
    client = ModelSpec.parse(spec).client("probe")
    tally: Counter[str] = Counter()
    for text, true, claimed in claims(terms, count, seed):
        asked = f"Compute: {text}" if bare else f"Claim: {text} = {claimed}"
        messages = [SystemMessage(content=BARE if bare else SYSTEM), UserMessage(content=asked, source="user")]
        check = Check.model_validate_json((await client.create(messages, json_output=Check)).content)
        if bare:
            tally["no claim shown: result right"] += check.result.strip() == str(true)
            continue
        kind = "true claims" if claimed == true else "false claims"
        tally[f"{kind}: result right"] += check.result.strip() == str(true)
        tally[f"{kind}: result restates the claim"] += check.result.strip() == str(claimed)
        tally[f"{kind}: judged to hold"] += check.holds
    shown = "no claimed value" if bare else f"{count - count // 2} true, {count // 2} false"
    print(f"{spec}, {count} sums of {terms} terms ({shown}):")
    for key in sorted(tally):
        print(f"  {key}: {tally[key]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local@0?seed=1")
    parser.add_argument("--terms", type=int, default=2)
    parser.add_argument("--claims", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--bare", action="store_true", help="ask for the sums with no claimed value (control)")
    args = parser.parse_args()
    asyncio.run(probe(args.model, args.terms, args.claims, args.seed, args.bare))


if __name__ == "__main__":
    main()
