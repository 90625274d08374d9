"""Human in the loop: approve / reject / stop at feedback points, and suspension when nobody can answer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from moot.arbiters import MajorityVote
from moot.conditions import MaxRounds, ScoreThreshold, TokenBudget
from moot.display import ConsoleFeedback
from moot.errors import ConfigError
from moot.messages import HumanFeedbackGiven, HumanFeedbackRequested
from moot.store import RunStore
from moot.teams import Feedback, HumanInTheLoop
from moot.testing import ScriptedModel
from tests.conftest import make_critique, make_debate, make_position, make_reflection
from tests.unit.test_planner_executor import call, plan, prompts, step, team

TASK = "Write a function add(a, b) that returns the sum."
ROOT = Path(__file__).resolve().parents[2]


class Answers:
    """A feedback callback that answers from a list and records what it was asked."""

    def __init__(self, *answers: Feedback) -> None:
        self.answers = list(answers)
        self.requests: list[HumanFeedbackRequested] = []

    def __call__(self, request: HumanFeedbackRequested) -> Feedback:
        self.requests.append(request)
        return self.answers.pop(0)


def human_rows(messages) -> list[tuple]:
    rows = []
    for m in messages:
        if isinstance(m, HumanFeedbackRequested):
            rows.append(("requested", m.point, m.round, m.stop_reason))
        elif isinstance(m, HumanFeedbackGiven):
            rows.append(("given", m.point, m.action, m.comment))
    return rows


def status(run_id: str) -> tuple[str, str | None]:
    record = RunStore.default().get(run_id)
    return record.status, record.stop_reason


# ------------------------------------------------------------------ approve / reject / stop
async def test_approval_at_final_keeps_the_result_and_its_stop_reason():
    model = ScriptedModel({"generator": ["draft one"], "critic": [make_critique(90)]})
    answers = Answers(Feedback.approve("ship it"))
    with model:
        reflection = make_reflection(model, ScoreThreshold(85))
        reflection.human = HumanInTheLoop(["final"], feedback=answers)
        result = await reflection.run(task=TASK)
    assert result.stop_reason == "quality threshold: score 90 >= 85 in round 1"
    assert human_rows(result.messages) == [
        ("requested", "final", None, "quality threshold: score 90 >= 85 in round 1"),
        ("given", "final", "approve", "ship it"),
    ]
    [request] = answers.requests
    assert "[generator]\ndraft one" in request.summary and "[critic]" in request.summary
    assert status(reflection.run_id) == ("finished", "quality threshold: score 90 >= 85 in round 1")


async def test_a_rejection_at_final_is_shown_to_the_next_round_and_the_team_works_on():
    model = ScriptedModel({"generator": ["draft one", "draft two"], "critic": [make_critique(90), make_critique(95)]})
    answers = Answers(Feedback.reject("handle floats too"), Feedback.approve())
    with model:
        reflection = make_reflection(model, ScoreThreshold(85) | MaxRounds(1))
        reflection.human = HumanInTheLoop(["final"], feedback=answers)
        result = await reflection.run(task=TASK)

    assert [r.draft for r in result.rounds] == ["draft one", "draft two"]
    # MaxRounds(1) was re-armed by the rejection: it allows one more round, then fires again.
    both = "quality threshold: score 95 >= 85 in round 2, max rounds: 1 of 1 rounds done (2 in all)"
    assert result.stop_reason == both
    assert human_rows(result.messages) == [
        ("requested", "final", None, "quality threshold: score 90 >= 85 in round 1, max rounds: 1 of 1 rounds done"),
        ("given", "final", "reject", "handle floats too"),
        ("requested", "final", None, both),
        ("given", "final", "approve", ""),
    ]
    revise = prompts(model, "generator")[1]
    assert revise.startswith("A human reviewer rejected the previous result and said:\nhandle floats too\n")
    # The revision continues the exchange that asked for the draft: the draft is the generator's own reply.
    history = model.calls("generator")[1].messages[1:-1]
    assert [(type(m).__name__, m.content) for m in history][1] == ("AssistantMessage", "draft one")
    assert prompts(model, "critic")[1].startswith("A human reviewer rejected")  # the critic checks it too
    assert "human reviewer" not in prompts(model, "critic")[0]


async def test_a_rejection_does_not_lift_a_spent_token_budget():
    model = ScriptedModel({"generator": ["draft one"], "critic": []})
    with model:
        reflection = make_reflection(model, TokenBudget(5))  # spent by the first draft
        reflection.human = HumanInTheLoop(["final"], feedback=Answers(Feedback.reject("longer please")))
        result = await reflection.run(task=TASK)
    assert len(result.rounds) == 1
    assert result.stop_reason.endswith("(a human rejected the result, but this limit still holds)")
    assert result.stop_reason.startswith("token budget:")


async def test_stop_after_a_round_ends_the_run_with_the_humans_reason():
    model = ScriptedModel({"generator": ["draft one"], "critic": [make_critique(60, "no hints")]})
    answers = Answers(Feedback.stop("good enough for a prototype"))
    with model:
        reflection = make_reflection(model, MaxRounds(5))
        reflection.human = HumanInTheLoop(["round", "final"], feedback=answers)
        result = await reflection.run(task=TASK)
    assert result.stop_reason == "stopped by human at round: good enough for a prototype"
    assert len(result.rounds) == 1
    assert [r.point for r in answers.requests] == ["round"]  # a human stop is not asked about again at final
    assert answers.requests[0].round == 1


async def test_approve_after_each_round_goes_on():
    model = ScriptedModel(
        {"generator": ["d1", "d2"], "critic": [make_critique(60, "no hints"), make_critique(70, "no docs")]}
    )
    answers = Answers(Feedback.approve(), Feedback.reject("add a docstring"))
    with model:
        reflection = make_reflection(model, MaxRounds(2))
        reflection.human = HumanInTheLoop(["round"], feedback=answers)
        result = await reflection.run(task=TASK)
    assert result.stop_reason == "max rounds: 2 of 2 rounds done"  # the condition fired: no round pause after it
    assert [r.round for r in answers.requests] == [1]
    assert "human reviewer" not in prompts(model, "generator")[1]


# ------------------------------------------------------------------ suspension and resume
async def test_without_a_feedback_source_the_run_suspends_and_resumes_from_the_store():
    model = ScriptedModel({"generator": ["draft one"], "critic": [make_critique(90)]})
    with model:
        reflection = make_reflection(model, ScoreThreshold(85))
        reflection.human = HumanInTheLoop(["final"])
        result = await reflection.run(task=TASK)
        run_id = reflection.run_id

    assert result.stop_reason == "waiting for human feedback at final"
    assert reflection.waiting_for == "final"
    assert status(run_id) == ("suspended", "waiting for human feedback at final")
    assert human_rows(result.messages) == [("requested", "final", None, "quality threshold: score 90 >= 85 in round 1")]

    later = ScriptedModel({"generator": [], "critic": []})  # nothing more to generate: the human approves
    with later:
        fresh = make_reflection(later, ScoreThreshold(85))
        fresh.human = HumanInTheLoop(["final"], feedback=Answers(Feedback.approve("fine")))
        resumed = await fresh.resume(run_id)
    assert resumed.stop_reason == "quality threshold: score 90 >= 85 in round 1"
    assert fresh.waiting_for is None
    assert status(run_id) == ("finished", "quality threshold: score 90 >= 85 in round 1")
    assert human_rows(resumed.messages) == [("given", "final", "approve", "fine")]
    assert [r.draft for r in resumed.rounds] == ["draft one"]


async def test_a_resumed_run_without_feedback_suspends_again_without_asking_twice():
    model = ScriptedModel({"generator": ["draft one"], "critic": [make_critique(90)]})
    with model:
        reflection = make_reflection(model, ScoreThreshold(85))
        reflection.human = HumanInTheLoop(["final"])
        await reflection.run(task=TASK)
        again = await reflection.run()  # still nobody to answer
    assert again.stop_reason == "waiting for human feedback at final"
    assert human_rows(again.messages) == []
    assert sum(isinstance(m, HumanFeedbackRequested) for m in reflection.transcript) == 1


async def test_a_run_suspended_after_a_round_continues_in_process_once_feedback_is_attached():
    model = ScriptedModel({"generator": ["d1", "d2"], "critic": [make_critique(60, "no hints"), make_critique(90)]})
    with model:
        reflection = make_reflection(model, ScoreThreshold(85))
        reflection.human = HumanInTheLoop(["round"])
        first = await reflection.run(task=TASK)
        assert (first.stop_reason, len(first.rounds)) == ("waiting for human feedback at round", 1)
        reflection.human.feedback = Answers(Feedback.reject("use type hints"))
        result = await reflection.run()
    assert result.stop_reason == "quality threshold: score 90 >= 85 in round 2"
    assert [r.draft for r in result.rounds] == ["d1", "d2"]
    assert prompts(model, "generator")[1].startswith("A human reviewer rejected the previous result and said:\nuse")


async def test_the_final_point_of_a_debate_comes_after_the_verdict():
    model = ScriptedModel({name: [make_position("keep")] for name in ("architect", "ops", "business")})
    answers = Answers(Feedback.approve())
    with model:
        debate = make_debate(model, MaxRounds(1), arbiter=MajorityVote())
        debate.human = HumanInTheLoop(["final"], feedback=answers)
        result = await debate.run(task="keep or split?")
    assert result.verdict.decision == "keep"
    [request] = answers.requests
    assert request.stop_reason == "max rounds: 1 of 1 rounds done"
    assert "[majority_vote]" in request.summary
    assert type(result.messages[-1]).__name__ == "HumanFeedbackGiven"


async def test_a_rejected_plan_result_goes_back_to_the_planner():
    model = ScriptedModel(
        {
            "planner": [plan(step("echo hello", "echo")), plan(step("echo hello world", "echo"))],
            "executor": [call("echo", text="hello"), call("echo", text="hello world")],
        }
    )
    answers = Answers(Feedback.reject("say hello world"), Feedback.approve())
    with model:
        pe = team(model)
        pe.human = HumanInTheLoop(["final"], feedback=answers)
        result = await pe.run(task="greet")
    assert result.stop_reason == "plan completed: all 1 step passed its check"
    assert result.revisions == 1 and result.completed and result.answer == "hello world"
    replan = prompts(model, "planner")[1]
    assert "Reason: a human reviewer rejected the result: say hello world" in replan
    assert "1. [passed] echo hello (echo)" in answers.requests[0].summary


# ------------------------------------------------------------------ configuration, console
def test_unknown_points_are_refused():
    with pytest.raises(ConfigError, match=r"unknown feedback point\(s\) verdict; known points: round, final"):
        HumanInTheLoop(["verdict"])


async def test_async_callbacks_are_awaited():
    async def later(request: HumanFeedbackRequested) -> Feedback:
        return Feedback.stop("async says stop")

    model = ScriptedModel({"generator": ["d1"], "critic": [make_critique(60, "x is wrong")]})
    with model:
        reflection = make_reflection(model, MaxRounds(3))
        reflection.human = HumanInTheLoop(["round"], feedback=later)
        result = await reflection.run(task=TASK)
    assert result.stop_reason == "stopped by human at round: async says stop"


async def test_console_feedback_reads_a_choice_and_a_comment():
    screen = io.StringIO()
    console = Console(file=screen, width=100, color_system=None)
    feedback = ConsoleFeedback(console, io.StringIO("r\nhandle empty input\n"))
    request = HumanFeedbackRequested(
        source="reflection", point="final", stop_reason="max rounds", summary="def f(): ..."
    )
    answer = await feedback(request)
    assert answer == Feedback(action="reject", comment="handle empty input", by="human")
    shown = screen.getvalue()
    assert "waiting for human feedback at final (max rounds)" in shown and "def f(): ..." in shown
    assert "approve, reject or stop?" in shown


async def test_console_feedback_approves_by_default():
    feedback = ConsoleFeedback(Console(file=io.StringIO()), io.StringIO("\n\n"))
    answer = await feedback(HumanFeedbackRequested(source="t", point="round", round=1))
    assert answer == Feedback(action="approve", comment="", by="human")


# ------------------------------------------------------------------ from the command line, without a terminal
def test_a_suspended_run_takes_feedback_and_approval_from_the_command_line(tmp_path):
    """Without a terminal a feedback pause suspends the run (exit 3); moot resume ID --feedback TEXT rejects
    with that comment and the team works on, --approve accepts, and either answers only the pause it waits at."""
    from typer.testing import CliRunner

    from moot.cli import app

    scenario = str(ROOT / "scenarios" / "code_review.py")

    def moot(*args: str):
        done = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
        return done.exit_code, done.stdout, done.stderr

    code, out, _ = moot("run", scenario, "-m", "scripted:deterministic", "--pause-at", "final")
    run_id = RunStore.default().list(1)[0].id
    assert code == 3 and f"moot resume {run_id} --approve" in " ".join(out.split())
    assert status(run_id)[0] == "suspended"

    code, _, err = moot("resume", run_id, "--feedback", "handle negative numbers")
    assert code == 3, err  # the team worked on, stopped again, and waits at the next pause (still no terminal)
    given = [t.payload for t in RunStore.default().turns(run_id) if t.payload.get("type") == "HumanFeedbackGiven"]
    assert [(g["action"], g["comment"]) for g in given] == [("reject", "handle negative numbers")]
    assert status(run_id)[0] == "suspended"

    code, _, err = moot("resume", run_id, "--approve", "--feedback", "good enough")
    assert code == 0, err
    given = [t.payload for t in RunStore.default().turns(run_id) if t.payload.get("type") == "HumanFeedbackGiven"]
    assert [(g["action"], g["comment"]) for g in given][-1] == ("approve", "good enough")
    assert status(run_id)[0] == "finished"

    code, _, err = moot("resume", run_id, "--approve")
    assert (code, err.count("\n")) == (2, 1) and "is not waiting for feedback (status finished)" in err
    code, _, err = moot("resume", run_id, "--feedback", " ")
    assert (code, err) == (2, "moot: error: --feedback needs a comment (what should change); to accept as it is, "
                               "give --approve\n")  # fmt: skip
