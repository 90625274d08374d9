"""PlannerExecutor: a planner writes a checked plan, an executor performs it one tool call per step.

Turns, each checkpointed on its own so a crash never repeats a finished one:

1. the planner answers a :class:`~moot.roles.Plan`: numbered steps, each one
   tool call with a success check;
2. per step, the executor answers a :class:`~moot.roles.ToolCall` (a tool
   name and JSON arguments, as structured output: no native function calling
   needed, and on the embedded model the grammar only admits the team's tools);
3. moot runs the call through the permission policy (allow / deny / ask an
   approver, argument checks, the audit trail); a refusal does not end the
   run, it fails the step with a clear reason;
4. the step's check decides: on the call's record where it can
   (``tool_ok``, ``output_contains``, ``output_equals``), else the executor
   judges the output (a :class:`~moot.roles.StepResult`);
5. a failed step sends the planner its reason: it revises the remaining plan.

A round is one executed step. Stops: the plan completes (the topology's own
end), ``max_replans`` revisions fail, or a condition fires: ``MaxSteps``,
``TokenBudget``, ``NoProgress`` (each round's fingerprints are the call and the
failure, so the same call with the same arguments, or the same failure,
twice in a row stops the run).

Which turn comes next is the phase in the team's state, moved only through
the typed table of ``_plan_phases.py`` (drawn in ``docs/architecture.md``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Self

from autogen_agentchat.base import ChatAgent, TerminationCondition
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage
from autogen_core import CancellationToken, Component, ComponentModel
from pydantic import BaseModel, ConfigDict, ValidationError

from moot.boundary import argument_error, checked_count, checked_text
from moot.conditions import MaxSteps, NoProgress, TokenBudget
from moot.errors import ConfigError, MalformedOutputError
from moot.messages import HumanFeedbackGiven, RoundCompleted, StepFinished, ToolExecuted
from moot.roles import (
    Plan,
    StepResult,
    ToolCall,
    checked_agent,
    distinct_names,
    parse_structured,
    plan_type,
    render_prompt,
    tool_call_type,
)
from moot.teams._base import Message, MessageTypes, MootTeam, Stop, loaded_stop
from moot.teams._plan_phases import ENDINGS, PlanPhase, PlanTrigger, rejectable
from moot.teams._plan_records import (
    PlannedStep,
    PlannerExecutorResult,
    PlannerExecutorState,
    StepRecord,
    check_outcome,
    denial_text,
    shown,
    unmet_denials,
)
from moot.teams._records import add_usage, fingerprint
from moot.tools import Approver, PermissionPolicy, Rule, Tool, ToolBox, ToolSource

__all__ = ["PlannerExecutor", "PlannerExecutorConfig", "RuleConfig", "default_planner_executor_stop"]

_HISTORY = 3


def default_planner_executor_stop() -> TerminationCondition:
    return MaxSteps(12) | NoProgress(1) | TokenBudget(40_000)


class RuleConfig(BaseModel):
    """A permission rule as data: its kind and the reason a denial gives (argument checks are code)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["allow", "ask", "deny"]
    reason: str = ""


class PlannerExecutorConfig(BaseModel):
    name: str
    description: str
    planner: ComponentModel
    executor: ComponentModel
    tools: list[ToolSource]
    rules: dict[str, RuleConfig] = {}
    stop: ComponentModel | None = None
    max_replans: int = 3


def _checked_tools(tools: object) -> list[Tool | Callable[..., Any]]:
    """At least one tool (a Tool or a plain function), or a one-line ConfigError."""
    example = "e.g. tools=moot.tools.builtin_tools('work')"
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Iterable):
        raise argument_error("PlannerExecutor", "tools", f"a list of Tools or functions, {example}", tools)
    given = list(tools)
    if not given:
        raise ConfigError(f"PlannerExecutor needs at least one tool, {example}")
    stray = next((t for t in given if not isinstance(t, Tool) and not callable(t)), None)
    if stray is not None:
        raise argument_error("PlannerExecutor", "tools", f"Tools or functions, {example}", stray)
    return given


def _checked_policy(policy: object) -> PermissionPolicy | None:
    if policy is not None and not isinstance(policy, PermissionPolicy):
        raise argument_error("PlannerExecutor", "policy", "None or a moot.PermissionPolicy", policy)
    return policy


