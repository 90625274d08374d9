"""Exact first: on a suite with partial credit every table and summary.json lead with exact-match accuracy and exact
right/wrong tests, the graded figures beside them; a suite scored 0/1 only says its scores are exact."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from moot.harness import CompareRequest, Comparison, ResultRow, build_report, load_suite, write_report
from moot.harness.arms._registry import build_arm
from moot.harness.jobs._results import ResultStore
from moot.harness.jobs._runner import RESULTS_FILE, ComparedArm
from moot.harness.reports._render import markdown, tables
from moot.harness.reports._report import exact_scores, partial_credit
from tests.unit.test_harness_support import write_sums

Scores = Mapping[str, list[float]]


def hand_comparison(
    tmp_path: Path, scores: Scores, *, stored: Scores | None = None, first_round: Scores | None = None,
    n: int | None = None, spec: str | None = None, purpose: str | None = None,
) -> Comparison:  # fmt: skip
    """A comparison built from hand-made rows: ``scores[label][i]`` is item i's score for that arm. Its rows (and
    ``stored``: rows of other arm configurations) are written to the folder's results file, as a run leaves them."""
    items = n or len(next(iter(scores.values())))
    source = write_sums(tmp_path / "sums.jsonl", items + 10)
    suite = load_suite(spec or f"{source}[:{items}]")
    out = tmp_path / "out"
    store = ResultStore(out / RESULTS_FILE)
    if purpose is not None:
        store.record_purpose(purpose)  # type: ignore[arg-type]
    arms = [ComparedArm(label, build_arm(label), key=f"key-{label}") for label in scores]
    rows = []
    for label, values in {**scores, **(stored or {})}.items():
        for item, score in zip(suite.items, values, strict=False):
            firsts = (first_round or {}).get(label)
            metrics = {"first_round_score": firsts[int(item.id[1:])]} if firsts is not None else {}
            row = ResultRow(suite=suite.key, item=item.id, arm_key=f"key-{label}", arm=label, score=score,
                            metrics=metrics, prompt_tokens=10, completion_tokens=5, model_calls=1)  # fmt: skip
            store.put(row)
            if label in scores:
                rows.append(row)
    store.close()
    compared = CompareRequest(suite=suite.label, arms=list(scores), models=["scripted:x"], out=out)
    return Comparison(compared, suite, arms, {"base": "scripted:x"}, rows=rows)


def _graded_differs(tmp_path: Path) -> Comparison:
    """40 items: both arms exactly right on the same 20; on the other 20, debate earns partial credit (0.667, as
    reasoning-gym scores "110" for 11) where single scores 0. Graded, debate leads by 33 points with p far below
    0.05; right/wrong, the two never differ. Debate's round 1 scored 0 on those 20: graded, its rounds bought
    33 points; exact, nothing."""
    single = [1.0] * 20 + [0.0] * 20
    debate = [1.0] * 20 + [0.667] * 20
    return hand_comparison(tmp_path, {"single": single, "debate": debate}, first_round={"debate": single})


def test_partial_credit_leads_with_exact_accuracy_and_exact_tests_where_graded_ones_would_conclude_otherwise(
    tmp_path,
):
    report = build_report(_graded_differs(tmp_path))
    assert report.exact_first and not report.binary
    single, debate = report.arms
    assert single.accuracy == debate.accuracy == 0.5  # exact: both right on the same 20 of 40
    assert debate.graded is not None and debate.graded.estimate == pytest.approx((20 + 20 * 0.667) / 40)
    assert debate.ci_low == pytest.approx(0.338, abs=0.001)  # Clopper-Pearson on 20 of 40, not a bootstrap
    pair = report.pairs[0]
    assert (pair.test, pair.difference, pair.p_value, pair.a_only, pair.b_only) == ("McNemar exact", 0.0, 1.0, 0, 0)
    assert pair.graded is not None and pair.graded.test == "paired permutation"
    assert pair.graded.estimate == pytest.approx(-0.3335) and pair.graded.p_value < 0.001
    bought = debate.rounds_bought
    assert bought is not None and bought.difference == 0.0 and bought.p_value == 1.0  # the rounds bought nothing
    assert bought.graded is not None and bought.graded.estimate == pytest.approx(0.3335)
    assert bought.graded.p_value < 0.001 and debate.rounds_changed == {"better": 0, "worse": 0}
    assert debate.first_round_vote == 0.5 and debate.graded_first_round_vote == pytest.approx(0.5)


