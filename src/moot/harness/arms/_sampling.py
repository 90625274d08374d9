"""The call-count baselines: ``single`` (one generator call), ``self-consistency`` (k samples + a vote) and
``best-of-k-tests`` (k code samples, the visible tests pick).

Self-consistency is the baseline debate must beat at equal compute: published
debate gains mostly vanish against a majority vote of as many samples. Each sample runs on its own
seed at a sampling temperature (0.7 unless the spec sets one), so samples
differ and each has its own cache entry. Samples are the arm's own (seeds
``SAMPLE_SEEDS`` on), unless ``samples=debate`` draws them as the debate's
experts draw their first answers (same seeds: on code, the same programs),
so that the two differ only in what follows. Code samples are chosen on the
evidence a code debate gets (see ``_vote``): self-consistency by behaviour
consensus, best-of-k-tests by visible tests first, exactly as the code
debate's program vote; short answers by normalised plurality.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from moot._renamed import former_keywords
from moot.errors import ConfigError
from moot.harness.arms._arm import Attempt, Reply, agent_reply, arm_settings, key_settings
from moot.harness.arms._context import RowContext
from moot.harness.arms._prompts import ShortAnswer, solver
from moot.harness.arms._vote import PickedBy, select_programs, vote_answers
from moot.harness.suites._items import Item, Suite
from moot.models import ModelSpec
from moot.roles import GENERATOR

__all__ = ["SAMPLE_SEEDS", "BestOfKTests", "SelfConsistency", "Single", "matched_k", "short_answer", "single_call"]

SAMPLE_SEEDS = 100
"""A sampling arm's own sample i runs on seed base + SAMPLE_SEEDS + i: never a debate expert's seed (base + i)."""


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
    except (ValueError, TypeError, RecursionError):  # a model's draft: nested past the parser's depth is prose too
        return draft.strip()


async def single_call(item: Item, ctx: RowContext, spec: ModelSpec | None = None) -> tuple[Reply, str]:
    """One solver (or, for code, generator) call on the task and its final answer: the whole ``single`` arm,
    and with ``spec`` one sample of the sampling arms. Every arm that asks it asks the same call (one cache
    entry)."""
    code = item.code is not None
    agent = ctx.agent(
        GENERATOR if code else solver(item.choices, item.answer_pattern), model_role="generator", spec=spec
    )
    reply = await agent_reply(agent, item.task)
    return reply, (reply.text if code else short_answer(reply))


class _NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Single:
    """One generator call: the cheapest arm, and the floor every other arm is measured from."""

    name = "single"
    baseline = True
    """The arm a report measures a variant chosen among several against (``arm_trait``)."""

    @former_keywords(options="params")
    def __init__(self, params: Mapping[str, str] | None = None) -> None:
        arm_settings(_NoParams, self.name, params or {})

    @property
    def settings(self) -> Mapping[str, Any]:
        return {}

    def check(self, suite: Suite) -> None:
        """Runs on any suite."""

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        reply, answer = await single_call(item, ctx)
        stop = "malformed output" if reply.failed else "one call"
        return Attempt(answer, stop_reason=stop, parse_failures=reply.parse_failures, partial=reply.failed)


class SamplingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k: int = Field(default=5, ge=1, le=64)
    """Samples per item (with ``--compute-matched``: the debate arm's mean calls per item)."""
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """Sampling temperature, used unless the generator's spec sets one."""
    samples: Literal["own", "debate"] = "own"
    """``own``: this arm's own samples; ``debate``: the samples a debate's experts draw as first answers."""


class SelfConsistency:
    """k independent samples and a vote (see module docstring)."""

    name = "self-consistency"
    picked_by: PickedBy = "vote"
    implied_params = {"samples": "debate"}
    """What rows whose settings leave ``samples`` out drew (:func:`canonical_spec` spells it)."""

    @former_keywords(options="params")
    def __init__(self, params: Mapping[str, str] | None = None, **override: Any) -> None:
        self.config = arm_settings(SamplingSettings, self.name, {**(params or {}), **override})

    @property
    def settings(self) -> Mapping[str, Any]:
        """The configuration (the rows' key). ``samples=debate`` is what every row drew before the parameter
        existed, so it is left out: those rows keep their key and are found as what they are."""
        return key_settings(self.config, samples="debate")

    def with_k(self, k: int) -> SelfConsistency:
        """This arm with ``k`` samples (``--k``, ``--compute-matched``), every other setting kept."""
        return type(self)(None, **{**self.config.model_dump(), "k": k})

    def sample_draws(self, base: int) -> list[tuple[int, float]]:
        """Each sample's (seed, temperature): two arms drawing the same pair with the single call's prompt draw the
        same reply (reports name arms that share samples)."""
        first = base if self.config.samples == "debate" else base + SAMPLE_SEEDS
        return [(seed, self.config.temperature) for seed in range(first, first + self.config.k)]

    def check(self, suite: Suite) -> None:
        """Runs on any suite: code is chosen on execution evidence, short answers by plurality."""

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        code = item.code is not None
        offset = 0 if self.config.samples == "debate" else SAMPLE_SEEDS
        specs = [ctx.sampled("generator", offset + i, self.config.temperature) for i in range(self.config.k)]
        results = await asyncio.gather(*(single_call(item, ctx, spec) for spec in specs))
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
            vote = await select_programs(item.code, answers, ctx.sandbox, self.picked_by)
        else:
            vote = vote_answers(answers)
        metrics.update(vote.metrics)
        return Attempt(
            answers[vote.winner],
            stop_reason=f"{self.config.k} samples, {vote.method}",
            parse_failures=parse_failures,
            partial=len(answers) < self.config.k,
            metrics=metrics,
            candidates=answers,
        )


class BestOfKTests(SelfConsistency):
    """k code samples; the most visible tests passed wins, then the larger behaviour group (CodeT, AlphaCode).

    What a code debate's round 1 amounts to without its later rounds, at any k: the honest baseline for a
    debate whose ruling is the program vote. Shares self-consistency's samples by default (same seeds), so
    the two differ only in how they pick (``picked_by``).
    """

    name = "best-of-k-tests"
    picked_by: PickedBy = "tests"

    def check(self, suite: Suite) -> None:
        if not suite.has_visible_tests:
            raise ConfigError(
                f"arm 'best-of-k-tests' needs a suite whose items have visible tests (humaneval, or a file whose "
                f"items have 'tests'); {suite.label!r} has none: use 'self-consistency' there instead"
            )


def matched_k(calls_per_item: Sequence[int]) -> int:
    """Self-consistency's k at equal compute: the debate arm's mean calls per item, rounded half up, at least 1."""
    if not calls_per_item:
        raise ValueError("no debate rows to match")
    return max(1, math.floor(sum(calls_per_item) / len(calls_per_item) + 0.5))
