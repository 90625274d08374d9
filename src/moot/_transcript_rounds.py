"""Which round each message of a transcript belongs to: one rule for ``moot show`` and for the teams.

A reflection rebuilds its rounds from drafts and critiques (``teams/_reflection.py``),
a debate from positions (``teams/_debate_records.py``), and ``moot show`` groups
stored turns per round (``runview.py``). All three number the messages here, so a
turn is never in one round on screen and in another in the team's state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from moot.messages import RoundCompleted

__all__ = ["ROUND", "messages_by_round", "round_numbers"]

ROUND = "round"
"""The kind of a ``RoundCompleted`` event in :func:`round_numbers`."""
_OUTSIDE = frozenset({"task", "verdict"})
"""Kinds that belong to no round: the task before them, a ruling after them."""


def round_numbers(marks: Iterable[tuple[str, int | None]]) -> list[int | None]:
    """The round of each message, given its kind and the round it names (None when it names none).

    A ``RoundCompleted`` is in the round it closes and opens the next; a message
    that names its round (``metadata["round"]``) is in that round; any other is in
    the current round (the last one named, else the one after the last closed);
    the task and a verdict are in none (None).
    """
    numbers: list[int | None] = []
    current = 1
    for kind, named in marks:
        number: int | None
        if kind in _OUTSIDE:
            number = None
        elif kind == ROUND and named is not None:
            number, current = named, named + 1
        else:
            number = current = named if named is not None else current
        numbers.append(number)
    return numbers


def messages_by_round(transcript: Sequence[Any]) -> dict[int, list[Any]]:
    """A team's transcript (AutoGen messages) grouped per round, rounds in order; the task and verdict left out."""
    marks = [_mark(index, message) for index, message in enumerate(transcript)]
    grouped: dict[int, list[Any]] = {}
    for message, number in zip(transcript, round_numbers(marks), strict=True):
        if number is not None:
            grouped.setdefault(number, []).append(message)
    return dict(sorted(grouped.items()))


def _mark(index: int, message: Any) -> tuple[str, int | None]:
    if isinstance(message, RoundCompleted):
        return ROUND, message.round
    metadata = getattr(message, "metadata", {})
    kind = metadata.get("moot_kind") or ("task" if index == 0 and message.source == "user" else "")
    return str(kind), int(metadata["round"]) if "round" in metadata else None
