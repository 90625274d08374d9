"""WeightedVote: a non-LLM arbiter that counts each expert's answer by the confidence it gave."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from moot.arbiters._answers import normalise_answer
from moot.arbiters._tally import vote_verdict
from moot.roles import Position, Verdict

__all__ = ["WeightedVote"]


class WeightedVote:
    """Rules for the answer with the highest summed confidence (normalised answers; ties: most backers, then
    alphabetical). The verdict's confidence is the winner's share of all the confidence given.

    One sure expert can outvote two unsure ones, which a plain majority cannot
    express; with equal confidences it is the majority vote. Self-reported
    confidence is cheap to inflate, so compare it against MajorityVote.
    """

    name = "weighted_vote"

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict:
        if not positions:
            raise ValueError("WeightedVote needs at least one position")
        weight: dict[str, float] = defaultdict(float)
        backers: dict[str, int] = defaultdict(int)
        for _, position in positions:
            answer = normalise_answer(position.answer)
            weight[answer] += position.confidence
            backers[answer] += 1
        winner = max(sorted(weight), key=lambda a: (weight[a], backers[a]))
        total = sum(weight.values())
        share = weight[winner] / total if total > 0 else backers[winner] / len(positions)
        weighed = f" (summed confidence {weight[winner]:.2f} of {total:.2f})"
        return vote_verdict(positions, winner, share, weighed)
