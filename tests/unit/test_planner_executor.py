"""PlannerExecutor: checked steps, tool calls through the policy, re-planning, stops, save/load."""

from __future__ import annotations

import asyncio
import json

import pytest
from autogen_agentchat.messages import StructuredMessage
from pydantic import BaseModel, ConfigDict

from moot.conditions import MaxSteps, NoProgress, TokenBudget
from moot.display import result_markdown
from moot.errors import ConfigError
from moot.messages import StepFinished, ToolExecuted
from moot.roles import Plan, RoleAgent, Step, StepResult, ToolCall, role
from moot.roles._plan import tool_call_type
from moot.sandbox import SandboxLimits
from moot.teams import PlannerExecutor, PlannerExecutorResult
from moot.testing import ScriptedModel
from moot.tools import CallbackApprover, PermissionPolicy, Rule, Tool, ToolError, builtin_tools

TASK = "Write hello.py that prints 'hello', then run it."


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


class AddArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int
    b: int


async def _echo(args: EchoArgs) -> str:
    return args.text


async def _add(args: AddArgs) -> str:
    if args.a < 0:
        raise ToolError("negative numbers are not supported")
    return str(args.a + args.b)


ECHO = Tool("echo", "Echo text back.", EchoArgs, _echo)
ADD = Tool("add", "Add two integers.", AddArgs, _add)


def step(action: str, tool: str, check: str = "tool_ok", expect: str = "") -> Step:
    return Step(action=action, tool=tool, check=check, expect=expect)  # type: ignore[arg-type]


def plan(*steps: Step) -> Plan:
    return Plan(reasoning="one call per step", steps=list(steps))


def call(tool: str, **args) -> ToolCall:
    return ToolCall(reasoning=f"use {tool}", tool=tool, args=args)


def team(model: ScriptedModel, *, tools=(ECHO, ADD), policy=None, stop=None, **options) -> PlannerExecutor:
    return PlannerExecutor(
        RoleAgent(role("planner"), model.spec),
        RoleAgent(role("executor"), model.spec),
        tools=list(tools),
        policy=policy,
        stop=stop or MaxSteps(10),
        **options,
    )


def outline(result: PlannerExecutorResult) -> list[tuple]:
    return [(s.number, s.call.tool, s.decision, s.passed, s.reason) for s in result.steps]


def statuses(result: PlannerExecutorResult) -> list[tuple[int, str, str]]:
    return [(s.number, s.action, s.status) for s in result.plan]


def normalised(messages) -> list[tuple[str, str, str]]:
    rows = []
    for m in messages:
        if isinstance(m, StructuredMessage):
            text = type(m.content).__name__
        else:
            text = m.to_text()
        rows.append((type(m).__name__, m.source, text))
    return rows


def prompts(model: ScriptedModel, agent: str) -> list[str]:
    return [c.messages[-1].content for c in model.calls(agent)]


