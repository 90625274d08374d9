"""Every tool call passes a permission policy, may need approval, and is written to an audit trail.

    policy = PermissionPolicy(
        {"write_file": Rule.ask(paths_under("notes")), "shell": Rule.deny("no shell here")},
        approver=CallbackApprover(lambda request: request.tool == "write_file"),
    )
    box = ToolBox(builtin_tools("work"), policy)   # files confined to ./work
    record = await box.call("write_file", {"path": "notes/a.txt", "content": "hi"})
    record.decision   # "approved"; record.feedback is what the agent sees; box.audit has every call

A rule is ``allow``, ``deny`` or ``ask`` (needs approval) plus optional
argument checks; a tool without a rule is ``ask`` when it has side effects,
else ``allow``. A denial, a refusal, bad arguments or a failing tool never
raise: the call's :class:`AuditRecord` says what happened and its
``feedback`` is the clear message handed back to the agent. Only a tool
fault (the tool itself broken, :class:`~moot.errors.ToolFaultError`) is
raised, after it is recorded.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.errors import ConfigError, ToolFaultError
from moot.human import Human, HumanQuestion, checked_human
from moot.tools._tool import Tool, ToolError
from moot.tracing import traced

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Approver",
    "ArgCheck",
    "AuditRecord",
    "AuditTrail",
    "CallbackApprover",
    "HumanApprover",
    "PermissionPolicy",
    "Rule",
    "ToolBox",
    "command_allowed",
    "paths_under",
]

RuleKind = Literal["allow", "deny", "ask"]
Decision = Literal["allowed", "approved", "denied", "refused", "invalid"]
"""allowed: ran under an allow rule; approved: ran after approval; denied: the policy said no (rule,
argument check, or nobody to approve); refused: the approver said no; invalid: unknown tool or bad arguments."""

_OUTPUT_CHARS = 4000


# ------------------------------------------------------------------ argument checks
ArgCheck = Callable[[BaseModel], str | None] | type[BaseModel]
"""A predicate returning why the arguments are refused (None: fine), or a stricter pydantic model to validate them."""


def paths_under(*roots: str, field: str = "path") -> Callable[[BaseModel], str | None]:
    """Refuse a ``field`` that is not a relative path under one of ``roots`` (no ``..``, no absolute paths)."""
    prefixes = tuple(r.strip("/") for r in roots)

    def check(args: BaseModel) -> str | None:
        value = str(getattr(args, field, ""))
        parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".")]
        if value.startswith("/") or ".." in parts or not parts:
            return f"{field} {value!r} must be a relative path without '..'"
        if not any(parts[: len(p.split("/"))] == p.split("/") for p in prefixes):
            return f"{field} {value!r} is not under {' or '.join(repr(p + '/') for p in prefixes)}"
        return None

    return check


def command_allowed(*patterns: str, field: str = "command") -> Callable[[BaseModel], str | None]:
    """Refuse a shell ``field`` unless it fully matches one of the regular expressions in ``patterns``."""
    compiled = [re.compile(p) for p in patterns]

    def check(args: BaseModel) -> str | None:
        value = str(getattr(args, field, ""))
        if any(c.fullmatch(value) for c in compiled):
            return None
        return f"{field} {value!r} is not on the allow-list ({', '.join(patterns)})"

    return check


def _run_check(check: ArgCheck, args: BaseModel) -> str | None:
    if isinstance(check, type):
        try:
            check.model_validate(args.model_dump())
        except ValidationError as exc:
            return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}" for e in exc.errors()[:3])
        return None
    return check(args)


@dataclass(frozen=True)
class Rule:
    """What the policy does with one tool: ``allow``, ``deny`` or ``ask``, after the argument ``checks`` pass."""

    kind: RuleKind
    checks: tuple[ArgCheck, ...] = ()
    reason: str = ""
    """Shown to the agent when the rule denies (``Rule.deny("no network in tests")``)."""

    def __post_init__(self) -> None:
        """A rule of an unknown kind, or checks that are not checks, is refused here, not at the tool call."""
        if self.kind not in ("allow", "deny", "ask"):
            raise ConfigError(f"Rule: kind must be one of allow, deny, ask, got {self.kind!r}")
        if isinstance(self.checks, str) or not all(callable(c) for c in self.checks):
            raise ConfigError("Rule: checks must be functions of the arguments or pydantic models, e.g. Rule.allow(f)")
        if not isinstance(self.reason, str):
            raise ConfigError(f"Rule: reason must be a string, got {type(self.reason).__name__}")

    @classmethod
    def allow(cls, *checks: ArgCheck) -> Rule:
        return cls("allow", checks)

    @classmethod
    def ask(cls, *checks: ArgCheck) -> Rule:
        return cls("ask", checks)

    @classmethod
    def deny(cls, reason: str = "") -> Rule:
        return cls("deny", (), reason)


@dataclass
class PermissionPolicy:
    """Per-tool rules; tools without one: ``ask`` if they have side effects, else ``allow``."""

    rules: Mapping[str, Rule] = field(default_factory=dict)
    approver: Approver | Human | None = None
    """Who answers ``ask`` rules: an :class:`Approver` or a :class:`~moot.human.Human` (asked a yes/no question);
    None: such calls are denied (nobody to approve them)."""

    def __post_init__(self) -> None:
        """Rules keyed by tool name, each a Rule, and an approver that can be called: else refused in one line."""
        if not isinstance(self.rules, Mapping) or not all(
            isinstance(k, str) and isinstance(r, Rule) for k, r in self.rules.items()
        ):
            raise ConfigError("PermissionPolicy: rules must map tool names to Rules, e.g. {'run_python': Rule.deny()}")
        if self.approver is not None and not _answers(self.approver):
            raise ConfigError(
                f"PermissionPolicy: approver must be an Approver (e.g. CallbackApprover(fn)) or a Human, "
                f"got {type(self.approver).__name__}"
            )

    def rule_for(self, tool: Tool) -> Rule:
        """The tool's own rule, else the default: ``ask`` for side effects, ``allow`` otherwise."""
        found = self.rules.get(tool.name)
        if found is not None:
            return found
        return Rule("ask") if tool.side_effects else Rule("allow")


