"""AutoGen's team contract, ported to moot's four teams on scripted models.

The generic checks of autogen-agentchat 0.7.5's own team tests (``tests/test_group_chat.py``,
``test_group_chat_pause_resume.py``, ``test_termination_condition.py``, ``test_task_runner_tool.py``): those that
do not depend on a group chat's speaker order. Each runs against a Reflection, a Debate, a CodeDebate and a
PlannerExecutor. Where moot differs from AutoGen by design, the test asserts moot's documented behaviour, and
``docs/architecture.md`` ("AutoGen's team contract") lists the difference and why.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from autogen_agentchat.base import TaskResult, Team, TerminationCondition
from autogen_agentchat.conditions import (
    ExternalTermination,
    FunctionalTermination,
    MaxMessageTermination,
    SourceMatchTermination,
    StopMessageTermination,
    TextMentionTermination,
    TimeoutTermination,
    TokenUsageTermination,
)
from autogen_agentchat.messages import (
    BaseAgentEvent,
    BaseChatMessage,
    MultiModalMessage,
    StopMessage,
    StructuredMessage,
    TextMessage,
)
from autogen_agentchat.tools import TeamTool
from autogen_agentchat.ui import Console
from autogen_core import CancellationToken, Component
from pydantic import BaseModel

from moot.arbiters import MajorityVote
from moot.conditions import ExpressionError, MaxRounds, UnstoredStopWarning
from moot.errors import ConfigError
from moot.models import register_script, unregister_script
from moot.roles import Plan, RoleAgent, Step, ToolCall, role
from moot.store import RunStore
from moot.teams import CodeDebate, Debate, PlannerExecutor, Reflection
from moot.teams._base import MootTeam
from moot.testing import ScriptedModel
from moot.tools import Tool
from tests.conftest import make_critique, make_position, make_rebuttal

N = 40
"""Replies per agent: more than any run here asks for (a contract check is no test of how many calls a run
makes; the teams' own tests are)."""


# ------------------------------------------------------------------------------------------- the four teams
def echo(text: str) -> str:
    """Echo text back."""
    return text


ECHO = Tool.from_function(echo)
STUB = 'def total(xs: list[int]) -> int:\n    """Sum."""\n'
WRONG = ("```python\ndef total(xs):\n    return -1\n```", "```python\ndef total(xs):\n    return 0\n```")


@dataclass(frozen=True)
class Kind:
    """One of moot's teams, as these checks build and run it."""

    name: str
    replies: Callable[[], dict[str, list[Any]]]
    """Each agent's scripted replies, N or more of them."""
    build: Callable[..., MootTeam]
    """The team on the registered model, with a stop (a condition, a stop expression or None) and the
    constructor's other keyword arguments (``custom_message_types``)."""
    first: str
    """The agent that speaks first."""
    mention: str
    """A word every run of the team soon says (for TextMentionTermination)."""
    task: str

    def __repr__(self) -> str:
        return self.name


def _holding(answer: str) -> Callable[..., str]:
    """An expert that holds ``answer``: an opening when asked for one, else a rebuttal."""
    rebut = make_rebuttal(answer)

    def reply(messages: Sequence[Any], output: type[BaseModel] | None = None) -> str:
        asks_rebuttal = output is not None and "claim" in output.model_json_schema()["properties"]
        return rebut(messages, output) if asks_rebuttal else make_position(answer).model_dump_json()

    return reply


def _debate_replies() -> dict[str, list[Any]]:
    held = {"architect": "monolith", "ops": "split", "business": "monolith"}
    return {name: [_holding(answer)] * N for name, answer in held.items()}


def _plan_replies() -> dict[str, list[Any]]:
    steps = [Step(action=f"say {i}", tool="echo", check="tool_ok", expect="") for i in range(8)]
    return {
        "planner": [Plan(reasoning="one echo per step", steps=steps)] * N,
        "executor": [ToolCall(reasoning="echo it", tool="echo", args={"text": f"echo {i}"}) for i in range(N)],
    }


KINDS = [
    Kind(
        "Reflection",
        lambda: {"generator": [f"def add(a, b): return a + b  # draft {i}" for i in range(N)],
                 "critic": [make_critique(50, "needs a docstring") for _ in range(N)]},
        lambda model, stop, **options: Reflection(
            RoleAgent(role("generator"), model.spec), RoleAgent(role("critic"), model.spec), stop=stop, **options
        ),
        "generator",
        "draft",
        "Write add(a, b).",
    ),
    Kind(
        "Debate",
        _debate_replies,
        lambda model, stop, **options: Debate(
            [RoleAgent(role(name), model.spec) for name in ("architect", "ops", "business")],
            MajorityVote(),
            stop=stop,
            **options,
        ),
        "architect",
        "monolith",
        "Monolith or services?",
    ),
    Kind(
        "CodeDebate",
        lambda: {"alice": [WRONG[0]] * N, "bob": [WRONG[1]] * N},
        lambda model, stop, **options: CodeDebate(
            [RoleAgent(role("generator"), model.spec, name=name) for name in ("alice", "bob")],
            ["assert total([1, 2]) == 3"],
            stub=STUB,
            entry_point="total",
            stop=stop,
            **options,
        ),
        "alice",
        "total",
        f"Complete this function.\n\n```python\n{STUB}```",
    ),
    Kind(
        "PlannerExecutor",
        _plan_replies,
        lambda model, stop, **options: PlannerExecutor(
            RoleAgent(role("planner"), model.spec),
            RoleAgent(role("executor"), model.spec),
            tools=[ECHO],
            stop=stop,
            **options,
        ),
        "planner",
        "echo",
        "Say the numbers.",
    ),
]  # fmt: skip


async def _sleeping(messages: Sequence[Any]) -> str:
    await asyncio.sleep(60)
    raise AssertionError("a cancelled turn went on")


@dataclass
class Bench:
    """A kind of team on its registered scripted model."""

    kind: Kind
    model: ScriptedModel

    def team(self, stop: Any = None, custom_message_types: Any = None, **attributes: Any) -> MootTeam:
        """The team built with ``stop`` and ``custom_message_types``, then given ``attributes`` (``record``)."""
        team = self.kind.build(
            self.model, stop if stop is not None else MaxRounds(1), custom_message_types=custom_message_types
        )
        for name, value in attributes.items():
            setattr(team, name, value)
        return team

    def slow_first_turn(self) -> None:
        """The next call of the first speaker never answers (until it is cancelled)."""
        self.model.client(self.kind.first).replies.appendleft(_sleeping)


@pytest.fixture(params=KINDS, ids=[k.name for k in KINDS])
def bench(request) -> Iterator[Bench]:
    kind: Kind = request.param
    model = ScriptedModel(kind.replies(), name=f"contract-{kind.name}")
    register_script(model)
    try:
        yield Bench(kind, model)
    finally:
        unregister_script(model.name)


def shape(messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> list[tuple[str, str]]:
    return [(type(m).__name__, m.source) for m in messages]


async def streamed(stream) -> tuple[list[Any], TaskResult]:
    items = [item async for item in stream]
    assert isinstance(items[-1], TaskResult) and not any(isinstance(i, TaskResult) for i in items[:-1])
    return items[:-1], items[-1]


def stored_runs(team: MootTeam) -> list[Any]:
    return RunStore.shared(team.store_path).list(limit=100)


# ------------------------------------------------------------------------------------------- tasks
async def test_run_with_a_string_task_returns_a_task_result_that_begins_with_the_task(bench):
    result = await bench.team().run(task=bench.kind.task)
    assert isinstance(result, TaskResult)
    assert isinstance(result.messages[0], TextMessage) and result.messages[0].content == bench.kind.task
    assert result.messages[0].source == "user"
    assert all(isinstance(m, BaseAgentEvent | BaseChatMessage) for m in result.messages)
    assert isinstance(result.stop_reason, str) and result.stop_reason.startswith("max rounds: 1 of 1")


async def test_run_stream_yields_the_results_messages_then_the_result(bench):
    team = bench.team()
    result = await team.run(task=bench.kind.task)
    await team.reset()
    messages, final = await streamed(team.run_stream(task=bench.kind.task))
    assert shape(messages) == shape(final.messages) == shape(result.messages)
    assert final.stop_reason == result.stop_reason


@pytest.mark.parametrize(
    "task",
    [
        pytest.param(lambda text: TextMessage(content=text, source="user"), id="text_message"),
        pytest.param(lambda text: [TextMessage(content=text, source="user")], id="message_list"),
        pytest.param(lambda text: MultiModalMessage(content=[text], source="user"), id="multi_modal_message"),
    ],
)
async def test_a_message_or_a_list_of_messages_is_a_task_like_its_text(bench, task):
    team = bench.team()
    given = task(bench.kind.task)
    result = await team.run(task=given)
    first = given[0] if isinstance(given, list) else given
    assert result.messages[0] is first
    assert shape(result.messages[1:]) == shape((await bench.team().run(task=bench.kind.task)).messages[1:])
    assert bench.kind.task in team._task_text()


async def test_a_list_of_several_messages_is_one_task_and_all_of_them_are_the_results_first_messages(bench):
    task = [TextMessage(content=bench.kind.task, source="user"), TextMessage(content="Be brief.", source="user")]
    result = await bench.team().run(task=task)
    assert result.messages[:2] == task
    assert not any(m in task for m in result.messages[2:])


async def test_output_task_messages_false_leaves_the_task_out_of_stream_and_result(bench):
    team = bench.team()
    result = await team.run(task=bench.kind.task, output_task_messages=False)
    assert all(m.source != "user" for m in result.messages)
    await team.reset()
    messages, final = await streamed(team.run_stream(task=bench.kind.task, output_task_messages=False))
    assert shape(messages) == shape(final.messages) == shape(result.messages)
    assert team.transcript[0].source == "user"  # the task is still the run's first message, in its record


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ([], "Task list cannot be empty."),
        (["not a message"], "All messages in task list must be valid BaseChatMessage types"),
        ([TextMessage(content="x", source="user"), 42], "All messages in task list must be valid BaseChatMessage"),
        (42, "Task must be a string, a BaseChatMessage, or a list of BaseChatMessage"),
    ],
    ids=["empty_list", "non_message", "non_message_among_messages", "not_a_task"],
)
async def test_a_task_autogen_refuses_is_a_value_error_before_any_turn_and_records_nothing(bench, task, message):
    team = bench.team()
    with pytest.raises(ValueError, match=message):
        await team.run(task=task)
    with pytest.raises(ValueError, match=message):
        async for _ in team.run_stream(task=task):
            pass
    assert team.transcript == [] and team.run_id is None and stored_runs(team) == []
    assert bench.model.calls(bench.kind.first) == []
    result = await team.run(task=bench.kind.task)  # the team is not left half-started
    assert result.messages[0].content == bench.kind.task


