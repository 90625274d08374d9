"""The call-count baselines: ``single`` (one generator call) and ``self-consistency`` (k samples + majority vote).

Self-consistency is the baseline debate must beat at equal compute: published
debate gains mostly vanish against a majority vote of as many samples. Each sample runs on its own
seed at a sampling temperature (0.7 unless the spec sets one), so samples
differ and each has its own cache entry. Code samples are voted on by
behaviour (see ``_vote``); short answers by normalised plurality.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from moot.harness.arms._arm import Attempt, Reply, arm_settings, ask, register_arm
from moot.harness.arms._prompts import ShortAnswer, solver
from moot.harness.arms._vote import vote_answers, vote_programs
from moot.harness.engine._context import RowContext
from moot.harness.suites._items import Item, Suite
from moot.models import ModelSpec
from moot.roles import GENERATOR

__all__ = ["SelfConsistency", "Single", "short_answer"]


def short_answer(reply: Reply) -> str:
    """The final answer of a solver's reply (a ShortAnswer, or its JSON as a reflection draft)."""
    if isinstance(reply.content, ShortAnswer):
        return reply.content.answer
    return answer_from_draft(reply.text)


def answer_from_draft(draft: str | None) -> str:
    if not draft:
        return ""
    try:
        return ShortAnswer.model_validate(json.loads(draft, strict=False)).answer
    except (ValueError, TypeError):
        return draft.strip()


async def _one(item: Item, ctx: RowContext, code: bool, spec: ModelSpec | None = None) -> tuple[Reply, str]:
    agent = ctx.agent(
        GENERATOR if code else solver(item.options, item.answer_pattern), model_role="generator", spec=spec
    )
    reply = await ask(agent, item.task)
    return reply, (reply.text if code else short_answer(reply))


class _NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Single:
    """One generator call: the cheapest arm, and the floor every other arm is measured from."""

    name = "single"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        arm_settings(_NoOptions, self.name, options or {})

    @property
    def settings(self) -> Mapping[str, Any]:
        return {}

    def check(self, suite: Suite) -> None:
        """Runs on any suite."""

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        reply, answer = await _one(item, ctx, item.code is not None)
        stop = "malformed output" if reply.failed else "one call"
        return Attempt(answer, stop_reason=stop, parse_failures=reply.parse_failures, partial=reply.failed)


class SelfConsistencySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k: int = Field(default=5, ge=1, le=64)
    """Samples per item (with ``--compute-matched``: the debate arm's mean calls per item)."""
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """Sampling temperature, used unless the generator's spec sets one."""


class SelfConsistency:
    """k independent samples, majority vote (see module docstring)."""

    name = "self-consistency"

    def __init__(self, options: Mapping[str, str] | None = None, **override: Any) -> None:
        self.config = arm_settings(SelfConsistencySettings, self.name, {**(options or {}), **override})

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.config.model_dump()

    def check(self, suite: Suite) -> None:
        """Runs on any suite: code is voted on by behaviour, short answers by plurality."""

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        code = item.code is not None
        specs = [ctx.sampled("generator", i, self.config.temperature) for i in range(self.config.k)]
        results = await asyncio.gather(*(_one(item, ctx, code, spec) for spec in specs))
        answers = [answer for reply, answer in results if not reply.failed]
        parse_failures = sum(reply.parse_failures for reply, _ in results)
        metrics: dict[str, Any] = {"k": self.config.k, "valid_samples": len(answers)}
        if not answers:
            return Attempt(
                "",
                stop_reason="malformed output in every sample",
                parse_failures=parse_failures,
                partial=True,
                metrics=metrics,
            )
        if code:
            assert item.code is not None
            vote = await vote_programs(item.code, answers, ctx.sandbox)
        else:
            vote = vote_answers(answers)
        metrics.update(vote.metrics)
        return Attempt(
            answers[vote.winner],
            stop_reason=f"{self.config.k} samples, {vote.method} vote",
            parse_failures=parse_failures,
            partial=len(answers) < self.config.k,
            metrics=metrics,
            candidates=answers,
        )


register_arm(Single.name, Single)
register_arm(SelfConsistency.name, SelfConsistency)
