"""The comparison's statistics against values computed by hand, and CI coverage on synthetic data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from moot.harness import bootstrap_mean, holm, matched_k, mcnemar_exact, paired_difference, paired_permutation


def test_mcnemar_exact_matches_a_hand_computed_case():
    # 10 items: both right on 1, both wrong on 1; A alone right on 1, B alone right on 7.
    a = [1, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    b = [1, 0, 0, 1, 1, 1, 1, 1, 1, 1]
    test = mcnemar_exact(a, b)
    assert (test.a_only, test.b_only) == (1, 7)
    # Two-sided exact: 2 * P(X <= 1), X ~ Binomial(8, 1/2) = 2 * (1 + 8) / 256.
    assert test.p_value == pytest.approx(18 / 256)
    assert test.test == "McNemar exact"


def test_mcnemar_without_discordant_pairs_is_p_one():
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]).p_value == 1.0


def test_bootstrap_ci_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    truth, draws, covered = 0.7, 300, 0
    for seed in range(draws):
        sample = rng.binomial(1, truth, size=60).astype(float)
        ci = bootstrap_mean(sample, seed=seed, resamples=2000)
        covered += ci.low <= truth <= ci.high
    assert 0.89 <= covered / draws <= 0.99, covered / draws


def test_bootstrap_ci_of_a_constant_sample_is_the_point():
    ci = bootstrap_mean([1.0] * 12)
    assert (ci.estimate, ci.low, ci.high) == (1.0, 1.0, 1.0)
    assert math.isnan(bootstrap_mean([]).estimate)


def test_paired_difference_is_the_mean_difference_with_a_ci_around_it():
    a = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0]
    b = [0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0]
    diff = paired_difference(a, b, resamples=2000)
    assert diff.estimate == pytest.approx(5 / 12)  # a right on 9, b on 4
    assert diff.low <= diff.estimate <= diff.high
    assert diff.low >= 0.0  # a never loses to b on any item: no resample can go negative
    with pytest.raises(ValueError):
        paired_difference([1, 0], [1])


def test_paired_permutation_is_exact_for_small_samples():
    # Differences +1 on 4 items, 0 elsewhere: of 2^4 sign patterns only the two extremes are as extreme.
    a = [0.5, 0.8, 0.9, 1.0, 0.2, 0.3]
    b = [0.0, 0.3, 0.4, 0.5, 0.2, 0.3]
    test = paired_permutation(a, b)
    assert test.p_value == pytest.approx(2 / 16)
    assert paired_permutation([0.5, 0.5], [0.5, 0.5]).p_value == 1.0


def test_holm_adjusts_step_down_and_keeps_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_matched_k_rounds_the_debate_mean_half_up():
    assert matched_k([3, 6]) == 5  # 4.5 -> 5
    assert matched_k([3, 3, 4]) == 3
    assert matched_k([7]) == 7
    with pytest.raises(ValueError):
        matched_k([])


def test_debate_signals_total_the_honesty_metrics_of_short_and_code_debates():
    from moot.harness.reports._report import debate_signals

    short = [
        {"argued_flips": 1, "unargued_flips": 2, "final_in_first_round": True, "overturned_majority": True,
         "tokens_per_round": [100, 50]},
        {"argued_flips": 0, "unargued_flips": 1, "final_in_first_round": False, "tokens_per_round": [120]},
    ]  # fmt: skip
    signals = debate_signals(short)
    assert signals["argued flips"] == 1 and signals["unargued flips"] == 3
    assert signals["verdict among first-round answers"] == 1 and signals["ruling overturned a correct majority"] == 1
    assert signals["tokens in round 1 (mean of 2 items)"] == 110
    assert signals["tokens in round 2 (mean of 1 items)"] == 50
    code = [{"fixes": 2, "fixes_improved": 1, "adoptions": 1, "adopted_worse": 1, "tokens_per_round": [300]}]
    totals = debate_signals(code)
    assert totals["settled in round 1"] == 1 and totals["fixes that pass more visible tests"] == 1
    assert debate_signals([{"k": 5}]) == {}  # not a debate arm