# ------------------------------------------------------------------ the happy path
async def test_a_plan_runs_step_by_step_through_the_policy_to_completion(tmp_path):
    approved = []
    policy = PermissionPolicy(approver=CallbackApprover(lambda r: approved.append(r.args["path"]) or True))
    tools = builtin_tools(tmp_path / "work", SandboxLimits(wall_seconds=5, test_seconds=2))
    model = ScriptedModel(
        {
            "planner": [
                plan(
                    step("write hello.py printing hello", "write_file"),
                    step("read hello.py back", "read_file", "output_contains", "print"),
                    step("run the program", "run_python", "output_equals", "hello"),
                )
            ],
            "executor": [
                call("write_file", path="hello.py", content="print('hello')\n"),
                call("read_file", path="hello.py"),
                call("run_python", code="print('hello')", tests=[]),
            ],
        }
    )
    with model:
        result = await team(model, tools=tools, policy=policy).run(task=TASK)

    assert result.stop_reason == "plan completed: all 3 steps passed their checks"
    assert result.completed and not result.partial
    shown = result_markdown(result)  # a notebook and moot run show the same blocks
    assert shown.startswith("#### PlannerExecutor · plan completed")
    assert "| 3 | run the program | passed |" in shown
    assert '| write_file | {"path": "hello.py", "content": "print(\'hello\')\\n"} | approved | yes |' in shown
    assert outline(result) == [
        (1, "write_file", "approved", True, "write_file ran without error"),
        (2, "read_file", "allowed", True, "the output contains 'print'"),
        (3, "run_python", "allowed", True, "the output is 'hello'"),
    ]
    assert [(r.tool, r.decision, r.approver, r.ok) for r in result.audit] == [
        ("write_file", "approved", "callback", True),
        ("read_file", "allowed", None, True),
        ("run_python", "allowed", None, True),
    ]
    assert approved == ["hello.py"]
    assert result.answer == "hello"
    assert set(result.usage) == {"planner", "executor"}
    assert normalised(result.messages) == [
        ("TextMessage", "user", TASK),
        ("StructuredMessage[Plan]", "planner", "Plan"),
        ("StructuredMessage[ToolCall]", "executor", "ToolCall"),
        (
            "ToolExecuted",
            "planner_executor",
            "step 1: write_file(path='hello.py', content=\"print('hello')\") approved: wrote 15 characters to hello.py",
        ),
        ("StepFinished", "planner_executor", "step 1 passed: write_file ran without error"),
        ("RoundCompleted", "planner_executor", "round 1 completed"),
        ("StructuredMessage[ToolCall]", "executor", "ToolCall"),
        ("ToolExecuted", "planner_executor", "step 2: read_file(path='hello.py') allowed: print('hello')"),
        ("StepFinished", "planner_executor", "step 2 passed: the output contains 'print'"),
        ("RoundCompleted", "planner_executor", "round 2 completed"),
        ("StructuredMessage[ToolCall]", "executor", "ToolCall"),
        ("ToolExecuted", "planner_executor", "step 3: run_python(code=\"print('hello')\", tests=[]) allowed: hello"),
        ("StepFinished", "planner_executor", "step 3 passed: the output is 'hello'"),
        ("RoundCompleted", "planner_executor", "round 3 completed"),
    ]


async def test_the_executor_is_asked_for_a_tool_call_narrowed_to_the_teams_tools():
    model = ScriptedModel({"planner": [plan(step("echo hi", "echo"))], "executor": [call("echo", text="hi")]})
    with model:
        await team(model).run(task="say hi")
    [executor_call] = model.calls("executor")
    schema = executor_call.json_output.model_json_schema()
    assert schema["properties"]["tool"]["enum"] == ["echo", "add"]
    assert {d for d in schema["$defs"]} == {"EchoArgs", "AddArgs"}
    prompt = executor_call.messages[-1].content
    assert "- echo(text: string): Echo text back." in prompt
    assert "Step 1 of 1: echo hi" in prompt
    [planner_call] = model.calls("planner")
    step_schema = planner_call.json_output.model_json_schema()["$defs"]["Step"]
    assert step_schema["properties"]["tool"]["enum"] == ["echo", "add"]


async def test_a_judged_step_asks_the_executor_for_a_step_result():
    model = ScriptedModel(
        {
            "planner": [plan(step("add 2 and 2", "add", "judge"))],
            "executor": [
                call("add", a=2, b=2),
                StepResult(reasoning="2 + 2 is 4, the output is 4", success=True, summary="the sum is 4"),
            ],
        }
    )
    with model:
        result = await team(model).run(task="add 2 and 2")
    assert outline(result) == [(1, "add", "allowed", True, "the sum is 4")]
    assert result.steps[0].judged_by == "executor"
    judge_prompt = prompts(model, "executor")[1]
    assert 'You called add with:\n{"a": 2, "b": 2}' in judge_prompt and "Its output:\n4" in judge_prompt
    assert normalised(result.messages)[3:6] == [
        ("ToolExecuted", "planner_executor", "step 1: add(a=2, b=2) allowed: 4"),
        ("StructuredMessage[StepResult]", "executor", "StepResult"),
        ("StepFinished", "planner_executor", "step 1 passed: the sum is 4"),
    ]


