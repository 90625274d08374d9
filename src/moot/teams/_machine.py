"""What every moot state machine shares: a table of (phase, trigger) -> next phase, and the one way to move by it.

The run loop (``_loop.py``) and a topology's own phases (``_plan_phases.py``)
are each such a table. Moving only through :func:`moved` makes the table the
whole control flow: a step that asks for a pair the table lacks is a bug, and
it fails there, naming the machine, the phase and what that phase does allow,
instead of leaving the machine in a phase nobody drew.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import TypeVar

__all__ = ["edge", "moved", "reachable"]

P = TypeVar("P", bound=Enum)
T = TypeVar("T", bound=Enum)


def moved(machine: str, table: Mapping[tuple[P, T], P], phase: P, trigger: T) -> P:
    """The phase ``trigger`` leads to from ``phase`` in ``table``; a pair it lacks is a RuntimeError line."""
    try:
        return table[(phase, trigger)]
    except KeyError:
        allowed = ", ".join(t.name for p, t in table if p == phase) or "nothing (no transition leaves it)"
        raise RuntimeError(
            f"{machine} has no transition from {phase.value} on {trigger.name}; from {phase.value} it moves on "
            f"{allowed}"
        ) from None


def reachable(table: Mapping[tuple[P, T], P], start: P) -> set[P]:
    """Every phase ``table`` can lead to from ``start`` (``start`` included): what a test of a drawn machine checks,
    so no phase is drawn that no run can reach."""
    seen, todo = {start}, [start]
    while todo:
        phase = todo.pop()
        for (source, _), target in table.items():
            if source is phase and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def edge(source: Enum | str, target: Enum | str, trigger: Enum) -> str:
    """One transition as a mermaid state diagram draws it: ``source --> target: what triggers it``."""
    return f"{_name(source)} --> {_name(target)}: {trigger.value}"


def _name(phase: Enum | str) -> str:
    return phase.value if isinstance(phase, Enum) else phase