async def test_a_refused_task_leaves_the_previous_task_to_continue(bench):
    team = bench.team()
    await team.run(task=bench.kind.task)
    before = await team.save_state()
    with pytest.raises(ValueError, match="Task list cannot be empty"):
        await team.run(task=[])
    assert await team.save_state() == before


class _InputTask1(BaseModel):
    task: str
    data: list[str]


class _InputTask2(BaseModel):
    task: str
    data: str


def _structured(text: str) -> list[BaseChatMessage]:
    return [
        StructuredMessage[_InputTask1](content=_InputTask1(task=text, data=["a", "b"]), source="user"),
        StructuredMessage[_InputTask2](content=_InputTask2(task=text, data="a"), source="user"),
    ]


TYPES = [StructuredMessage[_InputTask1], StructuredMessage[_InputTask2]]


async def test_a_task_of_an_unregistered_message_type_is_a_value_error_naming_custom_message_types(bench):
    team = bench.team(custom_message_types=[StructuredMessage[_InputTask2]])
    with pytest.raises(ValueError, match=r"Message type .*StructuredMessage\[_InputTask1\].* is not registered"):
        await team.run(task=_structured(bench.kind.task))
    assert stored_runs(team) == []


# ------------------------------------------------------------------------------------------- state
@pytest.mark.parametrize(
    "task",
    [
        pytest.param(lambda text: text, id="text"),
        pytest.param(lambda text: [TextMessage(content=text, source="user")], id="text_message"),
        pytest.param(lambda text: [MultiModalMessage(content=[text], source="user")], id="multi_modal_message"),
        pytest.param(_structured, id="structured_message"),
    ],
)
async def test_save_and_load_state_round_trip_into_a_new_team(bench, task):
    team = bench.team(custom_message_types=TYPES)
    await team.run(task=task(bench.kind.task))
    state = await team.save_state()
    again = bench.team(custom_message_types=TYPES)
    await again.load_state(json.loads(json.dumps(state)))
    assert await again.save_state() == state
    assert shape(again.transcript) == shape(team.transcript)
    assert [m.dump() for m in again.transcript] == [m.dump() for m in team.transcript]
    result = await again.run()  # and it continues the task it loaded
    assert result.messages and result.messages[0].source != "user"


