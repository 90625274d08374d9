"""The critic's structured answer.

Field order matters: with a grammar-constrained small model, a schema that
asks for the verdict first makes the critic accept almost everything; asking
for the reasoning first lets the verdict follow from it. Lengths are capped so
a constrained decoder cannot ramble until the token cap.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from moot.roles._arguments import OneLineModel

__all__ = ["Critique"]

Point = Annotated[str, StringConstraints(min_length=3, max_length=300)]


class Critique(OneLineModel):
    """A critic's review of one draft."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=800, description="Check the draft against the task, step by step.")
    score: int = Field(ge=0, le=100, description="0-100; 100 only with explicit justification in reasoning.")
    strengths: list[Point] = Field(max_length=5, description="What the draft does right.")
    issues: list[Point] = Field(
        max_length=6, description="Specific, actionable problems; at least two unless accepting."
    )
    verdict: Literal["accept", "revise"]

    @model_validator(mode="after")
    def _revise_needs_an_issue(self) -> Critique:
        """A 'revise' verdict with nothing to fix gives the generator no signal to act on."""
        if self.verdict == "revise" and not self.issues:
            raise ValueError("verdict 'revise' needs at least one specific issue in 'issues'")
        return self
