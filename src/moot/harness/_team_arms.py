"""The arms built on moot's teams: ``reflection`` (LLM critic), ``reflection-tests`` (TestCritic), ``debate``.

* reflection: generator + LLM critic until the critic's score reaches the
  threshold, stops improving, or the rounds run out; the answer is the
  best-scoring draft (by the critic's own score: that is the arm).
* reflection-tests: the critic runs the draft against the item's *visible*
  tests (docstring examples), never the scoring tests; only on suites with tests.
* debate: experts (each on its own seed, at a sampling temperature) answer
  independently, rebut for up to ``rounds`` rounds or until they agree, and an
  arbiter rules. Short answers: a majority vote rules by default (no position
  or verbosity bias; ``arbiter=llm`` for an LLM). Code: a 300-character
  position cannot hold a program, so the experts debate the *approach*, an
  LLM arbiter rules, and the generator implements the ruling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.arbiters import MajorityVote
from moot.conditions import Consensus, MaxRounds, NoImprovement, ScoreThreshold
from moot.errors import ConfigError
from moot.harness._arm import Attempt, arm_settings, ask, register_arm
from moot.harness._context import MAX_EXPERTS, RowContext
from moot.harness._items import Item, Suite
from moot.harness._prompts import CODE_DEBATER, IMPLEMENT, SHORT_DEBATER, SOLVER, code_debate_task
from moot.harness._sampling import answer_from_draft
from moot.roles import ARBITER, CRITIC, GENERATOR, TestCritic
from moot.teams import Debate, DebateResult, Reflection, ReflectionResult
from moot.tools import SandboxLimits

__all__ = ["DebateArm", "ReflectionArm", "TestReflectionArm"]


class ReflectionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(default=3, ge=1, le=10)
    threshold: float = Field(default=85, ge=0, le=100)
    """Stop once the critic scores a draft at least this high."""


def _reflection_attempt(result: ReflectionResult, code: bool) -> Attempt:
    answer = result.answer or ""
    return Attempt(
        answer if code else answer_from_draft(answer),
        rounds=len(result.rounds),
        stop_reason=result.stop_reason or "",
        parse_failures=result.parse_failures,
        partial=result.partial,
        metrics={"scores": result.scores, "best_round": result.best.round if result.best else None},
    )


class ReflectionArm:
    """Generator + LLM critic (see module docstring)."""

    name = "reflection"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.config = arm_settings(ReflectionSettings, self.name, options or {})

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.config.model_dump()

    def check(self, suite: Suite) -> None:
        """Runs on any suite."""

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        code = item.code is not None
        generator = ctx.agent(GENERATOR if code else SOLVER, model_role="generator")
        critic = ctx.agent(CRITIC, model_role="critic")
        stop = ScoreThreshold(self.config.threshold) | NoImprovement(2) | MaxRounds(self.config.rounds)
        team = ctx.prepare(Reflection(generator, critic, stop=stop))
        result = await team.run(task=item.task)
        ctx.note_run(team)
        assert isinstance(result, ReflectionResult)
        return _reflection_attempt(result, code)


class TestReflectionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(default=3, ge=1, le=10)


class TestReflectionArm:
    """Generator + TestCritic on the visible tests; stops when they all pass."""

    __test__ = False
    name = "reflection-tests"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.config = arm_settings(TestReflectionSettings, self.name, options or {})

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.config.model_dump()

    def check(self, suite: Suite) -> None:
        if not suite.has_visible_tests:
            raise ConfigError(
                f"arm 'reflection-tests' needs a suite whose items have tests (humaneval, or a file whose items "
                f"have 'tests'); {suite.label!r} has none: use 'reflection' (LLM critic) there instead"
            )

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        assert item.code is not None
        generator = ctx.agent(GENERATOR, model_role="generator")
        critic = TestCritic(item.code.visible_tests, limits=SandboxLimits(wall_seconds=20), runner=ctx.sandbox)
        stop = ScoreThreshold(100) | NoImprovement(2) | MaxRounds(self.config.rounds)
        team = ctx.prepare(Reflection(generator, critic, stop=stop))
        result = await team.run(task=item.task)
        ctx.note_run(team)
        assert isinstance(result, ReflectionResult)
        attempt = _reflection_attempt(result, code=True)
        attempt.metrics["visible_tests"] = len(item.code.visible_tests)
        return attempt


class DebateSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    experts: int = Field(default=3, ge=2, le=MAX_EXPERTS)
    rounds: int = Field(default=2, ge=1, le=10)
    arbiter: Literal["auto", "vote", "llm"] = "auto"
    """auto: majority vote for short answers, an LLM arbiter for code."""
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """The experts' sampling temperature, used unless their spec sets one."""


class DebateArm:
    """Experts debate, an arbiter rules (see module docstring)."""

    name = "debate"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.config = arm_settings(DebateSettings, self.name, options or {})

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.config.model_dump()

    def check(self, suite: Suite) -> None:
        """Runs on any suite."""

    def _team(self, item: Item, ctx: RowContext) -> Debate:
        code = item.code is not None
        role = CODE_DEBATER if code else SHORT_DEBATER
        experts = [
            ctx.agent(
                role,
                model_role=f"expert_{i}",
                name=f"expert_{i}",
                spec=ctx.sampled(f"expert_{i}", i - 1, self.config.temperature),
            )
            for i in range(1, self.config.experts + 1)
        ]
        use_llm = self.config.arbiter == "llm" or (self.config.arbiter == "auto" and code)
        arbiter = ctx.agent(ARBITER, model_role="arbiter") if use_llm else MajorityVote()
        stop = Consensus() | MaxRounds(self.config.rounds)
        return ctx.prepare(Debate(experts, arbiter, stop=stop, seed=ctx.seed))

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        code = item.code is not None
        team = self._team(item, ctx)
        result = await team.run(task=code_debate_task(item.task) if code else item.task)
        ctx.note_run(team)
        assert isinstance(result, DebateResult)
        metrics: dict[str, Any] = result.metrics.model_dump() if result.metrics else {}
        metrics["verdict_by"] = result.verdict_by
        attempt = Attempt(
            result.answer or "",
            rounds=len(result.rounds),
            stop_reason=result.stop_reason or "",
            parse_failures=result.metrics.parse_failures if result.metrics else 0,
            partial=result.partial or result.verdict is None,
            metrics=metrics,
            candidates=[] if code else [p.answer for r in result.rounds for p in r.positions.values()],
        )
        if code:
            await self._implement(item, ctx, result, attempt)
        return attempt

    async def _implement(self, item: Item, ctx: RowContext, result: DebateResult, attempt: Attempt) -> None:
        """The generator writes the code the ruling describes (without a ruling: the task alone)."""
        verdict = result.verdict
        task = item.task
        if verdict is not None:
            dissent = "".join(f"Dissent: {d}\n" for d in verdict.dissent)
            task = IMPLEMENT.format(
                task=item.task, decision=verdict.decision, rationale=verdict.rationale, dissent=dissent
            )
        reply = await ask(ctx.agent(GENERATOR, model_role="generator"), task)
        attempt.answer = reply.text
        attempt.metrics["ruling"] = verdict.decision if verdict else None
        if reply.failed:
            attempt.partial, attempt.stop_reason = True, f"{attempt.stop_reason}; implementation failed"


register_arm(ReflectionArm.name, ReflectionArm)
register_arm(TestReflectionArm.name, TestReflectionArm)
register_arm(DebateArm.name, DebateArm)
