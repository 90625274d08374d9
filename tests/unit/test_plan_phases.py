"""The planner-executor's phases: the typed table, the diagram drawn from it, and real runs taking every move."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from moot.conditions import MaxSteps
from moot.messages import HumanFeedbackRequested
from moot.roles import StepResult
from moot.teams import Feedback, HumanInTheLoop
from moot.teams._machine import reachable as machine_reachable
from moot.teams._plan_phases import ENDINGS, PLAN_TRANSITIONS, PlanPhase, PlanTrigger, next_plan_phase, plan_diagram
from moot.teams._plan_records import PlannerExecutorState
from moot.testing import ScriptedModel
from tests.unit.test_planner_executor import call, plan, prompts, step, team

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ the table
def reachable(start: PlanPhase) -> set[PlanPhase]:
    return machine_reachable(PLAN_TRANSITIONS, start)


def test_every_phase_is_reachable_from_plan_and_every_phase_can_reach_an_ending():
    assert reachable(PlanPhase.PLAN) == set(PlanPhase)
    for phase in PlanPhase:
        assert reachable(phase) & ENDINGS, f"{phase} never ends the turns"


def test_only_a_human_moves_the_team_out_of_an_ending():
    assert {trigger for (source, trigger) in PLAN_TRANSITIONS if source in ENDINGS} == {PlanTrigger.REJECTED}
    assert not [key for key in PLAN_TRANSITIONS if key[0] is PlanPhase.GAVE_UP]


def test_every_trigger_moves_the_machine():
    assert {trigger for _, trigger in PLAN_TRANSITIONS} == set(PlanTrigger)


def test_the_team_takes_one_turn_in_each_phase_but_the_endings():
    model = ScriptedModel({"planner": [], "executor": []})
    with model:
        assert set(team(model)._phases) == set(PlanPhase) - ENDINGS


def test_a_move_the_table_lacks_is_refused_naming_the_phase_and_what_it_allows():
    with pytest.raises(RuntimeError) as refused:
        next_plan_phase(PlanPhase.ACT, PlanTrigger.COMPLETED)
    assert str(refused.value) == (
        "the planner-executor has no transition from act on COMPLETED; from act it moves on CHOSEN, REJECTED"
    )
    with pytest.raises(RuntimeError, match=r"from gave_up on REJECTED; .* nothing \(no transition leaves it\)$"):
        next_plan_phase(PlanPhase.GAVE_UP, PlanTrigger.REJECTED)


def test_the_state_moves_only_by_the_table_and_an_illegal_move_leaves_it_where_it_was():
    state = PlannerExecutorState.model_validate({"phase": "run"})  # a checkpoint holds the phase as its name
    assert state.phase is PlanPhase.RUN
    state.move(PlanTrigger.UNDECIDED)
    assert state.phase is PlanPhase.JUDGE
    with pytest.raises(RuntimeError, match="no transition from judge on CHOSEN"):
        state.move(PlanTrigger.CHOSEN)
    assert state.phase is PlanPhase.JUDGE
    assert state.model_dump(mode="json")["phase"] == "judge"


def test_the_architecture_doc_shows_the_diagram_drawn_from_the_table():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The planner-executor's phases", 1)[1].split("\n## ", 1)[0]
    [shown] = re.findall(r"```mermaid\n(.*?)\n```", section, re.DOTALL)
    assert shown == plan_diagram(), "docs/architecture.md's planner diagram differs from plan_diagram()"


def test_the_diagram_draws_every_transition_and_every_ending():
    drawn = plan_diagram().splitlines()
    for (source, trigger), target in PLAN_TRANSITIONS.items():
        assert f"    {source} --> {target}: {trigger}" in drawn
    assert [line for line in drawn if line.endswith("--> [*]")] == ["    done --> [*]", "    gave_up --> [*]"]
    assert "    [*] --> plan" in drawn


# ------------------------------------------------------------------ runs take the moves
Moves = list[tuple[PlanPhase, PlanTrigger, PlanPhase]]


@pytest.fixture
def taken(monkeypatch) -> Moves:
    """Every move the planner-executors of a test take, in order."""
    from moot.teams import _plan_records

    moves: Moves = []

    def recording(phase: PlanPhase, trigger: PlanTrigger) -> PlanPhase:
        moves.append((phase, trigger, next_plan_phase(phase, trigger)))
        return moves[-1][2]

    monkeypatch.setattr(_plan_records, "next_plan_phase", recording)
    return moves


def drawn(moves: Moves) -> str:
    """Moves as 'plan -PLANNED-> act -CHOSEN-> ...', one run's moves after another."""
    return " ".join([str(moves[0][0]), *(f"-{trigger.name}-> {target}" for _, trigger, target in moves)])


class Answers:
    def __init__(self, *answers: Feedback) -> None:
        self.answers = list(answers)

    def __call__(self, request: HumanFeedbackRequested) -> Feedback:
        return self.answers.pop(0)


