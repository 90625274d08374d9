"""SQLite files moot did not write (a results file, a run store, a call cache someone committed), opened as data.

A SQLite file is more than rows: its schema may hold *triggers* (SQL that runs when moot writes, e.g. to forge
the score of every row it inserts), *views* and *generated columns* (a "table" whose reads are computed, so a
stored score reads back as anything), and *virtual tables* (a module's code behind a table name). None of that
is data, and moot writes none of it, so the rule is simple:

* a file moot only **reads** is opened read-only (``mode=ro``, ``query_only``): triggers cannot fire there, so
  they are tolerated (a diskcache index has its own), while views, virtual tables and generated columns,
  which rewrite what a read returns, are refused;
* a file moot **writes** may hold no trigger either;
* every table moot reads must exist with the columns it reads;
* ``trusted_schema`` is off, so nothing in a schema may call an application function, and TEXT is decoded
  with :func:`~moot.boundary.text_of` (undecodable bytes escaped) instead of raising mid-read.

Every refusal is one :class:`~moot.errors.ConfigError` naming the file and what is wrong.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from moot.boundary._text import one_line, text_of
from moot.errors import ConfigError

__all__ = ["SQLITE_ERRORS", "open_sqlite", "require_columns"]

SQLITE_ERRORS = (sqlite3.Error, UnicodeDecodeError)
"""What reading a damaged file can raise: SQLite's errors, and a decode error when SQLite's own message quotes
undecodable bytes of the file (a damaged schema)."""

_VIRTUAL = re.compile(r"^\s*CREATE\s+VIRTUAL\s+TABLE", re.IGNORECASE)
_CANNOT_WRITE_BESIDE = re.compile(r"readonly database|unable to open database file")
_GENERATED = (2, 3)
"""``PRAGMA table_xinfo``'s ``hidden`` for a virtual and a stored generated column."""


def open_sqlite(
    path: Path, what: str, *, read_only: bool, max_value_bytes: int = 64_000_000, timeout: float = 30.0
) -> sqlite3.Connection:
    """A connection to ``path`` whose schema has been checked (:func:`_check_schema`); ConfigError otherwise.

    ``read_only`` opens the file so that nothing can be written through the connection (a missing file is an
    error then, not a new database); otherwise the file is created when missing, as ``sqlite3.connect`` does.
    No value longer than ``max_value_bytes`` is read or written (SQLite's length limit: reading one is an error,
    so a file cannot make a read take unbounded memory).
    """
    try:
        db = _connect(path, read_only, timeout)
    except SQLITE_ERRORS as exc:
        raise ConfigError(f"cannot open {what} {path}: {one_line(str(exc), 200)}") from None
    try:
        db.text_factory = text_of
        db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_value_bytes)
        db.execute("PRAGMA trusted_schema=OFF")
        if read_only:
            db.execute("PRAGMA query_only=ON")
        _check_schema(db, f"{what} {path}", allow_triggers=read_only)
    except SQLITE_ERRORS as exc:
        db.close()
        raise ConfigError(f"cannot read {what} {path}: {one_line(str(exc), 200)}") from None
    except ConfigError:
        db.close()
        raise
    return db


def _connect(path: Path, read_only: bool, timeout: float) -> sqlite3.Connection:
    if not read_only:
        return sqlite3.connect(path, timeout=timeout, check_same_thread=False)
    if not path.is_file():
        raise sqlite3.OperationalError("no such file")
    uri = path.absolute().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=timeout, check_same_thread=False)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        if _CANNOT_WRITE_BESIDE.search(str(exc)):
            # A WAL file in a folder we cannot write (a read-only checkout): no process can be writing it either.
            db.close()
            db = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
    return db  # (a file that is no database is reported by the schema check, as unreadable)


def _check_schema(db: sqlite3.Connection, what: str, *, allow_triggers: bool = False) -> None:
    """Refuse a schema that holds anything but tables and indexes whose reads return what is stored.

    Views, virtual tables and generated columns change what a read returns; triggers change what a write
    stores (``allow_triggers`` only for a connection that cannot write, where none can fire).
    """
    entries = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    for kind, name, _table, sql in entries:
        if kind == "view" or (kind == "trigger" and not allow_triggers):
            raise _refused(what, f"holds a {kind} ({one_line(str(name), 80)})")
        if kind == "table" and isinstance(sql, str) and _VIRTUAL.match(sql):
            raise _refused(what, f"holds a virtual table ({one_line(str(name), 80)})")
    for kind, name, *_ in entries:
        if kind != "table" or str(name).startswith("sqlite_"):
            continue
        for column in db.execute("SELECT name, hidden FROM pragma_table_xinfo(?)", (name,)).fetchall():
            if column[1] in _GENERATED:
                raise _refused(what, f"has a generated column ({one_line(f'{name}.{column[0]}', 80)})")


def _refused(what: str, problem: str) -> ConfigError:
    return ConfigError(
        f"{what} {problem}; moot writes plain tables only and refuses a file whose schema runs or computes "
        "anything (triggers, views, virtual tables, generated columns): use a file moot wrote"
    )


def require_columns(db: sqlite3.Connection, what: str, tables: Mapping[str, Iterable[str]]) -> None:
    """Refuse a file that lacks a table moot reads, or a column of one (named in the message)."""
    for table, columns in tables.items():
        found = {row[0] for row in db.execute("SELECT name FROM pragma_table_xinfo(?)", (table,))}
        if not found:
            raise ConfigError(f"{what} has no table {table!r}; it is not a file of this kind")
        missing = [c for c in columns if c not in found]
        if missing:
            raise ConfigError(f"{what}: table {table!r} lacks the column(s) {', '.join(missing)}")
