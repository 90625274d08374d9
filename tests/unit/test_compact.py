"""A results folder keeps its evidence in two files (cache/calls.sqlite3, traces.jsonl.xz); a folder in an earlier
moot's layout (a cache sub-folder per spec, a JSONL file per run) still replays as it is, and ``--compact`` folds it
into the two files, checked before anything is deleted."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.harness import CompareRequest, run_comparison
from moot.harness.jobs._call_store import CALLS_FILE, CallFile
from moot.harness.jobs._compact import Compacted, compact_folder
from moot.tracing import TRACES_FILE, JsonlSink, TraceArchive
from tests.unit.test_harness_support import PromptModel, arithmetic, write_sums

ARMS = ["single", "debate"]


@pytest.fixture
def model():
    built = PromptModel("compact", arithmetic()).register()
    yield built
    built.unregister()


def compare_request(tmp_path: Path, out: Path, model: PromptModel, **extra) -> CompareRequest:
    suite = write_sums(tmp_path / "sums.jsonl", 3)
    return CompareRequest(suite=str(suite), arms=ARMS, models=[model.spec], out=out, **extra)


def run(opts: CompareRequest):
    return asyncio.run(run_comparison(opts))


def old_layout(out: Path) -> tuple[int, int]:
    """Rewrite ``out`` as an earlier moot kept it: ``cache/<spec>/calls.sqlite3`` per spec (no spec column), one
    ``traces/<run>.jsonl`` per run. How many spec folders and run traces it then holds."""
    calls = CallFile(out / "cache")
    entries = calls.db.execute("SELECT spec, key, value FROM calls").fetchall()
    calls.close()
    (out / "cache" / CALLS_FILE).unlink()
    for spec, key, value in entries:
        (out / "cache" / spec).mkdir(exist_ok=True)
        with sqlite3.connect(out / "cache" / spec / CALLS_FILE) as db:
            db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
            db.execute("INSERT OR IGNORE INTO migrations VALUES ('0001_calls', 'then')")
            db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT")
            db.execute("INSERT INTO calls VALUES (?, ?)", (key, value))
        db.close()
    events = TraceArchive(out / TRACES_FILE).scan().events
    (out / TRACES_FILE).unlink()
    for event in events:
        JsonlSink(out / "traces").emit(event)
    return len({spec for spec, _, _ in entries}), len({e.trace_id for e in events})


def test_a_comparison_keeps_one_cache_file_and_one_trace_file_with_every_rows_traces(tmp_path, model):
    out = tmp_path / "out"
    comparison = run(compare_request(tmp_path, out, model))
    assert [p.name for p in (out / "cache").iterdir()] == [CALLS_FILE]
    assert not (out / "traces").exists()
    held = {e.trace_id for e in TraceArchive(out / TRACES_FILE).scan().events}
    assert held == {t for row in comparison.rows for t in row.trace_ids} and held
    assert sum(CallFile(out / "cache").counts().values()) == model.calls > 0


def test_an_old_folder_replays_as_it_is_and_after_compacting_with_no_call(tmp_path, model):
    out = tmp_path / "out"
    first = run(compare_request(tmp_path, out, model))
    specs, traces = old_layout(out)
    assert specs > 1 and traces == len({t for row in first.rows for t in row.trace_ids}) > 0
    model.calls = 0
    as_is = run(compare_request(tmp_path, shutil.copytree(out, tmp_path / "as-is"), model, rerun=True, cache_only=True))
    assert as_is.replayed == as_is.computed == len(first.rows) and as_is.missed == 0
    assert len(list((tmp_path / "as-is" / "traces").glob("*.jsonl"))) == traces  # an old folder's files are left

    compacted = run(compare_request(tmp_path, out, model, rerun=True, cache_only=True, compact=True))
    assert compacted.replayed == compacted.computed == len(first.rows) and compacted.missed == 0
    assert model.calls == 0 and as_is.meter.billed_calls == compacted.meter.billed_calls == 0
    assert [p.name for p in (out / "cache").iterdir()] == [CALLS_FILE] and not (out / "traces").exists()
    held = {e.trace_id for e in TraceArchive(out / TRACES_FILE).scan().events}
    assert {t for row in first.rows for t in row.trace_ids} < held  # the old runs' traces, and the replay's


def test_compacting_again_copies_nothing_twice(tmp_path, model):
    out = tmp_path / "out"
    run(compare_request(tmp_path, out, model))
    specs, traces = old_layout(out)
    done = compact_folder(out, out / "cache")
    assert (done.specs, done.traces, done.entries) == (specs, traces, model.calls + specs)  # (+ each model_info)
    events = TraceArchive(out / TRACES_FILE).scan().events
    assert compact_folder(out, out / "cache") == Compacted()
    assert TraceArchive(out / TRACES_FILE).scan().events == events


def test_an_entry_that_does_not_copy_deletes_nothing_and_is_refused_in_one_line(tmp_path, model):
    out = tmp_path / "out"
    run(compare_request(tmp_path, out, model))
    old_layout(out)
    spec = next(p for p in (out / "cache").iterdir() if p.is_dir())
    with sqlite3.connect(spec / CALLS_FILE) as db:  # a key no store takes (longer than any AutoGen writes)
        db.execute("INSERT INTO calls VALUES (?, ?)", ("k" * 300, "{}"))
    db.close()
    with pytest.raises(ConfigError) as refused:
        compact_folder(out, out / "cache")
    assert "\n" not in str(refused.value) and "nothing was deleted" in str(refused.value)
    assert (spec / CALLS_FILE).is_file() and any((out / "traces").glob("*.jsonl"))
