"""A debater's changed answer is adopted only when argued: met in the claim it answered, or derived."""

from __future__ import annotations

import pytest

from moot.roles import Position
from moot.teams._adoption import derives, settle_change

TASK = "State the final answer to the following arithmetic problem: 2664 + 2085 + 7003 - 8591 - 7142 ="


def _position(answer: str, reasoning: str = "", claim: str | None = None) -> Position:
    return Position(
        claim=claim, response="it fails", reasoning=reasoning, answer=answer, because="a recount",
        key_arguments=["checked the sum"], confidence=0.6,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("words", "answer", "derived"),
    [
        ("2664 + 2085 = 4749, 4749 + 7003 = 11752, 11752 - 8591 = 3161, 3161 - 7142 = -3981", "-3981", True),
        ("the total is -3981", "-3981", True),
        ("2664 + 2085 = 4749", "2664", False),  # a number copied from the question is not a result
        ("the sum is 2664 + 2085 + 7003 = 2664 + 2085", "2664", False),  # "= 2664 + ..." starts an expression
        ("I checked and I keep 2664", "2664", False),
        ("adding up, I get 3981 this time", "3981", True),  # stated in its words, not in the task
        ("nothing to add", "-3981", False),
        ("the migration risk decides it: split", "split", True),
        ("the migration risk decides it", "split", False),
    ],
)
def test_an_answer_is_derived_when_the_expert_s_own_words_arrive_at_it(words, answer, derived):
    assert derives(words, answer, TASK) is derived


def test_an_unargued_change_is_recorded_and_the_previous_answer_stands():
    previous = _position("4749")
    copied = _position("2664", reasoning="I agree with the others", claim="expert_2: the first number")
    settled = settle_change(copied, previous, {"expert_2": "5753"}, TASK)
    assert (settled.answer, settled.proposed) == ("4749", "2664")


def test_a_change_is_adopted_only_when_met_in_the_claim_answered_and_derived():
    previous = _position("4749")
    persuaded = _position("5753", reasoning="they are right", claim="expert_2: 2664 + 2085 = 5753")
    assert settle_change(persuaded, previous, {"expert_2": "5753"}, TASK).proposed == "5753"  # not checked
    derived = _position("-3981", reasoning="redone: 3161 - 7142 = -3981", claim="expert_2: 2664 + 2085 = 5753")
    assert settle_change(derived, previous, {"expert_2": "5753"}, TASK).proposed == "-3981"  # nobody argued it
    both = _position("-3981", reasoning="redone: 3161 - 7142 = -3981", claim="expert_3: the total is -3981")
    settled = settle_change(both, previous, {"expert_2": "5753", "expert_3": "-3981"}, TASK)
    assert (settled.answer, settled.proposed) == ("-3981", None)
    same = _position("4749.0", reasoning="no change")
    assert settle_change(same, previous, {}, TASK) is same  # a respelling is no change
