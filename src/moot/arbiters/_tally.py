"""The Verdict a vote returns: who backed the winning answer, who did not, and how sure the vote is."""

from __future__ import annotations

from collections.abc import Sequence

from moot.arbiters._answers import normalise_answer
from moot.roles import ExpertAssessment, Position, Verdict

__all__ = ["vote_verdict"]


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
