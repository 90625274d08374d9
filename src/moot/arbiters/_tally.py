"""Counting votes, the one tie rule every vote shares, and the Verdict a vote returns.

The tie rule, in one sentence (:data:`TIE_RULE`): a tie goes to the tied answer held by the expert listed first
(in a debate whose expert 1 holds the single answer, that anchor), never to how an answer is spelled.
A count that depends on spelling ("the alphabetically first answer") would let relabelling the options ("A" for
"B") change a verdict; the experts' order is fixed by the caller before any answer exists.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from moot.arbiters._answers import normalise_answer
from moot.roles import ExpertAssessment, Position, Verdict

__all__ = ["TIE_RULE", "Tally", "count_votes", "vote_verdict"]

TIE_RULE = "a tie goes to the tied answer held by the expert listed first, never to how an answer is spelled"


@dataclass(frozen=True)
class Tally:
    """How a vote fell: the winner (normalised), its votes, and every answer tied with it for the most votes."""

    winner: str
    top: float
    tied: tuple[str, ...]
    """The normalised answers with the most votes, in the order they were first held (the winner among them);
    one answer when no tie decided the vote."""

    @property
    def decided_by_tie(self) -> bool:
        """Did the tie rule choose the winner (two or more answers had the most votes)?"""
        return len(self.tied) > 1


def count_votes(positions: Sequence[tuple[str, Position]], weigh: Callable[[Position], float]) -> Tally:
    """Each position adds ``weigh(position)`` to its normalised answer; the most wins, ties by :data:`TIE_RULE`:
    ``positions`` come in the experts' order, so the tied answer held first is the first-listed expert's."""
    if not positions:
        raise ValueError("a vote needs at least one position")
    totals: dict[str, float] = {}
    for _, position in positions:  # (a dict keeps the order answers were first held)
        answer = normalise_answer(position.answer)
        totals[answer] = totals.get(answer, 0.0) + weigh(position)
    top = max(totals.values())
    tied = tuple(a for a, total in totals.items() if math.isclose(total, top, rel_tol=1e-9, abs_tol=1e-12))
    return Tally(tied[0], top, tied)


def vote_verdict(
    positions: Sequence[tuple[str, Position]], winner: str, confidence: float, weighed: str = ""
) -> Verdict:
    """The ruling for ``winner`` (a normalised answer); ``weighed`` adds what else the vote counted."""
    backers = [n for n, p in positions if normalise_answer(p.answer) == winner]
    shown = next(p.answer for _, p in positions if normalise_answer(p.answer) == winner)
    # Answers may be as long as a Position allows: every text is clipped to the Verdict's caps, so the
    # ruling never fails on what the experts legitimately said.
    return Verdict(
        rationale=_clip(
            f"{len(backers)} of {len(positions)} experts answered {shown!r}{weighed}: {', '.join(backers)}.", 800
        ),
        assessments=[
            ExpertAssessment(expert=_clip(n, 60), assessment=_clip(f"answered {p.answer!r}", 300))
            for n, p in positions[:8]
        ],
        decision=shown,
        dissent=[_clip(f"{n} answered {p.answer!r}", 400) for n, p in positions if n not in backers][:3],
        confidence=confidence,
    )


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"
