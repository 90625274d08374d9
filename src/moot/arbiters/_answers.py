"""Normalising short answers so that "42", "42.0" and " 42 " count as the same answer."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["agreement", "modal_answer", "normalise_answer"]

_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_NOISE = re.compile(r"[^\w\s.+-]")


def normalise_answer(answer: str) -> str:
    """Lowercase, drop punctuation and surrounding noise, collapse spaces; numbers in canonical form."""
    text = " ".join(_NOISE.sub(" ", answer.strip().lower()).split()).strip(" .")
    compact = text.replace(",", "").replace(" ", "")
    if _NUMBER.match(compact):
        value = float(compact)
        return str(int(value)) if value.is_integer() else repr(value)
    return text


def modal_answer(answers: Sequence[str]) -> tuple[str, int]:
    """The most common normalised answer and its count; ties go to the answer seen first."""
    if not answers:
        raise ValueError("no answers to count")
    normal = [normalise_answer(a) for a in answers]
    counts = Counter(normal)
    best = max(counts.values())
    winner = next(a for a in normal if counts[a] == best)
    return winner, best


def agreement(answers: Sequence[str]) -> float:
    """Share of answers equal to the modal one: 1.0 is consensus."""
    if not answers:
        return 0.0
    return modal_answer(answers)[1] / len(answers)
