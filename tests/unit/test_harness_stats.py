"""The comparison's statistics against values computed by hand, and CI coverage on synthetic data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from moot.harness import (
    accuracy_interval,
    bootstrap_mean,
    compare_paired,
    holm,
    matched_k,
    mcnemar_exact,
    paired_permutation,
)


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


def test_a_paired_binary_difference_gets_an_interval_from_the_exact_split_and_the_discordant_share():
    a = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0]
    b = [0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0]
    compared = compare_paired(a, b)
    diff = compared.difference
    assert diff.estimate == pytest.approx(5 / 12)  # a right on 9, b on 4: 5 discordant, all a's
    # the split: Clopper-Pearson for 5 of 5 is [0.025^(1/5), 1]; the share of discordant items: 5 of 12
    from scipy import stats

    share = stats.binomtest(5, 12).proportion_ci(method="exact")
    assert diff.low == pytest.approx((2 * 0.025 ** (1 / 5) - 1) * share.high)  # the split's low end is < 0
    assert diff.high == pytest.approx(share.high)
    assert compared.test.p_value == pytest.approx(2 / 32)  # 5 of 5: p = 0.0625, not significant...
    assert not diff.excludes_zero and compared.agrees  # ...and the interval says the same
    with pytest.raises(ValueError):
        compare_paired([1, 0], [1])


def test_no_discordant_item_still_leaves_room_on_both_sides():
    compared = compare_paired([1.0] * 30 + [0.0] * 20, [1.0] * 30 + [0.0] * 20)
    assert compared.test.p_value == 1.0 and compared.difference.estimate == 0.0
    assert compared.difference.low == pytest.approx(-compared.difference.high) and compared.difference.high > 0.05


def test_binary_intervals_cover_the_true_difference_at_least_95_percent_of_the_time():
    rng = np.random.default_rng(5)
    for items, a_only, b_only in [(50, 0.05, 0.02), (50, 0.02, 0.02), (164, 0.06, 0.03), (30, 0.1, 0.0)]:
        covered, draws = 0, 200
        for _ in range(draws):
            u = rng.random(items)
            a = np.where(u < a_only, 1.0, np.where(u < a_only + b_only, 0.0, (u < 0.6).astype(float)))
            b = np.where(u < a_only, 0.0, np.where(u < a_only + b_only, 1.0, a))
            diff = compare_paired(list(a), list(b)).difference
            covered += diff.low <= a_only - b_only <= diff.high
        assert covered / draws >= 0.95, (items, a_only, b_only, covered / draws)


def test_the_issue_s_tables_no_longer_claim_more_than_their_tests():
    # debate vs single on humaneval[:50]: 0 / 4 discordant, McNemar p = 0.125 (the bootstrap said [+2, +18]).
    single = [0.0] * 4 + [1.0] * 39 + [0.0] * 7
    debate = [1.0] * 4 + [1.0] * 39 + [0.0] * 7
    compared = compare_paired(debate, single)
    assert compared.test.p_value == pytest.approx(0.125)
    assert compared.difference.low < 0 < compared.difference.high
    # debate vs self-consistency: one discordant item (the bootstrap said [0, +12]).
    one = compare_paired([1.0] + [1.0] * 42 + [0.0] * 7, [0.0] + [1.0] * 42 + [0.0] * 7)
    assert one.test.p_value == 1.0 and one.difference.low < 0 < one.difference.high


@pytest.mark.parametrize("items", [10, 50, 164])
def test_every_paired_binary_table_s_interval_agrees_with_its_exact_test(items):
    """Every split of up to 40 discordant items (0/4, 1/0, ... included): the interval excludes 0 exactly when
    McNemar's exact test has p < 0.05."""
    for discordant in range(0, min(items, 40) + 1):
        for a_only in range(discordant + 1):
            b_only = discordant - a_only
            a = [1.0] * a_only + [0.0] * b_only + [1.0] * (items - discordant)
            b = [0.0] * a_only + [1.0] * b_only + [1.0] * (items - discordant)
            compared = compare_paired(a, b)
            significant = compared.test.p_value < 0.05
            assert compared.difference.excludes_zero == significant, (a_only, b_only, compared)
            assert compared.difference.low <= compared.difference.estimate <= compared.difference.high


def test_graded_paired_intervals_invert_the_permutation_test_on_random_tables():
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(12):
        n = int(rng.integers(4, 30))
        a = rng.choice([0.0, 0.25, 0.5, 1.0], size=n)
        b = np.clip(a + rng.choice([-0.5, -0.25, 0.0, 0.0, 0.25], size=n), 0, 1)
        compared = compare_paired(list(a), list(b), seed=3)
        assert compared.agrees, compared
        assert compared.difference.low <= compared.difference.estimate <= compared.difference.high
        checked += compared.test.p_value < 0.05
    assert 0 < checked < 12  # both significant and non-significant tables were checked


def test_binary_accuracy_gets_the_exact_interval():
    ci = accuracy_interval([1.0] * 39 + [0.0] * 11)
    assert ci.estimate == pytest.approx(0.78)
    assert (ci.low, ci.high) == pytest.approx((0.6404, 0.8847), abs=1e-3)  # Clopper-Pearson, 39 of 50


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


