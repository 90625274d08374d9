"""An expert's structured position in a debate.

Reasoning comes first so the answer follows from it (see Critique). A
``Rebuttal`` is the position an expert takes in round 2 and later: the same
fields, but it must name at least one point it disagrees with.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

__all__ = ["Position", "Rebuttal", "with_options"]

Point = Annotated[str, StringConstraints(min_length=3, max_length=400)]


class Position(BaseModel):
    """Where one expert stands, and why."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=600)
    agreements: list[Point] = Field(default_factory=list, max_length=5)
    rebuttals: list[Point] = Field(default_factory=list, max_length=5)
    answer: str = Field(min_length=1, max_length=300, description="The stance or answer, as short as possible.")
    key_arguments: list[Point] = Field(min_length=1, max_length=3)
    confidence: float = Field(ge=0.0, le=1.0)
    would_change_mind: str = Field(max_length=300, description="What evidence would make this expert change.")


class Rebuttal(Position):
    """A later-round position: it must rebut at least one point of another expert."""

    rebuttals: list[Point] = Field(min_length=1, max_length=5)


@cache
def with_options(base: type[BaseModel], field: str, options: tuple[str, ...]) -> type[BaseModel]:
    """``base`` with ``field`` restricted to ``options``.

    On the embedded model the schema becomes a grammar, so the answer is
    forced to be one of the options instead of a paraphrase that would never
    compare equal. Values are reported back as ``base`` (a subclass).
    """
    if not options:
        return base
    choice = Literal.__getitem__(options)  # type: ignore[attr-defined]
    model: type[BaseModel] = create_model(base.__name__, __base__=base, **{field: (choice, ...)})  # type: ignore[call-overload]
    return model
