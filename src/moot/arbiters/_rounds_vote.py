"""RoundsVote: a vote over every round's positions, so a debate's later rounds add evidence to its first.

A plain majority of the last round throws the independent first answers away:
on a small model the rounds move experts towards each other's answers (right or
wrong), and the debate's final vote fell below its own first-round vote
("Debate or Vote", NeurIPS 2025: without updates biased towards correction,
debate is a martingale over beliefs). Counting every round keeps the first
round's independent evidence and lets an answer an expert reached again on its
own recomputation (or kept against the others' arguments) weigh more; ties go
to the first-round vote, so a ruling never leaves it without a majority
against it.
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.arbiters._answers import normalise_answer
from moot.arbiters._majority import majority_answer
from moot.arbiters._tally import vote_verdict
from moot.roles import Position, Verdict

__all__ = ["RoundsVote"]


class RoundsVote:
    """Every expert's answer in every round is one vote; ties go to the first-round vote (module docstring)."""

    name = "rounds_vote"

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict:
        """One round only: the majority vote."""
        return await self.rule_rounds(task, [positions])

    async def rule_rounds(self, task: str, rounds: Sequence[Sequence[tuple[str, Position]]]) -> Verdict:
        """``rounds``: each round's positions, first round first."""
        pooled = [(f"{name} (round {number})", p) for number, record in enumerate(rounds, 1) for name, p in record]
        if not pooled:
            raise ValueError("RoundsVote needs at least one position")
        winner, top = majority_answer(pooled)
        first = majority_answer(list(rounds[0]))[0] if rounds[0] else None
        if first is not None and sum(normalise_answer(p.answer) == first for _, p in pooled) == top:
            winner = first  # a tie the first-round vote is in goes to it
        return vote_verdict(pooled, winner, top / len(pooled), weighed=f" (votes over {len(rounds)} rounds)")