# ------------------------------------------------------------------ approval
class ApprovalRequest(BaseModel):
    """What an approver is asked about."""

    tool: str
    description: str
    args: dict[str, Any]
    side_effects: bool
    step_id: str | None = None


class Approval(BaseModel):
    """An approver's answer; ``reason`` is optional for a yes and shown to the agent for a no."""

    approved: bool
    reason: str = ""
    by: str = ""


@runtime_checkable
class Approver(Protocol):
    """Answers approval requests: a person at a console, a callback, a remote review queue."""

    name: str

    async def approve(self, request: ApprovalRequest) -> Approval: ...


ApprovalCallback = Callable[[ApprovalRequest], bool | Approval | Awaitable[bool | Approval]]


class CallbackApprover:
    """Approval from code: ``fn(request)`` returns (or awaits) a bool or an :class:`Approval`."""

    def __init__(self, fn: ApprovalCallback, *, name: str = "callback") -> None:
        self.fn = fn
        self.name = name

    async def approve(self, request: ApprovalRequest) -> Approval:
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, Approval):
            return answer if answer.by else answer.model_copy(update={"by": self.name})
        return Approval(approved=bool(answer), by=self.name)


class HumanApprover:
    """An :class:`Approver` answered by a :class:`~moot.human.Human`: the tool call is put to them as a yes/no
    question (one protocol for every question put to a person; ``moot.display.ConsoleApprover`` is this one
    answered at a terminal). An answer other than approve refuses the call; its comment is the reason."""

    def __init__(self, human: Human) -> None:
        self.human = checked_human(human, "HumanApprover")
        self.name = human.name

    async def approve(self, request: ApprovalRequest) -> Approval:
        answer = await self.human.answer(approval_question(request))
        return Approval(approved=answer.approved, reason=answer.comment.strip(), by=answer.by or self.name)


def approval_question(request: ApprovalRequest) -> HumanQuestion:
    """A tool call as a person sees it: its name, whether it has side effects, and its arguments as JSON."""
    effects = " (has side effects)" if request.side_effects else ""
    return HumanQuestion(
        title=f"approve tool call: {request.tool}{effects}",
        shown=json.dumps(request.args, indent=2, ensure_ascii=False),
        prompt="run it?",
        kind="approval",
        subject=request,
    )


def as_approver(answerer: Approver | Human) -> Approver:
    """The policy's approver as an :class:`Approver`: a :class:`~moot.human.Human` is asked through
    :class:`HumanApprover`, so the same answerer can serve a team's feedback points and its tool calls."""
    if callable(getattr(answerer, "approve", None)):
        return answerer  # type: ignore[return-value]
    return HumanApprover(answerer)  # type: ignore[arg-type]


def _answers(approver: object) -> bool:
    """``approver`` can answer an approval: an Approver (``approve``) or a Human (``answer``)."""
    return callable(getattr(approver, "approve", None)) or isinstance(approver, Human)


# ------------------------------------------------------------------ audit
class AuditRecord(BaseModel):
    """One tool call: what was asked, what the policy and approver decided, and what came of it."""

    model_config = ConfigDict(extra="forbid")

    seq: int
    step_id: str | None = None
    tool: str
    args: dict[str, Any]
    rule: RuleKind | None = None
    """The rule applied; None when the call was invalid before any rule applied."""
    decision: Decision
    approver: str | None = None
    reason: str = ""
    """Why it was denied, refused or invalid; the approver's reason when approved."""
    ok: bool = False
    """The tool ran and succeeded."""
    output: str = ""
    error: str | None = None
    started_at: float = Field(default_factory=time.time)
    ended_at: float = Field(default_factory=time.time)

    @property
    def ran(self) -> bool:
        return self.decision in ("allowed", "approved")

    @property
    def feedback(self) -> str:
        """The message handed back to the agent: the output, an error, or a clear refusal."""
        if self.ok:
            return self.output or "(no output)"
        if self.ran:
            return f"ERROR: {self.tool} failed: {self.error}"
        verb = {"denied": "denied by the permission policy", "refused": f"refused by {self.approver}"}
        why = verb.get(self.decision, "invalid")
        return f"REFUSED: {self.tool} was not run ({why}): {self.reason}. Do not retry it as is; choose another way."