class PlannerExecutor(MootTeam, Component[PlannerExecutorConfig]):
    """Planner + executor + tools behind a permission policy (see the module docstring).

    ``policy`` defaults to: side-effecting tools need approval (and with no
    approver attached are denied), the others are allowed. ``max_replans``
    bounds how often the plan is revised before the team gives up.
    ``dump_component()`` saves tools made by moot's factories or from
    importable functions, and rules without argument checks; the approver is
    who is at hand when the team runs, so it is never saved.
    """

    _state_type = PlannerExecutorState
    _signals = frozenset({"steps"})

    component_config_schema = PlannerExecutorConfig
    component_provider_override = "moot.teams.PlannerExecutor"

    def __init__(
        self,
        planner: ChatAgent,
        executor: ChatAgent,
        *,
        tools: Sequence[Tool | Callable[..., Any]],
        policy: PermissionPolicy | None = None,
        stop: Stop = None,
        max_replans: int = 3,
        name: str = "planner_executor",
        description: str = "A planner plans in checked steps; an executor performs each with one tool call.",
        custom_message_types: MessageTypes = None,
    ) -> None:
        where = "PlannerExecutor"
        self.planner = checked_agent(planner, where, "planner (the first argument)", "the planning agent")
        self.executor = checked_agent(executor, where, "executor (the second argument)", "the executing agent")
        distinct_names([self.planner, self.executor], where)
        self.toolbox = ToolBox(_checked_tools(tools), _checked_policy(policy))
        self.max_replans = checked_count(max_replans, where, "max_replans")
        super().__init__(
            checked_text(name, where, "name"),
            checked_text(description, where, "description", empty=True),
            stop if stop is not None else default_planner_executor_stop(),
            custom_message_types=custom_message_types,
        )
        known = list(self.toolbox.tools.values())  # plain functions already made into tools
        self._call_type = tool_call_type(tuple((t.name, t.args) for t in known))
        self._plan_type = plan_type(tuple(t.name for t in known))
        self._phases: dict[PlanPhase, Callable[[CancellationToken], Awaitable[list[Message]]]] = {
            PlanPhase.PLAN: self._plan,
            PlanPhase.ACT: self._act,
            PlanPhase.RUN: self._run_call,
            PlanPhase.JUDGE: self._judge,
            PlanPhase.REPLAN: self._replan,
        }
        """One turn per phase that has one; the phases and what moves them are ``_plan_phases.PLAN_TRANSITIONS``."""

    @property
    def policy(self) -> PermissionPolicy:
        return self.toolbox.policy

    @property
    def tools(self) -> list[Tool]:
        return list(self.toolbox.tools.values())

    # ------------------------------------------------------------------ turns
    async def _turns(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        """The turn the phase names, until an ending: the sub-machine of ``_plan_phases.py`` inside ``turns``."""
        state = self.state
        while state.phase not in ENDINGS:
            if state.phase == PlanPhase.REPLAN and state.revisions >= self.max_replans:
                self._give_up()
                continue
            yield await self._phases[state.phase](token)

    def _give_up(self) -> None:
        """A revision is due and none is left: the turns end, and the stop reason says which failure ended them."""
        state = self.state
        state.done_reason = (
            f"gave up: step {state.failed} failed after {state.revisions} plan revision(s); "
            f"last failure: {state.failure}"
        )
        state.move(PlanTrigger.EXHAUSTED)

    def _done_reason(self) -> str:
        return self.state.done_reason or "the plan is complete"

    def _agents(self) -> list[ChatAgent]:
        return [self.planner, self.executor]

    def ask_approvals_of(self, approver: Approver) -> None:
        """The executor's tool calls that the policy holds for approval go to ``approver``, unless it has one."""
        if self.policy.approver is None:
            self.policy.approver = approver

    async def _plan(self, token: CancellationToken) -> list[Message]:
        prompt = render_prompt("turns/plan", task=self.state.task, tools=self._tool_lines())
        plan, message = await self._structured(self.planner, prompt, token, self._plan_type, Plan)
        self._adopt(plan, PlanTrigger.PLANNED)
        return [_tagged(message, "plan")]

    async def _replan(self, token: CancellationToken) -> list[Message]:
        state = self.state
        failed = state.step(state.failed) if state.failed is not None else None
        prompt = render_prompt(
            "turns/replan",
            task=state.task,
            tools=self._tool_lines(),
            done=[s for s in state.plan if s.status == "passed"],
            failed=failed or {"number": "?", "action": "the result", "tool": "-"},
            reason=state.failure,
            remaining=[s for s in state.plan if s.status == "pending"],
        )
        plan, message = await self._structured(self.planner, prompt, token, self._plan_type, Plan)
        for step in state.plan:
            if step.status == "pending":
                step.status = "dropped"
        state.revisions += 1
        self._adopt(plan, PlanTrigger.REVISED)
        return [_tagged(message, "plan", revision=str(state.revisions))]

    def _adopt(self, plan: Plan, trigger: PlanTrigger) -> None:
        state = self.state
        start = len(state.plan)
        state.plan += [
            PlannedStep(**step.model_dump(), number=start + i + 1, revision=state.revisions)
            for i, step in enumerate(plan.steps)
        ]
        state.failed, state.failure, state.done_reason = None, None, None
        state.move(trigger)

    async def _act(self, token: CancellationToken) -> list[Message]:
        state = self.state
        step = state.current()
        assert step is not None, "phase 'act' without a pending step"
        prompt = render_prompt(
            "turns/act",
            task=state.task,
            tools=self._tool_lines(),
            history=[_history_row(r) for r in state.steps[-_HISTORY:]],
            step=step,
            total=len([s for s in state.plan if s.status != "dropped"]),
        )
        call, message = await self._structured(self.executor, prompt, token, self._call_type, ToolCall)
        state.call = call
        state.move(PlanTrigger.CHOSEN)
        return [_tagged(message, "tool_call", step=str(step.number))]

    async def _run_call(self, token: CancellationToken) -> list[Message]:
        state = self.state
        step, call = state.current(), state.call
        assert step is not None and call is not None, "phase 'run' without a step and a call"
        step_id = f"{self.run_id}:step{len(state.steps) + 1}"
        record = await self.toolbox.call(call.tool, call.args, step_id=step_id, audit=state.audit)
        event = ToolExecuted(source=self.name, step=step.number, record=record)
        passed, reason = check_outcome(step, record)
        state.record = record
        if passed is None:
            state.move(PlanTrigger.UNDECIDED)
            return [event]
        return [event, *self._finish(passed, reason, "check")]

    async def _judge(self, token: CancellationToken) -> list[Message]:
        state = self.state
        step, call, record = state.current(), state.call, state.record
        assert step is not None and call is not None and record is not None, "phase 'judge' without a call record"
        prompt = render_prompt(
            "turns/judge_step",
            task=state.task,
            step=step,
            tool=call.tool,
            args=json.dumps(call.args, ensure_ascii=False),
            output=shown(record.feedback),
        )
        verdict, message = await self._structured(self.executor, prompt, token, StepResult, StepResult)
        finished = self._finish(verdict.success, verdict.summary, "executor")
        return [_tagged(message, "step_result", step=str(step.number)), *finished]

    def _finish(self, passed: bool, reason: str, judged_by: str) -> list[Message]:
        """Close the current step: record it, advance or send the plan back, emit the step and round events."""
        state = self.state
        step, call, record = state.current(), state.call, state.record
        assert step is not None and call is not None and record is not None
        state.steps.append(
            StepRecord(
                number=step.number,
                attempt=len(state.steps) + 1,
                action=step.action,
                call=call,
                decision=record.decision,
                output=shown(record.feedback),
                passed=passed,
                reason=reason,
                judged_by=judged_by,  # type: ignore[arg-type]
            )
        )
        step.status = "passed" if passed else "failed"
        state.call = state.record = None
        if not passed:
            state.failed, state.failure = step.number, reason
            state.move(PlanTrigger.FAILED)
        elif state.current() is None:
            state.move(PlanTrigger.COMPLETED)
            count = len([s for s in state.plan if s.revision == state.revisions])
            steps = "1 step passed its check" if count == 1 else f"{count} steps passed their checks"
            denied = unmet_denials(state.steps)
            state.done_reason = f"plan completed: all {steps}"
            if denied:
                state.done_reason = f"plan incomplete: {denial_text(denied)}; the revised plan's {steps}"
        else:
            state.move(PlanTrigger.PASSED)
        attempt = len(state.steps)
        failure = fingerprint(reason) if not passed else fingerprint("passed", str(attempt))
        same_call = fingerprint(call.tool, json.dumps(call.args, sort_keys=True))
        return [
            StepFinished(
                source=self.name, step=step.number, attempt=attempt, passed=passed, reason=reason, tool=call.tool
            ),
            RoundCompleted(
                source=self.name,
                round=attempt,
                fingerprints={"call": same_call, "failure": failure},
            ),
        ]

    async def _structured(
        self, agent: ChatAgent, prompt: str, token: CancellationToken, asked: type[BaseModel], reported: type[Any]
    ) -> tuple[Any, BaseChatMessage]:
        """One structured turn: the answer as ``reported`` and its message (as a registered message type)."""
        message = await self._agent_turn(agent, prompt, token, asked)
        content = _content(agent.name, message, asked)
        value = content if type(content) is reported else reported.model_validate(content.model_dump())
        add_usage(self.state.usage, agent.name, message)
        self.state.parse_failures += int(message.metadata.get("parse_failures", "0"))
        out = StructuredMessage[reported](  # type: ignore[valid-type]
            content=value, source=message.source, models_usage=message.models_usage, metadata=dict(message.metadata)
        )
        return value, out

    # ----------------------------------------------------------------- humans
    def _on_human_feedback(self, feedback: HumanFeedbackGiven) -> None:
        """A rejection between steps or after the last sends the plan back to the planner, the reviewer's comment
        as the failure; elsewhere (see ``PLAN_TRANSITIONS``) it changes nothing."""
        state = self.state
        if feedback.action != "reject" or not rejectable(state.phase):
            return
        state.move(PlanTrigger.REJECTED)
        state.failed = state.steps[-1].number if state.steps else None
        state.failure = f"a human reviewer rejected the result: {feedback.comment}"
        state.done_reason = None

    def _feedback_summary(self) -> str:
        lines = [f"{s.number}. [{s.status}] {s.action} ({s.tool})" for s in self.state.plan if s.status != "dropped"]
        if self.state.steps:
            last = self.state.steps[-1]
            lines += ["", f"last step {last.number}: {'passed' if last.passed else 'failed'}: {last.reason}"]
            lines += [f"output: {last.output}"]
        return "\n".join(lines)

    # ----------------------------------------------------------------- result
    def _tool_lines(self) -> list[str]:
        lines = []
        for tool in self.toolbox.tools.values():
            rule = self.policy.rule_for(tool).kind
            note = {"ask": " [needs approval]", "deny": " [not permitted]"}.get(rule, "")
            lines.append(f"{tool.signature()}: {tool.description}{note}")
        return lines

    def _result(self, messages: list[Message], stop_reason: str, partial: bool) -> PlannerExecutorResult:
        state = self.state
        plan = [s.model_copy(deep=True) for s in state.plan]
        latest = [s for s in plan if s.revision == state.revisions]
        return PlannerExecutorResult(
            messages=messages,
            stop_reason=stop_reason,
            plan=plan,
            steps=[s.model_copy(deep=True) for s in state.steps],
            audit=[r.model_copy(deep=True) for r in state.audit],
            completed=bool(latest) and all(s.status == "passed" for s in latest) and not unmet_denials(state.steps),
            revisions=state.revisions,
            partial=partial,
            usage=dict(state.usage),
            parse_failures=state.parse_failures,
        )

    # ----------------------------------------------------------------- config
    def _to_config(self) -> PlannerExecutorConfig:
        unsaved = [f"{t.name} ({t.unsaved_because})" for t in self.tools if t.source is None]
        if unsaved:
            raise ConfigError(
                f"tools {', '.join(unsaved)} cannot be saved as a component: a saved tool is found again by "
                "importing its function as module:name; define it at the top level of a module you import "
                "(from my_tools import add), or use moot's built-in tools"
            )
        checked = [name for name, rule in self.policy.rules.items() if rule.checks]
        if checked:
            raise ConfigError(f"the rules for {', '.join(checked)} have argument checks, which cannot be saved")
        return PlannerExecutorConfig(
            name=self.name,
            description=self.description,
            planner=self.planner.dump_component(),
            executor=self.executor.dump_component(),
            tools=[t.source for t in self.tools if t.source is not None],
            rules={name: RuleConfig(kind=r.kind, reason=r.reason) for name, r in self.policy.rules.items()},
            stop=self._stop_component(),
            max_replans=self.max_replans,
        )

    @classmethod
    def _from_config(cls, config: PlannerExecutorConfig) -> Self:
        rules = {name: Rule(r.kind, (), r.reason) for name, r in config.rules.items()}
        return cls(
            ChatAgent.load_component(config.planner),
            ChatAgent.load_component(config.executor),
            tools=[source.build() for source in config.tools],
            policy=PermissionPolicy(rules),
            stop=loaded_stop(config.stop),
            max_replans=config.max_replans,
            name=config.name,
            description=config.description,
        )


def _content(agent: str, message: BaseChatMessage, asked: type[BaseModel]) -> BaseModel:
    """The structured answer in ``message``; a plain-text reply (an agent that is not a RoleAgent) is parsed."""
    if isinstance(message, StructuredMessage) and isinstance(message.content, BaseModel):
        return message.content
    try:
        return parse_structured(asked, message.to_model_text())
    except (ValidationError, ValueError) as exc:
        raise MalformedOutputError(agent, 1, str(exc)) from None


def _tagged(message: BaseChatMessage, kind: str, **extra: str) -> BaseChatMessage:
    message.metadata = {**message.metadata, "moot_kind": kind, **extra}
    return message


def _history_row(record: StepRecord) -> dict[str, Any]:
    outcome = " ".join(record.output.split())
    return {
        "number": record.number,
        "action": record.action,
        "passed": record.passed,
        "outcome": outcome if len(outcome) <= 200 else outcome[:199] + "…",
    }
