"""One tie rule for every vote: a tie goes to the tied answer held by the expert listed first, never to how an
answer is spelled; and a debate records whether a tie decided its verdict."""

from __future__ import annotations

import pytest

from moot.arbiters import TIE_RULE, MajorityVote, RoundsVote, VoteArbiter, WeightedVote, normalise_answer
from moot.conditions import MaxRounds
from moot.harness.arms._vote import vote_answers
from moot.teams import DebateMetrics
from moot.testing import ScriptedModel
from tests.conftest import EXPERTS, make_debate, make_position, make_rebuttal

TASK = "Which option holds?"
SWAP = {"A": "B", "B": "A", "C": "D", "D": "C"}


def _positions(answers: list[str], confidences: list[float] | None = None) -> list:
    confidences = confidences or [0.5] * len(answers)
    return [
        (f"expert_{i}", make_position(a, confidence=c))
        for i, (a, c) in enumerate(zip(answers, confidences, strict=True), 1)
    ]


def _holder(positions: list, decision: str) -> list[str]:
    return [n for n, p in positions if normalise_answer(p.answer) == normalise_answer(decision)]


TIED = [
    (["A", "B"], [0.5, 0.5]),
    (["B", "A"], [0.1, 1.0]),  # confidence does not break a count tie
    (["C", "A", "B"], [0.3, 1.0, 1.0]),  # a three-way tie: the first expert's answer
    (["B", "A", "A", "B"], [0.2, 0.9, 0.9, 0.2]),
    (["A", "B", "C", "D"], [0.5, 0.5, 0.5, 0.5]),
]


@pytest.mark.parametrize("vote", [MajorityVote(), RoundsVote()], ids=["majority", "rounds"])
@pytest.mark.parametrize(("answers", "confidences"), TIED)
async def test_a_count_tie_goes_to_the_first_listed_expert_whatever_the_labels(vote, answers, confidences):
    positions = _positions(answers, confidences)
    swapped = _positions([SWAP[a] for a in answers], confidences)
    won = await vote.rule(TASK, positions)
    won_swapped = await vote.rule(TASK, swapped)
    assert _holder(positions, won.decision)[0] == "expert_1"
    assert _holder(swapped, won_swapped.decision) == _holder(positions, won.decision)  # the same experts win
    assert vote.tally(positions).decided_by_tie and len(vote.tally(positions).tied) == len(set(answers))


@pytest.mark.parametrize(("answers", "confidences"), [(["A", "B"], [0.6, 0.6]), (["B", "C", "A"], [0.4, 0.4, 0.4])])
async def test_a_weighted_tie_goes_to_the_first_listed_expert_whatever_the_labels(answers, confidences):
    positions = _positions(answers, confidences)
    swapped = _positions([SWAP.get(a, a) for a in answers], confidences)
    assert _holder(positions, (await WeightedVote().rule(TASK, positions)).decision) == ["expert_1"]
    assert _holder(swapped, (await WeightedVote().rule(TASK, swapped)).decision) == ["expert_1"]
    assert WeightedVote().tally(positions).decided_by_tie


async def test_no_tie_is_recorded_when_the_count_decides():
    positions = _positions(["B", "A", "A"])
    assert normalise_answer((await MajorityVote().rule(TASK, positions)).decision) == "a"
    assert not MajorityVote().tally(positions).decided_by_tie and MajorityVote().tally(positions).tied == ("a",)
    assert isinstance(MajorityVote(), VoteArbiter) and isinstance(RoundsVote(), VoteArbiter)


def test_a_tie_among_rounds_prefers_the_first_round_vote_then_the_first_expert():
    first, second = _positions(["A", "B", "B"]), _positions(["A", "A", "B"])
    assert RoundsVote().tally_rounds([first, second]).winner == "b"  # 3-3: B is round 1's vote
    assert RoundsVote().tally_rounds([_positions(["D", "C"]), _positions(["C", "D"])]).winner == "d"  # expert 1
    assert RoundsVote().tally_rounds([_positions(["C", "D"]), _positions(["D", "C"])]).winner == "c"


@pytest.mark.parametrize("answers", [["B", "A"], ["A", "B"], ["C", "B", "A"], ["A", "B", "A", "B"]])
def test_self_consistency_ties_go_to_the_sample_listed_first(answers):
    vote = vote_answers(answers)
    swapped = vote_answers([SWAP[a] for a in answers])
    assert vote.winner == swapped.winner == 0
    assert vote.metrics["decided_by_tie"] is True and vote.metrics["tied_answers"] == len(set(answers))
    assert vote_answers(["B", "A", "A"]).metrics["decided_by_tie"] is False


def test_the_rule_is_one_sentence_about_order_not_spelling():
    assert "listed first" in TIE_RULE and "spelled" in TIE_RULE and "." not in TIE_RULE


@pytest.mark.parametrize("labels", [("X", "Y", "Z"), ("Z", "Y", "X")])
async def test_a_debate_records_that_a_tie_decided_its_verdict(labels):
    """Three experts, three answers in both rounds: the first-round vote and the verdict are the first expert's
    answer whatever the labels, and the metrics say a three-way tie decided both."""
    first, second, third = labels
    answers = dict(zip(EXPERTS, labels, strict=True))
    model = ScriptedModel(
        {name: [make_position(answer), make_rebuttal(answer, claim=None)] for name, answer in answers.items()}
    )
    with model:
        result = await make_debate(model, MaxRounds(2), arbiter=RoundsVote()).run(task=TASK)
    metrics = result.metrics
    assert isinstance(metrics, DebateMetrics)
    assert result.answer == first and metrics.first_round_vote == first
    assert metrics.first_round_tied_answers == 3 and metrics.tied_answers == 3 and metrics.decided_by_tie is True
    assert {second, third}.isdisjoint({result.answer})


async def test_a_debate_ruled_by_a_count_records_no_tie_and_an_llm_ruling_records_none():
    model = ScriptedModel({name: [make_position("keep")] for name in EXPERTS})
    with model:
        result = await make_debate(model, MaxRounds(1), arbiter=MajorityVote()).run(task=TASK)
    assert result.metrics is not None and (result.metrics.tied_answers, result.metrics.decided_by_tie) == (1, False)
    scripted = {name: [make_position("keep")] for name in EXPERTS}
    from tests.conftest import make_verdict

    with ScriptedModel({**scripted, "arbiter": [make_verdict("keep")]}) as llm:
        ruled = await make_debate(llm, MaxRounds(1)).run(task=TASK)
    assert ruled.metrics is not None and ruled.metrics.decided_by_tie is None
