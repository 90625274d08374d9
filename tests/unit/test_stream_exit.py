"""Leaving a team's stream early: the run is stored interrupted and resumable, its lease released, and the same
team runs again, whether the stream is closed (``aclose``), merely dropped, or its task cancelled."""

from __future__ import annotations

import asyncio
import gc
import sqlite3

import pytest
from autogen_agentchat.base import TaskResult

from moot.store import RunStore
from moot.teams._base import MootTeam
from tests.unit.test_autogen_team_contract import Bench, bench  # noqa: F401  (the fixture: each of the four teams)


def _stored(team: MootTeam, run_id: str) -> tuple[str, str | None]:
    """The run's status as the store reports it, and who holds its lease (None: nobody)."""
    store = RunStore.shared(team.store_path)
    with sqlite3.connect(store.path) as db:
        (owner,) = db.execute("SELECT owner FROM runs WHERE id = ?", (run_id,)).fetchone()
    return store.get(run_id).status, owner


@pytest.fixture
def store(tmp_path) -> str:
    return str(tmp_path / "runs.sqlite3")


def _team(bench: Bench, store: str) -> MootTeam:  # noqa: F811
    return bench.team(store_path=store)


async def _two_messages_then_break(team: MootTeam, task: str):
    stream = team.run_stream(task=task)
    seen = []
    async for message in stream:
        seen.append(message)
        if len(seen) == 2:
            break
    return stream, seen


async def test_break_and_aclose_store_the_run_interrupted_release_it_and_the_team_runs_again(bench, store):  # noqa: F811
    team = _team(bench, store)
    stream, _ = await _two_messages_then_break(team, bench.kind.task)
    await stream.aclose()
    left = team.run_id
    assert _stored(team, left) == ("interrupted", None)

    result = await team.run(task=bench.kind.task)  # a new task: a new run, never LeaseLostError
    assert result.run_id != left and _stored(team, result.run_id)[0] in ("finished", "partial")
    assert _stored(team, left) == ("interrupted", None)  # the new run did not touch the one left


async def test_a_run_left_early_continues_where_it_stopped(bench, store):  # noqa: F811
    team = _team(bench, store)
    stream, _ = await _two_messages_then_break(team, bench.kind.task)
    await stream.aclose()
    left = team.run_id
    recorded = len(RunStore.shared(store).turns(left))
    result = await team.run()  # no task: the same run goes on
    status, owner = _stored(team, left)
    assert result.run_id == left and status in ("finished", "partial") and owner is None
    turns = RunStore.shared(store).turns(left)
    assert [t.seq for t in turns] == list(range(len(turns))) and len(turns) > recorded
    assert turns[0].source == "user" and [t.source for t in turns[1:]].count("user") == 0


async def test_resume_by_id_in_a_new_team_after_the_stream_was_left(bench, store):  # noqa: F811
    team = _team(bench, store)
    stream, _ = await _two_messages_then_break(team, bench.kind.task)
    await stream.aclose()
    result = await _team(bench, store).resume(team.run_id)
    assert isinstance(result, TaskResult) and result.run_id == team.run_id


async def test_a_stream_dropped_without_aclose_is_closed_and_the_team_runs_again_at_once(bench, store):  # noqa: F811
    team = _team(bench, store)
    async for _ in team.run_stream(task=bench.kind.task):
        break  # the stream is dropped here, never closed by its caller
    left = team.run_id
    gc.collect()
    result = await team.run(task=bench.kind.task)  # waits for the dropped run to be recorded, never races it
    assert result.run_id != left
    assert _stored(team, left) == ("interrupted", None)


async def test_a_consumer_task_cancelled_between_messages_leaves_the_run_interrupted(bench, store):  # noqa: F811
    team = _team(bench, store)
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in team.run_stream(task=bench.kind.task):
            started.set()
            await asyncio.sleep(60)  # the consumer is busy when it is cancelled, not the team

    consumer = asyncio.create_task(consume())
    await started.wait()
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    left = team.run_id
    result = await team.run()
    assert result.run_id == left and _stored(team, left)[0] in ("finished", "partial")


async def test_a_team_task_cancelled_mid_turn_is_interrupted_and_released(bench, store):  # noqa: F811
    team = _team(bench, store)
    bench.slow_first_turn()
    running = asyncio.create_task(team.run(task=bench.kind.task))
    await asyncio.sleep(0.2)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert _stored(team, team.run_id) == ("interrupted", None)
    assert (await team.run()).run_id == team.run_id


async def test_a_resume_stream_left_early_is_interrupted_too(bench, store):  # noqa: F811
    team = _team(bench, store)
    stream, _ = await _two_messages_then_break(team, bench.kind.task)
    await stream.aclose()
    again = _team(bench, store)
    resumed = again.resume_stream(team.run_id)
    await anext(resumed)
    await resumed.aclose()
    assert _stored(team, team.run_id) == ("interrupted", None)
    assert (await again.run()).run_id == team.run_id
