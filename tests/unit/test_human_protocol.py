"""One protocol for asking a person (moot.human): the same answerer serves a team's feedback points and a tool
policy's approvals, and its terminal side lives in moot.display, loaded only when a question is asked."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from pydantic import BaseModel, ConfigDict
from rich.console import Console

from moot.conditions import ScoreThreshold
from moot.display import TerminalHuman
from moot.errors import ConfigError
from moot.human import CallbackHuman, Human, HumanAnswer, HumanQuestion
from moot.messages import HumanFeedbackRequested
from moot.teams import AnswerOnce, Feedback, HumanFeedbackFrom, HumanInTheLoop
from moot.testing import ScriptedModel
from moot.tools import ApprovalRequest, PermissionPolicy, Tool, ToolBox
from tests.conftest import make_critique, make_reflection

TASK = "Write a function add(a, b) that returns the sum."


class NoteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


async def _note(args: NoteArgs) -> str:
    return f"noted {args.text}"


NOTE = Tool("note", "Write a note.", NoteArgs, _note, side_effects=True)


class Reviewer:
    """A Human of a user's own: approves everything and remembers what it was asked."""

    name = "reviewer"

    def __init__(self) -> None:
        self.questions: list[HumanQuestion] = []

    async def answer(self, question: HumanQuestion) -> HumanAnswer:
        self.questions.append(question)
        return HumanAnswer("approve", "fine")


async def test_one_answerer_serves_the_teams_feedback_and_the_tool_policy():
    person = Reviewer()
    assert isinstance(person, Human)
    box = ToolBox([NOTE], PermissionPolicy(approver=person))
    record = await box.call("note", {"text": "hi"})
    model = ScriptedModel({"generator": ["draft one"], "critic": [make_critique(90)]})
    with model:
        reflection = make_reflection(model, ScoreThreshold(85))
        reflection.human = HumanInTheLoop(["final"], feedback=person)
        result = await reflection.run(task=TASK)

    assert (record.decision, record.approver, record.reason, record.output) == (
        "approved",
        "reviewer",
        "fine",
        "noted hi",
    )
    assert result.stop_reason == "quality threshold: score 90 >= 85 in round 1"
    asked = [(q.kind, q.title, q.choices, type(q.subject)) for q in person.questions]
    assert asked == [
        ("approval", "approve tool call: note (has side effects)", ("approve", "reject"), ApprovalRequest),
        (
            "feedback",
            "waiting for human feedback at final (quality threshold: score 90 >= 85 in round 1)",
            ("approve", "reject", "stop"),
            HumanFeedbackRequested,
        ),
    ]
    assert '"text": "hi"' in person.questions[0].shown and "draft one" in person.questions[1].shown
    assert isinstance(reflection.human.feedback, HumanFeedbackFrom)


async def test_a_callback_human_answers_with_a_choice_or_a_bool():
    refuse = CallbackHuman(lambda question: question.kind != "approval", name="bot")
    box = ToolBox([NOTE], PermissionPolicy(approver=refuse))
    record = await box.call("note", {"text": "hi"})
    assert (record.decision, record.approver, record.reason) == ("refused", "bot", "no reason given")

    stop = HumanInTheLoop(["round"], feedback=CallbackHuman(lambda question: "stop", name="bot"))
    feedback = await stop.ask(HumanFeedbackRequested(source="t", point="round", round=1))
    assert (feedback.action, feedback.by) == ("stop", "bot")


async def test_one_terminal_human_answers_a_tool_call_then_a_feedback_point():
    screen = io.StringIO()
    person = TerminalHuman(Console(file=screen, width=100, color_system=None), io.StringIO("y\n\nr\nmore tests\n"))
    box = ToolBox([NOTE], PermissionPolicy(approver=person))
    record = await box.call("note", {"text": "hi"})
    human = HumanInTheLoop(["final"], feedback=person)
    feedback = await human.ask(HumanFeedbackRequested(source="t", point="final", summary="def f(): ..."))
    assert (record.decision, record.approver) == ("approved", "human")
    assert (feedback.action, feedback.comment, feedback.by) == ("reject", "more tests", "human")
    shown = screen.getvalue()
    assert "run it?" in shown and "approve, reject or stop?" in shown and "def f(): ..." in shown


async def test_an_answer_given_ahead_hands_later_pauses_to_a_human():
    human = HumanInTheLoop(["round"])
    human.feedback = AnswerOnce(human, Feedback.approve(), then=CallbackHuman(lambda question: "stop", name="bot"))
    first = await human.ask(HumanFeedbackRequested(source="t", point="round", round=1))
    second = await human.ask(HumanFeedbackRequested(source="t", point="round", round=2))
    assert (first.action, second.action, second.by) == ("approve", "stop", "bot")


def test_a_bad_answer_or_answerer_is_refused_in_one_line():
    with pytest.raises(ConfigError, match="HumanAnswer: choice must be one of approve, reject, stop"):
        HumanAnswer("maybe")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="CallbackHuman: fn"):
        CallbackHuman(5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="PermissionPolicy: approver"):
        PermissionPolicy(approver=object())  # type: ignore[arg-type]


def test_importing_moot_loads_no_prompt_module_and_no_matplotlib():
    """The terminal prompts and the charts are presentation, loaded when a question is asked or a chart drawn."""
    code = (
        "import sys, moot, moot.human, moot.teams, moot.tools, moot.display\n"
        "print(sorted(m for m in ('rich.prompt', 'matplotlib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
