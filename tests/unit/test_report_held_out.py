"""Items that decided nothing: a folder records which of its suite's items decided a protocol choice made elsewhere
(``--tuned-on``), and its report gives every figure again on the other items, Holm-corrected among themselves."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.harness import build_report, load_suite, write_report
from moot.harness.jobs._results import MIGRATIONS, ResultStore
from moot.harness.jobs._runner import RESULTS_FILE, CompareRequest, Comparison, check_tuned_on, tuned_items
from moot.harness.reports._render import markdown
from moot.harness.reports._stats import accuracy_interval, holm
from moot.store import migrate
from tests.unit.test_harness_cli import invoke, refused
from tests.unit.test_harness_support import PromptModel, arithmetic, write_sums
from tests.unit.test_report_exact_first import hand_comparison
from tests.unit.test_report_selection import SINGLE, VARIANTS, _variant

TUNED = 8
"""The first 8 of the 20 items decided a choice made elsewhere: items 8 to 19 decided nothing."""
SCORES = {
    "single": [0.0] * 2 + [1.0] * 6 + [1.0] * 3 + [0.0] * 9,  # 9 of 20; 3 of the 12 held out
    "debate": [1.0] * 8 + [1.0] * 6 + [0.0] * 6,  # 14 of 20; 6 of the 12
    "reflection": [1.0] * 8 + [1.0] * 2 + [0.0] * 10,  # 10 of 20; 2 of the 12
}


def _tuned(comparison: Comparison, *specs: str) -> Comparison:
    """Record in the comparison's folder that ``specs`` decided a choice, as ``--tuned-on`` does."""
    store = ResultStore(comparison.results_path)
    store.record_tuned_on(list(specs))
    store.close()
    return comparison


def _source(tmp_path: Path) -> str:
    return str(tmp_path / "sums.jsonl")


def test_every_figure_is_given_again_on_the_items_that_decided_nothing(tmp_path):
    comparison = _tuned(hand_comparison(tmp_path, SCORES), f"{_source(tmp_path)}[:{TUNED}]")
    report = build_report(comparison)
    held = report.held_out
    assert held is not None and held.items == 12 and held.tuned_on == [f"{_source(tmp_path)}[:8]"]
    assert [a.accuracy for a in report.arms] == [0.45, 0.7, 0.5]  # the main figures: all 20 items
    assert [(a.label, a.n, a.accuracy) for a in held.arms] == [("single", 12, 0.25), ("debate", 12, 0.5),
                                                               ("reflection", 12, 2 / 12)]  # fmt: skip
    exact = accuracy_interval([1.0] * 3 + [0.0] * 9, 0, True)
    assert (held.arms[0].ci_low, held.arms[0].ci_high) == (exact.low, exact.high)
    single_debate = held.pairs[0]
    assert (single_debate.a, single_debate.b, single_debate.n) == ("single", "debate", 12)
    assert (single_debate.difference, single_debate.a_only, single_debate.b_only) == (-0.25, 0, 3)
    assert single_debate.p_value == pytest.approx(2 * 0.5**3)  # McNemar exact on the 3 discordant items
    assert report.pairs[0].b_only == 5 and report.pairs[0].p_value == pytest.approx(2 * 0.5**5)  # all 20 items
    assert [p.p_holm for p in held.pairs] == holm([p.p_value for p in held.pairs])  # among themselves
    assert held.pairs[2].p_holm != report.pairs[2].p_holm
    text = markdown(report)
    section = text.index(f"## On the 12 items that decided nothing (tuned on: {_source(tmp_path)}[:8])")
    assert text.index("## Pairs of arms") < section < text.index("## Notes")
    held_text = text[section : text.index("## Notes")]
    assert "| single |  | 12 | 25.0% | [5.5%, 57.2%] |" in held_text and "| 12 | 50.0% | [21.1%, 78.9%] |" in held_text
    assert "| single vs debate | 12 | -25.0 pts |" in held_text and "| 0 / 3 |" in held_text
    top = text[: text.index("## Arms")]
    assert "**Held out:** 12 of these 20 items decided nothing (tuned on" in top


def test_summary_json_carries_the_held_out_figures(tmp_path):
    comparison = _tuned(hand_comparison(tmp_path, SCORES), f"{_source(tmp_path)}[:4]", f"{_source(tmp_path)}[4:8]")
    summary = json.loads(write_report(build_report(comparison), tmp_path / "report").summary.read_text())
    held = summary["held_out"]
    assert held["items"] == 12 and held["tuned_on"] == [f"{_source(tmp_path)}[:4]", f"{_source(tmp_path)}[4:8]"]
    assert [a["accuracy"] for a in held["arms"]] == [0.25, 0.5, pytest.approx(2 / 12)]
    assert held["pairs"][0]["b_only"] == 3 and held["idle"] == []
    assert "items that decided nothing (tuned on: " in (tmp_path / "report" / "report.html").read_text()


