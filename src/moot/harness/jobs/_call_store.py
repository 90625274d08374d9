"""The call cache's store: one SQLite file per cache folder, JSON validated on every read, never unpickled.

A cache folder is something users replay from others (the committed ``docs/compare/*/cache``), so it is
outside input. AutoGen's ``DiskCacheStore`` pickles values (a crafted entry runs code on replay) and deletes
files its own index names (a crafted name deletes outside the folder). This store keeps plain data only:

* one ``calls.sqlite3`` per cache folder (:class:`CallFile`), a table ``calls (spec TEXT, key TEXT, value
  TEXT)``, STRICT, keyed by both: ``spec`` names the full model spec the call was made with (its folder name,
  :func:`moot.harness.jobs._calls.store_folder`), so one file holds a whole comparison's calls and a spec never
  answers another's; written in WAL mode, each put its own transaction, so a killed process loses no entry
  already written;
* a value is the JSON of what :class:`~autogen_ext.models.cache.ChatCompletionCache` stores (a
  ``CreateResult``, or a stream's chunks: text and ``CreateResult``), read back through
  :func:`moot.boundary.load_json` (bounded size and depth) and validated into exactly those types, token
  counts non-negative;
* an entry that fails validation is a **miss** (the call is made again and the entry overwritten; under
  ``--cache-only`` the row is missed, not recorded), counted in :attr:`CallStore.refused`;
* a file whose schema is not this one, or that holds triggers, views or generated columns, is refused as a
  whole with one ConfigError (:mod:`moot.boundary._sqlite`);
* no path is ever taken from the file's contents;
* beside a spec's calls, one entry (key ``moot:model_info``) keeps the ``model_info`` the spec's client reported
  when the calls were made, validated as AutoGen's ``ModelInfo`` on read: a cache-only replay asks it instead of
  building the client (an agent shapes its requests, and so the cache keys, by it).

Earlier moots kept one sub-folder per spec: ``<spec>/calls.sqlite3`` (this schema without ``spec``), or before
that diskcache's ``<spec>/cache.db``. A spec with no entries here takes its sub-folder's the first time it is
opened (copied, each still validated when read; a ``cache.db`` through :mod:`moot.harness.jobs._legacy_cache`,
its pickles read as data, never unpickled); the sub-folder is left in place until ``moot compare --compact``
(:mod:`moot.harness.jobs._compact`) deletes it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from autogen_core import CacheStore
from autogen_core.models import ModelInfo
from pydantic import TypeAdapter, ValidationError

from moot.boundary import SQLITE_ERRORS, load_json, one_line, open_sqlite, require_columns
from moot.errors import ConfigError
from moot.harness.jobs._call_values import ENTRY_BOUNDS, CallValue, dump_value, parse_value
from moot.harness.jobs._legacy_cache import migrate_folder
from moot.store import Migration, migrate

__all__ = ["CALLS_FILE", "CallFile", "CallStore"]

log = logging.getLogger(__name__)

CALLS_FILE = "calls.sqlite3"
_MAX_KEY = 256
_INFO_KEY = "moot:model_info"
"""Not a call's key (AutoGen's are hex digests): where the client's ``model_info`` is kept."""
_MODEL_INFO = TypeAdapter(ModelInfo)

MIGRATIONS: list[Migration] = [
    (
        "0001_spec_calls",
        "CREATE TABLE calls (spec TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (spec, key))"
        " STRICT",
    ),
]


class CallFile:
    """One cache folder's ``calls.sqlite3``: every spec's calls, over one connection (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / CALLS_FILE
        self._stores: dict[str, CallStore] = {}
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create cache folder {folder}: {exc.strerror}") from None
        self.db = open_sqlite(self.path, "call cache", read_only=False, max_value_bytes=ENTRY_BOUNDS.max_bytes)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            migrate(self.db, MIGRATIONS)
            require_columns(self.db, f"call cache {self.path}", {"calls": ("spec", "key", "value")})
        except (*SQLITE_ERRORS, ConfigError) as exc:
            self.db.close()
            raise ConfigError(f"call cache {self.path}: {one_line(str(exc), 300)}") from None

    def store(self, spec: str) -> CallStore:
        """The store of one spec (by its folder name); first opened empty, it takes its old sub-folder's entries."""
        if spec not in self._stores:
            store = self._stores[spec] = CallStore(self, spec)
            if not store.count():  # new, or a copy that was cut short: (re)read the old sub-folder's entries
                _take_old_folder(self.folder / spec, store)
        return self._stores[spec]

    def counts(self) -> dict[str, int]:
        """How many calls each spec with an entry holds (the kept ``model_info`` is no call: a spec may hold 0)."""
        found = self.db.execute("SELECT spec, sum(key != ?) FROM calls GROUP BY spec", (_INFO_KEY,))
        return {str(spec): int(n) for spec, n in found}

    def close(self) -> None:
        self.db.close()
        self._stores.clear()


