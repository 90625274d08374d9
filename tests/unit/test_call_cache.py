"""The call cache is plain data: JSON validated on read, an old (pickled) folder migrated by an allow-list, nothing
in a folder ever run, and no path taken from a folder's contents."""

from __future__ import annotations

import asyncio
import os
import pickle
import sqlite3
from pathlib import Path

import pytest
from autogen_core.models import CreateResult, RequestUsage, UserMessage
from autogen_ext.models.cache import ChatCompletionCache

from moot.errors import ConfigError
from moot.harness.jobs._call_store import CALLS_FILE, CallFile, CallStore
from moot.harness.jobs._calls import CallCache
from moot.harness.jobs._legacy_cache import LEGACY_FILE, load_legacy_value

KEY = "a" * 64


def reply(text: str = "42", prompt: int = 3, completion: int = 1) -> CreateResult:
    usage = RequestUsage(prompt_tokens=prompt, completion_tokens=completion)
    return CreateResult(finish_reason="stop", content=text, usage=usage, cached=False)


def store_in(folder: Path) -> CallStore:
    """A spec's store in the cache file of ``folder``."""
    return CallFile(folder).store("spec")


def old_store(folder: Path) -> CallStore:
    """The store of the spec whose calls an earlier moot kept in sub-folder ``folder`` (taken in on first open)."""
    return CallFile(folder.parent).store(folder.name)


class _Runs:
    """A pickle that runs a command when loaded: what a crafted cache entry holds."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def legacy_folder(folder: Path, rows: list[tuple[object, int, object, object]]) -> Path:
    """A diskcache-style index (key, mode, filename, value), as an earlier moot's cache folder holds."""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(folder / LEGACY_FILE)
    db.execute(
        "CREATE TABLE Cache (rowid INTEGER PRIMARY KEY, key BLOB, raw INTEGER, store_time REAL, expire_time REAL,"
        " access_time REAL, access_count INTEGER DEFAULT 0, tag BLOB, size INTEGER DEFAULT 0, mode INTEGER DEFAULT 0,"
        " filename TEXT, value BLOB)"
    )
    db.executemany("INSERT INTO Cache (key, raw, mode, filename, value) VALUES (?, 1, ?, ?, ?)", rows)
    db.commit()
    db.close()
    return folder


def test_an_entry_round_trips_as_json_and_a_stream_too(tmp_path):
    store = store_in(tmp_path / "spec")
    store.set(KEY, reply())
    store.set("b" * 64, ["4", "2", reply()])
    assert store.get(KEY) == reply() and store.get("b" * 64) == ["4", "2", reply()]
    text = sqlite3.connect(tmp_path / "spec" / CALLS_FILE).execute("SELECT value FROM calls").fetchone()[0]
    assert text.startswith("{") and '"content":"42"' in text  # plain JSON, no pickle


def test_chat_completion_cache_answers_from_the_store_with_no_call(tmp_path):
    class Once:
        calls = 0

        async def create(self, *args, **kwargs):
            Once.calls += 1
            return reply()

    store = CallCache(tmp_path).labelled("scripted:x")
    ask = [UserMessage(content="6 x 7?", source="user")]
    first = asyncio.run(ChatCompletionCache(Once(), store).create(ask))  # type: ignore[arg-type]
    again = asyncio.run(ChatCompletionCache(Once(), store).create(ask))  # type: ignore[arg-type]
    assert Once.calls == 1 and first.content == again.content == "42" and again.cached


def test_a_crafted_pickle_in_an_old_cache_folder_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    good = pickle.dumps(reply("good"), protocol=5)
    folder = legacy_folder(
        tmp_path / "spec",
        [("c" * 64, 4, None, pickle.dumps(_Runs(marker))), (KEY, 4, None, good)],
    )
    store = old_store(folder)  # migrates on first open
    assert not marker.exists()  # the crafted entry was refused, not loaded
    assert store.get("c" * 64) is None and store.get(KEY) == reply("good") and store.count() == 1


def test_the_allow_list_builds_no_class_even_an_allowed_one_and_refuses_every_other(tmp_path):
    class Sneaky:
        def __reduce__(self):
            return (CreateResult, ("x",))  # an allowed class called with arguments: REDUCE, not a model's state

    for crafted in (pickle.dumps(Sneaky()), pickle.dumps({1, 2}), pickle.dumps(b"bytes"), b"\x80\x05garbage"):
        with pytest.raises(ValueError):
            load_legacy_value(crafted)
    shared: list = ["x"]
    for _ in range(40):  # each level refers to the one below twice: 2**40 nodes if references were expanded
        shared = [shared, shared]
    with pytest.raises(ValueError, match="more data than a cached reply"):
        load_legacy_value(pickle.dumps(shared))