def test_on_a_partial_credit_suite_the_held_out_figures_are_exact_first(tmp_path):
    scores = {"single": [1.0] * 10 + [0.5] * 10, "debate": [1.0] * 10 + [1.0] * 4 + [0.5] * 6}
    report = build_report(_tuned(hand_comparison(tmp_path, scores), f"{_source(tmp_path)}[:10]"))
    held = report.held_out
    assert report.exact_first and held is not None and held.items == 10
    single, debate = held.arms
    assert (single.accuracy, debate.accuracy) == (0.0, 0.4)  # exact matches only, on items 10 to 19
    assert single.graded is not None and single.graded.estimate == 0.5
    assert debate.graded is not None and debate.graded.estimate == pytest.approx(0.7)
    assert held.pairs[0].test == "McNemar exact" and held.pairs[0].b_only == 4
    assert held.pairs[0].graded is not None and held.pairs[0].graded.test == "paired permutation"


def test_when_every_item_decided_a_choice_one_note_says_no_figure_is_free_of_selection(tmp_path):
    spec = f"{_source(tmp_path)}[:20]"
    report = build_report(_tuned(hand_comparison(tmp_path, SCORES), spec))
    assert report.held_out is not None and report.held_out.items == 0 and report.held_out.arms == []
    text = markdown(report)
    note = f"every item here decided a choice (tuned on {spec}): no figure in this report is free of selection"
    assert text.count(note) == 1 and text.index(note) < text.index("## Arms")
    assert "items that decided nothing (tuned on" not in text


def test_a_spec_selecting_none_of_the_items_decided_nothing_here_and_the_report_says_so(tmp_path):
    elsewhere = f"{_source(tmp_path)}[25:30]"
    report = build_report(_tuned(hand_comparison(tmp_path, SCORES), elsewhere, f"{_source(tmp_path)}[:8]"))
    held = report.held_out
    assert held is not None and held.items == 12 and held.idle == [elsewhere]
    assert f"{elsewhere}: selects none of these items, so decided nothing here." in markdown(report)


def test_the_selection_warning_gives_the_chosen_arms_held_out_accuracy_against_single(tmp_path):
    comparison = hand_comparison(tmp_path, {"single": SINGLE, "debate": _variant(7)}, stored=VARIANTS)
    report = build_report(_tuned(comparison, f"{_source(tmp_path)}[:10]"))
    (chosen,) = report.selections
    # single is right on items 0-4; debate on 0-11: on items 10 to 19, single 0 of 10 and debate 2 of 10
    assert (chosen.held_out_items, chosen.held_out_accuracy, chosen.held_out_baseline) == (10, 0.2, 0.0)
    assert "On the 10 items that decided nothing: debate 20.0% vs single 0.0%." in markdown(report)


def test_a_folder_that_records_no_tuned_on_has_no_held_out_figures(tmp_path):
    report = build_report(hand_comparison(tmp_path, SCORES))
    assert report.held_out is None and "Held out" not in markdown(report)
    assert "decided nothing (tuned on" not in markdown(report)


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ('{"a": 1}', "holds JSON that is not a list"),
        ("[1]", "holds 1; a JSON list of suite specs"),
        ('[""]', "holds ''; a JSON list of suite specs"),
        ("[not json", "is not valid JSON"),
    ],
)
def test_a_malformed_stored_list_is_refused_in_one_line_naming_the_file_and_key(tmp_path, stored, shown):
    comparison = hand_comparison(tmp_path, SCORES)
    db = sqlite3.connect(comparison.results_path)
    db.execute("INSERT INTO meta (key, value) VALUES ('tuned_on', ?)", (stored,))
    db.commit()
    db.close()
    with pytest.raises(ConfigError) as err:
        build_report(comparison)
    message = str(err.value)
    assert message.startswith(f"results file {comparison.results_path}: meta key tuned_on ") and "\n" not in message
    assert shown in message


