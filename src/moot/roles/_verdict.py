"""The arbiter's structured ruling, one of the answer schemas of roles (beside Critique, Position, Plan).

A role file may answer with a Verdict (an arbiter role) and the arbiters rule
with one; it lives with the roles because ``moot.arbiters`` already builds on
``moot.roles``, so both reach it without a cycle. ``moot.arbiters`` re-exports it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache, partial
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, create_model

from moot.roles._arguments import OneLineModel

__all__ = ["ExpertAssessment", "Verdict", "citing", "names_an_expert"]

LEAST_RATIONALE_WORDS = 4
"""A rationale must be a sentence at least this long: "split" or "ops wins" names no argument."""

Point = Annotated[str, StringConstraints(min_length=3, max_length=400)]


class ExpertAssessment(OneLineModel):
    model_config = ConfigDict(extra="forbid")

    expert: str = Field(min_length=1, max_length=60)
    assessment: str = Field(min_length=3, max_length=300)


class Verdict(OneLineModel):
    """A ruling that cites the experts; rationale first so the decision follows from it."""

    model_config = ConfigDict(extra="forbid")

    rationale: str = Field(min_length=3, max_length=800)
    assessments: list[ExpertAssessment] = Field(max_length=8)
    decision: str = Field(min_length=1, max_length=300)
    dissent: list[Point] = Field(default_factory=list, max_length=3)
    confidence: float = Field(ge=0.0, le=1.0)


def names_an_expert(text: str, experts: Sequence[str]) -> bool:
    """Whether ``text`` names one of ``experts`` as a word (``expert_2`` also as "expert 2"), in any case."""
    for name in experts:
        spellings = {name, name.replace("_", " ")}
        if any(re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text, re.IGNORECASE) for s in spellings if s.strip()):
            return True
    return False


def _cites(experts: tuple[str, ...], rationale: str) -> str:
    """The rationale if it says which argument decided the ruling: a sentence that names the expert who made it."""
    if len(rationale.split()) < LEAST_RATIONALE_WORDS:
        raise ValueError(
            f"the rationale {rationale!r} is not a reason: say which expert's argument decided the ruling and why, "
            f"e.g. '{experts[0]}: <its argument> outweighs <the other case> because ...'"
        )
    if not names_an_expert(rationale, experts):
        raise ValueError(
            f"the rationale names no expert: say whose argument decided the ruling, by name ({', '.join(experts)})"
        )
    return rationale


@cache
def citing(base: type[BaseModel], experts: tuple[str, ...]) -> type[BaseModel]:
    """``base`` (a Verdict schema) whose ``rationale`` must name the expert whose argument decided the ruling.

    Why: an arbiter that answers "split" has ruled without a reason anyone can check, and a debate's verdict
    is worth its cost only when it says which argument won. The check is a validator, not a schema change:
    the JSON schema and the request stay the same (so cached calls still match), and a reply that fails it
    is fed back and asked again like any malformed reply. The stored :class:`Verdict` stays lenient, so
    verdicts recorded before the check still load.
    """
    if not experts:
        return base
    field = base.model_fields["rationale"]
    checked = Annotated[
        str,
        StringConstraints(min_length=3, max_length=800),
        Field(description=field.description),
        AfterValidator(partial(_cites, experts)),
    ]
    model: type[BaseModel] = create_model(base.__name__, __base__=base, rationale=(checked, ...))  # type: ignore[call-overload]
    return model
