"""What a planner-executor records: the numbered plan, every executed step, its state and its result."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.roles import Step, ToolCall
from moot.teams._plan_phases import PlanPhase, PlanTrigger, next_plan_phase
from moot.teams._records import MootResult, Usage
from moot.tools import AuditRecord, AuditTrail

__all__ = ["PlannedStep", "PlannerExecutorResult", "PlannerExecutorState", "StepRecord", "check_outcome"]

_SHOWN = 1000


class PlannedStep(Step):
    """A plan step as the team tracks it: numbered, with a status."""

    number: int
    status: Literal["pending", "passed", "failed", "dropped"] = "pending"
    """``dropped``: a later revision of the plan replaced it."""
    revision: int = 0
    """Which version of the plan added it (0: the first plan)."""


class StepRecord(BaseModel):
    """One executed step: the call, what came of it, and whether its check passed."""

    number: int
    """The plan step's number."""
    attempt: int
    """The run's step count when this step ended (1, 2, ...); the round number."""
    action: str
    call: ToolCall
    decision: str
    """The permission decision (allowed, approved, denied, refused, invalid)."""
    output: str
    """What the executor was told: the tool's output, its error, or the refusal."""
    passed: bool
    reason: str
    judged_by: Literal["check", "executor"]


class PlannerExecutorState(BaseModel):
    """Everything needed to continue a planner-executor exactly where it stopped. Versioned."""

    type: Literal["PlannerExecutorState"] = "PlannerExecutorState"
    version: int = 1
    task: str | None = None
    phase: PlanPhase = PlanPhase.PLAN
    """Which turn comes next; it changes only through :meth:`move` (``_plan_phases.py`` holds the table)."""
    plan: list[PlannedStep] = []
    call: ToolCall | None = None
    """The executor's call for the current step, chosen but not yet run (phase ``run``)."""
    record: AuditRecord | None = None
    """The current step's call record, awaiting the executor's judgement (phase ``judge``)."""
    failed: int | None = None
    failure: str | None = None
    """Why the plan must be revised (phase ``replan``)."""
    revisions: int = 0
    steps: list[StepRecord] = []
    audit: AuditTrail = Field(default_factory=AuditTrail)
    usage: Usage = {}
    parse_failures: int = 0
    done_reason: str | None = None
    messages: list[Mapping[str, Any]] = []

    def move(self, trigger: PlanTrigger) -> None:
        """Take the transition ``trigger`` names from the current phase; one the table lacks is a RuntimeError."""
        self.phase = next_plan_phase(self.phase, trigger)

    def current(self) -> PlannedStep | None:
        return next((s for s in self.plan if s.status == "pending"), None)

    def step(self, number: int) -> PlannedStep:
        return next(s for s in self.plan if s.number == number)


class PlannerExecutorResult(MootResult):
    """A TaskResult plus the plan, every executed step, the audit trail and tokens per agent."""

    plan: list[PlannedStep] = []
    steps: list[StepRecord] = []
    audit: list[AuditRecord] = []
    completed: bool = False
    """Every step of the final plan passed its check."""
    revisions: int = 0
    parse_failures: int = 0

    @property
    def answer(self) -> str | None:
        """The output of the last step that passed, the plan's product when it is complete."""
        passed = [s for s in self.steps if s.passed]
        return passed[-1].output if passed else None


def check_outcome(step: Step, record: AuditRecord) -> tuple[bool | None, str]:
    """Decide a step from its call record: (passed, why), or (None, "") when the executor must judge."""
    if not record.ran:
        return False, record.feedback
    if not record.ok:
        return False, f"{record.tool} failed: {record.error}"
    output = record.output
    if step.check == "output_contains":
        if step.expect in output:
            return True, f"the output contains {step.expect!r}"
        return False, f"the output does not contain {step.expect!r}; it was: {_clip(output)}"
    if step.check == "output_equals":
        if output.strip() == step.expect.strip():
            return True, f"the output is {step.expect.strip()!r}"
        return False, f"the output is not {step.expect.strip()!r}; it was: {_clip(output)}"
    if step.check == "judge":
        return None, ""
    return True, f"{record.tool} ran without error"


def unmet_denials(steps: Sequence[StepRecord]) -> list[StepRecord]:
    """Steps whose call the permission policy (or a human) refused and no later step made with success.

    A plan revised around a refusal can pass every check of its own and still leave the
    refused action undone: such a plan is not complete.
    """

    def call_of(record: StepRecord) -> tuple[str, str]:
        return record.call.tool, json.dumps(record.call.args, sort_keys=True)

    done = {call_of(r) for r in steps if r.passed}
    return [r for r in steps if r.decision in ("denied", "refused") and call_of(r) not in done]


def denial_text(denied: Sequence[StepRecord]) -> str:
    """Which steps were refused, and by whom, for a stop reason."""
    return "; ".join(f"step {r.number} ({r.action}) was {r.decision}: {r.call.tool} did not run" for r in denied)


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
