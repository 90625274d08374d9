"""Arbiters without a model: answer normalisation, modal answer, agreement, MajorityVote and RoundsVote."""

from __future__ import annotations

import pytest

from moot.arbiters import (
    Arbiter,
    ExpertAssessment,
    MajorityVote,
    RoundsArbiter,
    RoundsVote,
    Verdict,
    agreement,
    modal_answer,
    normalise_answer,
)
from tests.conftest import make_position

TASK = "Should we split the billing module out of the monolith?"


@pytest.mark.parametrize(
    ("answer", "normal"),
    [
        ("Keep", "keep"),
        ("keep.", "keep"),
        (" KEEP ", "keep"),
        ("'keep'", "keep"),
        ("Split  the module!", "split the module"),
        ("42", "42"),
        ("42.0", "42"),
        (" 42. ", "42"),
        ("0.50.", "0.5"),
        ("$42", "42"),
        ("1,000", "1000"),
        ("1,000,000.50", "1000000.5"),
        ("1e3", "1000"),
        ("-0.50", "-0.5"),
        ("+7", "7"),
        (".5", "0.5"),
        ("v2.0", "v2.0"),
    ],
)
def test_normalise_answer(answer, normal):
    assert normalise_answer(answer) == normal


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (".5", "5"),  # a leading decimal point is part of the number, not noise
        ("2, 3", "23"),  # two numbers are not one number with a thousands separator
        ("12,5", "125"),
        ("keep", "split"),
        ("42", "42.5"),
    ],
)
def test_different_answers_stay_different(a, b):
    assert normalise_answer(a) != normalise_answer(b)


@pytest.mark.parametrize(
    ("answers", "modal"),
    [
        (["keep"], ("keep", 1)),
        (["Keep", "split", "keep."], ("keep", 2)),
        (["42", "42.0", "41"], ("42", 2)),
        (["split", "keep", "keep", "split"], ("split", 2)),  # a tie goes to the answer seen first
        (["keep", "split", "split", "keep"], ("keep", 2)),
        (["defer", "split", "keep"], ("defer", 1)),
    ],
)
def test_modal_answer(answers, modal):
    assert modal_answer(answers) == modal


def test_modal_answer_of_nothing_raises():
    with pytest.raises(ValueError, match="no answers to count"):
        modal_answer([])


@pytest.mark.parametrize(
    ("answers", "share"),
    [
        ([], 0.0),
        (["keep"], 1.0),
        (["Keep", "keep.", " KEEP "], 1.0),
        (["42", "42.0"], 1.0),
        (["split", "keep", "keep"], 2 / 3),
        (["split", "keep", "defer"], 1 / 3),
        (["split", "keep", "keep", "split"], 0.5),
    ],
)
def test_agreement_is_the_share_holding_the_modal_answer(answers, share):
    assert agreement(answers) == pytest.approx(share)


def test_majority_vote_is_an_arbiter_without_a_model():
    vote = MajorityVote()
    assert isinstance(vote, Arbiter)
    assert vote.name == "majority_vote"
    assert not hasattr(vote, "model_client")


async def test_majority_vote_rules_for_the_normalised_majority():
    positions = [
        ("architect", make_position("split", confidence=0.9)),
        ("ops", make_position("Keep", confidence=0.6)),
        ("business", make_position("keep.", confidence=0.5)),
    ]
    verdict = await MajorityVote().rule(TASK, positions)
    assert verdict == Verdict(
        rationale="2 of 3 experts answered 'Keep': ops, business.",
        assessments=[
            ExpertAssessment(expert="architect", assessment="answered 'split'"),
            ExpertAssessment(expert="ops", assessment="answered 'Keep'"),
            ExpertAssessment(expert="business", assessment="answered 'keep.'"),
        ],
        decision="Keep",  # the first spelling of the winning answer, as an expert wrote it
        dissent=["architect answered 'split'"],
        confidence=2 / 3,
    )


async def test_majority_vote_gives_a_tie_to_the_expert_listed_first_not_to_confidence():
    positions = [
        ("architect", make_position("split", confidence=0.2)),
        ("ops", make_position("keep", confidence=1.0)),
        ("business", make_position("keep", confidence=1.0)),
        ("security", make_position("Split", confidence=0.2)),
    ]
    verdict = await MajorityVote().rule(TASK, positions)
    assert normalise_answer(verdict.decision) == "split"  # the architect is listed first; confidence does not count
    assert verdict.confidence == 0.5
    assert sorted(verdict.dissent) == ["business answered 'keep'", "ops answered 'keep'"]
    assert normalise_answer((await MajorityVote().rule(TASK, positions[::-1])).decision) == "split"  # security first
    assert MajorityVote().tally(positions).tied == ("split", "keep")


