"""RunStore: every run, every turn as it completes, and the latest checkpoint, in SQLite.

A turn's messages and the team state after it are written in one
transaction, so after a crash the store holds either both or neither: resume
restarts from the last checkpoint and redoes exactly the turn that was in
flight. Step ids (``<run>:<seq>``) are unique, so a replayed step can never
be recorded twice.

A store file may come from elsewhere (``$MOOT_STORE``, ``--store``), so it is read as outside input: on open its
schema is checked (the tables and columns read here; no trigger, view, virtual table or generated column:
:mod:`moot.boundary._sqlite`), and every JSON column is parsed with bounds (:func:`moot.boundary.load_json`) and
must hold the kind of value written there. A bad file or row is one ConfigError naming the file, the run and the
column.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import platformdirs
from pydantic import BaseModel, Field, ValidationError, computed_field

from moot._redact import redact
from moot.boundary import SQLITE_ERRORS, DataBounds, load_json_as, one_line, open_sqlite, require_columns
from moot.errors import ConfigError, LeaseLostError, RunBusyError
from moot.models import Meter, metered
from moot.store._lease import Lease, me
from moot.store._migrations import migrate, now
from moot.store._status import FINISHED, RESUMABLE, RunStatus

__all__ = ["RunRecord", "RunStore", "TurnRecord", "resumable_state"]


class RunRecord(BaseModel):
    id: str
    scenario: str | None
    team: str
    task: str
    models: dict[str, str]
    options: dict[str, Any]
    status: RunStatus
    stop_reason: str | None
    result: dict[str, Any] | None
    error: str | None
    created_at: str
    updated_at: str
    turns: int = 0
    tokens: Meter = Field(default_factory=Meter)
    """Calls and tokens of every turn, logical and billed (failed turns included), and their cost."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def prompt_tokens(self) -> int:
        """Logical prompt tokens, from :attr:`tokens` (kept in ``moot runs --json``, whose schema only grows)."""
        return self.tokens.prompt_tokens

    @computed_field  # type: ignore[prop-decorator]
    @property
    def completion_tokens(self) -> int:
        """Logical completion tokens, from :attr:`tokens`."""
        return self.tokens.completion_tokens


class TurnRecord(BaseModel):
    seq: int
    step_id: str
    source: str
    kind: str
    content: str
    payload: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    created_at: str


