"""Scorers: tiny objects with one ``score(item, answer, ctx)``, returning a Score in [0, 1].

Rule-based and tool-based scorers come first; the LLM judge (the ``judge``
role) is for answers no rule can check, returns a structured verdict (never
free text to grep), and should run on a different model than the arms
(``--model judge=SPEC``) to avoid self-preference.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.arbiters import normalise_answer
from moot.errors import ConfigError, ToolFaultError
from moot.harness.suites._items import CodeTask, Item, Score, ScoreContext
from moot.roles import Role, register_role
from moot.sandbox import SandboxLimits, SandboxStatus, assemble_program, label_for, run_in_thread, task_helpers

__all__ = ["ChoiceMatch", "CodeTests", "ExactMatch", "Judgement", "LLMJudge", "NumericMatch", "RegexMatch"]

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class ExactMatch:
    """Equal after normalisation: case, punctuation, spacing and number spelling ("42.0" == "42") don't count."""

    expected: str
    cheap: bool = True

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        ok = normalise_answer(answer) == normalise_answer(self.expected)
        return Score(1.0 if ok else 0.0, "" if ok else f"expected {self.expected!r}")


@dataclass(frozen=True)
class ChoiceMatch:
    """For a closed answer set: the choice the answer names, compared with the expected choice.

    The answer names a choice when it is that choice (after normalisation),
    or mentions exactly one choice as a whole word ("No, because ...").
    Prose that names none, or several, scores 0.
    """

    expected: str
    choices: tuple[str, ...]
    cheap: bool = True

    def named(self, answer: str) -> str | None:
        said = normalise_answer(answer)
        normal = {normalise_answer(o): o for o in self.choices}
        if said in normal:
            return normal[said]
        mentioned = [o for n, o in normal.items() if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", said)]
        return mentioned[0] if len(mentioned) == 1 else None

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        named = self.named(answer)
        if named is None:
            return Score(0.0, f"names none of the choices {', '.join(self.choices)} (or several)")
        ok = normalise_answer(named) == normalise_answer(self.expected)
        return Score(1.0 if ok else 0.0, "" if ok else f"answered {named!r}, expected {self.expected!r}")


@dataclass(frozen=True)
class RegexMatch:
    """The pattern is found in the answer (``re.search``, case-insensitive); anchor it for a full match."""

    pattern: str
    cheap: bool = True
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "_compiled", re.compile(self.pattern, re.IGNORECASE))
        except re.error as exc:
            raise ConfigError(f"bad regex {self.pattern!r}: {exc}") from None

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        ok = self._compiled.search(answer.strip()) is not None
        return Score(1.0 if ok else 0.0, "" if ok else f"no match for /{self.pattern}/")


def last_number(text: str) -> float | None:
    """The last number written in ``text`` ("about 1,250.5 apples" -> 1250.5), or None."""
    found = [m.group(0) for m in _NUMBER.finditer(text) if any(c.isdigit() for c in m.group(0))]
    if not found:
        return None
    try:
        return float(found[-1].replace(",", ""))
    except ValueError:
        return None


@dataclass(frozen=True)
class NumericMatch:
    """The answer's last number is within ``abs_tol`` + ``rel_tol`` x |expected| of the expected value."""

    expected: float
    abs_tol: float = 1e-6
    rel_tol: float = 0.0
    cheap: bool = True

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        value = last_number(answer)
        if value is None:
            return Score(0.0, "no number in the answer")
        ok = math.isclose(value, self.expected, rel_tol=self.rel_tol, abs_tol=self.abs_tol)
        return Score(1.0 if ok else 0.0, "" if ok else f"got {value:g}, expected {self.expected:g}")


class Judgement(BaseModel):
    """The judge's structured verdict; reasoning first so the verdict follows from it."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=800)
    verdict: Literal["correct", "incorrect"]


JUDGE = register_role(
    Role(
        "judge",
        "Grades an answer against a reference and a rubric.",
        "You grade one answer to a task. Judge whether it is correct by its meaning, not by its wording, "
        "length or confidence. Use the reference answer and the rubric when given. In reasoning, cite the "
        "part of the answer that decides it; then give the verdict.",
        Judgement,
    )
)


@dataclass(frozen=True)
class LLMJudge:
    """A model grades the answer (verdict correct -> 1.0). Costs model calls; cached like every call."""

    reference: str | None = None
    rubric: str | None = None
    cheap: bool = False

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        parts = [f"Task:\n{item.task}", f"Answer to grade:\n{answer or '(no answer)'}"]
        if self.reference:
            parts.append(f"Reference answer:\n{self.reference}")
        if self.rubric:
            parts.append(f"Rubric:\n{self.rubric}")
        agent = ctx.agent(JUDGE, model_role="judge")
        result = await agent.run(task="\n\n".join(parts))
        judgement = getattr(result.messages[-1], "content", None)
        if not isinstance(judgement, Judgement):
            raise TypeError(f"the judge must answer with a Judgement, got {type(judgement).__name__}")
        return Score(1.0 if judgement.verdict == "correct" else 0.0, judgement.reasoning)


HIDDEN_TEST_LIMITS = SandboxLimits(wall_seconds=30, test_seconds=15, cpu_seconds=20)


@dataclass(frozen=True)
class CodeTests:
    """Run the answer's program against the item's tests in the sandbox: 1.0 only when all of them pass.

    Each test runs after the item's own setup (the stub's imports and helpers, :func:`task_helpers`), so the
    answer contributes the entry point and what it needs, and never the helpers a test checks it with.
    """

    tests: Sequence[str]
    limits: SandboxLimits = HIDDEN_TEST_LIMITS
    tool_retries: int = 2
    cheap: bool = True

    def sandbox_tests(self, code: CodeTask) -> list[str]:
        """The tests as the sandbox runs them: each after the task's own setup."""
        setup = task_helpers(code.stub, code.entry_point)
        return [f"{setup}\n{test}" if setup else test for test in self.tests]

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        if item.code is None:
            raise ConfigError(f"item {item.id} is scored by tests but has no code task (entry point, stub)")
        program = assemble_program(item.code.stub, answer, item.code.entry_point)
        tests = self.sandbox_tests(item.code)
        error: Any = None
        for _ in range(self.tool_retries + 1):
            result = await run_in_thread(ctx.sandbox, program, tests, self.limits, [item.code.entry_point])
            if result.status is not SandboxStatus.TOOL_FAULT:
                passed = result.status is SandboxStatus.PASSED
                shown = dict(zip(tests, self.tests, strict=False))  # each test as written, without the setup
                failed = "; ".join(f"{label_for(shown.get(t.test, t.test))}: {t.message}" for t in result.failures)
                detail = "" if passed else failed[:500]
                if not passed and result.load is not None and result.load.message:
                    detail = detail or f"does not load: {result.load.message}"[:500]
                return Score(1.0 if passed else 0.0, detail)
            error = result.tool_error
        raise ToolFaultError("scoring sandbox", self.tool_retries + 1, str(error))
