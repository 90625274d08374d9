"""Lookahead decoding's choices: what to guess, and whether this machine's batch costs make a guess pay."""

from __future__ import annotations

import pytest

from moot.embedded._lookahead import BatchCosts, NgramLookup, worth_guessing


def costs(**seconds: float) -> BatchCosts:
    """Batch timings by size, e.g. costs(n1=0.03, n9=0.18)."""
    measured = BatchCosts()
    for name, value in seconds.items():
        measured.observe(int(name[1:]), value)
    return measured


def test_a_cost_is_a_running_mean_that_follows_new_timings():
    measured = costs(n1=0.030)
    measured.observe(1, 0.050)
    assert 0.030 < measured.seconds[1] < 0.050


def test_batch_ratios_interpolate_between_measured_sizes_and_extend_the_last_slope():
    measured = costs(n1=0.030, n3=0.075, n9=0.180)
    assert measured.ratio(1) == 1.0
    assert measured.ratio(3) == pytest.approx(2.5)
    assert measured.ratio(2) == pytest.approx(1.75)  # halfway between 1 and 3
    assert measured.ratio(6) == pytest.approx((2.5 + 6.0) / 2)
    assert measured.ratio(13) == pytest.approx(6.0 + 4 * (6.0 - 2.5) / 6)


def test_before_any_batch_is_measured_a_batch_is_assumed_cheap_so_guessing_is_tried():
    assert costs().ratio(9) == 1.0  # not even one step timed yet
    assert costs(n1=0.03).ratio(9) == pytest.approx(2.0)  # the prior: nine tokens cost two steps
    assert worth_guessing([5, 6, 7, 8], acceptance=0.6, costs=costs(n1=0.03)) != []


def test_a_fixed_table_decides_guesses_whatever_the_timings_so_a_reply_depends_on_its_prompt_alone():
    """Timings follow the machine's load; a batch's logits differ from one step's in the last bits, so a guess
    taken or not changes near ties. With the engine's fixed table no timing moves a decision."""
    table = BatchCosts.table({3: 1.5, 9: 3.0})
    before = [worth_guessing(list(range(k)), acceptance=0.7, costs=table) for k in range(1, 13)]
    for size, seconds in ((1, 0.5), (3, 0.01), (9, 9.0), (2, 0.001)):  # a loaded machine, then an idle one
        table.observe(size, seconds)
    assert [worth_guessing(list(range(k)), acceptance=0.7, costs=table) for k in range(1, 13)] == before
    assert table.ratio(3) == 1.5 and table.ratio(6) == pytest.approx(2.25) and table.ratio(13) == pytest.approx(4.0)
    live = costs(n1=0.03, n3=0.045, n9=0.09)
    live.observe(9, 9.0)
    assert live.ratio(9) > 3.0  # measured costs, by contrast, follow every timing


def test_where_batches_are_dear_only_a_likely_guess_is_made_and_only_as_long_as_it_pays():
    dear = costs(n1=0.030, n2=0.053, n3=0.075, n5=0.107, n9=0.182)  # measured on a 2-core AMD EPYC
    assert worth_guessing([5, 6, 7, 8], acceptance=0.6, costs=dear) == []
    copying = worth_guessing(list(range(12)), acceptance=0.97, costs=dear)
    assert 0 < len(copying) <= 12
    cheap = costs(n1=0.030, n9=0.060)  # nine for two steps, as measured on another 2-core machine
    assert len(worth_guessing([5, 6, 7, 8], acceptance=0.6, costs=cheap)) >= 2


def test_a_guess_copies_what_followed_the_latest_earlier_occurrence_of_the_current_ngram():
    lookup = NgramLookup([1, 2, 3, 4, 5, 9, 1, 2, 3])
    assert lookup.guess(budget=10) == [4, 5, 9, 1]  # the limit starts at 4
    assert lookup.guess(budget=2) == [4, 5]
    assert NgramLookup([1, 2, 3]).guess(budget=10) == []


def test_acceptance_and_guess_length_follow_the_guesses_kept():
    lookup = NgramLookup([1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3])
    before = lookup.acceptance
    lookup.learn(guessed=4, kept=4)
    assert lookup.limit == 8 and lookup.acceptance > before
    lookup.learn(guessed=8, kept=0)
    assert lookup.limit == 4 and lookup.acceptance < 1.0


def test_a_withheld_guess_is_scored_by_the_token_that_came_so_guessing_can_resume():
    dear = costs(n1=0.030, n2=0.060, n3=0.090, n9=0.270)  # a batch costs its tokens: no guess can pay
    lookup = NgramLookup([1, 2, 3, 4, 1, 2, 3])
    assert lookup.propose(budget=10, costs=dear) == []
    before = lookup.acceptance
    lookup.append(4)  # what the withheld guess said
    assert lookup.acceptance > before
    lookup.append(9)  # nothing was withheld before this one: no score
    assert lookup.propose(budget=10, costs=dear) == []
    after = lookup.acceptance
    lookup.append(7)
    assert lookup.acceptance == after  # no n-gram matched, nothing withheld
