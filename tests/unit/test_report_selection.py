"""Tuning apart from evaluation: a results folder states its purpose, and a report says at the top when the arm it
shows was chosen among variants of its family run on the same items, with the correction and the command that
confirms it on fresh items."""

from __future__ import annotations

import json
import shlex
import sqlite3

import pytest

from moot.errors import ConfigError
from moot.harness import build_report
from moot.harness.jobs._results import MIGRATIONS, ResultRow, ResultStore
from moot.harness.jobs._runner import RESULTS_FILE
from moot.harness.reports._render import markdown
from moot.harness.reports._selection import family, fresh_suite
from moot.harness.suites._suites import load_suite
from moot.store import migrate
from tests.unit.test_report_exact_first import hand_comparison

SINGLE = [1.0] * 5 + [0.0] * 15
"""single: right on 5 of 20."""


def _variant(extra: int) -> list[float]:
    """Right where single is, and on ``extra`` more items: McNemar's p against single is 2 * 0.5^extra."""
    return [1.0] * (5 + extra) + [0.0] * (15 - extra)


VARIANTS = {
    "debate?rounds=1": _variant(0), "debate?rounds=3": _variant(1), "debate?anchor=none": _variant(2),
    "debate?temperature=0.3": _variant(3), "debate?experts=5": _variant(4), "debate?experts=2": _variant(5),
    "debate?arbiter=llm": _variant(6),
}  # fmt: skip
"""Seven more debate variants run on the same items; the reported ``debate`` (7 extra items right) is the best."""


def test_family_is_the_name_before_the_options():
    assert family("debate?rounds=2&anchor=none") == family(" debate ") == "debate"
    assert family("self-consistency?k=5") == "self-consistency"


def test_an_arm_chosen_among_eight_variants_is_flagged_at_the_top_with_the_holm_correction(tmp_path):
    comparison = hand_comparison(tmp_path, {"single": SINGLE, "debate": _variant(7)}, stored=VARIANTS)
    report = build_report(comparison)
    (chosen,) = report.selections
    assert (chosen.arm, chosen.family, chosen.items, len(chosen.variants)) == ("debate", "debate", 20, 8)
    assert chosen.rank == 1
    assert chosen.baseline == "single"
    assert chosen.p_value == pytest.approx(2 * 0.5**7)
    assert chosen.p_holm == pytest.approx(8 * 2 * 0.5**7)  # the smallest of 8 p-values: Holm multiplies by 8
    assert chosen.p_bonferroni == pytest.approx(0.125)
    assert [v.label for v in chosen.variants][:2] == ["debate", "debate?arbiter=llm"]  # best first
    assert {v.label: v.n for v in chosen.variants}["debate?rounds=1"] == 20
    holm = {v.label: v.p_holm for v in chosen.variants}
    assert holm["debate?arbiter=llm"] == pytest.approx(max(8 * 2 * 0.5**7, 7 * 2 * 0.5**6))  # step-down, monotone
    assert report.pairs[0].p_value == pytest.approx(2 * 0.5**7)  # the pair itself keeps its uncorrected p
    text = markdown(report)
    top = text[: text.index("## Arms")]
    assert (
        "debate is the best of 8 debate variants run on these 20 items (debate 60.0%, debate?arbiter=llm 55.0%" in top
    )
    assert "corrected for that choice: p = 0.016 alone, 0.125 Holm" in top and "(Bonferroni 0.125)" in top
    assert "Its accuracy here is optimistic" in top
    source = tmp_path / "sums.jsonl"
    fresh = shlex.join([f"{source}[20:30]", "--arms", "debate,single", "--model", "scripted:x", "--out",
                        f"{tmp_path / 'out'}-fresh", "--purpose", "evaluation"])  # fmt: skip
    assert f"To confirm it on fresh items (items 20 to 29 of 30): moot compare {fresh}" in top
    assert chosen.confirm == f"moot compare {fresh}"


def test_a_variant_ranked_below_the_best_is_told_its_rank(tmp_path):
    report = build_report(hand_comparison(tmp_path, {"single": SINGLE, "debate": _variant(2)}, stored=VARIANTS))
    (chosen,) = report.selections
    assert chosen.rank == 5  # four variants scored more; the one that scored as much shares the place
    assert "debate is ranked 5 of 8 debate variants" in markdown(report)


def test_a_comparison_showing_several_variants_warns_once_per_family_for_its_best(tmp_path):
    shown = {"single": SINGLE, "debate?rounds=1": _variant(0), "debate": _variant(7), "debate?rounds=3": _variant(1)}
    report = build_report(hand_comparison(tmp_path, shown, stored={"debate?anchor=none": _variant(2)}))
    (chosen,) = report.selections
    assert (chosen.arm, chosen.rank, len(chosen.variants)) == ("debate", 1, 4)
    assert chosen.p_holm == pytest.approx(4 * 2 * 0.5**7)
    assert markdown(report).count("**Selection:**") == 1


def test_an_arm_alone_in_its_family_carries_no_selection_warning(tmp_path):
    report = build_report(hand_comparison(tmp_path, {"single": SINGLE, "debate": _variant(3)},
                                          stored={"self-consistency?k=3": _variant(1)}))  # fmt: skip
    assert report.selections == [] and "Selection" not in markdown(report)


def test_variants_on_other_items_do_not_count(tmp_path):
    comparison = hand_comparison(tmp_path, {"single": SINGLE, "debate": _variant(7)})
    store = ResultStore(comparison.results_path)
    store.put(ResultRow(suite=comparison.suite.key, item="q25", arm_key="key-other", arm="debate?rounds=3", score=1.0))
    store.close()
    assert build_report(comparison).selections == []


