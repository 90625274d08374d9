"""The ``reasoning-gym:<task>`` suites: seeded procedural generators, scored by the package's own scorers.

Items are stable across sizes (item i of seed s is the same whatever n is),
so the suite key leaves ``n`` out and a larger run reuses a smaller one's rows.
Extra options are passed to the generator's config (``?min_terms=3``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from moot._extras import require
from moot.errors import ConfigError
from moot.harness.suites._items import Item, Score, ScoreContext, Suite
from moot.harness.suites._selectors import SpecParts, int_param
from moot.roles import NUMBER

__all__ = ["GymScore", "gym_suite"]


@dataclass(frozen=True)
class GymScore:
    """reasoning-gym's ``score_answer`` for one entry (some tasks give partial credit, e.g. knights_knaves)."""

    dataset: Any
    entry: Any
    cheap: bool = True

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        value = float(self.dataset.score_answer(answer, self.entry) or 0.0)
        value = min(1.0, max(0.0, value))
        return Score(value, "" if value == 1.0 else f"expected {self.entry['answer']!r}")


def _import() -> Any:
    require("suites", "a reasoning-gym suite")
    import reasoning_gym

    return reasoning_gym


def _option(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


def _is_number(answer: object) -> bool:
    """Whether a generated answer is a plain number. A task whose every answer is one (basic_arithmetic,
    gsm_symbolic) is a numeric task: its answers are held to ``NUMBER``, the format its scorer compares."""
    return isinstance(answer, str) and re.fullmatch(NUMBER, answer.strip()) is not None


def gym_suite(task: str, parts: SpecParts, label: str) -> Suite:
    gym = _import()
    n = int_param(parts, "n", 50, what=f"suite {label!r}", minimum=1)
    seed = int_param(parts, "seed", 1, what=f"suite {label!r}")
    options = {k: _option(v) for k, v in sorted(parts.params.items())}
    known = sorted(gym.factory.DATASETS)
    if task not in known:
        raise ConfigError(
            f"unknown reasoning-gym task {task!r}; e.g. gsm_symbolic, basic_arithmetic, knights_knaves "
            f"({len(known)} tasks: {', '.join(known)})"
        )
    try:
        dataset = gym.create_dataset(task, size=n, seed=seed, **options)
    except (TypeError, ValueError, AssertionError) as exc:
        raise ConfigError(f"suite {label!r}: reasoning-gym rejected the options: {exc}") from None
    extra = "".join(f"&{k}={v}" for k, v in sorted(parts.params.items()))
    key = f"reasoning-gym:{task}?seed={seed}{extra}"
    pattern = NUMBER if all(_is_number(entry["answer"]) for entry in dataset) else None
    items = [
        Item(
            id=f"{task}/{seed}/{i}",
            task=entry["question"],
            scorer=GymScore(dataset, entry),
            reference=entry["answer"],
            answer_pattern=pattern,
        )
        for i, entry in enumerate(dataset)
    ]
    chosen = items[parts.slice] if parts.slice is not None else items
    if not chosen:
        raise ConfigError(f"suite {label!r} selects no items")
    return Suite(
        key=key,
        label=label,
        items=tuple(chosen),
        answer_format="short",
        description=f"reasoning-gym {task} (seed {seed}, {len(chosen)} items), scored by reasoning-gym",
    )
