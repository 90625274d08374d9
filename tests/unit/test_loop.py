"""The loop's state machine: the table itself, the diagram drawn from it, and real runs taking every transition."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from autogen_agentchat.base import TaskResult
from autogen_core import CancellationToken

from moot.conditions import MaxRounds, ScoreThreshold, TokenBudget
from moot.messages import HumanFeedbackRequested
from moot.store import RunStore
from moot.teams import AnswerOnce, Feedback, HumanInTheLoop
from moot.teams._loop import RUNNING, TERMINAL, TRANSITIONS, RunPhase, Trigger, diagram
from moot.teams._machine import reachable as machine_reachable
from moot.testing import ScriptedModel
from tests.conftest import make_critique, make_reflection
from tests.unit.test_planner_executor import call, plan, step, team

ROOT = Path(__file__).resolve().parents[2]
TASK = "Write a function add(a, b) that returns the sum."
EXCEPTIONAL = {Trigger.CANCELLED, Trigger.ERROR}


# ------------------------------------------------------------------ the table
def reachable(start: RunPhase) -> set[RunPhase]:
    return machine_reachable(TRANSITIONS, start)


def test_every_phase_is_reachable_from_intake():
    assert reachable(RunPhase.INTAKE) == set(RunPhase)


def test_every_running_phase_can_end_without_an_exception():
    for phase in RUNNING:
        ordinary = {t for (s, tr), t in TRANSITIONS.items() if s is phase and tr not in EXCEPTIONAL}
        assert ordinary, f"{phase} has no way on but an exception"
        ends = set().union(*(reachable(t) for t in ordinary)) & TERMINAL
        assert ends - {RunPhase.INTERRUPTED, RunPhase.FAILED}, f"{phase} can only end in an exception"


def test_no_transition_leaves_a_terminal_phase():
    assert not [key for key in TRANSITIONS if key[0].terminal]
    assert TERMINAL == {p for p in RunPhase if p not in RUNNING}


def test_any_running_phase_can_be_interrupted_or_fail_and_nothing_else_is_an_exception():
    for phase in RUNNING:
        assert TRANSITIONS[(phase, Trigger.CANCELLED)] is RunPhase.INTERRUPTED
        assert TRANSITIONS[(phase, Trigger.ERROR)] is RunPhase.FAILED
    assert {t for (_, tr), t in TRANSITIONS.items() if tr not in EXCEPTIONAL} & {
        RunPhase.INTERRUPTED,
        RunPhase.FAILED,
    } == set()


def test_every_trigger_moves_the_machine():
    assert {trigger for _, trigger in TRANSITIONS} == set(Trigger)


def test_running_phases_are_the_stores_running_status_and_endings_are_its_other_statuses():
    assert {p.status for p in RUNNING} == {"running"}
    assert sorted(p.status for p in TERMINAL) == ["failed", "finished", "interrupted", "partial", "suspended"]
    assert not any(p.terminal for p in RUNNING)


def test_the_architecture_doc_shows_the_diagram_drawn_from_the_table():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The loop every team shares", 1)[1].split("\n## ", 1)[0]
    [shown] = re.findall(r"```mermaid\n(.*?)\n```", section, re.DOTALL)
    assert shown == diagram(), "docs/architecture.md's loop diagram differs from moot.teams._loop.diagram()"


def test_the_diagram_draws_every_transition():
    drawn = diagram()
    for (source, trigger), target in TRANSITIONS.items():
        edge = f"running --> {target}: {trigger}" if target.terminal else f"{source} --> {target}: {trigger}"
        assert edge in drawn


# ------------------------------------------------------------------ runs take the transitions
Path_ = list[tuple[RunPhase, Trigger, RunPhase]]


@pytest.fixture
def taken(monkeypatch) -> Path_:
    """Every transition the runs of a test take, in order."""
    from moot.teams import _loop

    path: Path_ = []
    real = _loop.next_phase

    def recording(phase: RunPhase, trigger: Trigger) -> RunPhase:
        path.append((phase, trigger, real(phase, trigger)))
        return path[-1][2]

    monkeypatch.setattr(_loop, "next_phase", recording)
    return path


def drawn(path: Path_) -> str:
    """A path as 'intake -START-> turns -BATCH-> ...', runs separated by ' | '."""
    text = ""
    for phase, trigger, target in path:
        if phase is RunPhase.INTAKE and text:
            text += " | "
        if not text or text.endswith(" | "):
            text += str(phase)
        text += f" -{trigger.name}-> {target}"
    return text


class Answers:
    def __init__(self, *answers: Feedback) -> None:
        self.answers = list(answers)

    def __call__(self, request: HumanFeedbackRequested) -> Feedback:
        return self.answers.pop(0)


def reflection(model: ScriptedModel, stop, points=(), *answers: Feedback, retries: int = 2):
    team = make_reflection(model, stop, critic_retries=retries)
    team.human = HumanInTheLoop(points, feedback=Answers(*answers) if answers else None)
    return team


async def reflect(drafts: int, critiques: list, stop, points=(), *answers: Feedback, retries: int = 2):
    """Run a reflection on a script of ``drafts`` drafts and these critiques; return its result."""
    model = ScriptedModel({"generator": [f"d{i}" for i in range(1, drafts + 1)], "critic": critiques})
    with model:
        return await reflection(model, stop, points, *answers, retries=retries).run(task=TASK)


async def plain_stop() -> None:
    await reflect(1, [make_critique(60, "no hints")], MaxRounds(1))


async def topology_done() -> None:
    model = ScriptedModel({"planner": [plan(step("echo hello", "echo"))], "executor": [call("echo", text="hello")]})
    with model:
        await team(model).run(task="greet")


async def fault() -> None:
    assert (await reflect(1, ["not json"], MaxRounds(3), retries=0)).partial


async def rounds_approved_rejected_stopped() -> None:
    answers = (Feedback.approve(), Feedback.reject("add hints"), Feedback.stop("enough"))
    result = await reflect(3, [make_critique(60, "no hints")] * 3, MaxRounds(5), ["round"], *answers)
    assert result.stop_reason == "stopped by human at round: enough"


async def final_rejected_then_approved() -> None:
    answers = (Feedback.reject("handle floats"), Feedback.approve())
    await reflect(2, [make_critique(90), make_critique(95)], ScoreThreshold(85), ["final"], *answers)


async def final_rejected_within_a_spent_budget() -> None:
    await reflect(1, [], TokenBudget(5), ["final"], Feedback.reject("longer"))


async def final_stopped() -> None:
    await reflect(1, [make_critique(90)], MaxRounds(1), ["final"], Feedback.stop("no"))


async def suspend_then_approve(drafts: int, critiques: list, stop, point: str) -> None:
    """A run with nobody to answer at ``point`` suspends; the next, with someone, approves there."""
    model = ScriptedModel({"generator": [f"d{i}" for i in range(1, drafts + 1)], "critic": critiques})
    with model:
        team = reflection(model, stop, [point])
        await team.run(task=TASK)
        team.human.feedback = Answers(Feedback.approve())
        await team.run()


async def suspended_at_final_then_answered() -> None:
    await suspend_then_approve(1, [make_critique(90)], MaxRounds(1), "final")


async def suspended_at_a_round_then_answered() -> None:
    await suspend_then_approve(2, [make_critique(60, "no hints")] * 2, MaxRounds(2), "round")


async def cancelled() -> None:
    token = CancellationToken()

    async def cancel(messages) -> str:
        token.cancel()
        await asyncio.sleep(1)
        return "never"

    model = ScriptedModel({"generator": [cancel], "critic": []}, name="cancelled")
    with model:
        with pytest.raises(asyncio.CancelledError):
            await reflection(model, MaxRounds(1)).run(task=TASK, cancellation_token=token)


async def failed() -> None:
    model = ScriptedModel({"generator": [RuntimeError("boom")], "critic": []}, name="failed")
    with model:
        with pytest.raises(RuntimeError, match="boom"):
            await reflection(model, MaxRounds(1)).run(task=TASK)


ONE = "intake -START-> turns -BATCH-> turns -STOP-> closing"
RUNS: dict[Callable[[], Awaitable[None]], str] = {
    plain_stop: f"{ONE} -CLOSED-> result -COMPLETE-> finished",
    topology_done: "intake -START-> turns -BATCH-> turns -BATCH-> turns -BATCH-> turns -DONE-> closing "
    "-CLOSED-> result -COMPLETE-> finished",
    fault: "intake -START-> turns -BATCH-> turns -FAULT-> closing -CLOSED-> result -PARTIAL-> partial",
    rounds_approved_rejected_stopped: "intake -START-> turns -BATCH-> turns -ROUND_END-> round_point "
    "-APPROVE-> turns -BATCH-> turns -ROUND_END-> round_point -REJECT-> turns -BATCH-> turns -ROUND_END-> "
    "round_point -HUMAN_STOP-> closing -CLOSED-> result -COMPLETE-> finished",
    final_rejected_then_approved: "intake -START-> turns -BATCH-> turns -STOP-> closing -ASK_FINAL-> final_point "
    "-REARMED-> turns -BATCH-> turns -STOP-> closing -ASK_FINAL-> final_point -APPROVE-> result -COMPLETE-> finished",
    final_rejected_within_a_spent_budget: "intake -START-> turns -STOP-> closing -ASK_FINAL-> final_point "
    "-LIMIT_HOLDS-> result -COMPLETE-> finished",
    final_stopped: f"{ONE} -ASK_FINAL-> final_point -HUMAN_STOP-> result -COMPLETE-> finished",
    suspended_at_final_then_answered: f"{ONE} -ASK_FINAL-> final_point -NO_HUMAN-> result -WAITING-> suspended | "
    "intake -PENDING_FINAL-> final_point -APPROVE-> result -COMPLETE-> finished",
    suspended_at_a_round_then_answered: "intake -START-> turns -BATCH-> turns -ROUND_END-> round_point -NO_HUMAN-> "
    "result -WAITING-> suspended | intake -PENDING_ROUND-> round_point -APPROVE-> turns -BATCH-> turns -STOP-> "
    "closing -CLOSED-> result -COMPLETE-> finished",
    cancelled: "intake -START-> turns -CANCELLED-> interrupted",
    failed: "intake -START-> turns -ERROR-> failed",
}


@pytest.mark.parametrize("run", list(RUNS), ids=lambda run: run.__name__)
async def test_a_run_takes_the_transitions_its_events_trigger(run, taken):
    await run()
    assert drawn(taken) == RUNS[run]


async def test_the_runs_above_take_every_transition_of_the_table(taken):
    for run in RUNS:
        await run()
    ordinary = {key for key in TRANSITIONS if key[1] not in EXCEPTIONAL}
    assert ordinary - {(phase, trigger) for phase, trigger, _ in taken} == set()


# ------------------------------------------------------------------ what the machine settles
async def test_a_round_rejection_does_not_outlive_its_round_a_later_final_suspension_says_it_waits():
    """A rejection answers one point: a run that rejected a round (as ``moot resume ID --feedback`` does) and
    then suspends at the final point records that it waits there, not that the team finished its work."""
    critiques = [make_critique(60, "no hints"), make_critique(95)]
    model = ScriptedModel({"generator": ["d1", "d2"], "critic": critiques})
    with model:
        team = reflection(model, ScoreThreshold(90), ["round", "final"])
        team.human.feedback = AnswerOnce(team.human, Feedback.reject("add hints"))
        result = await team.run(task=TASK)
    assert result.stop_reason == "waiting for human feedback at final"
    assert team.waiting_for == "final"
    record = RunStore.default().get(team.run_id)
    assert (record.status, record.stop_reason) == ("suspended", "waiting for human feedback at final")


async def test_a_stream_closed_after_its_result_leaves_the_run_as_it_ended():
    model = ScriptedModel({"generator": ["d1"], "critic": [make_critique(60, "no hints")]})
    with model:
        team = reflection(model, MaxRounds(1))
        stream = team.run_stream(task=TASK)
        async for item in stream:
            if isinstance(item, TaskResult):
                break
        await stream.aclose()
        await asyncio.sleep(0)
    assert RunStore.default().get(team.run_id).status == "finished"