class AuditTrail(BaseModel):
    """Every tool call of a run, in order. Iterable; ``for_tool(name)`` filters."""

    records: list[AuditRecord] = []

    def append(self, record: AuditRecord) -> None:
        self.records.append(record)

    def __iter__(self) -> Iterator[AuditRecord]:  # type: ignore[override]
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def for_tool(self, name: str) -> list[AuditRecord]:
        return [r for r in self.records if r.tool == name]


# ------------------------------------------------------------------ the gate
class ToolBox:
    """Tools behind a policy: ``await box.call(name, args)`` checks, asks, runs, audits; it never raises
    for a refusal or a failing tool, only for a tool fault."""

    def __init__(
        self,
        tools: Sequence[Tool | Callable[..., Any]],
        policy: PermissionPolicy | None = None,
        audit: AuditTrail | None = None,
    ) -> None:
        tools = [t if isinstance(t, Tool) else Tool.from_function(t) for t in tools]  # plain functions, as AutoGen
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ConfigError(f"tool names must be unique, got {', '.join(names)}")
        self.tools = {t.name: t for t in tools}
        self.policy = policy or PermissionPolicy()
        self.audit = audit if audit is not None else AuditTrail()

    async def call(
        self, name: str, args: Mapping[str, Any], *, step_id: str | None = None, audit: AuditTrail | None = None
    ) -> AuditRecord:
        trail = audit if audit is not None else self.audit
        record = AuditRecord(seq=len(trail), step_id=step_id, tool=name, args=dict(args), decision="invalid")
        with traced("tool_call", name, step_id=step_id, args=record.args) as span:
            try:
                await self._decide_and_run(record)
            except ToolFaultError as exc:
                record.error = str(exc)
                raise
            finally:
                record.ended_at = time.time()
                trail.append(record)
                if span is not None:
                    span.attributes.update(decision=record.decision, ok=record.ok, approver=record.approver)
                    span.output = record.output if record.ok else record.feedback
        return record

    async def _decide_and_run(self, record: AuditRecord) -> None:
        tool = self.tools.get(record.tool)
        if tool is None:
            record.reason = f"unknown tool {record.tool!r}; available tools: {', '.join(self.tools) or 'none'}"
            return
        try:
            args = tool.args.model_validate(record.args)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}" for e in exc.errors()[:4])
            record.reason = f"bad arguments for {tool.name}: {problems}"
            return
        rule = self.policy.rule_for(tool)
        record.rule = rule.kind
        if not await self._permitted(tool, args, rule, record):
            return
        await _execute(tool, args, record)

    async def _permitted(self, tool: Tool, args: BaseModel, rule: Rule, record: AuditRecord) -> bool:
        if rule.kind == "deny":
            record.decision, record.reason = "denied", rule.reason or f"the policy denies {tool.name}"
            return False
        for check in rule.checks:
            problem = _run_check(check, args)
            if problem:
                record.decision, record.reason = "denied", f"argument check failed: {problem}"
                return False
        if rule.kind == "allow":
            record.decision = "allowed"
            return True
        if self.policy.approver is None:
            record.decision, record.reason = "denied", f"{tool.name} needs approval and no approver is attached"
            return False
        request = ApprovalRequest(
            tool=tool.name,
            description=tool.description,
            args=args.model_dump(),
            side_effects=tool.side_effects,
            step_id=record.step_id,
        )
        approver = as_approver(self.policy.approver)
        answer = await approver.approve(request)
        record.approver = answer.by or approver.name
        record.decision = "approved" if answer.approved else "refused"
        record.reason = answer.reason or ("" if answer.approved else "no reason given")
        return answer.approved


async def _execute(tool: Tool, args: BaseModel, record: AuditRecord) -> None:
    record.started_at = time.time()
    try:
        output = await tool.fn(args)
    except ToolFaultError:
        raise
    except ToolError as exc:
        record.error = str(exc)[:_OUTPUT_CHARS]
        return
    except Exception as exc:  # a tool's bug or an OS error: the agent is told, the run goes on
        record.error = f"{type(exc).__name__}: {exc}"[:_OUTPUT_CHARS]
        return
    record.ok = True
    text = str(output)
    record.output = text if len(text) <= _OUTPUT_CHARS else text[:_OUTPUT_CHARS] + "…"
