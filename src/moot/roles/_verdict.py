"""The arbiter's structured ruling, one of the answer schemas of roles (beside Critique, Position, Plan).

A role file may answer with a Verdict (an arbiter role) and the arbiters rule
with one; it lives with the roles because ``moot.arbiters`` already builds on
``moot.roles``, so both reach it without a cycle. ``moot.arbiters`` re-exports it.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, create_model

from moot.roles._arguments import OneLineModel

__all__ = ["ExpertAssessment", "Verdict", "citing"]

LEAST_RATIONALE_WORDS = 4
"""A debate's rationale has at least this many words: "split" or "ops wins" gives no reason."""

Point = Annotated[str, StringConstraints(min_length=3, max_length=400)]


class ExpertAssessment(OneLineModel):
    model_config = ConfigDict(extra="forbid")

    expert: str = Field(min_length=1, max_length=60)
    assessment: str = Field(min_length=3, max_length=300)


class Verdict(OneLineModel):
    """A ruling that cites the experts; rationale first so the decision follows from it, then whose argument
    decided it (``decided_by``: a debate's arbiter must name one of its experts; a vote names none)."""

    model_config = ConfigDict(extra="forbid")

    rationale: str = Field(min_length=3, max_length=800)
    decided_by: str | None = Field(
        default=None, max_length=60, description="The expert whose argument decided the ruling, by name."
    )
    """None: a vote ruled, or the verdict was stored before the field."""
    assessments: list[ExpertAssessment] = Field(max_length=8)
    decision: str = Field(min_length=1, max_length=300)
    dissent: list[Point] = Field(default_factory=list, max_length=3)
    confidence: float = Field(ge=0.0, le=1.0)


LEAST_RATIONALE_CHARACTERS = 40
"""A debate's rationale is at least a sentence: the schema bounds it, so a constrained decoder cannot close the
string after one word ("split"), and a served model's reply below it is fed back as malformed."""


def _a_sentence(rationale: str) -> str:
    """The rationale if it is a reason, not a label: at least a few words."""
    if len(rationale.split()) < LEAST_RATIONALE_WORDS:
        raise ValueError(
            f"the rationale {rationale!r} is not a reason: say why the deciding expert's argument outweighs the "
            "others, in a sentence"
        )
    return rationale


@cache
def citing(base: type[BaseModel], experts: tuple[str, ...]) -> type[BaseModel]:
    """``base`` (a Verdict schema) as a debate's arbiter must fill it: ``decided_by`` one of ``experts`` (whose
    argument decided the ruling) and a ``rationale`` that is a sentence saying why.

    Why: an arbiter that answers "split" has ruled without a reason anyone can check, and a debate's verdict is
    worth its cost only when it says which argument won. Both rules are in the schema (a choice of names and a
    length, which constrained decoding and served models' schemas keep), so the reply is shaped to them rather
    than searched afterwards; a reply that still breaks them is fed back and asked again like any malformed one.
    The stored :class:`Verdict` stays lenient, so verdicts recorded before these rules still load.
    """
    if not experts:
        return base
    rationale = base.model_fields["rationale"]
    decided = base.model_fields["decided_by"]
    sentence = Annotated[
        str,
        StringConstraints(min_length=LEAST_RATIONALE_CHARACTERS, max_length=800),
        Field(description=rationale.description),
        AfterValidator(_a_sentence),
    ]
    named = Annotated[Literal[experts], Field(description=decided.description)]  # type: ignore[valid-type]
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        base.__name__, __base__=base, rationale=(sentence, ...), decided_by=(named, ...)
    )
    return model
