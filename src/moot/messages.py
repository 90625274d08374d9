"""moot's own AutoGen message types (round, step, tool and human-feedback events, draft tagging), a factory,
and the one rule that says which round a message of a transcript belongs to.

:data:`MESSAGE_TYPES` lists every message type a moot team emits. AutoGen's
group chats accept only registered types, and (as of autogen-agentchat 0.7)
they register only the structured-message types of *agent* participants, never
a nested team's: a group chat that holds a moot team, at any depth, takes them
through AutoGen's own ``custom_message_types=MESSAGE_TYPES``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, MessageFactory, StructuredMessage

from moot.arbiters import ProgramRuling, Verdict
from moot.roles import Critique, Plan, Position, StepResult, ToolCall
from moot.tools import AuditRecord

__all__ = [
    "DRAFT",
    "FEEDBACK_ACTIONS",
    "MESSAGE_TYPES",
    "ROUND",
    "HumanFeedbackGiven",
    "HumanFeedbackRequested",
    "RoundCompleted",
    "StepFinished",
    "ToolExecuted",
    "TurnFailed",
    "message_factory",
    "messages_by_round",
    "round_numbers",
]

DRAFT = "draft"
"""``metadata["moot_kind"]`` of a generator's draft message."""


class RoundCompleted(BaseAgentEvent):
    """Emitted by a moot team when a round ends; round-based conditions read it.

    ``fingerprints`` holds digests of what the round produced (draft, critique
    issues, positions) so NoProgress can spot a loop that stopped moving.
    """

    round: int
    score: float | None = None
    agreement: float | None = None
    fingerprints: dict[str, str] = {}
    type: Literal["RoundCompleted"] = "RoundCompleted"

    def to_text(self) -> str:
        extra = f", score {self.score:g}" if self.score is not None else ""
        extra += f", agreement {self.agreement:.2f}" if self.agreement is not None else ""
        return f"round {self.round} completed{extra}"


class ToolExecuted(BaseAgentEvent):
    """A tool call went through the permission policy: its audit record (decision, result or refusal)."""

    step: int
    record: AuditRecord
    type: Literal["ToolExecuted"] = "ToolExecuted"

    def to_text(self) -> str:
        r = self.record
        args = ", ".join(f"{k}={_short(v)}" for k, v in r.args.items())
        head = f"step {self.step}: {r.tool}({args}) {r.decision}"
        feedback = " ".join(r.feedback.split())
        return f"{head}: {feedback[:300]}"


class StepFinished(BaseAgentEvent):
    """A planner-executor step ended: its check passed or failed, and why. MaxSteps counts these."""

    step: int
    """The plan step's number."""
    attempt: int
    """How many steps the run has executed, this one included."""
    passed: bool
    reason: str
    tool: str | None = None
    type: Literal["StepFinished"] = "StepFinished"

    def to_text(self) -> str:
        return f"step {self.step} {'passed' if self.passed else 'failed'}: {self.reason}"


class TurnFailed(BaseAgentEvent):
    """A turn that failed for good (no valid reply after every retry). ``models_usage`` holds the tokens its
    calls used: they were spent, so the run's accounting keeps them although no answer came of them."""

    attempts: int
    error: str
    type: Literal["TurnFailed"] = "TurnFailed"

    def to_text(self) -> str:
        return f"{self.source} failed after {self.attempts} attempts: {self.error}"


FEEDBACK_ACTIONS = ("approve", "reject", "stop")


class HumanFeedbackRequested(BaseAgentEvent):
    """The run is waiting for a human at a feedback point; without a feedback source it suspends here."""

    point: str
    round: int | None = None
    stop_reason: str | None = None
    """At the ``final`` point: why the loop ended (kept when the human approves)."""
    summary: str = ""
    """What the human is asked to judge (the latest draft, verdict or step)."""
    type: Literal["HumanFeedbackRequested"] = "HumanFeedbackRequested"

    def to_text(self) -> str:
        where = f" (round {self.round})" if self.round is not None else ""
        return f"waiting for human feedback at {self.point}{where}"


class HumanFeedbackGiven(BaseAgentEvent):
    """A human's answer at a feedback point: approve, reject with a comment, or stop."""

    point: str
    action: Literal["approve", "reject", "stop"]
    comment: str = ""
    type: Literal["HumanFeedbackGiven"] = "HumanFeedbackGiven"

    def to_text(self) -> str:
        comment = f": {self.comment}" if self.comment else ""
        return f"{self.source} at {self.point}: {self.action}{comment}"


def _short(value: object, limit: int = 60) -> str:
    """An argument as a call shows it: strings quoted, other values as JSON, clipped."""
    text = " ".join(value.split()) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(text) if isinstance(value, str) else text


MESSAGE_TYPES: list[type[BaseAgentEvent | BaseChatMessage]] = [
    RoundCompleted,
    ToolExecuted,
    StepFinished,
    TurnFailed,
    HumanFeedbackRequested,
    HumanFeedbackGiven,
    *(
        StructuredMessage[content]  # type: ignore[valid-type]
        for content in (Critique, Position, Verdict, Plan, ToolCall, StepResult, ProgramRuling)
    ),
]
"""Every message type a moot team emits: a group chat that holds a moot team (directly, in a nested group chat,
or in a ``SocietyOfMindAgent``) takes them as ``custom_message_types``."""


def message_factory() -> MessageFactory:
    """A MessageFactory that can rebuild moot's saved messages (critiques, positions, plans, events)."""
    factory = MessageFactory()
    for message_type in MESSAGE_TYPES:
        factory.register(message_type)
    return factory


# ------------------------------------------------------------ rounds of a transcript
# A reflection rebuilds its rounds from drafts and critiques (teams/_reflection.py), a debate from
# positions (teams/_debate_records.py), and ``moot show`` groups stored turns per round
# (display/_run_view.py). All three number the messages here, so a turn is never in one round on
# screen and in another in the team's state.

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
