"""MajorityVote: a non-LLM arbiter for tasks with a short answer."""

from __future__ import annotations

from collections.abc import Sequence

from moot.arbiters._answers import modal_answer, normalise_answer
from moot.arbiters._tally import vote_verdict
from moot.roles import Position, Verdict

__all__ = ["MajorityVote", "majority_answer"]


def majority_answer(positions: Sequence[tuple[str, Position]]) -> tuple[str, int]:
    """The answer most positions hold (normalised) and its count; ties go to the higher summed confidence,
    then to the alphabetically first answer. The one rule both the vote and a debate's first-round vote use."""
    if not positions:
        raise ValueError("a majority needs at least one position")
    answers = [p.answer for _, p in positions]
    _, top = modal_answer(answers)
    tied = {normalise_answer(a) for a in answers if _count(answers, a) == top}
    weight = {a: sum(p.confidence for _, p in positions if normalise_answer(p.answer) == a) for a in tied}
    return max(sorted(tied), key=lambda a: weight[a]), top


class MajorityVote:
    """Rules for the answer most experts hold (normalised); ties go to the higher summed confidence.

    No model call, no position bias, no verbosity bias: the baseline every LLM
    arbiter has to beat.
    """

    name = "majority_vote"

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict:
        if not positions:
            raise ValueError("MajorityVote needs at least one position")
        winner, top = majority_answer(positions)
        return vote_verdict(positions, winner, top / len(positions))


def _count(answers: Sequence[str], answer: str) -> int:
    target = normalise_answer(answer)
    return sum(normalise_answer(a) == target for a in answers)
