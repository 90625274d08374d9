"""Tool permissions: allow / deny / approve paths, argument checks, refusals as messages, the audit trail."""

from __future__ import annotations

import io

import pytest
from pydantic import BaseModel, ConfigDict, field_validator
from rich.console import Console

from moot.display import ConsoleApprover
from moot.errors import ConfigError, ToolFaultError
from moot.sandbox import SandboxLimits, SandboxResult, SandboxStatus
from moot.tools import (
    Approval,
    ApprovalRequest,
    AuditTrail,
    CallbackApprover,
    PermissionPolicy,
    Rule,
    Tool,
    ToolBox,
    ToolError,
    builtin_tools,
    command_allowed,
    paths_under,
    run_python_tool,
)
from moot.tracing import Tracer

FAST = SandboxLimits(wall_seconds=5, test_seconds=2, cpu_seconds=2, memory_mb=256)


class ShellArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


async def _shell(args: ShellArgs) -> str:
    return f"ran {args.command}"


async def _echo(args: EchoArgs) -> str:
    return args.text


SHELL = Tool("shell", "Run a shell command.", ShellArgs, _shell, side_effects=True)
ECHO = Tool("echo", "Echo the text back.", EchoArgs, _echo)


def rows(trail: AuditTrail) -> list[tuple]:
    """(tool, rule, decision, approver, ok, reason or output): what an auditor reads."""
    return [(r.tool, r.rule, r.decision, r.approver, r.ok, r.reason or r.output or r.error) for r in trail]


def box(tmp_path, policy: PermissionPolicy | None = None) -> ToolBox:
    return ToolBox([*builtin_tools(tmp_path / "work", FAST), SHELL, ECHO], policy)


# ------------------------------------------------------------------ defaults
async def test_by_default_side_effects_need_approval_and_without_an_approver_are_denied(tmp_path):
    tools = box(tmp_path)
    read_missing = await tools.call("read_file", {"path": "a.txt"})
    write = await tools.call("write_file", {"path": "a.txt", "content": "hi"})
    assert rows(tools.audit) == [
        ("read_file", "allow", "allowed", None, False, "no file 'a.txt' in the work directory"),
        ("write_file", "ask", "denied", None, False, "write_file needs approval and no approver is attached"),
    ]
    assert not (tmp_path / "work" / "a.txt").exists()
    assert read_missing.feedback == "ERROR: read_file failed: no file 'a.txt' in the work directory"
    assert write.feedback == (
        "REFUSED: write_file was not run (denied by the permission policy): "
        "write_file needs approval and no approver is attached. Do not retry it as is; choose another way."
    )


async def test_allow_deny_and_approve_paths_are_each_audited(tmp_path):
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval(approved=True, reason="looks safe")

    policy = PermissionPolicy({"shell": Rule.deny("no shell in this run")}, approver=CallbackApprover(approve))
    tools = box(tmp_path, policy)
    await tools.call("echo", {"text": "hello"}, step_id="r:1")
    await tools.call("shell", {"command": "ls"}, step_id="r:2")
    await tools.call("write_file", {"path": "notes/a.txt", "content": "hi"}, step_id="r:3")
    await tools.call("read_file", {"path": "notes/a.txt"}, step_id="r:4")

    assert rows(tools.audit) == [
        ("echo", "allow", "allowed", None, True, "hello"),
        ("shell", "deny", "denied", None, False, "no shell in this run"),
        ("write_file", "ask", "approved", "callback", True, "looks safe"),
        ("read_file", "allow", "allowed", None, True, "hi"),
    ]
    assert [r.step_id for r in tools.audit] == ["r:1", "r:2", "r:3", "r:4"]
    assert [r.seq for r in tools.audit] == [0, 1, 2, 3]
    assert all(r.started_at <= r.ended_at for r in tools.audit)
    assert asked == [
        ApprovalRequest(
            tool="write_file",
            description="Write a text file in the work directory.",
            args={"path": "notes/a.txt", "content": "hi"},
            side_effects=True,
            step_id="r:3",
        )
    ]
    assert (tmp_path / "work" / "notes" / "a.txt").read_text() == "hi"


async def test_a_refusal_is_returned_as_a_clear_message_with_the_approvers_reason(tmp_path):
    async def refuse(request: ApprovalRequest) -> Approval:
        return Approval(approved=False, reason="not on a Friday", by="alice")

    tools = box(tmp_path, PermissionPolicy(approver=CallbackApprover(refuse)))
    record = await tools.call("write_file", {"path": "a.txt", "content": "x"})
    assert (record.decision, record.approver, record.ran, record.ok) == ("refused", "alice", False, False)
    assert record.feedback == (
        "REFUSED: write_file was not run (refused by alice): not on a Friday. "
        "Do not retry it as is; choose another way."
    )
    assert not (tmp_path / "work" / "a.txt").exists()