def test_without_a_baseline_the_count_is_still_told(tmp_path):
    report = build_report(hand_comparison(tmp_path, {"debate": _variant(7)}, stored=VARIANTS))
    (chosen,) = report.selections
    assert chosen.baseline is None and len(chosen.variants) == 8
    assert "best of 8 debate variants" in markdown(report) and "corrected for that choice" not in markdown(report)


def test_fresh_items_come_from_an_unused_seed_or_outside_the_slice():
    spec, note = fresh_suite("reasoning-gym:chain_sum?n=100&seed=1", ({"reasoning-gym:chain_sum?seed=2"}, set()))
    assert spec == "reasoning-gym:chain_sum?n=100&seed=3" and "seed 3" in note  # seed 2 already ran here
    assert fresh_suite("reasoning-gym:chain_sum?n=50", (set(), set()))[0] == "reasoning-gym:chain_sum?n=50&seed=2"
    assert fresh_suite("reasoning-gym:chain_sum", (set(), set()))[0] == "reasoning-gym:chain_sum?seed=2"
    spec, note = fresh_suite("humaneval[:164]", ({"humaneval"}, set()))
    assert spec is None and note.startswith("no fresh items: this folder ran all 164 items of humaneval")
    assert fresh_suite("humaneval[100:130]", (set(), set()))[0] == "humaneval[130:164]"
    spec, note = fresh_suite("humaneval[100:]", (set(), set()))
    assert spec == "humaneval[0:100]"
    spec, note = fresh_suite("humaneval[:50]", (set(), {"HumanEval/60"}))
    assert spec == "humaneval[50:164]" and "1 of them already have rows in this folder" in note


def test_fresh_items_of_a_file_with_choices_keep_the_slice_before_the_parameters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = [{"id": f"q{i}", "input": f"Is {i} even?", "answer": "No" if i % 2 else "Yes"} for i in range(6)]
    (tmp_path / "yn.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    spec, note = fresh_suite("yn.jsonl[3:6]?choices=Yes,No", (set(), set()))
    assert spec == "yn.jsonl[0:3]?choices=Yes,No" and note == "items 0 to 2 of 6"
    fresh = load_suite(spec)  # the command the report prints reads as the items it names
    assert [i.id for i in fresh.items] == ["q0", "q1", "q2"] and fresh.items[0].choices == ("Yes", "No")


# ---------------------------------------------------------------- purpose
def test_a_tuning_folder_says_at_the_top_its_figures_are_for_choosing(tmp_path):
    report = build_report(hand_comparison(tmp_path, {"single": SINGLE, "debate": _variant(2)}, purpose="tuning"))
    assert report.purpose == "tuning"
    text = markdown(report)
    assert text.index("**Tuning run:** its figures are for choosing a protocol, not for publishing") < text.index(
        "## Arms"
    )


def test_an_evaluation_folder_carries_no_purpose_warning(tmp_path):
    report = build_report(hand_comparison(tmp_path, {"single": SINGLE}, purpose="evaluation"))
    assert report.purpose == "evaluation" and "Tuning run" not in markdown(report)


def test_a_folder_from_before_purposes_reads_as_unstated(tmp_path):
    path = tmp_path / "old" / RESULTS_FILE
    path.parent.mkdir()
    db = sqlite3.connect(path)
    migrate(db, [m for m in MIGRATIONS if m[0] < "0005"])  # the schema as it was before the meta table
    db.close()
    store = ResultStore(path, read_only=True)
    assert store.purpose() == "unstated"
    store.close()
    writable = ResultStore(path)  # migrated: the meta table exists, still with no purpose in it
    assert writable.purpose() == "unstated"
    writable.close()


def test_a_run_states_its_purpose_once_and_a_folder_keeps_it(tmp_path):
    store = ResultStore(tmp_path / "new" / RESULTS_FILE)
    store.record_purpose(None)
    assert store.purpose() == "evaluation"  # the default for a new folder
    store.record_purpose("evaluation")
    with pytest.raises(ConfigError, match=r"holds a evaluation run, so --purpose tuning cannot add to it") as err:
        store.record_purpose("tuning")
    assert "\n" not in str(err.value) and "give another --out" in str(err.value)
    store.close()


def test_an_old_folder_with_rows_is_not_claimed_by_default(tmp_path):
    store = ResultStore(tmp_path / "old" / RESULTS_FILE)
    store.put(ResultRow(suite="s", item="a", arm_key="k", arm="single", score=1.0))
    store.record_purpose(None)
    assert store.purpose() == "unstated"  # its rows predate any statement: not claimed for evaluation
    store.record_purpose("tuning")
    assert store.purpose() == "tuning"
    store.close()


def test_a_damaged_purpose_is_refused_in_one_line(tmp_path):
    store = ResultStore(tmp_path / "x" / RESULTS_FILE)
    store.close()
    db = sqlite3.connect(tmp_path / "x" / RESULTS_FILE)
    db.execute("INSERT INTO meta (key, value) VALUES ('purpose', 'publishing')")
    db.commit()
    db.close()
    store = ResultStore(tmp_path / "x" / RESULTS_FILE, read_only=True)
    with pytest.raises(ConfigError, match=r"its purpose is 'publishing'; tuning or evaluation is valid"):
        store.purpose()
    store.close()