# ------------------------------------------------------------------ failure and re-planning
async def test_a_failed_check_makes_the_planner_revise_the_remaining_plan_with_the_reason():
    model = ScriptedModel(
        {
            "planner": [
                plan(step("compute 20 + 21", "add", "output_equals", "42"), step("echo done", "echo")),
                plan(step("compute 20 + 22", "add", "output_equals", "42"), step("echo done", "echo")),
            ],
            "executor": [call("add", a=20, b=21), call("add", a=20, b=22), call("echo", text="done")],
        }
    )
    with model:
        result = await team(model).run(task="get 42, then say done")

    assert result.stop_reason == "plan completed: all 2 steps passed their checks"
    assert result.completed and result.revisions == 1
    assert outline(result) == [
        (1, "add", "allowed", False, "the output is not '42'; it was: '41'"),
        (3, "add", "allowed", True, "the output is '42'"),
        (4, "echo", "allowed", True, "echo ran without error"),
    ]
    assert statuses(result) == [
        (1, "compute 20 + 21", "failed"),
        (2, "echo done", "dropped"),
        (3, "compute 20 + 22", "passed"),
        (4, "echo done", "passed"),
    ]
    replan = prompts(model, "planner")[1]
    assert "Step 1 failed: compute 20 + 21 (add)\nReason: the output is not '42'; it was: '41'" in replan
    assert "The rest of the old plan:\n2. echo done (echo)" in replan
    assert "1. compute 20 + 21 -> failed: 41" in prompts(model, "executor")[1]


async def test_a_refusal_fails_the_step_and_is_fed_back_to_planner_and_executor(tmp_path):
    tools = [*builtin_tools(tmp_path, SandboxLimits()), ECHO]
    model = ScriptedModel(
        {
            "planner": [
                plan(step("write notes.txt", "write_file")),
                plan(step("echo the notes instead", "echo")),
            ],
            "executor": [call("write_file", path="notes.txt", content="x"), call("echo", text="x")],
        }
    )
    with model:  # no approver: write_file (side effects) is denied, and the run goes on
        result = await team(model, tools=tools).run(task="keep a note")
    refusal = (
        "REFUSED: write_file was not run (denied by the permission policy): write_file needs approval and no "
        "approver is attached. Do not retry it as is; choose another way."
    )
    assert outline(result) == [
        (1, "write_file", "denied", False, refusal),
        (2, "echo", "allowed", True, "echo ran without error"),
    ]
    assert result.steps[0].output == refusal
    assert [(r.tool, r.decision) for r in result.audit] == [("write_file", "denied"), ("echo", "allowed")]
    assert result.completed is False  # the revised plan passed, but the note was never written
    assert result.stop_reason == (
        "plan incomplete: step 1 (write notes.txt) was denied: write_file did not run; "
        "the revised plan's 1 step passed its check"
    )
    assert f"Reason: {refusal}" in prompts(model, "planner")[1]
    assert (
        "write_file(path: string, content: string): Write a text file in the work directory. [needs approval]"
        in (prompts(model, "planner")[0])
    )
    assert f"1. write notes.txt -> failed: {refusal}" in prompts(model, "executor")[1]
    assert not (tmp_path / "notes.txt").exists()


async def test_a_denied_tool_is_marked_in_the_prompts():
    model = ScriptedModel({"planner": [plan(step("echo", "echo"))], "executor": [call("echo", text="x")]})
    with model:
        await team(model, policy=PermissionPolicy({"add": Rule.deny()})).run(task="t")
    assert "- add(a: integer, b: integer): Add two integers. [not permitted]" in prompts(model, "planner")[0]


async def test_the_team_gives_up_after_max_replans():
    model = ScriptedModel(
        {
            "planner": [plan(step("add -1 and 1", "add")), plan(step("add -2 and 2", "add"))],
            "executor": [call("add", a=-1, b=1), call("add", a=-2, b=2)],
        }
    )
    with model:
        result = await team(model, stop=NoProgress(3), max_replans=1).run(task="add")
    assert result.stop_reason == (
        "gave up: step 2 failed after 1 plan revision(s); last failure: add failed: negative numbers are not supported"
    )
    assert not result.completed and result.revisions == 1