async def test_a_plain_bool_callback_approves_and_an_allow_rule_skips_the_approver(tmp_path):
    calls = []
    approver = CallbackApprover(lambda request: calls.append(request.tool) or True, name="bot")
    tools = box(tmp_path, PermissionPolicy({"shell": Rule.allow()}, approver=approver))
    await tools.call("shell", {"command": "ls"})
    await tools.call("write_file", {"path": "a.txt", "content": "x"})
    assert [(r.tool, r.decision, r.approver) for r in tools.audit] == [
        ("shell", "allowed", None),
        ("write_file", "approved", "bot"),
    ]
    assert calls == ["write_file"]


# ------------------------------------------------------------------ argument checks
async def test_argument_checks_refuse_paths_outside_a_folder_and_commands_off_the_allow_list(tmp_path):
    policy = PermissionPolicy(
        {
            "write_file": Rule.ask(paths_under("src", "docs")),
            "shell": Rule.allow(command_allowed(r"ls( -l)?", r"cat [\w./-]+")),
        },
        approver=CallbackApprover(lambda request: True),
    )
    tools = box(tmp_path, policy)
    await tools.call("write_file", {"path": "src/a.py", "content": "x"})
    await tools.call("write_file", {"path": "a.py", "content": "x"})
    await tools.call("write_file", {"path": "src/../../etc/passwd", "content": "x"})
    await tools.call("shell", {"command": "ls -l"})
    await tools.call("shell", {"command": "rm -rf /"})
    assert rows(tools.audit) == [
        ("write_file", "ask", "approved", "callback", True, "wrote 1 characters to src/a.py"),
        (
            "write_file",
            "ask",
            "denied",
            None,
            False,
            "argument check failed: path 'a.py' is not under 'src/' or 'docs/'",
        ),
        (
            "write_file",
            "ask",
            "denied",
            None,
            False,
            "argument check failed: path 'src/../../etc/passwd' must be a relative path without '..'",
        ),
        ("shell", "allow", "allowed", None, True, "ran ls -l"),
        (
            "shell",
            "allow",
            "denied",
            None,
            False,
            r"argument check failed: command 'rm -rf /' is not on the allow-list (ls( -l)?, cat [\w./-]+)",
        ),
    ]


class SmallPythonFile(BaseModel):
    """A pydantic validator as an argument check: only small .py files."""

    path: str
    content: str

    @field_validator("path")
    @classmethod
    def _python(cls, value: str) -> str:
        if not value.endswith(".py"):
            raise ValueError("only .py files may be written")
        return value

    @field_validator("content")
    @classmethod
    def _small(cls, value: str) -> str:
        if len(value) > 10:
            raise ValueError("at most 10 characters")
        return value


async def test_a_pydantic_model_validates_arguments_as_a_check(tmp_path):
    tools = box(tmp_path, PermissionPolicy({"write_file": Rule.allow(SmallPythonFile)}))
    await tools.call("write_file", {"path": "a.py", "content": "x = 1"})
    await tools.call("write_file", {"path": "a.txt", "content": "x"})
    await tools.call("write_file", {"path": "b.py", "content": "x" * 11})
    assert [(r.decision, r.reason) for r in tools.audit] == [
        ("allowed", ""),
        ("denied", "argument check failed: path: Value error, only .py files may be written"),
        ("denied", "argument check failed: content: Value error, at most 10 characters"),
    ]


async def test_unknown_tools_and_bad_arguments_are_invalid_calls_not_errors(tmp_path):
    tools = box(tmp_path)
    unknown = await tools.call("delete_everything", {})
    bad = await tools.call("echo", {"txt": "typo"})
    assert (unknown.decision, unknown.rule) == ("invalid", None)
    assert unknown.reason == (
        "unknown tool 'delete_everything'; available tools: run_python, read_file, write_file, shell, echo"
    )
    assert bad.decision == "invalid"
    assert bad.reason == "bad arguments for echo: text: Field required; txt: Extra inputs are not permitted"
    assert bad.feedback.startswith("REFUSED: echo was not run (invalid): bad arguments for echo")
    assert len(tools.audit) == 2


