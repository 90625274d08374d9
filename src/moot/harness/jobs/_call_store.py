"""The call cache's store for one model spec: JSON in SQLite, validated on every read, never unpickled.

A cache folder is something users replay from others (the committed ``docs/compare/*/cache``), so it is
outside input. AutoGen's ``DiskCacheStore`` pickles values (a crafted entry runs code on replay) and deletes
files its own index names (a crafted name deletes outside the folder). This store keeps plain data only:

* one ``calls.sqlite3`` per spec folder, a table ``calls (key TEXT PRIMARY KEY, value TEXT)``, STRICT;
* a value is the JSON of what :class:`~autogen_ext.models.cache.ChatCompletionCache` stores (a
  ``CreateResult``, or a stream's chunks: text and ``CreateResult``), read back through
  :func:`moot.boundary.load_json` (bounded size and depth) and validated into exactly those types, token
  counts non-negative;
* an entry that fails validation is a **miss** (the call is made again and the entry overwritten; under
  ``--cache-only`` the row is missed, not recorded), counted in :attr:`CallStore.refused`;
* a file whose schema is not this one, or that holds triggers, views or generated columns, is refused as a
  whole with one ConfigError (:mod:`moot.boundary._sqlite`);
* no path is ever taken from the file's contents;
* beside the calls, one entry (key ``moot:model_info``) keeps the ``model_info`` the spec's client reported when
  the calls were made, validated as AutoGen's ``ModelInfo`` on read: a cache-only replay asks it instead of
  building the client (an agent shapes its requests, and so the cache keys, by it).

A folder written by an earlier moot holds diskcache's ``cache.db`` instead; it is migrated once, on first
open, by :mod:`moot.harness.jobs._legacy_cache` (its pickles are read as data, never unpickled).
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

__all__ = ["CALLS_FILE", "CallStore"]

log = logging.getLogger(__name__)

CALLS_FILE = "calls.sqlite3"
_MAX_KEY = 256
_INFO_KEY = "moot:model_info"
"""Not a call's key (AutoGen's are hex digests): where the client's ``model_info`` is kept."""
_MODEL_INFO = TypeAdapter(ModelInfo)

MIGRATIONS: list[Migration] = [
    ("0001_calls", "CREATE TABLE calls (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT"),
]


class CallStore(CacheStore[CallValue]):
    """AutoGen's CacheStore over one ``calls.sqlite3``: see the module docstring."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / CALLS_FILE
        self.refused = 0
        """Entries read that failed validation (each a miss)."""
        self._info_kept = False
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create cache folder {folder}: {exc.strerror}") from None
        self._db = open_sqlite(self.path, "call cache", read_only=False, max_value_bytes=ENTRY_BOUNDS.max_bytes)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            migrate(self._db, MIGRATIONS)
            require_columns(self._db, f"call cache {self.path}", {"calls": ("key", "value")})
        except (*SQLITE_ERRORS, ConfigError) as exc:
            self._db.close()
            raise ConfigError(f"call cache {self.path}: {one_line(str(exc), 300)}") from None
        if not self.count():  # new, or created by a migration that was cut short: (re)read an old folder's entries
            migrate_folder(folder, self.put_many)

    def get(self, key: str, default: CallValue | None = None) -> CallValue | None:
        try:
            found = self._db.execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
        except SQLITE_ERRORS as exc:  # a page damaged since the file was opened: no entry can be trusted there
            found = (ValueError(f"the file cannot be read: {one_line(str(exc), 120)}"),)
        if found is None:
            return default
        try:
            if isinstance(found[0], ValueError):
                raise found[0]
            if not isinstance(found[0], str):
                raise ValueError("the value is not text")
            return parse_value(load_json(found[0], f"call cache entry {key[:16]}", ENTRY_BOUNDS))
        except (ConfigError, ValueError, ValidationError) as exc:
            self.refused += 1
            log.warning("call cache %s: entry %s refused (a miss): %s", self.path, key[:16], one_line(str(exc), 200))
            return default

    def set(self, key: str, value: CallValue) -> None:
        self.put_many([(key, value)])

    def put_many(self, entries: list[tuple[str, CallValue]]) -> int:
        """Store entries in one transaction; an entry too large to be read back, or with a bad key, is skipped."""
        rows = []
        for key, value in entries:
            text = dump_value(value)
            if isinstance(key, str) and 0 < len(key) <= _MAX_KEY and len(text.encode()) <= ENTRY_BOUNDS.max_bytes:
                rows.append((key, text))
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)", rows)
        return len(rows)

    def model_info(self) -> ModelInfo | None:
        """The ``model_info`` kept with the calls (:meth:`keep_model_info`); None if none is, or it fails validation."""
        try:
            found = self._db.execute("SELECT value FROM calls WHERE key = ?", (_INFO_KEY,)).fetchone()
            if found is None:
                return None
            return _MODEL_INFO.validate_python(load_json(found[0], f"call cache {self.path} model_info", ENTRY_BOUNDS))
        except (*SQLITE_ERRORS, ConfigError, ValueError, ValidationError, TypeError) as exc:
            self.refused += 1
            log.warning("call cache %s: its model_info is refused: %s", self.path, one_line(str(exc), 200))
            return None

    def keep_model_info(self, info: ModelInfo) -> None:
        """Keep what the client reports as ``model_info`` (once per store opened: one client per spec reports it)."""
        if self._info_kept:
            return
        self._info_kept = True
        text = _MODEL_INFO.dump_json(info).decode("utf-8")
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)", (_INFO_KEY, text))

    def count(self) -> int:
        """How many calls the store holds (not ``__len__``: ChatCompletionCache takes an empty store for none); the
        kept ``model_info`` is no call."""
        return int(self._db.execute("SELECT count(*) FROM calls WHERE key != ?", (_INFO_KEY,)).fetchone()[0])

    def close(self) -> None:
        self._db.close()