# ------------------------------------------------------------------ stops
async def test_the_same_call_repeating_stops_on_no_progress():
    model = ScriptedModel(
        {
            "planner": [plan(step("add -1 and 1", "add")), plan(step("try adding again", "add"))],
            "executor": [call("add", a=-1, b=1), call("add", a=-1, b=1)],
        }
    )
    with model:
        result = await team(model, stop=NoProgress(1) | MaxSteps(10)).run(task="add")
    assert result.stop_reason == "no progress: call unchanged for 1 round(s) (round 2)"
    assert [s.passed for s in result.steps] == [False, False]


async def test_the_same_failure_repeating_stops_on_no_progress():
    model = ScriptedModel(
        {
            "planner": [plan(step("add -1 and 1", "add")), plan(step("add -1 and 5", "add"))],
            "executor": [call("add", a=-1, b=1), call("add", a=-1, b=5)],
        }
    )
    with model:
        result = await team(model, stop=NoProgress(1)).run(task="add")
    assert result.stop_reason == "no progress: failure unchanged for 1 round(s) (round 2)"


async def test_max_steps_stops_the_run_with_the_plan_incomplete():
    model = ScriptedModel(
        {
            "planner": [plan(step("one", "echo"), step("two", "echo"), step("three", "echo"))],
            "executor": [call("echo", text="1"), call("echo", text="2")],
        }
    )
    with model:
        result = await team(model, stop=MaxSteps(2)).run(task="count")
    assert result.stop_reason == "max steps: 2 of 2 steps done"
    assert not result.completed
    assert statuses(result) == [(1, "one", "passed"), (2, "two", "passed"), (3, "three", "pending")]


async def test_a_token_budget_stops_the_run():
    model = ScriptedModel({"planner": [plan(step("one", "echo"), step("two", "echo"))], "executor": []})
    with model:
        result = await team(model, stop=TokenBudget(10)).run(task="count")
    assert result.stop_reason.startswith("token budget:")
    assert result.steps == []


async def test_a_broken_tool_ends_the_run_as_a_partial_result():
    from moot.sandbox import SandboxResult, SandboxStatus
    from moot.tools import run_python_tool

    def down(code, tests, limits, entry_points=()):
        return SandboxResult(status=SandboxStatus.TOOL_FAULT, tool_error="harness crashed")

    model = ScriptedModel({"planner": [plan(step("run", "run_python"))], "executor": [call("run_python", code="1")]})
    with model:
        result = await team(model, tools=[run_python_tool(runner=down, tool_retries=0)]).run(task="run")
    assert result.partial
    assert result.stop_reason.startswith("error: run_python failed on its own side 1 times")
    assert [(r.tool, r.ok) for r in result.audit] == [("run_python", False)]


# ------------------------------------------------------------------ state
def three_steps() -> ScriptedModel:
    return ScriptedModel(
        {
            "planner": [plan(step("one", "echo"), step("two", "add", "output_equals", "5"), step("three", "echo"))],
            "executor": [call("echo", text="1"), call("add", a=2, b=3), call("echo", text="3")],
        }
    )


async def test_save_and_load_into_a_fresh_team_continues_like_an_uninterrupted_run():
    with three_steps() as straight:
        expected = await team(straight, stop=MaxSteps(10)).run(task="count")

    with three_steps() as resumed:
        first = team(resumed, stop=MaxSteps(1))
        assert len((await first.run(task="count")).steps) == 1
        state = json.loads(json.dumps(await first.save_state()))
        second = team(resumed, stop=MaxSteps(10))
        await second.load_state(state)
        result = await second.run()

    assert (state["type"], state["version"], state["phase"]) == ("PlannerExecutorState", 1, "act")
    assert outline(result) == outline(expected)
    assert result.stop_reason == expected.stop_reason == "plan completed: all 3 steps passed their checks"
    assert [(r.tool, r.args) for r in result.audit] == [(r.tool, r.args) for r in expected.audit]
    assert prompts(resumed, "executor") == prompts(straight, "executor")
    assert normalised(second.transcript) == normalised(expected.messages)