def judged(success: bool, summary: str) -> StepResult:
    return StepResult(reasoning="looked at the output", success=success, summary=summary)


async def run(scripts: dict, points=(), *answers: Feedback, **options) -> ScriptedModel:
    """Run a planner-executor on ``scripts`` (a human at ``points`` giving ``answers``); return its model."""
    model = ScriptedModel(scripts)
    with model:
        pe = team(model, **options)
        pe.human = HumanInTheLoop(list(points), feedback=Answers(*answers) if answers else None)
        await pe.run(task="t")
    return model


async def checked_then_judged() -> None:
    plans = [plan(step("echo hi", "echo"), step("add 2 and 2", "add", "judge"))]
    await run({"planner": plans, "executor": [call("echo", text="hi"), call("add", a=2, b=2), judged(True, "4")]})


async def judged_failure_revised() -> None:
    plans = [
        plan(step("add 2 and 2", "add", "judge"), step("echo ok", "echo")),
        plan(step("add 2 and 3", "add", "judge"), step("echo ok", "echo")),
    ]
    executor = [call("add", a=2, b=2), judged(False, "not 5"), call("add", a=2, b=3), judged(True, "5")]
    await run({"planner": plans, "executor": [*executor, call("echo", text="ok")]})


async def gave_up() -> None:
    plans = [plan(step("add -1 and 1", "add")), plan(step("add -2 and 2", "add"))]
    await run({"planner": plans, "executor": [call("add", a=-1, b=1), call("add", a=-2, b=2)]}, max_replans=1)


async def rejected_at_the_final_point() -> None:
    plans = [plan(step("echo hello", "echo")), plan(step("echo hello world", "echo"))]
    executor = [call("echo", text="hello"), call("echo", text="hello world")]
    await run({"planner": plans, "executor": executor}, ["final"], Feedback.reject("louder"), Feedback.approve())


async def rejected_between_steps() -> None:
    plans = [plan(step("echo a", "echo"), step("echo b", "echo")), plan(step("echo c", "echo"))]
    executor = [call("echo", text="a"), call("echo", text="c")]
    answers = (Feedback.reject("c, not b"), Feedback.approve())
    await run({"planner": plans, "executor": executor}, ["round"], *answers)


START = "plan -PLANNED-> act -CHOSEN-> run"
RUNS: dict[Callable[[], Awaitable[None]], str] = {
    checked_then_judged: f"{START} -PASSED-> act -CHOSEN-> run -UNDECIDED-> judge -COMPLETED-> done",
    judged_failure_revised: f"{START} -UNDECIDED-> judge -FAILED-> replan -REVISED-> act -CHOSEN-> run -UNDECIDED-> "
    "judge -PASSED-> act -CHOSEN-> run -COMPLETED-> done",
    gave_up: f"{START} -FAILED-> replan -REVISED-> act -CHOSEN-> run -FAILED-> replan -EXHAUSTED-> gave_up",
    rejected_at_the_final_point: f"{START} -COMPLETED-> done -REJECTED-> replan -REVISED-> act -CHOSEN-> run "
    "-COMPLETED-> done",
    rejected_between_steps: f"{START} -PASSED-> act -REJECTED-> replan -REVISED-> act -CHOSEN-> run -COMPLETED-> done",
}


@pytest.mark.parametrize("scenario", list(RUNS), ids=lambda scenario: scenario.__name__)
async def test_a_run_takes_the_moves_its_turns_trigger(scenario, taken):
    await scenario()
    assert drawn(taken) == RUNS[scenario]


async def test_the_runs_above_take_every_move_of_the_table(taken):
    for scenario in RUNS:
        await scenario()
    assert set(PLAN_TRANSITIONS) - {(phase, trigger) for phase, trigger, _ in taken} == set()


async def test_a_rejection_the_table_has_no_move_for_changes_nothing(taken):
    """After the team gave up, a rejection at the final point moves nothing: the turns end again at once, with
    the same stop reason, and the planner is not asked again."""
    plans = [plan(step("add -1 and 1", "add"))]
    scripts = {"planner": plans, "executor": [call("add", a=-1, b=1)]}
    model = ScriptedModel(scripts)
    with model:
        pe = team(model, stop=MaxSteps(10), max_replans=0)
        pe.human = HumanInTheLoop(["final"], feedback=Answers(Feedback.reject("try again"), Feedback.approve()))
        result = await pe.run(task="t")
    assert drawn(taken) == f"{START} -FAILED-> replan -EXHAUSTED-> gave_up"
    assert result.stop_reason == (
        "gave up: step 1 failed after 0 plan revision(s); last failure: add failed: negative numbers are not supported"
    )
    assert len(prompts(model, "planner")) == 1 and pe.state.phase is PlanPhase.GAVE_UP
