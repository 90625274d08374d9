"""An expert's position in a debate: lean by design, because small models fill every field they are given.

Round 1 asks only for what an expert can give independently
(:class:`Opening`: reasoning, answer, one to three arguments, confidence).
Later rounds (:class:`Rebuttal`) must answer one claim of a *named* other
expert, copied from the list the expert was shown (the team narrows
``claim`` to those claims, so on the embedded model the grammar makes a
made-up quote impossible), then say which argument decided the answer.
Whether the answer changed is not asked: the team compares the answers.

Both are stored as a :class:`Position`, the one record every round keeps.
Caps are sized so a whole reply stays far below the default ``max_tokens``
(1024): the grammar's caps, not the token limit, end each field, and
over-long text is cut back to a sentence end (see ``_fit``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, create_model

from moot._renamed import former_function
from moot.roles._arguments import OneLineModel
from moot.roles._prompts import LISTED_FIELDS

__all__ = [
    "NUMBER",
    "Opening",
    "Position",
    "Rebuttal",
    "claims_of",
    "with_choices",
    "with_options",
    "with_pattern",
    "without_answer",
]

Argument = Annotated[str, StringConstraints(min_length=3, max_length=200)]
STATEMENT = r"^\s*\S+\s+\S[\s\S]*$"
StatedArgument = Annotated[
    str, StringConstraints(min_length=3, max_length=200), Field(json_schema_extra={"pattern": STATEMENT})
]
"""An argument as a model must state it: two words at least, so a field name or a bare number ("confidence",
"0.8") cannot pass for one (a small model otherwise fills the list with them). The grammar asks for it; the
reply's check drops what still slips through (a text cut back to one word), rather than rejecting the reply.
The pattern avoids nested repetition (a word, then repeated groups of space and word): llguidance must prove
that the pattern and the length bounds can both hold, and it gives up on that ambiguous form, which silently
cost the list its bounds (arguments ran on to ``max_tokens``)."""


def _statements(arguments: list[str]) -> list[str]:
    """The arguments that are statements, each once (a small model repeats itself); at least one must remain."""
    seen: set[str] = set()
    kept = []
    for argument in arguments:
        key = " ".join(argument.lower().split())
        if re.fullmatch(STATEMENT, argument) and key not in seen:
            seen.add(key)
            kept.append(argument)
    if not kept:
        raise ValueError("key arguments must be statements of two words or more, e.g. 'billing shares 6 tables'")
    return kept


StatedArguments = Annotated[list[StatedArgument], Field(min_length=1, max_length=3), AfterValidator(_statements)]
CLAIM_SEPARATOR = ": "
"""A claim is written ``expert: argument``."""


class Position(OneLineModel):
    """Where one expert stands in one round: an opening, or a rebuttal with the claim it answered.

    It is also what an expert answers outside a debate (in a user's group chat), so every string is
    bounded as in :class:`Rebuttal`: an unbounded field in the grammar lets a small model ramble in it
    until ``max_tokens`` cuts the JSON.
    """

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(default="", max_length=600)
    claim: str | None = Field(default=None, max_length=260)
    """Later rounds: the other expert's claim answered, as ``expert: argument``."""
    response: str | None = Field(default=None, max_length=300)
    """Later rounds: why that claim holds or fails."""
    answer: str = Field(min_length=1, max_length=300)
    because: str | None = Field(default=None, max_length=200)
    """Later rounds: the argument that changed the answer, or why the expert keeps it."""
    key_arguments: list[Argument] = Field(min_length=1, max_length=3)
    confidence: float = Field(ge=0.0, le=1.0)
    proposed: str | None = Field(default=None, max_length=300)
    """Later rounds: an answer the expert gave with no argument for it (neither derived in its own reasoning nor
    held by the expert whose claim it answered). Recorded, not adopted: ``answer`` keeps the previous one."""

    @property
    def responds_to(self) -> str | None:
        """The expert whose claim this position answers."""
        if not self.claim or CLAIM_SEPARATOR not in self.claim:
            return None
        return self.claim.split(CLAIM_SEPARATOR, 1)[0]


class Opening(OneLineModel):
    """Round 1: an independent position."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(
        max_length=400, description="The analysis from this expert's angle, in at most three sentences."
    )
    answer: str = Field(min_length=1, max_length=300, description="The stance or answer, as short as possible.")
    key_arguments: StatedArguments
    confidence: float = Field(ge=0.0, le=1.0)


class Rebuttal(OneLineModel):
    """Round 2 and later: answer one named claim of another expert, work the task again, then answer.

    The reasoning comes before the answer, as in every schema a model decides in: a rebuttal that asked for
    the answer first had the 0.5B model copy numbers from the question into it.
    """

    model_config = ConfigDict(extra="forbid")

    claim: str = Field(min_length=3, max_length=260, description="One claim of another expert, as 'expert: argument'.")
    response: str = Field(min_length=3, max_length=200, description="Why that claim holds or fails.")
    reasoning: str = Field(
        min_length=3,
        max_length=500,
        description="The task worked again from the start, step by step (for a number: the computation).",
    )
    answer: str = Field(
        min_length=1,
        max_length=300,
        description="Your answer after this round, as your reasoning found it, as short as possible.",
    )
    because: str = Field(
        min_length=3,
        max_length=150,
        description="If the answer changed: the error in your previous answer, or the argument that convinced you; "
        "else why you keep it.",
    )
    key_arguments: StatedArguments
    confidence: float = Field(ge=0.0, le=1.0)


@cache
def with_choices(base: type[BaseModel], field: str, choices: tuple[str, ...], listed: bool = False) -> type[BaseModel]:
    """``base`` with ``field`` restricted to ``choices`` (a closed answer set, or the claims one may answer).

    On the embedded model the schema becomes a grammar, so the answer is
    forced to be one of the choices instead of a paraphrase that would never
    compare equal (and a claim is forced to be one that was made).
    ``listed``: the request lists the choices, and they differ per agent (the
    claims an expert may answer); the schema hint then points to the request
    instead of repeating them, so it reads the same for every agent.
    """
    if not choices:
        return base
    choice = Literal.__getitem__(choices)  # type: ignore[attr-defined]
    model: type[BaseModel] = create_model(base.__name__, __base__=base, **{field: (choice, ...)})  # type: ignore[call-overload]
    if listed:
        setattr(model, LISTED_FIELDS, frozenset({field, *getattr(base, LISTED_FIELDS, ())}))
    return model


with_options = former_function("with_options", with_choices)


NUMBER = r"^-?[0-9]{1,15}(\.[0-9]{1,6})?$"
"""A plain decimal number, bounded so a grammar cannot run on: what numeric suites score, with no units,
words, copied claims or unevaluated expressions."""


@cache
def with_pattern(base: type[BaseModel], field: str, pattern: str | None) -> type[BaseModel]:
    """``base`` with ``field`` restricted to strings matching ``pattern`` (a grammar on the embedded model,
    a validation error fed back elsewhere); ``base`` itself when there is no pattern."""
    if pattern is None:
        return base
    described = Field(description=base.model_fields[field].description)
    shaped = Annotated[str, StringConstraints(pattern=pattern), described]
    model: type[BaseModel] = create_model(base.__name__, __base__=base, **{field: (shaped, ...)})  # type: ignore[call-overload]
    return model


def claims_of(positions: Sequence[tuple[str, Position]], own: str) -> tuple[str, ...]:
    """The claims ``own`` may answer: every argument of every other expert, as ``expert: argument``."""
    return tuple(
        dict.fromkeys(
            f"{name}{CLAIM_SEPARATOR}{argument}" for name, p in positions if name != own for argument in p.key_arguments
        )
    )


HIDDEN = "?"
"""What stands for an expert's answer in its own arguments when peers' answers are hidden."""


def without_answer(position: Position) -> Position:
    """``position`` as a peer sees it when answers are hidden: its arguments with its own answer masked
    wherever it stands as a whole word, so the reader has the reasoning and must reach a conclusion itself.

    Why: a small model asked to check a claim restates the claimed answer, so showing peers' answers turns
    a later round into copying them; hiding the conclusion leaves the evidence (the steps) to work from.
    """
    answer = position.answer.strip()
    if not answer:
        return position
    whole = re.compile(rf"(?<![\w.]){re.escape(answer)}(?![\w]|\.\d)", re.IGNORECASE)
    return position.model_copy(
        update={"key_arguments": [whole.sub(HIDDEN, argument) for argument in position.key_arguments]}
    )