def test_every_table_of_a_partial_credit_report_names_its_exact_and_graded_columns(tmp_path):
    report = build_report(_graded_differs(tmp_path))
    t = tables(report)
    arm_head, arm_rows = t.arms
    assert arm_head[3:7] == ["exact accuracy", "95% CI", "graded accuracy", "graded 95% CI"]
    assert arm_rows[1][3] == "50.0%" and arm_rows[1][5] == "83.3%"
    pair_head, pair_rows = t.pairs
    assert pair_head[2] == "A − B (exact)" and pair_head[-2:] == ["graded A − B", "graded p"]
    assert pair_rows[0][2] == "+0.0 pts" and pair_rows[0][5] == "1.000" and pair_rows[0][-1] == "<0.001"
    assert pair_rows[0][-2].startswith("-33.4 pts [")
    rounds_head, rounds_rows = t.rounds
    assert rounds_head[3:6] == ["round-1 exact accuracy", "final exact accuracy", "what the rounds bought (exact)"]
    assert rounds_head[-2:] == ["graded: what the rounds bought", "graded p"]
    assert rounds_rows[0][5] == "+0.0 pts" and rounds_rows[0][-2].startswith("+33.4 pts [")
    text = markdown(report)
    assert text.index("Exact first: these scores give partial credit") < text.index("## Arms")
    assert "every figure leads with exact-match accuracy (score = 1, right or wrong)" in text


def test_summary_json_leads_with_exact_figures_and_carries_the_graded_ones(tmp_path):
    report = build_report(_graded_differs(tmp_path))
    summary = json.loads(write_report(report, tmp_path / "report").summary.read_text())
    assert summary["exact_first"] is True and summary["binary"] is False
    debate = summary["arms"][1]
    assert debate["accuracy"] == 0.5 and debate["graded"]["estimate"] == pytest.approx(0.8335)
    assert summary["pairs"][0]["p_value"] == 1.0 and summary["pairs"][0]["graded"]["p_value"] < 0.001
    assert debate["rounds_bought"]["graded"]["test"] == "paired permutation"


def test_a_suite_scored_0_or_1_is_unchanged_but_says_its_scores_are_exact(tmp_path):
    single = [1.0] * 6 + [0.0] * 6
    debate = [1.0] * 9 + [0.0] * 3
    report = build_report(hand_comparison(tmp_path, {"single": single, "debate": debate}))
    assert report.binary and not report.exact_first
    assert all(a.graded is None for a in report.arms) and report.pairs[0].graded is None
    assert report.arms[1].accuracy == 0.75 and report.pairs[0].b_only == 3
    head, _ = tables(report).arms
    assert "accuracy" in head and not any("graded" in h or "exact" in h for h in head)
    assert "graded" not in " ".join(tables(report).pairs[0])
    text = markdown(report)
    assert "Scores are exact: every row scored 0 or 1." in text and "Exact first" not in text


def test_partial_credit_anywhere_in_a_row_makes_the_report_exact_first(tmp_path):
    rows = [ResultRow(suite="s", item="a", arm_key="k", arm="debate", score=1.0)]
    assert not partial_credit(rows)
    assert partial_credit([rows[0].model_copy(update={"metrics": {"first_round_score": 0.5}})])
    assert partial_credit([rows[0].model_copy(update={"metrics": {"position_scores": [[1.0, 0.25]]}})])
    assert not partial_credit([rows[0].model_copy(update={"score": 0.5, "status": "error"})])  # failed: no score


def test_exact_scores_count_only_a_full_score_as_right():
    row = ResultRow(
        suite="s",
        item="a",
        arm_key="k",
        arm="debate",
        score=0.99,
        metrics={"first_round_score": 1.0, "position_scores": [[0.667, 1.0], [0.0]], "other": 0.5},
    )
    exact = exact_scores(row)
    assert exact.score == 0.0 and exact.metrics["first_round_score"] == 1.0
    assert exact.metrics["position_scores"] == [[0.0, 1.0], [0.0]] and exact.metrics["other"] == 0.5
    assert row.score == 0.99  # the stored row is left as it was
