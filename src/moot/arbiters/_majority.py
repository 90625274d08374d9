"""MajorityVote: a non-LLM arbiter for tasks with a short answer."""

from __future__ import annotations

from collections.abc import Sequence

from moot.arbiters._tally import Tally, count_votes, vote_verdict
from moot.roles import Position, Verdict

__all__ = ["MajorityVote", "majority_tally"]


def majority_tally(positions: Sequence[tuple[str, Position]]) -> Tally:
    """One vote per position (normalised answers); a tie goes to the tied answer held by the expert listed first.
    The one rule both the vote and a debate's first-round vote use."""
    return count_votes(positions, lambda _: 1.0)


class MajorityVote:
    """Rules for the answer most experts hold (normalised); a tie goes to the tied answer held by the expert
    listed first, never to how an answer is spelled.

    No model call, no verbosity bias: the baseline every LLM arbiter has to beat. A debate gives a vote the
    positions in its experts' order (an LLM arbiter sees them shuffled).
    """

    name = "majority_vote"

    def tally(self, positions: Sequence[tuple[str, Position]]) -> Tally:
        """How the vote falls on ``positions`` (the ruling's winner, and whether a tie chose it)."""
        if not positions:
            raise ValueError("MajorityVote needs at least one position")
        return majority_tally(positions)

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict:
        tally = self.tally(positions)
        return vote_verdict(positions, tally.winner, tally.top / len(positions))
