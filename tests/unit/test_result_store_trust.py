"""A results file and a run store are outside input: a schema that runs or computes anything is refused on open,
every value read is checked, and a rescore never overwrites a row another process rewrote meanwhile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.harness.jobs._results import ResultRow, ResultStore
from moot.harness.suites._suites import load_suite
from moot.store import RunStore
from tests.unit.test_harness_runner import by_key, compare_request, model, run, sums  # noqa: F401 - fixtures

FORGERIES = [
    "CREATE TRIGGER forge AFTER INSERT ON rows BEGIN UPDATE rows SET score = 1.0; END",
    "CREATE VIEW best AS SELECT * FROM rows",
    "CREATE TABLE extra (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2))",
]


def results_file(path: Path, *rows: ResultRow) -> Path:
    store = ResultStore(path)
    for row in rows:
        store.put(row)
    store.close()
    return path


def row(**update) -> ResultRow:
    return ResultRow(suite="s", item="q0", arm_key="k", arm="single", answer="3", score=1.0).model_copy(update=update)


def one_line_refusal(call, *needles: str) -> str:
    with pytest.raises(ConfigError) as refused:
        call()
    text = str(refused.value)
    assert "\n" not in text and all(n in text for n in needles), text
    return text


@pytest.mark.parametrize("schema", FORGERIES)
def test_a_results_file_whose_schema_runs_or_computes_anything_is_refused_in_one_line(tmp_path, schema):
    path = results_file(tmp_path / "results.sqlite3", row())
    db = sqlite3.connect(path)
    db.execute(schema)
    db.commit()
    db.close()
    one_line_refusal(lambda: ResultStore(path), str(path), "use a file moot wrote")


def test_a_score_column_computed_on_read_is_refused(tmp_path):
    path = tmp_path / "results.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE rows (suite TEXT, item TEXT, raw REAL, score REAL GENERATED ALWAYS AS (1.0))")
    db.commit()
    db.close()
    one_line_refusal(lambda: ResultStore(path), "generated column (rows.score)")


def test_a_file_that_is_not_a_results_file_is_refused_naming_what_it_lacks(tmp_path):
    path = tmp_path / "results.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name in ("0001_rows", "0002_row_cost", "0003_row_code_version", "0004_row_machine"):
        db.execute("INSERT INTO migrations VALUES (?, 'now')", (name,))
    db.commit()
    db.close()
    one_line_refusal(lambda: ResultStore(path), "no table 'rows'")


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("score", 7.5, "column score holds 7.5"),
        ("score", -3, "column score holds -3"),
        ("score", "high", "column score holds 'high'"),
        ("metrics", "not json", "column metrics is not valid JSON"),
        ("metrics", "[1, 2]", "column metrics holds JSON that is not a dict"),
        ("metrics", "[" * 10_000 + "]" * 10_000, "column metrics is nested"),
        ("metrics", '{"first_round_score": 7.5}', "column metrics.first_round_score holds 7.5"),
        ("metrics", '{"position_scores": [[1, -3]]}', "column metrics.position_scores.0.1 holds -3"),
        ("settings", '{"a": NaN}', "column settings is not valid JSON"),
        ("billed_calls", -1, "column billed_calls holds -1"),
        ("wall_seconds", float("inf"), "column wall_seconds holds inf"),
        ("partial", 7, "column partial holds 7"),
        ("status", "won", "column status holds 'won'"),
        ("answer", b"\xff\xfe", "column answer holds"),
    ],
)
def test_a_bad_value_is_refused_naming_file_item_and_column(tmp_path, column, value, says):
    path = results_file(tmp_path / "results.sqlite3", row())
    db = sqlite3.connect(path)
    db.execute(f"UPDATE rows SET {column} = ?", (value,))
    db.commit()
    db.close()
    store = ResultStore(path)
    one_line_refusal(lambda: store.rows("s", ["k"]), str(path), "row 'q0'", says)


def test_a_value_too_large_to_be_a_row_is_refused_before_it_is_read_whole(tmp_path):
    path = results_file(tmp_path / "results.sqlite3", row())
    db = sqlite3.connect(path)
    db.execute("UPDATE rows SET answer = ?", ("x" * 5_000_000,))
    db.commit()
    db.close()
    store = ResultStore(path)
    one_line_refusal(lambda: store.rows("s", ["k"]), str(path), "too big")


def test_a_report_opens_the_results_file_read_only(tmp_path):
    path = results_file(tmp_path / "results.sqlite3", row())
    reader = ResultStore(path, read_only=True)
    assert [r.answer for r in reader.rows("s", ["k"])] == ["3"]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader.put(row(answer="forged"))
    one_line_refusal(lambda: ResultStore(tmp_path / "missing.sqlite3", read_only=True), "missing.sqlite3")
    assert not (tmp_path / "missing.sqlite3").exists()


def test_undecodable_text_reads_as_escaped_text_not_a_traceback(tmp_path):
    path = results_file(tmp_path / "results.sqlite3", row())
    db = sqlite3.connect(path)
    db.execute("UPDATE rows SET score_detail = CAST(? AS TEXT)", (b"bad \xff byte",))
    db.commit()
    db.close()
    (read,) = ResultStore(path).rows("s", ["k"])
    assert read.score_detail == "bad \\xff byte"


def test_a_forged_score_is_refused_under_rescore_too(sums, tmp_path, model):  # noqa: F811 - fixtures
    out = tmp_path / "out"
    m = model()
    run(compare_request(sums, out, m, arms=["single"]))
    db = sqlite3.connect(out / "results.sqlite3")
    db.execute("UPDATE rows SET score = 7.5 WHERE item = 'q1'")
    db.commit()
    db.close()
    for extra in ({"report_only": True, "rescore": True}, {"rerun": True}, {"report_only": True}):
        one_line_refusal(lambda e=extra: run(compare_request(sums, out, m, arms=["single"], **e)), "row 'q1'", "score")


def test_replace_is_a_compare_and_set_on_the_row_as_read(tmp_path):
    path = results_file(tmp_path / "results.sqlite3", row())
    rescoring, rerunning = ResultStore(path), ResultStore(path)
    (read,) = rescoring.rows("s", ["k"])
    fresh = row(answer="4", score=0.0, finished_at="2099-01-01T00:00:00+00:00", billed_calls=3)
    rerunning.put(fresh)  # another process recomputed the row after the rescore read it
    assert not rescoring.replace(read, read.model_copy(update={"score": 0.5}))
    assert rescoring.get("s", "q0", "k") == fresh  # the fresh, billed row survives
    (again,) = rescoring.rows("s", ["k"])
    assert rescoring.replace(again, again.model_copy(update={"score_detail": "rescored"}))
    assert rerunning.get("s", "q0", "k").score_detail == "rescored"
    assert not rescoring.replace(row(), row())  # a row never read from the file is not written over it


def test_rescore_leaves_a_row_rewritten_meanwhile_by_another_process(sums, tmp_path, model, monkeypatch):  # noqa: F811
    out = tmp_path / "out"
    m = model(wrong={2})
    first = by_key(run(compare_request(sums, out, m, arms=["single"])).rows)
    scorer = type(load_suite(str(sums)).items[0].scorer)
    original = scorer.score
    fresh = first[("q2", "single")].model_copy(update={"answer": "6", "score": 1.0, "finished_at": "2099-01-01"})

    async def score_while_a_rerun_writes(self, item, answer, ctx):
        if item.id == "q0":  # the rescore has read every row; a concurrent --rerun now rewrites q2 with a fresh row
            other = ResultStore(out / "results.sqlite3")
            other.put(fresh)
            other.close()
        return await original(self, item, answer, ctx)

    monkeypatch.setattr(scorer, "score", score_while_a_rerun_writes)
    rescored = run(compare_request(sums, out, m, arms=["single"], report_only=True, rescore=True))
    assert rescored.changed_meanwhile == 1
    stored = ResultStore(out / "results.sqlite3").get(fresh.suite, "q2", fresh.arm_key)
    assert stored.answer == "6" and stored.finished_at == "2099-01-01" and "rescored_at" not in stored.metrics
    assert by_key(rescored.rows)[("q2", "single")].answer == "6"  # the report shows the row the file holds
    assert all("rescored_at" in r.metrics for r in rescored.rows if r.item != "q2")


@pytest.mark.parametrize(
    "schema", ["CREATE TRIGGER t AFTER INSERT ON turns BEGIN DELETE FROM turns; END", "CREATE VIEW v AS SELECT 1"]
)
def test_a_run_store_whose_schema_runs_anything_is_refused_in_one_line(tmp_path, schema):
    path = tmp_path / "runs.sqlite3"
    RunStore(path).close()
    db = sqlite3.connect(path)
    db.execute(schema)
    db.commit()
    db.close()
    one_line_refusal(lambda: RunStore(path), str(path))  # a store moot writes may hold neither
    # A reader refuses both too: it opens a writable file as a writer that only reads (so SQLite can tidy the
    # WAL when it closes), and a view would rewrite what it reads.
    one_line_refusal(lambda: RunStore(path, read_only=True), str(path))


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("models", "not json", "column models is not valid JSON"),
        ("options", "[" * 10_000 + "]" * 10_000, "column options is nested"),
        ("result", "[1]", "column result holds JSON that is not a dict"),
    ],
)
def test_a_bad_run_row_is_refused_naming_file_run_and_column(tmp_path, column, value, says):
    path = tmp_path / "runs.sqlite3"
    store = RunStore(path)
    store.create_run("r1", team="t", task="x")
    store._db.execute(f"UPDATE runs SET {column} = ?", (value,))
    for read in (lambda: store.get("r1"), lambda: store.list(), lambda: RunStore(path, read_only=True).list()):
        one_line_refusal(read, str(path), "run 'r1'", says)


def test_a_bad_turn_or_checkpoint_is_refused_in_one_line(tmp_path):
    path = tmp_path / "runs.sqlite3"
    store = RunStore(path)
    store.create_run("r1", team="t", task="x")
    store.record("r1", 0, [{"source": "a", "content": "hi", "type": "TextMessage"}], {"s": 1})
    store._db.execute("UPDATE turns SET payload = '\"a string\"'")
    store._db.execute("UPDATE checkpoints SET state = 'nope'")
    one_line_refusal(lambda: store.turns("r1"), "payload of turn 0", "not a dict")
    one_line_refusal(lambda: store.get("r1"), "payload of a turn")
    one_line_refusal(lambda: store.checkpoint("r1"), "state of its checkpoint", "not valid JSON")


def test_a_migration_table_with_a_name_that_is_not_text_is_refused_in_one_line(tmp_path):
    path = results_file(tmp_path / "results.sqlite3", row())
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE m2 AS SELECT * FROM migrations")
    db.execute("DROP TABLE migrations")
    db.execute("CREATE TABLE migrations (name, applied_at)")
    db.execute("INSERT INTO migrations SELECT * FROM m2")
    db.execute("INSERT INTO migrations VALUES (NULL, 'then')")
    db.commit()
    db.close()
    one_line_refusal(lambda: ResultStore(path), str(path), "newer moot", "None")
