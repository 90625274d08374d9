"""What a code-debate expert decides once it has seen every candidate's test results.

Reasoning comes first so the decision follows from the evidence (see
Critique). The expert names a candidate by its id; the team narrows
``candidate`` to the ids that exist, so on the embedded model the grammar
makes an unknown id impossible.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CandidateChoice"]


class CandidateChoice(BaseModel):
    """Keep one's own candidate, adopt another's, or fix one (the fix itself is written in the next reply)."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=400, description="The test results that decide it, in two or three sentences.")
    action: Literal["keep", "adopt", "fix"]
    candidate: str = Field(min_length=1, max_length=16, description="The id of the candidate kept, adopted or fixed.")