# ------------------------------------------------------------------ tools failing
async def test_a_failing_tool_is_reported_to_the_agent_and_the_run_goes_on(tmp_path):
    async def broken(args: EchoArgs) -> str:
        raise RuntimeError("disk on fire")

    async def refusing(args: EchoArgs) -> str:
        raise ToolError("nothing to echo")

    tools = ToolBox([Tool("broken", "b", EchoArgs, broken), Tool("refusing", "r", EchoArgs, refusing)])
    first = await tools.call("broken", {"text": "x"})
    second = await tools.call("refusing", {"text": "x"})
    assert (first.ran, first.ok, first.error) == (True, False, "RuntimeError: disk on fire")
    assert second.feedback == "ERROR: refusing failed: nothing to echo"


async def test_a_tool_fault_is_recorded_then_raised(tmp_path):
    def sandbox_down(code, tests, limits, entry_points=()):
        return SandboxResult(status=SandboxStatus.TOOL_FAULT, tool_error="harness crashed")

    tools = ToolBox([run_python_tool(FAST, runner=sandbox_down, tool_retries=1)])
    with pytest.raises(ToolFaultError, match="run_python failed on its own side 2 times"):
        await tools.call("run_python", {"code": "print(1)"})
    [record] = tools.audit
    assert (record.decision, record.ok) == ("allowed", False)
    assert "harness crashed" in record.error


# ------------------------------------------------------------------ built-in tools
async def test_files_are_confined_to_the_work_directory(tmp_path):
    (tmp_path / "secret.txt").write_text("top secret")
    tools = ToolBox(builtin_tools(tmp_path / "work", FAST), PermissionPolicy({"write_file": Rule.allow()}))
    escape = await tools.call("read_file", {"path": "../secret.txt"})
    absolute = await tools.call("write_file", {"path": str(tmp_path / "x.txt"), "content": "x"})
    assert escape.error == "path '../secret.txt' is outside the work directory; use a relative path such as 'notes.txt'"
    assert absolute.ok is False and "outside the work directory" in absolute.error
    assert not (tmp_path / "x.txt").exists()


async def test_run_python_runs_in_the_sandbox_and_reports_failures_as_errors(tmp_path):
    tools = ToolBox([run_python_tool(FAST)])
    printed = await tools.call("run_python", {"code": "print(6 * 7)"})
    tested = await tools.call("run_python", {"code": "def f(): return 1", "tests": ["assert f() == 2"]})
    crashed = await tools.call("run_python", {"code": "1 / 0"})
    assert (printed.ok, printed.output) == (True, "42")
    assert (tested.ok, tested.error) == (False, "1 of 1 tests failed: `f() == 2` failed: got 1, expected 2")
    assert crashed.error == "the code failed: ZeroDivisionError: division by zero"


def test_tool_names_must_be_identifiers_and_unique():
    with pytest.raises(ConfigError, match="bad tool name 'write file'"):
        Tool("write file", "w", EchoArgs, _echo)
    with pytest.raises(ConfigError, match="tool names must be unique, got echo, echo"):
        ToolBox([ECHO, ECHO])


# ------------------------------------------------------------------ console approver, tracing
async def test_console_approver_reads_yes_no_and_a_reason(tmp_path):
    screen = io.StringIO()
    console = Console(file=screen, width=100, color_system=None)
    approver = ConsoleApprover(console, io.StringIO("y\nchecked the path\nn\n\n"))
    tools = box(tmp_path, PermissionPolicy(approver=approver))
    await tools.call("write_file", {"path": "a.txt", "content": "hi"})
    await tools.call("shell", {"command": "ls"})
    assert rows(tools.audit) == [
        ("write_file", "ask", "approved", "console", True, "checked the path"),
        ("shell", "ask", "refused", "console", False, "no reason given"),
    ]
    shown = screen.getvalue()
    assert "approve tool call: write_file (has side effects)" in shown
    assert '"path": "a.txt"' in shown and "run it?" in shown


async def test_every_call_is_a_tool_call_span_in_the_runs_trace(tmp_path):
    class Collect:
        def __init__(self):
            self.events = []

        def emit(self, event):
            self.events.append(event)

    sink = Collect()
    tracer = Tracer([sink])
    tools = box(tmp_path)
    with tracer.activate("trace-1"):
        await tools.call("echo", {"text": "hi"}, step_id="trace-1:step1")
        await tools.call("write_file", {"path": "a.txt", "content": "x"})
    spans = [(e.kind, e.name, e.step_id, e.attributes["decision"], e.attributes["ok"]) for e in sink.events]
    assert spans == [
        ("tool_call", "echo", "trace-1:step1", "allowed", True),
        ("tool_call", "write_file", None, "denied", False),
    ]
    assert sink.events[0].attributes["args"] == {"text": "hi"}
    assert sink.events[1].output.startswith("REFUSED: write_file was not run")