def test_a_stored_spec_that_no_longer_reads_as_a_suite_is_refused_in_one_line(tmp_path):
    comparison = _tuned(hand_comparison(tmp_path, SCORES), "humanevl[:3]")
    with pytest.raises(ConfigError) as err:
        build_report(comparison)
    message = str(err.value)
    assert message.startswith(f"results file {comparison.results_path}: meta key tuned_on holds 'humanevl[:3]', ")
    assert "unknown suite 'humanevl[:3]'" in message and "\n" not in message


def test_a_statement_replaces_the_recorded_list(tmp_path):
    store = ResultStore(tmp_path / "x" / RESULTS_FILE)
    assert store.tuned_on() == []
    store.record_tuned_on(["s.jsonl[:2]", "s.jsonl[5:7]"])
    assert store.tuned_on() == ["s.jsonl[:2]", "s.jsonl[5:7]"]
    store.record_tuned_on(["s.jsonl[:3]"])
    assert store.tuned_on() == ["s.jsonl[:3]"]
    store.close()


def test_a_file_from_before_the_meta_table_records_no_list(tmp_path):
    path = tmp_path / "old" / RESULTS_FILE
    path.parent.mkdir()
    db = sqlite3.connect(path)
    migrate(db, [m for m in MIGRATIONS if m[0] < "0005"])
    db.close()
    store = ResultStore(path, read_only=True)  # a report migrates nothing
    assert store.tuned_on() == []
    store.close()


def test_a_gym_spec_counts_items_by_task_and_seed_whatever_its_n():
    suite = load_suite("reasoning-gym:chain_sum?n=50&seed=1")
    specs = ["reasoning-gym:chain_sum?n=30&seed=1", "reasoning-gym:chain_sum[40:45]?seed=1"]
    check_tuned_on(specs, suite)
    decided, idle = tuned_items(specs, suite, "here")
    assert len(decided) == 35 and idle == []
    with pytest.raises(ConfigError) as err:
        check_tuned_on(["reasoning-gym:chain_sum?n=30&seed=7"], suite)
    assert str(err.value) == (
        "--tuned-on 'reasoning-gym:chain_sum?n=30&seed=7' selects items of reasoning-gym:chain_sum?seed=7, not of the "
        "compared suite reasoning-gym:chain_sum?seed=1; give a slice of the compared suite"
    )
    assert tuned_items(["reasoning-gym:chain_sum?n=30&seed=7"], suite, "here") == (
        [],
        ["reasoning-gym:chain_sum?n=30&seed=7"],
    )


# ---------------------------------------------------------------- the command line
def _stored_list(out: Path) -> list[str] | None:
    db = sqlite3.connect(out / RESULTS_FILE)
    found = db.execute("SELECT value FROM meta WHERE key = 'tuned_on'").fetchone()
    db.close()
    return None if found is None else json.loads(found[0])


def _run(suite: Path, out: Path, *flags: str, wrong: frozenset[int] = frozenset({0, 1, 4})):
    """A comparison of single and reflection on ``suite``, every arm wrong on the items whose first number is in
    ``wrong`` (the sums suite's item i asks 'What is i + 2i?')."""
    model = PromptModel("held-out", arithmetic(set(wrong))).register()
    try:
        return invoke(str(suite), "-m", model.spec, "--arms", "single,reflection", "--out", str(out), *flags)
    finally:
        model.unregister()


def test_compare_tuned_on_reports_the_items_that_decided_nothing_and_a_resumed_run_keeps_them(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 6)
    out = tmp_path / "out"
    first = _run(suite, out, "--tuned-on", f"{suite}[:2]")
    assert first.exit_code == 0, first.output
    assert _stored_list(out) == [f"{suite}[:2]"]
    summary = json.loads((out / "summary.json").read_text())
    assert [a["accuracy"] for a in summary["arms"]] == [0.5, 0.5]  # wrong on items 0, 1 and 4 of 6
    held = summary["held_out"]
    assert held["items"] == 4 and [a["accuracy"] for a in held["arms"]] == [0.75, 0.75]  # wrong on item 4 of 2-5
    assert [a["n"] for a in held["arms"]] == [4, 4]
    assert f"## On the 4 items that decided nothing (tuned on: {suite}[:2])" in (out / "report.md").read_text()
    assert "On the 4 items that decided nothing" in first.stdout.replace("\n", " ")
    again = _run(suite, out)  # the same command without --tuned-on: the folder's list is kept
    assert again.exit_code == 0, again.output
    assert _stored_list(out) == [f"{suite}[:2]"]
    assert json.loads((out / "summary.json").read_text())["held_out"]["items"] == 4


