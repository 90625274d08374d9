"""Runs stop when told, as AutoGen's own teams do, and no stop condition leaves a run unbounded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from autogen_core import CancellationToken

from moot import ConfigError, ModelSpec
from moot.conditions import Consensus, MaxRounds, MaxSteps, NoImprovement, RoundCap, ScoreThreshold, TokenBudget
from moot.conditions._bounds import parts_of
from moot.roles import RoleAgent, TestCritic, role
from moot.sandbox import SandboxLimits
from moot.store import RunStore
from moot.teams import CodeDebate, Debate, MootTeam, PlannerExecutor, Reflection
from moot.testing import DeterministicModel, ScriptedModel
from tests.leftovers import assert_ends_within_a_second_and_starts_nothing, processes_under
from tests.unit.test_planner_executor import ADD, ECHO


def never() -> MaxRounds:
    """A stop that will not fire within a test: only a cancellation ends these runs."""
    return MaxRounds(10_000)


@pytest.fixture
def spec():
    model = DeterministicModel("endless", delay=0.1).register()
    yield ModelSpec.parse("scripted:endless")
    model.unregister()


def agent(name: str, spec: ModelSpec, as_role: str | None = None) -> RoleAgent:
    return RoleAgent(role(as_role or name), spec, name=name)


TEAMS: dict[str, Callable[..., MootTeam]] = {
    "reflection": lambda s, stop=None: Reflection(agent("generator", s), agent("critic", s), stop=stop or never()),
    "debate": lambda s, stop=None: Debate(
        [agent("architect", s), agent("ops", s)], agent("arbiter", s), stop=stop or never()
    ),
    "code-debate": lambda s, stop=None: CodeDebate(
        [agent("a", s, "generator"), agent("b", s, "generator")], ["assert total([1]) == 1"], stop=stop or never()
    ),
    "planner-executor": lambda s, stop=None: PlannerExecutor(
        agent("planner", s), agent("executor", s), tools=[ECHO, ADD], stop=stop or never()
    ),
}


@pytest.mark.parametrize("kind", sorted(TEAMS))
async def test_a_cancelled_token_ends_the_run_within_a_second_and_it_can_be_resumed(kind, spec):
    team = TEAMS[kind](spec)
    token = CancellationToken()
    asyncio.get_running_loop().call_later(0.15, token.cancel)
    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await team.run(task="Sum a list of integers.", cancellation_token=token)
    assert time.monotonic() - started < 1.3
    store = RunStore.default()
    assert store.get(team.run_id).status == "interrupted"
    turns = len(store.turns(team.run_id))
    resumed = TEAMS[kind](spec, stop=MaxRounds(1))  # it continues from its checkpoint, to a stop of its own
    with pytest.raises(ConfigError, match="was started with a different stop"):
        await resumed.resume(team.run_id)
    result = await resumed.resume(team.run_id, force=True)
    assert result is not None and result.stop_reason
    assert store.get(team.run_id).status in ("finished", "partial")
    assert len(store.turns(team.run_id)) > turns


@pytest.mark.parametrize("kind", sorted(TEAMS))
async def test_cancelling_the_task_running_the_team_stops_it_at_once(kind, spec):
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(TEAMS[kind](spec).run(task="Sum a list of integers."), 0.15)
    assert time.monotonic() - started < 1.3


@pytest.mark.parametrize(
    ("make", "waits_for"),
    [
        (
            lambda s: Debate([agent("architect", s), agent("ops", s)], agent("arbiter", s), stop=ScoreThreshold(80)),
            "Debate",
        ),
        (
            lambda s: Debate(
                [agent("architect", s), agent("ops", s)], agent("arbiter", s), stop=NoImprovement(2) & MaxRounds(3)
            ),
            "Debate",
        ),
        (lambda s: Reflection(agent("generator", s), agent("critic", s), stop=Consensus()), "Reflection"),
        (lambda s: Debate([agent("architect", s), agent("ops", s)], agent("arbiter", s), stop=MaxSteps(5)), "Debate"),
        (  # a dead branch of |: the consensus branch can fire, the score one never will
            lambda s: Debate(
                [agent("architect", s), agent("ops", s)], agent("arbiter", s), stop=Consensus() | ScoreThreshold(80)
            ),
            "Debate",
        ),
    ],
)
def test_a_condition_that_can_never_fire_for_the_team_is_refused(make, waits_for, spec):
    with pytest.raises(ConfigError, match=f"can never fire for a {waits_for}, whose rounds report") as refused:
        make(spec)
    assert "e.g. MaxRounds(5) | TokenBudget(40000)" in str(refused.value)
    assert "CostBudget" not in str(refused.value)  # no bound on an unpriced model: never offered as one


def test_a_condition_with_no_bound_gets_a_hard_round_cap_named_in_the_stop_reason(spec):
    capped = Reflection(agent("generator", spec), agent("critic", spec), stop=ScoreThreshold(99))
    assert any(isinstance(part, RoundCap) for part in parts_of(capped._stop))
    bounded = Reflection(agent("generator", spec), agent("critic", spec), stop=ScoreThreshold(80) | TokenBudget(9))
    assert not any(isinstance(part, RoundCap) for part in parts_of(bounded._stop))


async def test_the_hard_cap_ends_an_unbounded_run_and_says_so(spec, monkeypatch):
    monkeypatch.setattr("moot.conditions._bounds.HARD_ROUND_CAP", 3)
    team = Reflection(agent("generator", spec), agent("critic", spec), stop=ScoreThreshold(100))  # scores < 100
    result = await team.run(task="Sum a list of integers.")
    assert len(result.rounds) == 3
    assert result.stop_reason.startswith("hard cap: 3 rounds done (the stop given has no bound")


SLEEPER = "```python\nimport time\n\ndef total(xs):\n    time.sleep(60)\n    return sum(xs)\n```\n"


async def test_cancelling_a_reflection_with_a_test_critic_ends_the_sandbox_within_a_second(sandbox_leftovers):
    """The cancel reaches the sandbox, not only the awaiting task: its processes die and none starts after."""
    model = ScriptedModel({"generator": [SLEEPER]})  # the run never gets past the first review
    limits = SandboxLimits(wall_seconds=60, test_seconds=30, cpu_seconds=30, memory_mb=256)
    with model:
        critic = TestCritic(["assert total([1]) == 1", "assert total([]) == 0"], limits=limits)
        team = Reflection(RoleAgent(role("generator"), model.spec), critic, stop=MaxRounds(2))
        token = CancellationToken()
        run = asyncio.ensure_future(team.run(task="Sum a list of integers.", cancellation_token=token))
        scratch = sandbox_leftovers.scratch
        while not any("_moot_tester.py" in command for _, command in processes_under(scratch)):
            assert not run.done(), run
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)  # a test is calling into the code, which sleeps
        token.cancel()
        cancelled = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert time.monotonic() - cancelled < 0.5
    await assert_ends_within_a_second_and_starts_nothing(scratch, cancelled)