@pytest.mark.parametrize("reverse", [False, True])
async def test_majority_vote_breaks_a_full_tie_by_order_not_alphabetically(reverse):
    positions = [("architect", make_position("split")), ("ops", make_position("keep"))]
    verdict = await MajorityVote().rule(TASK, positions[::-1] if reverse else positions)
    expected = ("keep", ["architect answered 'split'"]) if reverse else ("split", ["ops answered 'keep'"])
    assert (verdict.decision, verdict.dissent) == expected


async def test_majority_vote_on_no_positions_raises():
    with pytest.raises(ValueError, match="MajorityVote needs at least one position"):
        await MajorityVote().rule(TASK, [])


@pytest.mark.parametrize("experts", [2, 3, 8])
async def test_majority_vote_rules_on_answers_at_every_fields_maximum_length(experts):
    """Experts may legitimately say as much as a Position allows; the ruling must never fail on it."""
    from moot.roles import Position

    fields = Position.model_fields
    cap = {name: fields[name].metadata for name in ("answer", "reasoning")}
    longest = {name: next(m.max_length for m in meta if hasattr(m, "max_length")) for name, meta in cap.items()}
    quote = "'\"\\\n"  # characters repr() escapes, so the quoted answer grows beyond its own length
    positions = []
    for i in range(experts):
        answer = (quote * 100 + f"answer {i % 2}")[-longest["answer"] :]
        positions.append(
            (
                f"expert_{i}_" + "x" * 49,  # a 60-character name
                Position(
                    reasoning="r" * longest["reasoning"],
                    answer=answer,
                    key_arguments=["a" * 200] * 3,
                    confidence=1.0,
                ),
            )
        )
    verdict = await MajorityVote().rule(TASK, positions)
    assert Verdict.model_validate(verdict.model_dump()) == verdict
    assert verdict.decision in {p.answer for _, p in positions}
    assert len(verdict.assessments) == experts


# ------------------------------------------------------------ RoundsVote
def _round(*answers: str) -> list:
    return [(f"expert_{i}", make_position(a, confidence=0.5)) for i, a in enumerate(answers, 1)]


async def test_rounds_vote_counts_every_round_so_a_late_majority_must_outnumber_the_first_round():
    vote = RoundsVote()
    assert isinstance(vote, RoundsArbiter) and isinstance(vote, Arbiter)
    # round 1: 12, 12, 15; round 2: 15, 15, 12. Last round's majority is 15; over both rounds 12 and 15 tie
    # at three votes each, and the tie goes to the first-round vote: 12.
    verdict = await vote.rule_rounds(TASK, [_round("12", "12", "15"), _round("15", "15", "12")])
    assert verdict.decision == "12" and verdict.confidence == 0.5
    assert verdict.rationale.startswith("3 of 6 experts answered '12' (votes over 2 rounds)")
    assert "expert_1 (round 1)" in verdict.rationale and "expert_3 (round 2)" in verdict.rationale
    # a third expert recomputing to 15 in round 2 outnumbers the first round: the rounds can change the ruling
    moved = await vote.rule_rounds(TASK, [_round("12", "12", "15"), _round("15", "15", "15")])
    assert moved.decision == "15" and moved.confidence == 4 / 6


async def test_rounds_vote_on_one_round_is_the_majority_vote():
    positions = _round("7", "9", "9")
    assert (await RoundsVote().rule(TASK, positions)).decision == (await MajorityVote().rule(TASK, positions)).decision


async def test_rounds_vote_without_a_first_round_majority_breaks_ties_by_expert_order():
    first = [("a", make_position("2", confidence=0.2)), ("b", make_position("1", confidence=0.9))]
    second = [("a", make_position("1", confidence=0.9)), ("b", make_position("2", confidence=0.1))]
    # 1 and 2 tie at two votes; round 1 is a 1-1 tie its own vote gives to expert a (2), whatever the
    # confidences, so 2 rules
    assert (await RoundsVote().rule_rounds(TASK, [first, second])).decision == "2"
    assert RoundsVote().tally_rounds([first, second]).decided_by_tie
    with pytest.raises(ValueError, match="at least one position"):
        await RoundsVote().rule_rounds(TASK, [[]])
