"""What a suite is made of: items, each carrying its own scorer, and the score it gives an answer.

The scorer lives on the item, not the suite, so one user file may mix
exact-match, numeric and judged items, and a custom suite needs no subclass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from moot._renamed import former_keywords
from moot.harness.suites._choices import listed_choices
from moot.roles import NUMBER

if TYPE_CHECKING:
    from moot.roles import Role, RoleAgent
    from moot.sandbox import SandboxRunner

__all__ = [
    "CLOSED_KINDS",
    "AnswerFormat",
    "AnswerKind",
    "CodeTask",
    "Item",
    "Score",
    "ScoreContext",
    "Scorer",
    "Suite",
]

AnswerFormat = Literal["code", "short"]
"""``code``: the answer is a program (fenced block); ``short``: a short final answer (number, name, phrase)."""

AnswerKind = Literal["code", "multiple_choice", "choices", "number", "text"]
"""What every item of a suite asks for, finer than :data:`AnswerFormat`: ``multiple_choice`` (the question
lists its choices under the answer set's labels, ``A) … B) …``), ``choices`` any other closed answer set (Yes/No),
``number`` a plain number (items held to ``moot.roles.NUMBER``), ``text`` any other short answer. An arm's defaults
are chosen per kind, on tuning slices of that kind: what wins on arithmetic can lose on yes/no, and a model's lean
on one label is a different problem from its lean on one word."""

CLOSED_KINDS: frozenset[AnswerKind] = frozenset({"multiple_choice", "choices"})
"""The kinds whose answers come from a closed set: the ones a choice order applies to."""


@dataclass(frozen=True)
class Score:
    """How good one answer is: ``value`` in [0, 1] (1 = correct), and why."""

    value: float
    detail: str = ""

    def __post_init__(self) -> None:
        if not 0.0 <= self.value <= 1.0:
            raise ValueError(f"a score must be in [0, 1], got {self.value}")


class ScoreContext(Protocol):
    """What a scorer may use: the sandbox, and agents on the comparison's models (for LLM judges)."""

    sandbox: SandboxRunner

    def agent(self, role: Role, *, model_role: str, name: str | None = None) -> RoleAgent: ...


class Scorer(Protocol):
    """Scores one answer to one item. ``cheap``: no model call, so it may also score rejected candidates."""

    cheap: bool

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score: ...


@dataclass(frozen=True)
class CodeTask:
    """A programming item: the stub to complete and the tests visible to arms (never the scoring tests).

    ``visible_tests`` feed a test-grounded critic (``reflection-tests``);
    ``probe_calls`` are example calls whose outputs self-consistency compares
    across samples (agreement on behaviour, no expected values used).
    """

    entry_point: str
    stub: str
    visible_tests: tuple[str, ...] = ()
    probe_calls: tuple[str, ...] = ()


@former_keywords(options="choices")
@dataclass(frozen=True)
class Item:
    """One task: the text the arms see, how to score an answer, and (for code) the CodeTask."""

    id: str
    task: str
    scorer: Scorer
    reference: str | None = None
    """The expected answer, shown in reports; scoring never reads it from here."""
    code: CodeTask | None = None
    choices: tuple[str, ...] = ()
    """A closed answer set (``Yes, No`` or ``A, B, C, D``): every arm must answer with one of them."""
    answer_pattern: str | None = None
    """A regular expression every arm's short answer must match (``moot.roles.NUMBER`` for numeric suites),
    so no arm loses an item to units, words or an unevaluated expression that scoring would reject anyway."""


@dataclass(frozen=True)
class Suite:
    """A named, ordered list of items.

    ``key`` names the item *source* without any slice (``humaneval``), so rows
    computed for ``humaneval[:2]`` are reused by ``humaneval[:20]``.
    """

    key: str
    label: str
    items: Sequence[Item]
    answer_format: AnswerFormat = "short"
    description: str = ""

    @property
    def answer_kind(self) -> AnswerKind:
        """The kind every item shares; a suite mixing kinds is the wider one (closed sets some of whose questions list
        their choices: ``choices``; some items with choices, some without: ``text``)."""
        if self.answer_format == "code":
            return "code"
        if self.items and all(i.choices for i in self.items):
            listed = all(listed_choices(i.task, i.choices) for i in self.items)
            return "multiple_choice" if listed else "choices"
        if self.items and all(i.answer_pattern == NUMBER for i in self.items):
            return "number"
        return "text"

    @property
    def has_visible_tests(self) -> bool:
        return bool(self.items) and all(i.code is not None and i.code.visible_tests for i in self.items)
