"""WeightedVote: a non-LLM arbiter that counts each expert's answer by the confidence it gave."""

from __future__ import annotations

from collections.abc import Sequence

from moot.arbiters._answers import normalise_answer
from moot.arbiters._tally import Tally, count_votes, vote_verdict
from moot.roles import Position, Verdict

__all__ = ["WeightedVote"]


class WeightedVote:
    """Rules for the answer with the highest summed confidence (normalised answers); a tie goes to the tied
    answer held by the expert listed first, never to how an answer is spelled. The verdict's confidence is the
    winner's share of all the confidence given.

    One sure expert can outvote two unsure ones, which a plain majority cannot
    express; with equal confidences it is the majority vote. Self-reported
    confidence is cheap to inflate, so compare it against MajorityVote.
    """

    name = "weighted_vote"

    def tally(self, positions: Sequence[tuple[str, Position]]) -> Tally:
        """How the vote falls on ``positions`` (the ruling's winner, and whether a tie chose it)."""
        if not positions:
            raise ValueError("WeightedVote needs at least one position")
        return count_votes(positions, lambda p: p.confidence)

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict:
        tally = self.tally(positions)
        total = sum(p.confidence for _, p in positions)
        backers = sum(normalise_answer(p.answer) == tally.winner for _, p in positions)
        share = tally.top / total if total > 0 else backers / len(positions)
        weighed = f" (summed confidence {tally.top:.2f} of {total:.2f})"
        return vote_verdict(positions, tally.winner, share, weighed)