async def test_a_state_holding_a_message_type_the_team_was_not_given_is_one_line_naming_custom_message_types(bench):
    team = bench.team(custom_message_types=TYPES)
    await team.run(task=_structured(bench.kind.task))
    fresh = bench.team()
    before = await fresh.save_state()
    with pytest.raises(ConfigError, match="custom_message_types") as info:
        await fresh.load_state(await team.save_state())
    assert "\n" not in str(info.value)
    assert await fresh.save_state() == before


@pytest.mark.parametrize(
    "state",
    [{"garbage": 1}, {}, {"type": "SomeOtherState"}, [], "state", {"messages": [{"type": "Nope"}]}],
    ids=["garbage", "empty", "other_type", "list", "string", "bad_message"],
)
async def test_load_state_of_something_save_state_never_wrote_is_one_line_and_changes_nothing(bench, state):
    team = bench.team()
    await team.run(task=bench.kind.task)
    before = await team.save_state()
    if isinstance(state, dict) and state:
        state = {**state, "type": state.get("type", before["type"])} if "garbage" not in state else state
    with pytest.raises(ConfigError) as info:
        await team.load_state(state)
    assert "\n" not in str(info.value) and "save_state" in str(info.value)
    assert await team.save_state() == before


async def test_reset_forgets_the_task_and_a_new_run_starts_afresh(bench):
    team = bench.team()
    first = await team.run(task=bench.kind.task)
    await team.reset()
    assert team.transcript == []
    with pytest.raises(ValueError, match="no task"):
        await team.run()
    again = await team.run(task=bench.kind.task)
    assert shape(again.messages) == shape(first.messages)