async def test_a_run_cut_after_the_executors_choice_runs_that_call_without_asking_again():
    with three_steps() as resumed:
        first = team(resumed)
        stream = first.run_stream(task="count")
        seen = [await anext(stream) for _ in range(3)]
        await stream.aclose()  # the process died before the tool ran
        assert [type(m).__name__ for m in seen] == [
            "TextMessage",
            "StructuredMessage[Plan]",
            "StructuredMessage[ToolCall]",
        ]
        state = await first.save_state()
        assert state["phase"] == "run" and state["call"]["tool"] == "echo"
        second = team(resumed)
        await second.load_state(state)
        result = await second.run()
    assert [s.number for s in result.steps] == [1, 2, 3]
    assert len(resumed.calls("executor")) == 3  # the first call was not chosen twice
    assert isinstance(second.transcript[3], ToolExecuted)


async def test_reset_forgets_the_plan():
    with three_steps() as model:
        pe = team(model)
        await pe.run(task="count")
        await pe.reset()
    assert pe.state.plan == [] and pe.state.task is None and len(pe.state.audit) == 0


# ------------------------------------------------------------------ schemas and config
def test_tool_call_type_validates_arguments_against_the_tools():
    narrowed = tool_call_type((("echo", EchoArgs), ("add", AddArgs)))
    ok = narrowed.model_validate({"reasoning": "r", "tool": "add", "args": {"a": 1, "b": 2}})
    assert ToolCall.model_validate(ok.model_dump()).args == {"a": 1, "b": 2}
    with pytest.raises(ValueError):
        narrowed.model_validate({"reasoning": "r", "tool": "shell", "args": {"text": "ls"}})
    with pytest.raises(ValueError):
        narrowed.model_validate({"reasoning": "r", "tool": "add", "args": {"c": 1}})


def test_a_step_that_compares_output_needs_the_expected_text():
    with pytest.raises(ValueError, match="check 'output_contains' needs the expected text"):
        Step(action="run it", tool="echo", check="output_contains")


def test_a_planner_executor_needs_tools():
    model = ScriptedModel({"planner": [], "executor": []})
    with model, pytest.raises(ConfigError, match="needs at least one tool"):
        team(model, tools=[])


async def test_the_step_events_count_for_max_steps_across_replans():
    model = ScriptedModel(
        {
            "planner": [plan(step("add one", "add")), plan(step("echo b", "echo"))],
            "executor": [call("add", a=-1, b=0), call("echo", text="b")],
        }
    )
    with model:
        result = await team(model, stop=MaxSteps(2)).run(task="t")
    assert result.stop_reason == "max steps: 2 of 2 steps done"
    assert [type(m).__name__ for m in result.messages].count(StepFinished.__name__) == 2
    assert result.completed  # the revised plan's only step passed on the second executed step


def test_plain_functions_sync_or_async_are_tools_as_in_autogen():
    from moot.tools import Tool

    def multiply(a: int, b: int = 2) -> int:
        """Multiply two integers."""
        return a * b

    async def shout(text: str) -> str:
        return text.upper()

    made = Tool.from_function(multiply)
    assert (made.name, made.description, made.signature()) == (
        "multiply",
        "Multiply two integers.",
        "multiply(a: integer, b: integer)",
    )
    assert asyncio.run(made.fn(made.args(a=3))) == "6"
    loud = Tool.from_function(shout)
    assert asyncio.run(loud.fn(loud.args(text="hi"))) == "HI"
    sync = Tool("echo_sync", "Echo.", EchoArgs, lambda args: args.text)  # a sync fn runs in a thread
    assert asyncio.run(sync.fn(EchoArgs(text="ok"))) == "ok"
    with pytest.raises(ConfigError, match="needs a type annotation on every named parameter"):
        Tool.from_function(lambda x: x)


async def test_a_team_takes_plain_functions_as_tools():
    def add_numbers(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    model = ScriptedModel(
        {
            "planner": [plan(step("add 2 and 3", "add_numbers", check="output_contains", expect="5"))],
            "executor": [call("add_numbers", a=2, b=3)],
        }
    )
    with model:
        result = await team(model, tools=[add_numbers]).run(task="Add 2 and 3.")
    assert result.completed and result.steps[0].passed
