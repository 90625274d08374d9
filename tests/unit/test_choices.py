"""Rotated choices (``debate?choice_order=rotated``): which questions list their choices, how a rotation reads back,
and what a lean on one label does to the vote."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.harness import CompareRequest, run_comparison
from moot.harness.arms._arm import canonical_spec
from moot.harness.arms._team_arms import DebateArm
from moot.harness.suites._choices import choices_to_rotate, listed_choices
from moot.harness.suites._suites import load_suite
from tests.unit.test_harness_support import PromptModel

ABCD = ("A", "B", "C", "D")
ROTATED = "debate?opening=solver&rounds=1&choice_order=rotated"


@pytest.mark.parametrize(
    "task",
    [
        "Which planet is closest to the Sun? A) Venus B) Mercury C) Earth D) Mars",
        "Which planet is closest to the Sun?\n(A) Venus\n(B) Mercury\n(C) Earth\n(D) Mars\nAnswer with a letter.",
        "Which planet is closest to the Sun?\nA. Venus\nB. Mercury\nC. Earth\nD. Mars",
        "Which planet is closest to the Sun? A: Venus B: Mercury C: Earth D: Mars\n\nAnswer with exactly one of: A, B.",
    ],
)
def test_listed_choices_are_found_in_every_usual_lettering_and_rotate_by_content(task):
    choices = listed_choices(task, ABCD)
    assert choices is not None and choices.texts() == ["Venus", "Mercury", "Earth", "Mars"]
    rotated = listed_choices(choices.rotated(1), ABCD)
    assert rotated is not None and rotated.texts() == ["Mercury", "Earth", "Mars", "Venus"]
    tail = task[choices.spans[-1][1] :]
    assert choices.rotated(1).endswith("Venus" + tail)  # the text around the choices is kept
    # "A" under a shift of 1 shows Mercury: read back, it is Mercury's label as asked, and so on for every label
    assert [choices.read_back(label, 1) for label in ABCD] == ["B", "C", "D", "A"]
    assert [choices.read_back(label, 3) for label in ABCD] == ["D", "A", "B", "C"]
    assert choices.read_back("Mercury", 1) == "Mercury"  # no label: judged as it is


@pytest.mark.parametrize(
    "task, choices",
    [
        ("Is the Sun a star?", ("Yes", "No")),  # a closed set the question does not list
        ("Pick: A) one B) two C) three", ABCD),  # D is missing
        ("Pick: B) one A) two C) three D) four", ABCD),  # out of order
        ("Point A) is far. Pick: A) one B) two C) three D) four", ABCD),  # a label twice: which list is meant?
        ("Pick: A) one B) two C) three D) four", ()),  # no answer set at all
    ],
)
def test_a_question_that_does_not_list_each_choice_once_in_order_is_left_as_asked(task, choices):
    assert listed_choices(task, choices) is None


def _mc_suite(tmp_path: Path) -> Path:
    path = tmp_path / "mc.jsonl"
    items = [
        {"id": "m1", "question": "Closest planet to the Sun? A) Venus B) Mercury C) Earth D) Mars", "answer": "B"},
        {"id": "m2", "question": "Largest planet? A) Jupiter B) Mars C) Venus D) Earth", "answer": "A"},
    ]
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


KNOWN = {"Mercury", "Jupiter"}


def _solver(lean: bool):
    """A solver that picks the label of the choice it knows, or (``lean``) always the first label."""

    def reply(agent: str, messages) -> dict[str, str]:
        request = str(messages[-1].content)
        if lean:
            return {"reasoning": "the first one", "answer": "A"}
        for label, text in re.findall(r"([A-D])\) (\w+)", request):
            if text in KNOWN:
                return {"reasoning": f"it is {text}", "answer": label}
        raise AssertionError(f"no known choice in {request!r}")

    return reply


def _rows(tmp_path: Path, lean: bool, arms: list[str]):
    model = PromptModel(f"mc-{lean}", _solver(lean)).register()
    try:
        opts = CompareRequest(
            suite=f"{_mc_suite(tmp_path)}?choices=A,B,C,D", arms=arms, models=[model.spec], out=tmp_path / "out"
        )
        return {(r.item, r.arm): r for r in asyncio.run(run_comparison(opts)).rows}
    finally:
        model.unregister()


def test_rotated_experts_answering_by_content_agree_after_reading_back(tmp_path):
    rows = _rows(tmp_path, lean=False, arms=[ROTATED])
    for item, answer in (("m1", "B"), ("m2", "A")):
        row = next(r for (i, _), r in rows.items() if i == item)
        assert row.answer == answer and row.score == 1
        assert row.metrics["answers_per_round"] == [[answer] * 3]  # three letters said, one choice meant


def test_a_lean_on_one_label_splits_a_rotated_vote_and_decides_an_asked_one(tmp_path):
    asked = "debate?opening=solver&rounds=1&choice_order=asked"
    rows = _rows(tmp_path, lean=True, arms=[asked, ROTATED])
    by_arm = {arm.split("choice_order=")[1].split("&")[0]: row for (item, arm), row in rows.items() if item == "m1"}
    assert by_arm["asked"].metrics["answers_per_round"] == [["A", "A", "A"]]
    assert by_arm["rotated"].metrics["answers_per_round"] == [["A", "B", "C"]]  # "A" meant three choices
    assert by_arm["rotated"].answer == "A" and by_arm["rotated"].metrics["decided_by_tie"]  # the held answer's tie


def test_rotated_choices_are_refused_where_they_cannot_apply(tmp_path):
    mc = load_suite(f"{_mc_suite(tmp_path)}?choices=A,B,C,D")
    with pytest.raises(ConfigError, match=r"needs opening=solver and rounds=1 \(given opening=solver, rounds=3\)"):
        DebateArm({"choice_order": "rotated", "opening": "solver", "rounds": "3"}).check(mc)
    with pytest.raises(ConfigError, match=r"needs opening=solver and rounds=1 \(given opening=expert, rounds=1\)"):
        DebateArm({"choice_order": "rotated", "opening": "expert", "rounds": "1"}).check(mc)
    sums = tmp_path / "sums.jsonl"
    sums.write_text(json.dumps({"id": "s", "input": "What is 1 + 2?", "answer": 3}) + "\n")
    with pytest.raises(
        ConfigError, match=r"needs a closed answer set .* has none; valid choice_order values there: asked"
    ):
        DebateArm({"choice_order": "rotated", "opening": "solver", "rounds": "1"}).check(load_suite(str(sums)))

    with pytest.raises(ConfigError, match=r"choice_order=rotated is for closed answer sets.*for code: asked"):
        DebateArm({"choice_order": "rotated"}).check(load_suite("humaneval[:2]"))


def test_each_closed_kind_takes_its_own_defaults_and_a_default_never_asks_what_an_option_given_forbids(tmp_path):
    mc = load_suite(f"{_mc_suite(tmp_path)}?choices=A,B,C,D")
    assert mc.answer_kind == "multiple_choice"
    arm = DebateArm()
    arm.check(mc)
    assert (arm.config.opening, arm.config.rounds, arm.config.choice_order) == ("solver", 1, "rotated")
    assert "choice_order=rotated" in canonical_spec(arm)
    for given in ({"opening": "expert"}, {"rounds": "3"}):  # rotation needs what these change: it is not defaulted
        arm = DebateArm(given)
        arm.check(mc)
        assert arm.config.choice_order == "asked" and "choice_order=asked" in canonical_spec(arm)
    yes_no = tmp_path / "yes-no.jsonl"
    yes_no.write_text(json.dumps({"id": "y", "input": "Is 4 even?", "answer": "Yes"}) + "\n")
    closed = load_suite(f"{yes_no}?choices=Yes,No")
    assert closed.answer_kind == "choices"
    arm = DebateArm()
    arm.check(closed)
    assert (arm.config.opening, arm.config.rounds, arm.config.choice_order) == ("solver", 1, "rotated")
    sums = tmp_path / "sums.jsonl"
    sums.write_text(json.dumps({"id": "s", "input": "What is 1 + 2?", "answer": 3}) + "\n")
    arm = DebateArm()
    arm.check(load_suite(str(sums)))
    assert "choice_order" not in canonical_spec(arm)  # no choices to order: the label never mentions it


def test_a_closed_set_the_question_does_not_list_is_lettered_after_it_and_read_back_as_its_answers():
    question = "Is the Sun a star?\n\nAnswer with exactly one of: Yes, No."
    assert listed_choices(question, ("Yes", "No")) is None
    choices = choices_to_rotate(question, ("Yes", "No"))
    assert choices is not None and choices.labels == ("A", "B")
    assert choices.rotated(0) == "Is the Sun a star?\n\nA) Yes\nB) No\n\nAnswer with exactly one of: A, B."
    assert choices.rotated(1) == "Is the Sun a star?\n\nA) No\nB) Yes\n\nAnswer with exactly one of: A, B."
    assert [choices.read_back(letter, 1) for letter in "AB"] == ["No", "Yes"]
    assert [choices.read_back(letter, 0) for letter in "AB"] == ["Yes", "No"]
    assert choices.read_back("Maybe", 1) == "Maybe"
    # a gym question carries no instruction line: the letters' is added after the list
    assert (
        choices_to_rotate("Does it follow?", ("Yes", "No"))
        .rotated(1)
        .endswith("A) No\nB) Yes\n\nAnswer with exactly one of: A, B.")
    )
    listed = "Which? A) x B) y"
    assert choices_to_rotate(listed, ("A", "B")).texts() == ["x", "y"]  # a listed set is moved where it stands


def test_rotated_yes_no_experts_answer_letters_and_vote_with_yes_or_no(tmp_path):
    path = tmp_path / "yn.jsonl"
    path.write_text(json.dumps({"id": "y1", "question": "Is the Sun a star?", "answer": "Yes"}) + "\n")

    def reply(agent: str, messages) -> dict[str, str]:
        request = str(messages[-1].content)
        if "A) Yes" in request:
            return {"reasoning": "the Sun is a star", "answer": "A"}
        if "A) No" in request:
            return {"reasoning": "the Sun is a star", "answer": "B"}
        return {"reasoning": "planets orbit stars", "answer": "No"}  # the held single call, asked as written

    model = PromptModel("yn-rotated", reply).register()
    try:
        opts = CompareRequest(suite=f"{path}?choices=Yes,No", arms=["debate"], models=[model.spec], out=tmp_path / "o")
        (row,) = asyncio.run(run_comparison(opts)).rows
    finally:
        model.unregister()
    assert row.metrics["answers_per_round"] == [["No", "Yes", "Yes"]]  # two orders, one content: it outvotes
    assert row.answer == "Yes" and row.score == 1
