"""Normalising short answers so that "42", "42.0" and " 42 " count as the same answer."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["agreement", "modal_answer", "normalise_answer"]

_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_NOISE = re.compile(r"[^\w\s.+-]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
"""A comma between digit groups ("1,000"), not one between two answers ("2, 3") or a decimal comma ("12,5")."""


def normalise_answer(answer: str) -> str:
    """Lowercase, drop punctuation and surrounding noise, collapse spaces; numbers in canonical form."""
    text = " ".join(_NOISE.sub(" ", _THOUSANDS.sub("", answer.lower())).split())
    number = text.rstrip(".")  # a full stop after a number, but not a leading point: ".5" is 0.5, not 5
    if _NUMBER.match(number):
        value = float(number)
        return str(int(value)) if value.is_integer() else repr(value)
    return text.strip(" .")


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
