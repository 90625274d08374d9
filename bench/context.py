"""Context growth: prompt tokens per round of a 3-expert debate, moot's bounded context vs a naive debate.

The naive debate is the full-transcript debate of Du et al. (2023): every
expert sees the task and every position of every expert from every earlier
round. Both use the same experts, the same deterministic model and the same
token count (words), so only what each expert is shown differs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from autogen_agentchat.messages import TextMessage

from moot import ModelSpec, Position, RoleAgent, role
from moot.arbiters import MajorityVote
from moot.conditions import MaxRounds
from moot.roles._position import with_options
from moot.teams import Debate
from moot.testing import DeterministicModel, count_words
from moot.tracing import Tracer

EXPERTS = ("architect", "ops", "business")
OPTIONS = ("split", "keep", "defer")
TASK = "Should we split the billing module out of the monolith? Answer split, keep or defer."
SPEC = ModelSpec(provider="scripted", model="context")


async def moot_per_round(rounds: int) -> list[int]:
    """Prompt tokens (all experts) in each round of a moot Debate that runs ``rounds`` rounds."""
    team = Debate([RoleAgent(role(n), SPEC) for n in EXPERTS], MajorityVote(), stop=MaxRounds(rounds), options=OPTIONS)
    team.record, team.tracer = False, Tracer([])
    result = await team.run(task=TASK)
    return [sum(u.prompt_tokens for u in usage.values()) for usage in result.usage_per_round]


async def naive_per_round(rounds: int) -> list[int]:
    """The same experts and model, but each prompt carries the whole transcript so far."""
    experts = [RoleAgent(role(n), SPEC) for n in EXPERTS]
    schema = with_options(Position, "answer", OPTIONS)
    transcript: list[str] = []
    per_round = []
    for number in range(1, rounds + 1):
        tokens, said = 0, []
        for expert in experts:
            history = "\n\n".join(transcript) or "(first round: answer independently)"
            request = TextMessage(content=f"Task:\n{TASK}\n\nDebate so far:\n{history}", source="user")
            prompt = expert.prompt([request], schema)
            result = await expert.model_client.create(prompt, json_output=schema)
            tokens += result.usage.prompt_tokens
            said.append(f"{expert.name} (round {number}): {result.content}")
        transcript.extend(said)
        per_round.append(tokens)
    return per_round


async def measure(max_rounds: int = 6) -> dict[str, Any]:
    DeterministicModel("context", words=100).register()  # ~ the embedded model's verbosity
    moot = await moot_per_round(max_rounds)
    naive = await naive_per_round(max_rounds)
    totals = {r: (sum(moot[:r]), sum(naive[:r])) for r in range(1, max_rounds + 1)}
    return {
        "unit": "prompt tokens (words, all three experts) per round",
        "moot_per_round": moot,
        "naive_per_round": naive,
        "cumulative": {r: {"moot": m, "naive": n, "ratio": m / n} for r, (m, n) in totals.items()},
        "moot_round_growth": (moot[-1] - moot[1]) / moot[1],
        "target_at_5_rounds": "moot total <= 1/3 of naive total",
        "met": totals[5][0] <= totals[5][1] / 3,
        "token_counter": count_words.__doc__,
    }


if __name__ == "__main__":
    print(asyncio.run(measure()))
