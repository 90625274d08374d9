"""The planner-executor's own phases: which turn comes next, as a typed sub-machine of the loop's ``turns``.

The run loop (``_loop.py``) runs one turn at a time without knowing what the
turn is; inside the loop's ``turns`` phase, a PlannerExecutor's turns follow
this machine. Each phase but the two endings names one turn (the planner
plans, the executor chooses a call, moot runs it, the executor judges it, the
planner revises); the turn ends with a :class:`PlanTrigger`, and
``PLAN_TRANSITIONS`` says where it leads. A human's rejection, answered
between turns, is one more trigger. ``docs/architecture.md`` shows the table
as the diagram :func:`plan_diagram` draws, and a test keeps the two equal.

The phase is part of the team's checkpointed state, so a run cut between two
turns continues with the turn the phase names.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from moot.teams._machine import edge, moved

__all__ = ["ENDINGS", "PLAN_TRANSITIONS", "PlanPhase", "PlanTrigger", "next_plan_phase", "plan_diagram", "rejectable"]


class PlanPhase(StrEnum):
    """Which turn a planner-executor takes next; ``done`` and ``gave_up`` end its turns."""

    PLAN = "plan"
    ACT = "act"
    RUN = "run"
    JUDGE = "judge"
    REPLAN = "replan"
    DONE = "done"
    GAVE_UP = "gave_up"


class PlanTrigger(StrEnum):
    """What ends a planner-executor's turn (or a human's answer); the value is how the diagram labels it."""

    PLANNED = "the planner wrote the plan"
    CHOSEN = "the executor chose a tool call for the step"
    UNDECIDED = "no check decides, the executor judges the output"
    PASSED = "the step passed, a step remains"
    COMPLETED = "the last step passed"
    FAILED = "the step failed, or its call was refused"
    REVISED = "the planner revised the remaining plan"
    EXHAUSTED = "a revision is due, but max_replans are spent"
    REJECTED = "a human rejected the result"


_P, _T = PlanPhase, PlanTrigger
ENDINGS = frozenset({_P.DONE, _P.GAVE_UP})
"""Phases with no turn: the topology's turns end there, which the loop reads as its trigger ``DONE``."""

PLAN_TRANSITIONS: Mapping[tuple[PlanPhase, PlanTrigger], PlanPhase] = {
    (_P.PLAN, _T.PLANNED): _P.ACT,
    (_P.ACT, _T.CHOSEN): _P.RUN,
    (_P.ACT, _T.REJECTED): _P.REPLAN,
    (_P.RUN, _T.UNDECIDED): _P.JUDGE,
    (_P.RUN, _T.PASSED): _P.ACT,
    (_P.RUN, _T.COMPLETED): _P.DONE,
    (_P.RUN, _T.FAILED): _P.REPLAN,
    (_P.JUDGE, _T.PASSED): _P.ACT,
    (_P.JUDGE, _T.COMPLETED): _P.DONE,
    (_P.JUDGE, _T.FAILED): _P.REPLAN,
    (_P.REPLAN, _T.REVISED): _P.ACT,
    (_P.REPLAN, _T.EXHAUSTED): _P.GAVE_UP,
    (_P.DONE, _T.REJECTED): _P.REPLAN,
}
"""Every move of a planner-executor's turns: (phase, trigger) -> the next phase.

A rejection moves only where the table has it: between steps (``act``) or
after the last (``done``). Anywhere else (a revision already due, a step cut
short by a stop condition, the team given up) it changes nothing.
"""


def next_plan_phase(phase: PlanPhase, trigger: PlanTrigger) -> PlanPhase:
    """The phase ``trigger`` leads to from ``phase``; a pair the table lacks is a bug in a turn."""
    return moved("the planner-executor", PLAN_TRANSITIONS, phase, trigger)


def rejectable(phase: PlanPhase) -> bool:
    """Whether a human's rejection moves the team from ``phase`` (see ``PLAN_TRANSITIONS``)."""
    return (phase, _T.REJECTED) in PLAN_TRANSITIONS


def plan_diagram() -> str:
    """The table as a mermaid state diagram: a run's turns start at ``plan`` and end at the endings."""
    return "\n".join(
        [
            "stateDiagram-v2",
            f"    [*] --> {_P.PLAN}",
            *(f"    {edge(source, target, trigger)}" for (source, trigger), target in PLAN_TRANSITIONS.items()),
            *(f"    {phase} --> [*]" for phase in PlanPhase if phase in ENDINGS),
        ]
    )