async def test_run_without_a_task_continues_the_stopped_task(bench):
    """AutoGen's "resume": ``run()`` after a stop goes on with the same task, with a fresh stop budget."""
    team = bench.team()
    first = await team.run(task=bench.kind.task)
    more = await team.run()
    assert more.messages and all(m.source != "user" for m in more.messages)
    assert not set(map(id, more.messages)) & set(map(id, first.messages))
    assert more.stop_reason.startswith("max rounds: 1 of 1")
    assert len(team.transcript) >= len(first.messages) + len(more.messages)


async def test_difference_run_without_a_task_on_a_new_team_is_a_value_error(bench):
    """AutoGen's group chat starts a chat with no task; a moot topology has nothing to work on (documented)."""
    with pytest.raises(ValueError, match="no task given and no task to continue"):
        await bench.team().run()


# ------------------------------------------------------------------------------------------- control
async def test_cancellation_ends_the_run_and_the_team_can_run_on(bench):
    team = bench.team()
    bench.slow_first_turn()
    token = CancellationToken()
    running = asyncio.create_task(team.run(task=bench.kind.task, cancellation_token=token))
    await asyncio.sleep(0.2)
    token.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert stored_runs(team)[0].status == "interrupted"
    result = await team.run()  # still can run again and finish the task
    assert result.stop_reason.startswith("max rounds: 1 of 1")
    assert stored_runs(team)[0].status in ("finished", "partial")


