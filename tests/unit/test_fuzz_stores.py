"""Fuzzing every reader of a store moot did not write: a call cache (new and old format), a results file, a run
store. Whatever the bytes or values, a read gives data or one ConfigError line (a cache entry: a miss), never a
traceback, within a bounded time."""

from __future__ import annotations

import pickle
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from moot.errors import ConfigError
from moot.harness.jobs._call_store import CALLS_FILE, CallFile
from moot.harness.jobs._legacy_cache import load_legacy_value
from moot.harness.jobs._results import _COLUMNS, ResultRow, ResultStore
from moot.store import RunStore

FAST = settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.too_slow])

json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
adversarial_text = st.one_of(
    st.text(max_size=200),
    st.sampled_from(["[" * 3000, "{" * 3000 + "}" * 3000, '{"a": NaN}', "1" * 6000, "\ud800", "null", "[]"]),
    json_like.map(repr),
)
integers = st.integers(min_value=-(2**63), max_value=2**63 - 1)
sqlite_value = st.one_of(st.none(), integers, st.floats(), adversarial_text, st.binary(max_size=64))


def one_line(error: ConfigError) -> None:
    assert "\n" not in str(error) and str(error)


def bind(value: object) -> tuple[str, object]:
    """The SQL placeholder and parameter that store ``value`` as is: a ``str`` Python cannot encode (a lone
    surrogate) goes in as the undecodable TEXT another writer could leave."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "CAST(? AS TEXT)", value.encode("utf-8", "surrogatepass")
    return "?", value


def loose_cache(folder: Path) -> None:
    """A call cache made elsewhere: the right tables, but not STRICT, so a value may be of any type."""
    db = sqlite3.connect(folder / CALLS_FILE)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    db.execute("INSERT INTO migrations VALUES ('0001_spec_calls', 'then')")
    db.execute("CREATE TABLE calls (spec TEXT, key TEXT, value TEXT, PRIMARY KEY (spec, key))")
    db.commit()
    db.close()


@FAST
@given(value=st.one_of(adversarial_text, st.binary(max_size=200)))
def test_a_call_cache_entry_is_a_reply_or_a_miss(value):
    with tempfile.TemporaryDirectory() as folder:
        loose_cache(Path(folder))
        store = CallFile(Path(folder)).store("s")
        mark, param = bind(value)
        store.file.db.execute(f"INSERT INTO calls (spec, key, value) VALUES ('s', 'k', {mark})", (param,))
        store.file.db.commit()
        found = store.get("k")
        assert found is None or store.refused == 0
        store.file.close()


@FAST
@given(data=st.one_of(st.binary(max_size=300), json_like.map(lambda v: pickle.dumps(v, protocol=5))))
def test_an_old_cache_value_is_a_reply_or_refused(data):
    try:
        load_legacy_value(data)
    except ValueError:
        pass


@FAST
@given(column=st.sampled_from(_COLUMNS), value=sqlite_value)
def test_a_results_row_with_any_value_in_any_column_reads_or_is_refused_in_one_line(column, value):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.sqlite3"
        store = ResultStore(path)
        store.put(ResultRow(suite="s", item="q", arm_key="k", arm="a", answer="x", score=0.5))
        try:
            mark, param = bind(value)
            store._db.execute(f"UPDATE rows SET {column} = {mark}", (param,))
        except sqlite3.IntegrityError:  # NOT NULL: the file cannot hold it
            return
        store._db.commit()
        try:
            for row in store.rows("s", ["k"]):
                assert row.score is None or 0 <= row.score <= 1
        except ConfigError as error:
            one_line(error)
        finally:
            store.close()


@FAST
@given(junk=st.binary(min_size=1, max_size=4096), offset=st.integers(min_value=0, max_value=20_000))
def test_a_damaged_results_file_is_refused_in_one_line_or_read(junk, offset):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.sqlite3"
        store = ResultStore(path)
        store.put(ResultRow(suite="s", item="q", arm_key="k", arm="a"))
        store.close()
        data = bytearray(path.read_bytes())
        data[offset : offset + len(junk)] = junk
        path.write_bytes(bytes(data))
        try:
            reopened = ResultStore(path)
            reopened.rows("s", ["k"])
            reopened.close()
        except ConfigError as error:
            one_line(error)


@FAST
@given(
    column=st.sampled_from(["models", "options", "result", "config", "status", "owner", "heartbeat_at"]),
    value=sqlite_value,
)
@example(column="owner", value="\n")  # a lease owner is shown in the busy-run message: one line of it
@example(column="owner", value="1@host\x1b[2J\nnext")
def test_a_run_row_with_any_json_column_reads_or_is_refused_in_one_line(column, value):
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder) / "runs.sqlite3")
        store.create_run("r", team="t", task="x")
        try:
            mark, param = bind(value)
            store._db.execute(f"UPDATE runs SET {column} = {mark}", (param,))
        except sqlite3.IntegrityError:
            return
        try:
            store.list()
            store.last_unfinished()
            store.acquire("r", {"a": 1})
        except ConfigError as error:
            one_line(error)
        finally:
            store.close()


@FAST
@given(payload=sqlite_value, state=sqlite_value)
def test_a_turn_and_a_checkpoint_with_any_value_read_or_are_refused_in_one_line(payload, state):
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder) / "runs.sqlite3")
        store.create_run("r", team="t", task="x")
        store.record("r", 0, [{"source": "a", "content": "hi"}], {"s": 1})
        try:
            mark, param = bind(payload)
            store._db.execute(f"UPDATE turns SET payload = {mark}", (param,))
            mark, param = bind(state)
            store._db.execute(f"UPDATE checkpoints SET state = {mark}", (param,))
        except sqlite3.IntegrityError:
            return
        for read in (lambda: store.turns("r"), lambda: store.checkpoint("r"), lambda: store.get("r")):
            try:
                read()
            except ConfigError as error:
                one_line(error)
        store.close()


@pytest.mark.parametrize("name", [CALLS_FILE, "results.sqlite3", "runs.sqlite3"])
def test_a_file_of_random_bytes_is_refused_in_one_line(tmp_path, name):
    (tmp_path / name).write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    opener = {CALLS_FILE: lambda: CallFile(tmp_path), "results.sqlite3": lambda: ResultStore(tmp_path / name)}
    with pytest.raises(ConfigError) as refused:
        opener.get(name, lambda: RunStore(tmp_path / name))()
    one_line(refused.value)
