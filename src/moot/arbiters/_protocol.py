"""The Arbiter protocol: anything that turns the experts' positions into a Verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from moot.arbiters._tally import Tally
from moot.roles import Position, Verdict

__all__ = ["Arbiter", "RoundsArbiter", "VoteArbiter"]


@runtime_checkable
class Arbiter(Protocol):
    """Implement this to plug a non-model arbiter (vote, test runner, fact table) into a Debate."""

    name: str

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict: ...


@runtime_checkable
class RoundsArbiter(Arbiter, Protocol):
    """An arbiter that weighs every round, not only the latest positions (a Debate gives it all rounds)."""

    async def rule_rounds(self, task: str, rounds: Sequence[Sequence[tuple[str, Position]]]) -> Verdict: ...


@runtime_checkable
class VoteArbiter(Arbiter, Protocol):
    """A vote: it can say, without ruling, how the vote falls on the positions it would rule on, so a debate
    records whether a tie decided its verdict (``DebateMetrics.decided_by_tie``)."""

    def tally(self, positions: Sequence[tuple[str, Position]]) -> Tally: ...