def test_holm_leaves_untested_pairs_out_of_the_family():
    adjusted = holm([math.nan, 0.01, math.nan, 0.04, 0.03])
    assert math.isnan(adjusted[0]) and math.isnan(adjusted[2])
    assert adjusted[1::2] == pytest.approx([0.03, 0.06]) and adjusted[4] == pytest.approx(0.06)


def test_bonferroni_corrects_the_chosen_p_value_for_the_tries_and_agrees_with_holm_on_the_smallest():
    from moot.harness.reports._stats import bonferroni

    assert bonferroni(0.015625, 8) == pytest.approx(0.125) and bonferroni(0.2, 8) == 1.0
    assert bonferroni(0.01, 1) == 0.01 and math.isnan(bonferroni(math.nan, 3))
    tries = [0.01, 0.04, 0.03, 0.5]
    assert bonferroni(min(tries), len(tries)) == pytest.approx(min(holm(tries)))
    with pytest.raises(ValueError, match="at least 1 test"):
        bonferroni(0.01, 0)


def test_matched_k_rounds_the_debate_mean_half_up():
    assert matched_k([3, 6]) == 5  # 4.5 -> 5
    assert matched_k([3, 3, 4]) == 3
    assert matched_k([7]) == 7
    with pytest.raises(ValueError):
        matched_k([])


def _debate(**fields: object) -> dict[str, object]:
    """A short debate row's stored metrics: DebateMetrics as dumped, ``fields`` changed."""
    from moot.teams import DebateMetrics

    base = DebateMetrics(first_round_diversity=2, flips={"expert_1": []}, agreement_per_round=[1.0], parse_failures=0)
    return {**base.model_dump(), **fields}


def test_debate_signals_total_the_honesty_metrics_of_short_and_code_debates():
    from moot.harness.reports._report import debate_signals
    from moot.harness.reports._row_metrics import RowMetrics
    from moot.teams import CodeDebateMetrics

    stored = [
        _debate(argued_flips=1, unargued_flips=2, flips_to_unheld_answer=1, final_in_first_round=True,
                overturned_majority=True, tokens_per_round=[100, 50]),
        _debate(argued_flips=0, unargued_flips=1, flips_to_unheld_answer=0, final_in_first_round=False,
                tokens_per_round=[120]),
    ]  # fmt: skip
    signals = debate_signals([RowMetrics.of(m) for m in stored])
    assert signals["argued flips"] == 1 and signals["unargued flips (recorded, not adopted)"] == 3
    assert signals["flips to an answer no expert held"] == 1
    before_split = [{k: v for k, v in m.items() if k != "flips_to_unheld_answer"} for m in stored]
    old = debate_signals([RowMetrics.of(m) for m in before_split])
    assert old["unargued flips"] == 3 and "flips to an answer no expert held" not in old  # rows before the split
    assert signals["verdict among first-round answers"] == 1 and signals["ruling overturned a correct majority"] == 1
    assert signals["tokens in round 1 (mean of 2 items)"] == 110
    assert signals["tokens in round 2 (mean of 1 items)"] == 50
    code = CodeDebateMetrics(
        candidates=3, first_round_passing=1, fixes=2, fixes_adopted=1, chosen_round=2, tokens_per_round=[300],
        parse_failures=0,
    )  # fmt: skip
    totals = debate_signals([RowMetrics.of(code.model_dump())])
    assert totals["settled in round 1"] == 1 and totals["fixes adopted (passed more visible tests)"] == 1
    assert debate_signals([RowMetrics.of({"k": 5})]) == {}  # not a debate arm


def test_a_rows_metrics_are_typed_by_the_team_that_wrote_them():
    from moot.harness.reports._row_metrics import RowMetrics
    from moot.teams import CodeDebateMetrics, DebateMetrics

    assert isinstance(RowMetrics.of(_debate(verdict_by="arbiter")).team, DebateMetrics)
    code = {"candidates": 3, "first_round_passing": 1, "fixes": 0, "fixes_adopted": 0, "chosen_round": 1,
            "tokens_per_round": [9], "parse_failures": 0, "chosen": "c1"}  # fmt: skip
    assert isinstance(RowMetrics.of(code).team, CodeDebateMetrics)
    before_adoption = {k: v for k, v in code.items() if k != "fixes_adopted"} | {"fixes_improved": 0}
    assert RowMetrics.of(before_adoption).team is None  # counted otherwise then: no code debate signals
    renamed = {k: v for k, v in _debate().items() if k not in ("first_round_vote", "final_matches_first_round_vote")}
    assert isinstance(RowMetrics.of({**renamed, "first_round_majority": "4"}).team, DebateMetrics)
    sampled = RowMetrics.of({"k": 5, "oracle": {"candidates": 2, "best": 1.0, "gap": True}, "first_round_score": None})
    assert sampled.team is None and sampled.oracle is not None and sampled.oracle.gap
    assert sampled.first_round_score is None