class RunStore:
    """The SQLite run store; ``RunStore.default()`` honours ``$MOOT_STORE``."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        """Open (creating it and its directory) the store at ``path``; ``read_only`` opens it for reading only
        and creates nothing: a missing file reads as an empty store, and a file without write permission lists."""
        self.path = Path(path)
        self.read_only = read_only
        try:
            self._db = _open_read_only(self.path) if read_only else self._open_for_writing()
        except (OSError, *SQLITE_ERRORS) as exc:
            raise ConfigError(
                f"cannot open run store {self.path}: {exc}; point $MOOT_STORE or --store at a writable SQLite file"
            ) from None

    def _open_for_writing(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = open_sqlite(self.path, "run store", read_only=False, max_value_bytes=_STATE_BOUNDS.max_bytes)
        try:
            db.isolation_level = None
            _use_wal(db)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            try:
                migrate(db)
            except ConfigError as exc:  # written by a newer moot
                raise ConfigError(f"run store {self.path}: {exc}") from None
            require_columns(db, f"run store {self.path}", _TABLES)
        except BaseException:
            db.close()
            raise
        return db

    def _json(self, text: object, where: str, kind: type, bounds: DataBounds | None = None) -> Any:
        """One stored JSON column, bounded and of the kind written there; a one-line ConfigError otherwise."""
        try:
            return load_json_as(text, f"run store {self.path}, {where}", kind, bounds or _ROW_BOUNDS)
        except ConfigError as exc:
            raise ConfigError(f"{exc}; {_DAMAGED_HINT}") from None

    def _run(self, row: Sequence[Any]) -> RunRecord:
        """A stored run as a RunRecord, every column checked."""
        where = f"run {one_line(str(row[0]), 80)!r}"
        data = {
            "models": self._json(row[4], f"{where}, column models", dict),
            "options": self._json(row[5], f"{where}, column options", dict),
            "result": self._json(row[8], f"{where}, column result", dict) if row[8] else None,
        }
        try:
            return _run(row, data)
        except (ValidationError, ValueError) as exc:
            raise ConfigError(f"run store {self.path}, {where}: {one_line(str(exc), 200)}; {_DAMAGED_HINT}") from None

    @classmethod
    def default_path(cls) -> Path:
        return Path(os.environ.get("MOOT_STORE") or Path(platformdirs.user_data_dir("moot")) / "runs.sqlite3")

    @classmethod
    def default(cls) -> RunStore:
        return cls.shared(None)

    @classmethod
    def shared(cls, path: str | Path | None) -> RunStore:
        """One open store per path and process (``None``: the default path), reused by every team."""
        resolved = Path(path) if path is not None else cls.default_path()
        key = str(resolved.resolve()) if resolved.exists() else str(resolved.absolute())
        if key not in _OPEN:
            _OPEN[key] = cls(resolved)
        return _OPEN[key]

    @classmethod
    def close_shared(cls) -> None:
        """Close every store ``shared`` opened in this process, so the next ``shared`` opens afresh.

        Why: a shared store stays open for the life of the process (each holds the database, its WAL and its
        index as open files); a process that moves between many stores (a test suite, a notebook pointed at
        one store after another) closes the ones it is done with.
        """
        while _OPEN:
            _OPEN.popitem()[1].close()

    @classmethod
    def reader(cls, path: str | Path | None) -> RunStore:
        """The store at ``path`` (``None``: the default path) opened only to read it (``moot runs``, ``moot show``)."""
        return cls(Path(path) if path is not None else cls.default_path(), read_only=True)

    def check(self) -> None:
        """Refuse a store whose pages are damaged, before a run writes to it (SQLite's quick integrity check)."""
        found = self._read(lambda db: db.execute("PRAGMA quick_check(1)").fetchone())
        problem = str(found[0]).replace("*** in database main ***", "").strip() if found else "no answer"
        if problem != "ok":
            raise ConfigError(f"run store {self.path} is damaged ({problem.splitlines()[0]}); {_DAMAGED_HINT}")

    def close(self) -> None:
        self._db.close()

    def _read(self, query: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run a read; a damaged or unreadable file is bad input (one line), never a traceback."""
        try:
            return query(self._db)
        except SQLITE_ERRORS as exc:
            raise ConfigError(f"cannot read run store {self.path}: {exc}; {_DAMAGED_HINT}") from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ----------------------------------------------------------------- writes
    def create_run(
        self,
        run_id: str,
        *,
        team: str,
        task: str,
        scenario: str | None = None,
        models: Mapping[str, str] | None = None,
        options: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        """A new run, leased to this process."""
        stamp = now()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO runs (id, scenario, team, task, models, options, status, created_at, updated_at,"
                " owner, heartbeat_at, config) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    scenario,
                    team,
                    task,
                    json.dumps(dict(models or {})),
                    json.dumps(dict(options or {})),
                    RunStatus.RUNNING,
                    stamp,
                    stamp,
                    me(),
                    time.time(),
                    json.dumps(dict(config)) if config is not None else None,
                ),
            )

    def acquire(self, run_id: str, config: Mapping[str, Any] | None = None, *, force: bool = False) -> None:
        """Take over ``run_id`` to continue it: refused while another live process drives it, or (unless
        ``force``) when ``config`` differs from the configuration it was started with."""
        with self._transaction() as db:
            row = db.execute("SELECT owner, heartbeat_at, config FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise ConfigError(f"unknown run {run_id!r}; moot runs lists run ids")
            lease = _lease(row[0], row[1])
            if lease.owner != me() and lease.alive():
                raise RunBusyError(
                    f"run {run_id} is being driven by {lease.describe()}; wait for it to end, or stop it: "
                    "a run whose process died can be resumed once its lease expires"
                )
            if config is not None and row[2] is not None and not force:
                _refuse_changed(run_id, self._json(row[2], f"run {run_id!r}, column config", dict), dict(config))
            stored = json.dumps(dict(config)) if config is not None else row[2]
            db.execute(
                "UPDATE runs SET owner = ?, heartbeat_at = ?, config = ? WHERE id = ?",
                (me(), time.time(), stored, run_id),
            )

    def heartbeat(self, run_id: str) -> None:
        """Renew this process's lease on ``run_id``; LeaseLostError if another process took it over."""
        with self._transaction() as db:
            self._renew(db, run_id)

    def _renew(self, db: sqlite3.Connection, run_id: str) -> None:
        renewed = db.execute(
            "UPDATE runs SET heartbeat_at = ? WHERE id = ? AND owner = ?", (time.time(), run_id, me())
        ).rowcount
        if not renewed:
            raise LeaseLostError(f"run {run_id} is now driven by another process; this one stops writing it")

    def record(
        self, run_id: str, first_seq: int, messages: Sequence[Mapping[str, Any]], state: Mapping[str, Any]
    ) -> None:
        """Append a turn's messages and replace the checkpoint, atomically."""
        stamp = now()
        rows = [_turn_row(run_id, first_seq + i, m, stamp) for i, m in enumerate(messages)]
        with self._transaction() as db:
            self._renew(db, run_id)  # one writer per run: a process that lost the lease writes nothing
            db.executemany(
                "INSERT OR IGNORE INTO turns (run_id, seq, step_id, source, kind, content, payload,"
                " prompt_tokens, completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            db.execute(
                "INSERT INTO checkpoints (run_id, seq, state, created_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, state = excluded.state,"
                " created_at = excluded.created_at",
                (run_id, first_seq + len(messages), json.dumps(dict(state)), stamp),
            )
            db.execute("UPDATE runs SET status = ?, updated_at = ? WHERE id = ?", (RunStatus.RUNNING, stamp, run_id))

    def finish(self, run_id: str, status: RunStatus, stop_reason: str | None, result: Mapping[str, Any] | None) -> None:
        """Record how the run ended and release its lease (only the lease holder's ending counts)."""
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, stop_reason = ?, result = ?, updated_at = ?, owner = NULL"
                " WHERE id = ? AND (owner = ? OR owner IS NULL)",
                (status, redact(stop_reason), json.dumps(result) if result is not None else None, now(), run_id, me()),
            )

    def fail(self, run_id: str, status: RunStatus, error: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, error = ?, updated_at = ?, owner = NULL"
                " WHERE id = ? AND (owner = ? OR owner IS NULL)",
                (status, redact(error), now(), run_id, me()),
            )

    # ------------------------------------------------------------------ reads
    def get(self, run_id: str) -> RunRecord:
        row = self._read(lambda db: db.execute(_RUN_QUERY + " WHERE r.id = ? GROUP BY r.id", (run_id,)).fetchone())
        if row is None:
            recent = ", ".join(r.id for r in self.list(limit=5)) or "none yet"
            raise ConfigError(f"unknown run {run_id!r}; recent runs: {recent}")
        return self._metered([self._run(row)])[0]

    def list(self, limit: int = 20) -> list[RunRecord]:
        query = _RUN_QUERY + " GROUP BY r.id ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?"
        return self._metered([self._run(row) for row in self._read(lambda db: db.execute(query, (limit,)).fetchall())])

    def _metered(self, records: list[RunRecord]) -> list[RunRecord]:
        """The records with their meters, counted from their turns as a team counts its transcript."""
        meters = {r.id: Meter() for r in records}
        marks = ",".join("?" * len(records))
        query = f"SELECT run_id, payload FROM turns WHERE run_id IN ({marks})"
        found = self._read(lambda db: db.execute(query, list(meters)).fetchall()) if records else []
        for run_id, payload in found:
            message = self._json(payload, f"run {one_line(str(run_id), 80)!r}, column payload of a turn", dict)
            try:
                meters[run_id] += metered(message.get("models_usage"), message.get("metadata") or {})
            except (ValidationError, ValueError, TypeError, AttributeError) as exc:
                raise ConfigError(
                    f"run store {self.path}, run {one_line(str(run_id), 80)!r}: a turn's usage cannot be read "
                    f"({one_line(str(exc), 120)}); {_DAMAGED_HINT}"
                ) from None
        return [r.model_copy(update={"tokens": meters[r.id]}) for r in records]

    def last_unfinished(self) -> RunRecord | None:
        """The newest run that can be resumed now: unfinished, and not driven by a live process."""
        marks = ",".join("?" * len(RESUMABLE))
        query = _RUN_QUERY + f" WHERE r.status IN ({marks}) GROUP BY r.id ORDER BY r.created_at DESC, r.rowid DESC"
        for row in self._read(lambda db: db.execute(query, RESUMABLE).fetchall()):
            if not _lease(row[13], row[14]).alive():
                return self._run(row)
        return None

    def checkpoint(self, run_id: str) -> tuple[int, dict[str, Any]] | None:
        """The latest checkpoint: (number of transcript messages it covers, team state)."""
        row = self._read(
            lambda db: db.execute("SELECT seq, state FROM checkpoints WHERE run_id = ?", (run_id,)).fetchone()
        )
        if row is None:
            return None
        if not isinstance(row[0], int) or row[0] < 0:
            raise ConfigError(f"run store {self.path}, run {run_id!r}: column seq of its checkpoint is not a count")
        return row[0], self._json(row[1], f"run {run_id!r}, column state of its checkpoint", dict, _STATE_BOUNDS)

    def turns(self, run_id: str) -> list[TurnRecord]:
        rows = self._read(
            lambda db: db.execute(
                "SELECT seq, step_id, source, kind, content, payload, prompt_tokens, completion_tokens, created_at"
                " FROM turns WHERE run_id = ? ORDER BY seq",
                (run_id,),
            ).fetchall()
        )
        keys = (
            "seq",
            "step_id",
            "source",
            "kind",
            "content",
            "payload",
            "prompt_tokens",
            "completion_tokens",
            "created_at",
        )
        where = f"run {one_line(run_id, 80)!r}"
        records = []
        for r in rows:
            payload = self._json(r[5], f"{where}, column payload of turn {one_line(str(r[0]), 20)}", dict)
            try:
                records.append(TurnRecord.model_validate({**dict(zip(keys, r, strict=True)), "payload": payload}))
            except ValidationError as exc:
                error = exc.errors()[0]
                raise ConfigError(
                    f"run store {self.path}, {where}: column {'.'.join(map(str, error['loc']))} of turn "
                    f"{one_line(str(r[0]), 20)}: {one_line(error['msg'], 120)}; {_DAMAGED_HINT}"
                ) from None
        return records


_OPEN: dict[str, RunStore] = {}
_T = TypeVar("_T")
_DAMAGED_HINT = "move it aside and point --store or $MOOT_STORE at a new file (or restore a copy)"
_TABLES = {
    "runs": ("id", "scenario", "team", "task", "models", "options", "status", "stop_reason", "result", "error",
             "created_at", "updated_at", "owner", "heartbeat_at", "config"),
    "turns": ("run_id", "seq", "step_id", "source", "kind", "content", "payload", "prompt_tokens",
              "completion_tokens", "created_at"),
    "checkpoints": ("run_id", "seq", "state", "created_at"),
}  # fmt: skip
"""What this module reads of a store: refused on open when a table or column is missing."""
_ROW_BOUNDS = DataBounds(max_bytes=16_000_000, max_depth=64)
"""One run's options or one turn's message."""
_STATE_BOUNDS = DataBounds(max_bytes=256_000_000, max_depth=64)
"""A team's checkpoint: its whole state, which grows with the run."""


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that can only read: an empty in-memory store when ``path`` does not exist, so listing a
    store that was never written creates no file and no directory."""
    if not path.exists():
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        migrate(db)
        return db
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK):
        # A plain connection that may only read (query_only): the last to close tidies the -wal and -shm files
        # away, where a mode=ro one leaves them beside the store after every moot show or moot runs.
        db = open_sqlite(path, "run store", read_only=False, max_value_bytes=_STATE_BOUNDS.max_bytes)
        db.execute("PRAGMA query_only=ON")
    else:  # (a read-only folder, whose WAL reader cannot make its shared-memory file, is read as the file it is)
        db = open_sqlite(path, "run store", read_only=True, max_value_bytes=_STATE_BOUNDS.max_bytes)
    db.isolation_level = None
    return db


def _use_wal(db: sqlite3.Connection, attempts: int = 100) -> None:
    """Switch to WAL (readers never block the writer), waiting out a concurrent opener.

    Changing the journal mode needs the database to itself and SQLite does not
    apply the busy timeout to it, so two processes creating the same store at
    once would otherwise fail with "database is locked".
    """
    for attempt in range(attempts):
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05)


def resumable_state(store: RunStore, run_id: str) -> dict[str, Any]:
    """The state to continue ``run_id`` from, with its transcript; refuses finished or unknown runs."""
    run = store.get(run_id)
    if run.status in FINISHED:
        raise ConfigError(
            f"run {run_id} already finished ({run.status}: {run.stop_reason}); nothing to resume. "
            "Unfinished runs can be resumed: moot runs lists them"
        )
    found = store.checkpoint(run_id)
    if found is None:
        raise ConfigError(f"run {run_id} has no checkpoint yet (it died before its first turn); start it again")
    seq, state = found
    state["messages"] = [t.payload for t in store.turns(run_id) if t.seq < seq]
    return state


_RUN_QUERY = (
    "SELECT r.id, r.scenario, r.team, r.task, r.models, r.options, r.status, r.stop_reason, r.result, r.error,"
    " r.created_at, r.updated_at, COUNT(t.seq), r.owner, r.heartbeat_at"
    " FROM runs r LEFT JOIN turns t ON t.run_id = r.id"
)


def _lease(owner: object, heartbeat: object) -> Lease:
    """A run's lease from its stored columns; a value of the wrong type (a file written elsewhere) is no lease."""
    beat = heartbeat if isinstance(heartbeat, int | float) and not isinstance(heartbeat, bool) else None
    return Lease(owner if isinstance(owner, str) else None, beat)


def _run(row: Sequence[Any], data: Mapping[str, Any]) -> RunRecord:
    """A run's record from its row and its JSON columns (``data``, parsed and checked by the store)."""
    status = RunStatus(row[6])
    if status is RunStatus.RUNNING and not _lease(row[13], row[14]).alive():
        status = RunStatus.INTERRUPTED  # its process died without saying so (kill -9, a crash)
    return RunRecord(
        id=row[0],
        scenario=row[1],
        team=row[2],
        task=row[3],
        models=data["models"],
        options=data["options"],
        status=status,
        stop_reason=row[7],
        result=data["result"],
        error=row[9],
        created_at=row[10],
        updated_at=row[11],
        turns=row[12],
    )


def _refuse_changed(run_id: str, started: dict[str, Any], now_given: dict[str, Any]) -> None:
    changed = sorted(k for k in started.keys() | now_given.keys() if started.get(k) != now_given.get(k))
    if changed:
        raise ConfigError(
            f"run {run_id} was started with a different {', '.join(changed)}; resume it with the configuration "
            "it was started with, or force it (moot resume --force, or resume(run_id, force=True)) to go on "
            "under the new one"
        )


def _turn_row(run_id: str, seq: int, message: Mapping[str, Any], stamp: str) -> tuple[Any, ...]:
    usage = message.get("models_usage") or {}
    metadata = message.get("metadata") or {}
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    return (
        run_id,
        seq,
        f"{run_id}:{seq}",
        str(message.get("source", "")),
        str(metadata.get("moot_kind") or message.get("type", "")),
        text,
        json.dumps(message),
        int(usage.get("prompt_tokens", 0)),
        int(usage.get("completion_tokens", 0)),
        stamp,
    )