async def test_running_twice_concurrently_is_a_value_error(bench):
    team = bench.team()
    bench.slow_first_turn()
    running = asyncio.create_task(team.run(task=bench.kind.task))
    await asyncio.sleep(0.2)
    with pytest.raises(ValueError, match="already running"):
        await team.run(task=bench.kind.task)
    with pytest.raises(ValueError, match="running"):
        await team.reset()
    with pytest.raises(ValueError, match="running"):
        await team.load_state(await team.save_state())
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert (await team.run()).stop_reason.startswith("max rounds")


async def test_pause_holds_the_run_before_its_next_message_and_resume_lets_it_go_on(bench):
    team = bench.team()
    await team.pause()
    running = asyncio.create_task(team.run(task=bench.kind.task))
    await asyncio.sleep(0.3)
    assert team.transcript == [] and not running.done()
    await team.resume()
    result = await asyncio.wait_for(running, 30)
    assert result.stop_reason.startswith("max rounds")


async def test_console_renders_a_stream_and_returns_its_result(bench, capsys):
    result = await Console(bench.team().run_stream(task=bench.kind.task))
    assert isinstance(result, TaskResult) and result.stop_reason.startswith("max rounds")
    assert bench.kind.task in capsys.readouterr().out


# ------------------------------------------------------------------------------------------- conditions
class _Plain(TerminationCondition):
    """A user's own condition, not a Component: stops at the first message from ``source``."""

    def __init__(self, source: str) -> None:
        self.source, self._terminated = source, False

    @property
    def terminated(self) -> bool:
        return self._terminated

    async def __call__(self, messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> StopMessage | None:
        if any(m.source == self.source for m in messages):
            self._terminated = True
            return StopMessage(content=f"{self.source} spoke", source="plain")
        return None

    async def reset(self) -> None:
        self._terminated = False


class _FlakyTermination(TerminationCondition):
    """AutoGen's own test condition (test_group_chat.py): raises on its ``raise_on_count``-th call."""

    def __init__(self, raise_on_count: int) -> None:
        self._raise_on_count, self._count = raise_on_count, 0

    @property
    def terminated(self) -> bool:
        return False

    async def __call__(self, messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> StopMessage | None:
        self._count += 1
        if self._count == self._raise_on_count:
            raise ValueError("I am a flaky termination...")
        return None

    async def reset(self) -> None:
        pass


def _local_component(source: str) -> TerminationCondition:
    """A Component whose class is local to a function: AutoGen cannot dump it."""

    class Config(BaseModel):
        source: str

    class Local(TerminationCondition, Component[Config]):
        component_config_schema = Config

        def __init__(self, source: str) -> None:
            self.source, self._terminated = source, False

        @property
        def terminated(self) -> bool:
            return self._terminated

        async def __call__(self, messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> StopMessage | None:
            self._terminated = any(m.source == self.source for m in messages)
            return StopMessage(content="local stop", source="local") if self._terminated else None

        async def reset(self) -> None:
            self._terminated = False

        def _to_config(self) -> Config:
            return Config(source=self.source)

        @classmethod
        def _from_config(cls, config: Config) -> Local:
            return cls(config.source)

    return Local(source)


def _external() -> TerminationCondition:
    external = ExternalTermination()
    external.set()
    return external


CONDITIONS: list[tuple[str, Callable[[Kind], TerminationCondition], Callable[[str], bool], bool]] = [
    # (id, the condition for a kind, what its stop reason must be, storable)
    ("MaxMessageTermination", lambda k: MaxMessageTermination(2),
     lambda r: r.startswith("Maximum number of messages 2 reached"), True),
    ("TextMentionTermination", lambda k: TextMentionTermination(k.mention), lambda r: "mentioned" in r, True),
    ("SourceMatchTermination", lambda k: SourceMatchTermination([k.first]), lambda r: "'" in r, True),
    ("TokenUsageTermination", lambda k: TokenUsageTermination(max_total_token=1),
     lambda r: r.startswith("Token usage limit reached"), True),
    ("TimeoutTermination", lambda k: TimeoutTermination(0.0001), lambda r: r.startswith("Timeout"), True),
    ("ExternalTermination", lambda k: _external(), lambda r: r == "External termination requested", True),
    ("StopMessageTermination", lambda k: StopMessageTermination() | MaxRounds(1),
     lambda r: r.startswith("max rounds: 1 of 1"), True),
    ("FunctionalTermination", lambda k: FunctionalTermination(lambda ms: any(m.source == k.first for m in ms)),
     lambda r: r == "Functional termination condition met", False),
    ("FunctionalTermination_or_MaxRounds",
     lambda k: FunctionalTermination(lambda ms: False) | MaxRounds(1), lambda r: r.startswith("max rounds: 1"), False),
    ("own_subclass", lambda k: _Plain(k.first), lambda r: r.endswith("spoke"), False),
    ("own_local_component", lambda k: _local_component(k.first), lambda r: r == "local stop", False),
    ("stop_expression", lambda k: "max_rounds(1) | token_budget(900000)",
     lambda r: r.startswith("max rounds: 1"), True),
]  # fmt: skip


@pytest.mark.parametrize("record", [True, False], ids=["recorded", "unrecorded"])
@pytest.mark.parametrize(
    ("condition", "reason", "storable"), [c[1:] for c in CONDITIONS], ids=[c[0] for c in CONDITIONS]
)
async def test_any_autogen_condition_stops_every_team_with_its_own_stop_reason(
    bench, condition, reason, storable, record
):
    team = bench.team(condition(bench.kind), record=record)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await team.run(task=bench.kind.task)
    assert reason(result.stop_reason), result.stop_reason
    unstored = [w for w in caught if issubclass(w.category, UnstoredStopWarning)]
    assert len(unstored) == (0 if storable or not record else 1)
    if unstored:
        assert "\n" not in str(unstored[0].message) and "team.resume(run_id)" in str(unstored[0].message)
    assert [r.id for r in stored_runs(team)] == ([result.run_id] if record else [])
    assert (result.run_id is not None) == record


async def test_a_stop_that_cannot_be_stored_is_given_again_to_resume_its_run(bench):
    """A run stopped by an unstorable condition is continued by a team built again in Python with it."""
    team = bench.team(_Plain("nobody") | MaxRounds(1))  # an AutoGen join of an unstorable part and a bound
    with pytest.warns(UnstoredStopWarning):
        stream = team.run_stream(task=bench.kind.task)
        await anext(stream)
        await anext(stream)
        await stream.aclose()
    run_id = team.run_id
    assert stored_runs(team)[0].status == "interrupted"
    again = bench.team(_Plain("nobody") | MaxRounds(1))
    with pytest.warns(UnstoredStopWarning):
        result = await again.resume(run_id)
    assert result.run_id == run_id and result.stop_reason.startswith("max rounds: 1 of 1")
    assert stored_runs(team)[0].status in ("finished", "partial")


async def test_a_stop_of_another_kind_is_refused_at_resume_even_when_unstorable(bench):
    """Unstorable parts compare by their class: a resumed run refuses a team whose stop differs in kind, or in a
    part that is stored (moot's ``|`` keeps its parts; AutoGen's join of an unstorable part is one part)."""
    team = bench.team(MaxRounds(1) | _Plain("nobody"))
    with pytest.warns(UnstoredStopWarning):
        stream = team.run_stream(task=bench.kind.task)
        await anext(stream)
        await stream.aclose()
    for other in (MaxRounds(1) | FunctionalTermination(lambda ms: False), MaxRounds(2) | _Plain("nobody")):
        with pytest.warns(UnstoredStopWarning), pytest.raises(ConfigError, match="different stop"):
            await bench.team(other).resume(team.run_id)
    with pytest.warns(UnstoredStopWarning):
        result = await bench.team(MaxRounds(1) | _Plain("somebody else")).resume(team.run_id)
    assert result.run_id == team.run_id


async def test_a_condition_that_raises_ends_the_run_with_its_error_recorded_failed(bench):
    team = bench.team(_FlakyTermination(raise_on_count=1) | MaxRounds(2))
    with pytest.warns(UnstoredStopWarning), pytest.raises(ValueError, match=r"I am a flaky termination\.\.\."):
        await team.run(task=bench.kind.task)
    assert stored_runs(team)[0].status == "failed"


@pytest.mark.parametrize(
    ("stop", "message"),
    [
        ("max_rounds(3", "stop expression 'max_rounds(3', column"),
        ("max_roundz(3)", "unknown condition 'max_roundz'"),
        (42, "stop must be a termination condition or a stop expression, got 42 (int)"),
        (MaxRounds, "stop must be a termination condition or a stop expression"),
    ],
)
def test_a_bad_stop_is_one_config_error_line_at_construction(bench, stop, message):
    with pytest.raises(ConfigError) as info:
        bench.kind.build(bench.model, stop)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, ExpressionError) == isinstance(stop, str)


async def test_a_stop_expression_is_a_stop(bench):
    team = bench.team("max_rounds(2)")
    result = await team.run(task=bench.kind.task)
    assert result.stop_reason.startswith("max rounds: 2 of 2")
    assert team.dump_component().config["stop"]["provider"] == "moot.conditions.MaxRounds"


# ------------------------------------------------------------------------------------------- components
async def test_dump_component_and_load_component_round_trip(bench):
    team = bench.team()
    config = team.dump_component()
    assert config.component_type == "team" and config.provider == f"moot.teams.{bench.kind.name}"
    loaded = Team.load_component(config)
    assert type(loaded) is type(team)
    assert loaded.dump_component() == config
    assert (await loaded.run(task=bench.kind.task)).stop_reason.startswith("max rounds: 1 of 1")


async def test_team_tool_runs_the_team_and_round_trips_its_state_and_its_component(bench):
    tool = TeamTool(team=bench.team(), name="team_tool", description="A moot team as a tool")
    result = await tool.run_json(args={"task": bench.kind.task}, cancellation_token=CancellationToken())
    assert isinstance(result, TaskResult) and result.messages[0].content == bench.kind.task
    state = await tool.save_state_json()
    other = TeamTool(team=bench.team(), name="team_tool", description="A moot team as a tool")
    await other.load_state_json(state)
    assert await other.save_state_json() == state

    config = tool.dump_component()
    assert config.provider == "autogen_agentchat.tools.TeamTool"
    loaded = TeamTool.load_component(config)
    assert isinstance(loaded, TeamTool) and loaded.name == "team_tool"
    assert loaded.dump_component() == config
    again = await loaded.run_json(args={"task": bench.kind.task}, cancellation_token=CancellationToken())
    assert shape(again.messages) == shape(result.messages)


def test_moot_teams_are_group_chats_to_autogens_loaders_and_nothing_of_autogen_is_changed():
    from autogen_agentchat.teams import BaseGroupChat, RoundRobinGroupChat

    assert issubclass(MootTeam, BaseGroupChat) and not issubclass(RoundRobinGroupChat, MootTeam)
    assert BaseGroupChat.__init__.__module__ == "autogen_agentchat.teams._group_chat._base_group_chat"
    assert MootTeam not in BaseGroupChat.__mro__ and BaseGroupChat not in MootTeam.__mro__


# ------------------------------------------------------------------------------------------- records
async def test_a_recorded_run_releases_its_lease_when_it_ends(bench):
    team = bench.team()
    result = await team.run(task=bench.kind.task)
    with sqlite3.connect(RunStore.shared(team.store_path).path) as db:
        (owner,) = db.execute("SELECT owner FROM runs WHERE id = ?", (result.run_id,)).fetchone()
    assert owner is None


async def test_an_exception_raised_from_an_agent_propagates_and_the_run_is_recorded_failed(bench):
    team = bench.team()
    bench.model.client(bench.kind.first).replies.appendleft(RuntimeError("I am a flaky agent..."))
    with pytest.raises(RuntimeError, match=r"I am a flaky agent\.\.\."):
        await team.run(task=bench.kind.task)
    (run,) = stored_runs(team)
    assert run.status == "failed" and "I am a flaky agent..." in (run.error or "")
    assert (await team.run()).run_id == run.id  # and the run goes on from its last checkpoint
