"""The arbiter's structured ruling, one of the answer schemas of roles (beside Critique, Position, Plan).

A role file may answer with a Verdict (an arbiter role) and the arbiters rule
with one; it lives with the roles because ``moot.arbiters`` already builds on
``moot.roles``, so both reach it without a cycle. ``moot.arbiters`` re-exports it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

__all__ = ["ExpertAssessment", "Verdict"]

Point = Annotated[str, StringConstraints(min_length=3, max_length=400)]


class ExpertAssessment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expert: str = Field(min_length=1, max_length=60)
    assessment: str = Field(min_length=3, max_length=300)


class Verdict(BaseModel):
    """A ruling that cites the experts; rationale first so the decision follows from it."""

    model_config = ConfigDict(extra="forbid")

    rationale: str = Field(min_length=3, max_length=800)
    assessments: list[ExpertAssessment] = Field(max_length=8)
    decision: str = Field(min_length=1, max_length=300)
    dissent: list[Point] = Field(default_factory=list, max_length=3)
    confidence: float = Field(ge=0.0, le=1.0)
