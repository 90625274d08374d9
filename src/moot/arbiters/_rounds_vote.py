"""RoundsVote: a vote over every round's positions, so a debate's later rounds add evidence to its first.

A plain majority of the last round throws the independent first answers away:
on a small model the rounds move experts towards each other's answers (right or
wrong), and the debate's final vote fell below its own first-round vote
("Debate or Vote", NeurIPS 2025: without updates biased towards correction,
debate is a martingale over beliefs). Counting every round keeps the first
round's independent evidence and lets an answer an expert reached again on its
own recomputation (or kept against the others' arguments) weigh more.

Ties: a tie goes to the first-round vote when it is among the tied answers, else to the tied answer held by the
expert listed first (round 1 first), never to how an answer is spelled; the first-round vote itself is the
majority of round 1 with the same rule. So a ruling never leaves the first-round vote without a majority
against it.
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.arbiters._majority import majority_tally
from moot.arbiters._tally import Tally, vote_verdict
from moot.roles import Position, Verdict

__all__ = ["RoundsVote"]


class RoundsVote:
    """Every expert's answer in every round is one vote; a tie goes to the first-round vote, else to the tied
    answer of the expert listed first, never to how an answer is spelled (module docstring)."""

    name = "rounds_vote"

    def tally(self, positions: Sequence[tuple[str, Position]]) -> Tally:
        """One round only: the majority vote's tally."""
        return self.tally_rounds([positions])

    def tally_rounds(self, rounds: Sequence[Sequence[tuple[str, Position]]]) -> Tally:
        """How the vote over ``rounds`` (each round's positions in expert order, first round first) falls."""
        pooled = _pooled(rounds)
        if not pooled:
            raise ValueError("RoundsVote needs at least one position")
        tally = majority_tally(pooled)
        first = majority_tally(list(rounds[0])).winner if rounds[0] else None
        if first is not None and first in tally.tied:
            return Tally(first, tally.top, tally.tied)
        return tally

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict:
        """One round only: the majority vote."""
        return await self.rule_rounds(task, [positions])

    async def rule_rounds(self, task: str, rounds: Sequence[Sequence[tuple[str, Position]]]) -> Verdict:
        """``rounds``: each round's positions, first round first."""
        tally = self.tally_rounds(rounds)
        pooled = _pooled(rounds)
        return vote_verdict(
            pooled, tally.winner, tally.top / len(pooled), weighed=f" (votes over {len(rounds)} rounds)"
        )


def _pooled(rounds: Sequence[Sequence[tuple[str, Position]]]) -> list[tuple[str, Position]]:
    return [(f"{name} (round {number})", p) for number, record in enumerate(rounds, 1) for name, p in record]