def test_an_old_value_larger_than_a_reply_is_skipped_without_being_loaded(tmp_path):
    folder = legacy_folder(
        tmp_path / "spec", [(KEY, 4, None, b"\x80" * 9_000_000), ("b" * 64, 4, None, pickle.dumps(reply()))]
    )
    store = old_store(folder)
    assert store.count() == 1 and store.get(KEY) is None and store.get("b" * 64) == reply()


def test_an_old_entry_naming_a_file_outside_the_folder_reads_and_deletes_nothing(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    folder = legacy_folder(
        tmp_path / "cache" / "spec",
        [
            (KEY, 4, str(victim), None),
            ("d" * 64, 4, "../../victim.txt", None),
            ("e" * 64, 4, "ab/cd/" + "0" * 28, None),
        ],
    )
    cache = CallCache(tmp_path / "cache")
    store = old_store(folder)
    assert store.count() == 0  # every entry refused: none names a value file of diskcache's own shape
    store.set(KEY, reply())  # a rerun overwrites the entry, as diskcache would have (deleting its file)
    cache.close()
    store.file.close()
    assert victim.read_text() == "keep me"


def test_an_old_value_file_is_read_only_inside_the_folder_and_not_through_a_symlink(tmp_path):
    name = "ab/cd/" + "1" * 28 + ".val"
    folder = legacy_folder(tmp_path / "spec", [(KEY, 4, name, None)])
    (folder / "ab" / "cd").mkdir(parents=True)
    (folder / name).write_bytes(pickle.dumps(reply("big"), protocol=5))
    assert old_store(folder).get(KEY) == reply("big")
    other = legacy_folder(tmp_path / "other", [(KEY, 4, name, None)])
    (other / "ab" / "cd").mkdir(parents=True)
    (other / name).symlink_to(folder / name)
    assert old_store(other).get(KEY) is None


@pytest.mark.parametrize(
    "value",
    [
        "not json",
        '{"finish_reason": "stop"}',
        '{"finish_reason":"stop","content":"x","usage":{"prompt_tokens":-5,"completion_tokens":1},"cached":false}',
        '["chunk", "no final result"]',
        "[" * 5000 + "]" * 5000,
        '{"finish_reason":"stop","content":"x","usage":{"prompt_tokens":1' + "0" * 5000 + ',"completion_tokens":1}}',
    ],
)
def test_a_bad_entry_is_a_miss_and_is_overwritten(tmp_path, value):
    store = store_in(tmp_path / "spec")
    store.file.db.execute("INSERT INTO calls (spec, key, value) VALUES (?, ?, ?)", (store.spec, KEY, value))
    store.file.db.commit()
    assert store.get(KEY) is None and store.refused == 1
    store.set(KEY, reply())
    assert store.get(KEY) == reply()


@pytest.mark.parametrize(
    "schema",
    [
        "CREATE TRIGGER forge AFTER INSERT ON calls BEGIN UPDATE calls SET value = '{}'; END",
        "CREATE VIEW shadow AS SELECT * FROM calls",
    ],
)
def test_a_cache_file_that_runs_anything_is_refused_in_one_line(tmp_path, schema):
    CallFile(tmp_path / "spec").close()
    db = sqlite3.connect(tmp_path / "spec" / CALLS_FILE)
    db.execute(schema)
    db.commit()
    db.close()
    with pytest.raises(ConfigError) as refused:
        CallFile(tmp_path / "spec")
    assert "\n" not in str(refused.value) and CALLS_FILE in str(refused.value)
    assert "triggers, views" in str(refused.value)


def test_a_calls_table_that_is_a_view_is_refused(tmp_path):
    (tmp_path / "spec").mkdir()
    db = sqlite3.connect(tmp_path / "spec" / CALLS_FILE)
    db.execute("CREATE VIEW calls AS SELECT 'k' AS key, '{}' AS value")
    db.commit()
    db.close()
    with pytest.raises(ConfigError, match="holds a view"):
        CallFile(tmp_path / "spec")


def test_the_clients_model_info_is_kept_with_the_calls_and_validated_on_read(tmp_path):
    import sqlite3

    from autogen_core.models import ModelFamily, ModelInfo

    info = ModelInfo(
        vision=False, function_calling=True, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
    )
    store = store_in(tmp_path / "spec")
    assert store.model_info() is None
    store.keep_model_info(info)
    store.file.close()
    again = store_in(tmp_path / "spec")
    assert again.model_info() == info
    again.file.close()
    with sqlite3.connect(tmp_path / "spec" / "calls.sqlite3") as db:  # a forged entry is data, and refused
        db.execute("UPDATE calls SET value = ? WHERE key = 'moot:model_info'", ('{"vision": "os.system"}',))
    forged = store_in(tmp_path / "spec")
    assert forged.model_info() is None and forged.refused == 1
    forged.file.close()