def test_report_only_tuned_on_records_the_statement_on_an_existing_folder(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 6)
    out = tmp_path / "out"
    assert _run(suite, out).exit_code == 0
    assert _stored_list(out) is None and json.loads((out / "summary.json").read_text())["held_out"] is None
    stated = _run(suite, out, "--report-only", "--tuned-on", f"{suite}[4:6]", "--tuned-on", f"{suite}[:1]")
    assert stated.exit_code == 0, stated.output
    assert "computed 0 rows" in stated.output
    assert _stored_list(out) == [f"{suite}[4:6]", f"{suite}[:1]"]
    held = json.loads((out / "summary.json").read_text())["held_out"]
    assert held["items"] == 3 and [a["accuracy"] for a in held["arms"]] == [pytest.approx(2 / 3)] * 2  # items 1-3
    restated = _run(suite, out, "--report-only", "--tuned-on", f"{suite}[:3]")
    assert restated.exit_code == 0 and _stored_list(out) == [f"{suite}[:3]"]  # replaced, not added to
    assert json.loads((out / "summary.json").read_text())["held_out"]["items"] == 3


def test_a_spec_of_another_suite_is_refused_in_one_line_and_writes_nothing(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 6)
    other = write_sums(tmp_path / "other.jsonl", 6)
    out = tmp_path / "out"
    refused(
        _run(suite, out, "--tuned-on", f"{other}[:2]"),
        f"moot: error: --tuned-on '{other}[:2]' selects items of file:{other.resolve()}, not of the compared suite "
        f"file:{suite.resolve()}; give a slice of the compared suite",
    )
    assert not out.exists()
    refused(_run(suite, out, "--tuned-on", "humanevl[:2]"), "moot: error: --tuned-on 'humanevl[:2]': unknown suite")
    assert not out.exists()
    assert _run(suite, out, "--tuned-on", f"{suite}[:2]").exit_code == 0
    before = (out / RESULTS_FILE).read_bytes()
    other_source = "moot: error: --tuned-on 'humaneval[:2]' selects items of humaneval, not of the compared suite"
    refused(_run(suite, out, "--report-only", "--tuned-on", "humaneval[:2]"), other_source)
    assert (out / RESULTS_FILE).read_bytes() == before and _stored_list(out) == [f"{suite}[:2]"]


def test_the_resume_command_repeats_every_tuned_on():
    from moot.harness._cli import compare_command

    compared = CompareRequest(suite="s.jsonl", arms=["single"], out=Path("o"), tuned_on=["s.jsonl[:2]", "s.jsonl[4:]"])
    assert compare_command(compared) == "moot compare s.jsonl --arms single --out o --tuned-on 's.jsonl[:2]' " \
        "--tuned-on 's.jsonl[4:]'"  # fmt: skip


def test_a_malformed_recorded_list_is_refused_before_any_row_runs_and_a_new_statement_replaces_it(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 6)
    out = tmp_path / "out"
    assert _run(suite, out, "--tuned-on", f"{suite}[:2]").exit_code == 0
    db = sqlite3.connect(out / RESULTS_FILE)
    db.execute("UPDATE meta SET value = '[\"s.jsonl[:2]\", 7]' WHERE key = 'tuned_on'")
    db.commit()
    db.close()
    message = f"moot: error: results file {out / RESULTS_FILE}: meta key tuned_on holds 7; a JSON list of suite specs"
    more = write_sums(tmp_path / "more.jsonl", 8)
    more.rename(suite)  # two more items: rows the refused run would have computed
    refused(_run(suite, out), message)
    refused(_run(suite, out, "--report-only"), message)
    db = sqlite3.connect(out / RESULTS_FILE)
    assert db.execute("SELECT COUNT(*) FROM rows").fetchone() == (12,)  # the 6 items x 2 arms of the first run
    db.close()
    fixed = _run(suite, out, "--tuned-on", f"{suite}[:2]")
    assert fixed.exit_code == 0, fixed.output
    assert json.loads((out / "summary.json").read_text())["held_out"]["items"] == 6


def test_a_folder_changed_under_the_report_is_one_line_exit_2(tmp_path, monkeypatch):
    import moot.harness._cli as cli

    def changed(comparison: Comparison, seed: int = 0) -> None:
        raise ConfigError(f"results file {comparison.results_path}: meta key tuned_on holds JSON that is not a list")

    suite = write_sums(tmp_path / "s.jsonl", 2)
    monkeypatch.setattr(cli, "build_report", changed)
    result = _run(suite, tmp_path / "out")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"moot: error: results file {tmp_path / 'out' / RESULTS_FILE}: meta key tuned_on")
