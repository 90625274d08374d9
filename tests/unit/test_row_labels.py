"""A stored row names the arm that computed it: its full, canonical spec, which building again gives the same
settings (the same key), so changing a default never relabels old rows; and each row records the model that
answered it."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.harness import CompareRequest, build_report, run_comparison, write_report
from moot.harness.arms._arm import canonical_spec
from moot.harness.arms._registry import build_arm
from moot.harness.jobs._provenance import UNKNOWN_MODEL, answered_by, model_identity, models_answering
from moot.harness.jobs._results import ResultStore, arm_key
from moot.harness.suites._suites import load_suite
from moot.models import ModelSpec
from tests.unit.test_harness_runner import CLASSIC, model, sums  # noqa: F401 (fixtures)

SHORT = [
    "single", "self-consistency", "self-consistency?k=3&samples=debate", "self-consistency?temperature=0.35",
    "reflection?rounds=2", "reflection?threshold=85", "reflection?threshold=90.5",
    "debate", CLASSIC, "debate?arbiter=vote", "debate?arbiter=llm&experts=4",
    "debate?temperature=0/0.7/0.7&rounds=2", "debate?rebuttal_temperature=opened", "debate?anchor=single",
    "debate?rebuttal_temperature=0.9/0.7/0.7&temperature=0.1234567", "debate?opening=solver",
]  # fmt: skip
CODE = ["single", "best-of-k-tests?k=4", "reflection-tests", "reflection-tests?revision=continue", "debate",
        "debate?arbiter=rounds&rounds=3", "self-consistency?samples=debate&k=4"]  # fmt: skip


def _built(spec: str, suite):
    arm = build_arm(spec)
    arm.check(suite)
    return arm


@pytest.mark.parametrize(("short", "specs"), [(True, SHORT), (False, CODE)])
def test_building_an_arm_s_canonical_spec_gives_the_same_settings_and_spec(sums, short, specs):  # noqa: F811
    suite = load_suite(str(sums) if short else "humaneval[:2]")
    for spec in specs:
        arm = _built(spec, suite)
        canonical = canonical_spec(arm)
        again = _built(canonical, suite)
        assert arm_key(again.name, again.settings, {}) == arm_key(arm.name, arm.settings, {}), spec  # 85 is not 85.0
        assert canonical_spec(again) == canonical, spec
        options = canonical.partition("?")[2].split("&")
        assert options == sorted(options), spec


def test_the_canonical_spec_spells_every_default_so_the_classic_debate_never_reads_as_the_default(sums):  # noqa: F811
    suite = load_suite(str(sums))
    classic, default = canonical_spec(_built(CLASSIC, suite)), canonical_spec(_built("debate", suite))
    assert classic == (
        "debate?anchor=none&arbiter=rounds&experts=3&opening=expert&peer_answers=shown&rebuttal_temperature=opened"
        "&rounds=2&temperature=0.7"
    )
    assert default == (
        "debate?anchor=held&arbiter=rounds&experts=3&opening=expert&peer_answers=hidden&rebuttal_temperature=0.7"
        "&rounds=3&temperature=0/0.3/0.3"
    )
    # arbiter=auto is named as what it rules with: on code the program vote, whatever was given
    code = load_suite("humaneval[:2]")
    assert "arbiter=vote" in canonical_spec(_built("debate?arbiter=rounds", code))
    assert _built("debate?arbiter=rounds", code).settings == _built("debate", code).settings
    assert canonical_spec(_built("reflection-tests?rounds=3&revision=continue", code)) == (
        "reflection-tests?revision=continue&rounds=3"
    )


def test_the_default_debate_votes_once_on_a_closed_answer_set_with_samples_shown_the_choices_rotated(
    sums,  # noqa: F811
    tmp_path,
):
    closed = tmp_path / "closed.jsonl"
    closed.write_text('{"input": "Is 4 even?", "answer": "Yes", "choices": ["Yes", "No"]}\n')
    listed = tmp_path / "listed.jsonl"
    listed.write_text('{"input": "Which is even? A) 3 B) 4", "answer": "B", "choices": ["A", "B"]}\n')
    on_options, on_numbers = _built("debate", load_suite(str(closed))), _built("debate", load_suite(str(sums)))
    on_choices = _built("debate", load_suite(str(listed)))
    closed_default = ("solver", 1, "rotated")
    assert (on_options.config.opening, on_options.config.rounds, on_options.config.choice_order) == closed_default
    assert (on_choices.config.opening, on_choices.config.rounds, on_choices.config.choice_order) == closed_default
    assert (on_numbers.config.opening, on_numbers.config.rounds, on_numbers.config.choice_order) == (
        "expert",
        3,
        "asked",
    )
    assert "opening=solver" in canonical_spec(on_choices) and on_choices.settings["opening"] == "solver"
    assert "choice_order=rotated" in canonical_spec(on_options) and "rounds=1" in canonical_spec(on_options)
    assert "choice_order" not in canonical_spec(on_numbers)
    assert "opening" not in on_numbers.settings  # the key every row had before openings were an option
    # given, it is kept whatever the kind (the canonical spec of the other says so)
    assert _built("debate?opening=expert", load_suite(str(listed))).config.opening == "expert"
    assert _built("debate?opening=solver", load_suite(str(sums))).config.opening == "solver"
    assert _built("debate?rounds=3", load_suite(str(closed))).config.rounds == 3


def _run(opts: CompareRequest):
    return asyncio.run(run_comparison(opts))


def test_rows_are_stored_under_their_canonical_spec_and_read_back_under_the_label(sums, tmp_path, model):  # noqa: F811
    m = model()
    out = tmp_path / "out"
    arms = ["single", "debate?rounds=2", "self-consistency?k=3"]
    comparison = _run(CompareRequest(suite=str(sums), arms=arms, models=[m.spec], out=out))
    assert {r.arm for r in comparison.rows} == set(arms)  # the comparison's labels, as given
    with sqlite3.connect(out / "results.sqlite3") as db:
        stored = {arm for (arm,) in db.execute("SELECT DISTINCT arm FROM rows")}
    assert stored == {canonical_spec(_built(a, comparison.suite)) for a in arms}
    assert "debate?anchor=held&arbiter=rounds&experts=3&opening=expert&peer_answers=hidden" in " ".join(stored)
    # a rerun under the canonical spec finds the same rows (replays them, computes none new)
    again = _run(CompareRequest(suite=str(sums), arms=sorted(stored), models=[m.spec], out=out, rerun=True))
    assert again.replayed == again.computed == len(again.rows) == 12


def test_two_labels_of_one_arm_are_refused(sums, tmp_path, model):  # noqa: F811
    with pytest.raises(ConfigError, match=r"arms 'debate' and 'debate\?rounds=3' are the same arm \(debate\?"):
        _run(CompareRequest(suite=str(sums), arms=["debate", "debate?rounds=3"], models=[model().spec],
                            out=tmp_path / "out"))  # fmt: skip


def test_each_row_records_the_model_that_answered_and_a_replay_keeps_the_paid_one(sums, tmp_path, model):  # noqa: F811
    m = model()
    out = tmp_path / "out"
    first = _run(CompareRequest(suite=str(sums), arms=["single"], models=[m.spec], out=out))
    identity = model_identity(ModelSpec.parse(m.spec))
    assert [r.model_identity for r in first.rows] == [{"base": identity}] * 4
    assert models_answering([r.model_identity for r in first.rows]) == {identity: 4}
    with sqlite3.connect(out / "results.sqlite3") as db:  # as if computed by other weights
        db.execute("""UPDATE rows SET model_identity = '{"base": "local other (sha256 0123)"}'""")
    replay = _run(CompareRequest(suite=str(sums), arms=["single"], models=[m.spec], out=out, rerun=True))
    assert replay.replayed == 4
    assert {answered_by(r.model_identity) for r in replay.rows} == {"local other (sha256 0123)"}
    # the report says what answered each row, read from the rows, beside the model the command names now
    with sqlite3.connect(out / "results.sqlite3") as db:  # one row from before identities were recorded
        db.execute("UPDATE rows SET model_identity = NULL WHERE item = 'q0'")
    report = build_report(_run(CompareRequest(suite=str(sums), arms=["single"], models=[m.spec], out=out,
                                              report_only=True)))  # fmt: skip
    assert report.provenance.answered_by == {"local other (sha256 0123)": 3, UNKNOWN_MODEL: 1}
    text = write_report(report, tmp_path / "report").markdown.read_text()
    assert f"Rows answered by: local other (sha256 0123) (3 rows), {UNKNOWN_MODEL} (1 rows)." in text
    assert f"Models named now: base: {identity}." in text


def test_a_results_file_from_before_the_column_reads_as_unknown_and_is_migrated(sums, tmp_path, model):  # noqa: F811
    m = model()
    out = tmp_path / "out"
    _run(CompareRequest(suite=str(sums), arms=["single"], models=[m.spec], out=out))
    path: Path = out / "results.sqlite3"
    with sqlite3.connect(path) as db:  # the file as the previous moot wrote it
        db.execute("ALTER TABLE rows DROP COLUMN model_identity")
        db.execute("DELETE FROM migrations WHERE name = '0006_row_model_identity'")
    report = _run(CompareRequest(suite=str(sums), arms=["single"], models=[m.spec], out=out, report_only=True))
    assert [answered_by(r.model_identity) for r in report.rows] == [UNKNOWN_MODEL] * 4
    ResultStore(path).close()  # a writable open migrates it
    with sqlite3.connect(path) as db:
        assert [n for (n,) in db.execute("SELECT name FROM migrations WHERE name = '0006_row_model_identity'")]
        db.execute("""UPDATE rows SET model_identity = '{"base": 3}'""")
    with pytest.raises(ConfigError, match="column model_identity holds a value that is not text"):
        _run(CompareRequest(suite=str(sums), arms=["single"], models=[m.spec], out=out, report_only=True))