class CallStore(CacheStore[CallValue]):
    """AutoGen's CacheStore over one spec's calls in a :class:`CallFile`: see the module docstring."""

    def __init__(self, file: CallFile, spec: str) -> None:
        self.file = file
        self.spec = spec
        self.path = file.path
        self.refused = 0
        """Entries read that failed validation (each a miss)."""
        self._info_kept = False

    def get(self, key: str, default: CallValue | None = None) -> CallValue | None:
        found = self._text(key)
        if found is None:
            return default
        try:
            if isinstance(found, ValueError):
                raise found
            return parse_value(load_json(found, f"call cache entry {key[:16]}", ENTRY_BOUNDS))
        except (ConfigError, ValueError, ValidationError) as exc:
            self.refused += 1
            log.warning("call cache %s: entry %s refused (a miss): %s", self.path, key[:16], one_line(str(exc), 200))
            return default

    def _text(self, key: str) -> str | ValueError | None:
        """The stored text of ``key``; None if absent; a ValueError (a miss) when it cannot be read as text."""
        try:
            found = self.file.db.execute("SELECT value FROM calls WHERE spec = ? AND key = ?", (self.spec, key))
            row = found.fetchone()
        except SQLITE_ERRORS as exc:  # a page damaged since the file was opened: no entry can be trusted there
            return ValueError(f"the file cannot be read: {one_line(str(exc), 120)}")
        if row is None:
            return None
        return row[0] if isinstance(row[0], str) else ValueError("the value is not text")

    def set(self, key: str, value: CallValue) -> None:
        self.put_many([(key, value)])

    def put_many(self, entries: list[tuple[str, CallValue]]) -> int:
        """Store entries in one transaction; an entry too large to be read back, or with a bad key, is skipped."""
        return self.put_texts([(key, dump_value(value)) for key, value in entries])

    def put_texts(self, entries: list[tuple[str, str]]) -> int:
        """Store entries already in their JSON form (each validated when read, as any entry); same skips."""
        rows = [
            (self.spec, key, text)
            for key, text in entries
            if isinstance(key, str) and 0 < len(key) <= _MAX_KEY and len(text.encode()) <= ENTRY_BOUNDS.max_bytes
        ]
        with self.file.db:
            self.file.db.executemany("INSERT OR REPLACE INTO calls (spec, key, value) VALUES (?, ?, ?)", rows)
        return len(rows)

    def model_info(self) -> ModelInfo | None:
        """The ``model_info`` kept with the calls (:meth:`keep_model_info`); None if none is, or it fails validation."""
        try:
            found = self._text(_INFO_KEY)
            if found is None:
                return None
            if isinstance(found, ValueError):
                raise found
            return _MODEL_INFO.validate_python(load_json(found, f"call cache {self.path} model_info", ENTRY_BOUNDS))
        except (ConfigError, ValueError, ValidationError, TypeError) as exc:
            self.refused += 1
            log.warning("call cache %s: its model_info is refused: %s", self.path, one_line(str(exc), 200))
            return None

    def keep_model_info(self, info: ModelInfo) -> None:
        """Keep what the client reports as ``model_info`` (once per store opened: one client per spec reports it)."""
        if self._info_kept:
            return
        self._info_kept = True
        self.put_texts([(_INFO_KEY, _MODEL_INFO.dump_json(info).decode("utf-8"))])

    def texts(self) -> dict[str, str]:
        """Every entry as stored (key -> JSON text), not validated: what a copy is compared by."""
        found = self.file.db.execute("SELECT key, value FROM calls WHERE spec = ?", (self.spec,)).fetchall()
        return {str(key): str(value) for key, value in found}

    def count(self) -> int:
        """How many calls the store holds (not ``__len__``: ChatCompletionCache takes an empty store for none); the
        kept ``model_info`` is no call."""
        found = self.file.db.execute(
            "SELECT count(*) FROM calls WHERE spec = ? AND key != ?", (self.spec, _INFO_KEY)
        ).fetchone()
        return int(found[0])


def _take_old_folder(folder: Path, store: CallStore) -> int:
    """Copy a spec's entries from the sub-folder an earlier moot kept them in; how many were copied."""
    if (folder / CALLS_FILE).is_file():
        copied = store.put_texts(old_entries(folder / CALLS_FILE))
        log.info("call cache %s: %d entries of %s copied from %s", store.path, copied, store.spec, folder)
        return copied
    return migrate_folder(folder, store.put_many)


def old_entries(path: Path) -> list[tuple[str, str]]:
    """The entries (key, JSON text) of a spec's own ``calls.sqlite3`` as earlier moots kept it, read read-only."""
    db = open_sqlite(path, "old call cache", read_only=True, max_value_bytes=ENTRY_BOUNDS.max_bytes)
    try:
        require_columns(db, f"old call cache {path}", {"calls": ("key", "value")})
        found = db.execute("SELECT key, value FROM calls").fetchall()
    except SQLITE_ERRORS as exc:
        raise ConfigError(f"old call cache {path} cannot be read: {one_line(str(exc), 200)}") from None
    finally:
        db.close()
    return [(key, value) for key, value in found if isinstance(key, str) and isinstance(value, str)]
