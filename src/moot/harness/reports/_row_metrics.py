"""A result row's metrics read once into types, so the report dispatches on a row's kind instead of its keys.

A row stores ``metrics`` as one JSON object: a debate arm's team dumps its
:class:`~moot.teams.DebateMetrics` or :class:`~moot.teams.CodeDebateMetrics`
there, and the harness adds what it scored beside the answer at no model call
(``oracle``, ``first_round_score``, ``position_scores``, ``overturned_majority``:
see ``moot.harness.jobs._jobs``). :class:`RowMetrics` holds both halves,
typed, and the team's half is whichever of the two models the stored object
fits.

Rows are history: a results file keeps rows written by older code. A debate
row from before the first-round vote had that name still reads as a debate (the
fields it lacks default); a code debate row from before fixes were counted as
adopted fits neither model, and reads as no debate at all, which is what the
report always made of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from pydantic import BaseModel, TypeAdapter, ValidationError

from moot.teams import CodeDebateMetrics, DebateMetrics

__all__ = ["Oracle", "RowMetrics", "TeamMetrics", "team_metrics"]

TeamMetrics: TypeAlias = DebateMetrics | CodeDebateMetrics
"""What a debate arm's team measured, by the kind of debate it ran."""

_TEAM_METRICS: TypeAdapter[TeamMetrics] = TypeAdapter(TeamMetrics)


def team_metrics(raw: Mapping[str, Any]) -> TeamMetrics | None:
    """The team metrics stored in a row's ``metrics``: a debate's, a code debate's, or None (any other arm)."""
    try:
        return _TEAM_METRICS.validate_python(dict(raw))
    except ValidationError:
        return None


class Oracle(BaseModel):
    """Whether a better answer than the final one was proposed along the way (by samples or debaters)."""

    gap: bool = False


class RowMetrics(BaseModel):
    """One row's metrics: its team's, typed by kind, and the harness's scores of the row's other answers."""

    team: TeamMetrics | None = None
    oracle: Oracle | None = None
    first_round_score: float | None = None
    """The score of the answer the arm held after round 1 (a debate's first-round vote, a reflection's first
    draft)."""
    position_scores: list[list[float]] = []
    """The score of every position held after each round."""
    overturned_majority: bool = False
    """The ruling lost a final majority that scored better."""

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> RowMetrics:
        """Parse a row's stored ``metrics`` object (a key absent or null reads as its default)."""
        scored = {key: raw[key] for key in _SCORED if raw.get(key) is not None}
        return cls(team=team_metrics(raw), **scored)


_SCORED = ("oracle", "first_round_score", "position_scores", "overturned_majority")
"""The keys the harness adds to a row's metrics (``_counterfactuals``)."""
