"""The results file: one SQLite row per item x arm, written the moment it finishes.

A row is keyed by the suite's source (``humaneval``, not the slice), the item
and the arm's full configuration (name, settings, models), so re-running a
command finds its finished rows and computes only the missing ones, and a
changed model or setting never reuses a stale row. Rows that failed are
kept with their error and recomputed on the next run.

A results file is also something users replay from others (the committed ``docs/compare/*``), so it is read as
outside input: on open its schema is checked (the ``rows`` table with its columns; no trigger, view, virtual table
or generated column, any of which could forge what is stored or read: :mod:`moot.boundary._sqlite`), and every
row read is validated (JSON columns through :func:`moot.boundary.load_json`, bounded; scores in [0, 1] or null,
counts non-negative, numbers finite). A bad file or row is refused with one ConfigError naming the file, the
row's item and the column, before anything is computed or reported from it.

Rows are written whole (:meth:`ResultStore.put`) or, where a process rewrites a row it read earlier (a
rescore), only if the row is still as it was read (:meth:`ResultStore.replace`): a row another process
recomputed meanwhile is left alone.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from moot.boundary import SQLITE_ERRORS, DataBounds, load_json_as, one_line, open_sqlite, require_columns
from moot.errors import ConfigError
from moot.models import TokenTotals
from moot.store import Migration, migrate

__all__ = ["PURPOSES", "Purpose", "ResultRow", "ResultStore", "TokenTotals", "arm_key"]

_COLUMNS = (
    "suite", "item", "arm_key", "arm", "settings", "models", "status", "answer", "score", "score_detail",
    "prompt_tokens", "completion_tokens", "billed_prompt_tokens", "billed_completion_tokens", "model_calls",
    "billed_calls", "scoring_calls", "scoring_billed_calls", "wall_seconds", "rounds", "stop_reason",
    "parse_failures", "partial", "metrics", "error", "trace_ids", "finished_at", "cost_usd", "code_version",
    "machine", "model_identity",
)  # fmt: skip
_LATER_COLUMNS = ("model_identity",)
"""Columns a later migration added: a file opened read-only (a report) from before it reads them as NULL
(unknown), since a report migrates nothing."""
MIGRATIONS: list[Migration] = [
    (
        "0001_rows",  # IF NOT EXISTS: files written before migrations had this table already
        """
        CREATE TABLE IF NOT EXISTS rows (
            suite TEXT NOT NULL, item TEXT NOT NULL, arm_key TEXT NOT NULL, arm TEXT NOT NULL,
            settings TEXT NOT NULL, models TEXT NOT NULL, status TEXT NOT NULL,
            answer TEXT NOT NULL DEFAULT '', score REAL, score_detail TEXT NOT NULL DEFAULT '',
            prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
            billed_prompt_tokens INTEGER NOT NULL DEFAULT 0, billed_completion_tokens INTEGER NOT NULL DEFAULT 0,
            model_calls INTEGER NOT NULL DEFAULT 0, billed_calls INTEGER NOT NULL DEFAULT 0,
            scoring_calls INTEGER NOT NULL DEFAULT 0, scoring_billed_calls INTEGER NOT NULL DEFAULT 0,
            wall_seconds REAL NOT NULL DEFAULT 0, rounds INTEGER NOT NULL DEFAULT 0,
            stop_reason TEXT NOT NULL DEFAULT '', parse_failures INTEGER NOT NULL DEFAULT 0,
            partial INTEGER NOT NULL DEFAULT 0, metrics TEXT NOT NULL DEFAULT '{}', error TEXT,
            trace_ids TEXT NOT NULL DEFAULT '[]', finished_at TEXT NOT NULL,
            PRIMARY KEY (suite, item, arm_key)
        )
        """,
    ),
    ("0002_row_cost", "ALTER TABLE rows ADD COLUMN cost_usd REAL"),
    ("0003_row_code_version", "ALTER TABLE rows ADD COLUMN code_version TEXT"),
    ("0004_row_machine", "ALTER TABLE rows ADD COLUMN machine TEXT"),
    ("0005_folder_meta", "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"),
    ("0006_row_model_identity", "ALTER TABLE rows ADD COLUMN model_identity TEXT"),
]
"""The results file's schema, as named migrations (see ``moot.store.migrate``)."""


Purpose = Literal["tuning", "evaluation"]
PURPOSES: tuple[Purpose, ...] = ("tuning", "evaluation")
"""What a results folder's rows are for: choosing a protocol (tuning) or publishing a figure (evaluation). A folder
from before purposes were recorded reads as ``unstated``."""
UNSTATED = "unstated"


def arm_key(name: str, settings: Mapping[str, Any], models: Mapping[str, str]) -> str:
    """What makes two rows comparable: the arm, its settings and every model spec it may use."""
    text = json.dumps({"arm": name, "settings": settings, "models": models}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


Count = Annotated[int, Field(ge=0)]
NonNegative = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]
"""A score: 0 (wrong) to 1 (right)."""
_JSON_COLUMNS = {"settings": dict, "models": dict, "metrics": dict, "trace_ids": list}
JSON_BOUNDS = DataBounds(max_bytes=4_000_000, max_depth=32, max_nodes=200_000)
"""One JSON column of one row: a debate's metrics are a few kB."""


class _Snapshot:
    """A row's columns exactly as read from its file: bookkeeping for :meth:`ResultStore.replace`, not part of
    what the row is, so two rows with the same fields are equal whatever their snapshots."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[Any, ...]) -> None:
        self.values = values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Snapshot) or other is None

    __hash__ = None  # type: ignore[assignment]


class _ScoredMetrics(BaseModel):
    """The scores the harness keeps in a row's metrics: read back as accuracies, so held to the same range."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    first_round_score: Fraction | None = None
    position_scores: list[list[Fraction]] | None = None
    score_before_rescore: Fraction | None = None
    oracle: dict[str, Any] | None = None
    overturned_majority: bool | None = None


class ResultRow(TokenTotals, BaseModel):
    """One item x arm."""

    model_config = ConfigDict(allow_inf_nan=False)
    _stored: _Snapshot | None = PrivateAttr(default=None)
    """The row's columns exactly as read from the file (None for a row not read from one): what
    :meth:`ResultStore.replace` checks the file still holds."""

    suite: str
    item: str
    arm_key: str
    arm: str
    """The arm's label in this comparison (e.g. ``self-consistency``)."""
    settings: dict[str, Any] = {}
    models: dict[str, str] = {}
    status: Literal["done", "error"] = "done"
    answer: str = ""
    score: Fraction | None = None
    score_detail: str = ""
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    billed_prompt_tokens: Count = 0
    billed_completion_tokens: Count = 0
    model_calls: Count = 0
    """Logical calls: every call the arm made, cache hits included."""
    billed_calls: Count = 0
    """Calls that reached a model (cache misses)."""
    scoring_calls: Count = 0
    scoring_billed_calls: Count = 0
    cost_usd: NonNegative | None = None
    """What the arm's billed calls cost in USD (scoring excluded); None when a model has no price."""
    wall_seconds: NonNegative = 0.0
    """The arm's wall time on this item (waits for a busy endpoint included, scoring excluded)."""
    rounds: Count = 0
    stop_reason: str = ""
    parse_failures: Count = 0
    partial: bool = False
    metrics: dict[str, Any] = {}
    error: str | None = None
    trace_ids: list[str] = []
    finished_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    code_version: str | None = None
    """The git commit (or moot version) the row's answer was computed at. ``≤COMMIT`` for a row from before this
    was recorded, whose commit is read from the repository's history: the first commit that stored it, so its
    code was that commit's or older. None when not even that is known."""
    machine: str | None = None
    """The CPU and cores the row was computed on."""
    model_identity: dict[str, str] | None = None
    """Per model role (``base``, then any role given its own model), what answered: the embedded weights' hash, or
    the endpoint and model id (:func:`moot.harness.jobs._provenance.model_identity`). A replayed row keeps the
    identity of the computation that paid for it. None (unknown) for a row from before this was recorded."""

    def values(self) -> tuple[Any, ...]:
        data = self.model_dump()
        for key in ("settings", "models", "metrics", "trace_ids"):
            data[key] = json.dumps(data[key], sort_keys=True, default=str)
        if data["model_identity"] is not None:
            data["model_identity"] = json.dumps(data["model_identity"], sort_keys=True)
        data["partial"] = int(self.partial)
        return tuple(data[c] for c in _COLUMNS)

    @field_validator("partial", mode="before")
    @classmethod
    def _stored_flag(cls, value: Any) -> Any:
        """SQLite stores the flag as 0 or 1."""
        return bool(value) if value in (0, 1) and not isinstance(value, bool) else value


class ResultStore:
    """The SQLite results file of one output directory (see the module docstring for what is checked)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        """Open (creating and migrating it) the results file at ``path``; ``read_only`` (a report) creates and
        migrates nothing, and nothing can be written through it (``query_only``: a plain connection otherwise,
        so that, as the last one to close, it tidies the WAL files away where a ``mode=ro`` one would leave them)."""
        self.path = path
        try:
            if read_only and not path.is_file():
                raise OSError(f"{path} is not a file")
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot use results file {path}: {exc}") from None
        self._db = open_sqlite(path, "results file", read_only=False, max_value_bytes=JSON_BOUNDS.max_bytes)
        try:
            if read_only:
                self._db.execute("PRAGMA query_only=ON")
            else:
                self._migrate()
            self._selected = self._readable_columns(read_only)
        except SQLITE_ERRORS as exc:
            self._db.close()
            raise ConfigError(f"cannot use results file {path}: {one_line(str(exc), 200)}") from None
        except ConfigError:
            self._db.close()
            raise

    def _readable_columns(self, read_only: bool) -> str:
        """The SELECT list of a row: every column, a later one a read-only file lacks as NULL (unknown)."""
        required = [c for c in _COLUMNS if not (read_only and c in _LATER_COLUMNS)]
        require_columns(self._db, f"results file {self.path}", {"rows": required})
        found = {row[0] for row in self._db.execute("SELECT name FROM pragma_table_xinfo('rows')")}
        return ", ".join(c if c in found else f"NULL AS {c}" for c in _COLUMNS)

    def _migrate(self) -> None:
        """Apply the migrations this file lacks; a file whose record says its rows table exists, and has none,
        is refused as not a results file before any later migration tries to alter that table."""
        recorded = (
            self._db.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'migrations'").fetchone()
            and self._db.execute("SELECT 1 FROM migrations WHERE name = ?", (MIGRATIONS[0][0],)).fetchone()
        )
        if recorded:
            require_columns(self._db, f"results file {self.path}", {"rows": ["suite", "item", "arm_key"]})
        self._db.execute("PRAGMA journal_mode=WAL")
        try:
            migrate(self._db, MIGRATIONS)
        except ConfigError as exc:  # written by a newer moot
            raise ConfigError(f"results file {self.path}: {exc}") from None

    def put(self, row: ResultRow) -> None:
        marks = ", ".join("?" for _ in _COLUMNS)
        self._db.execute(f"INSERT OR REPLACE INTO rows ({', '.join(_COLUMNS)}) VALUES ({marks})", row.values())
        self._db.commit()

    def replace(self, read: ResultRow, row: ResultRow) -> bool:
        """Write ``row`` over ``read`` only if the file still holds ``read`` exactly as it was read: a compare-and-set,
        so a row another process wrote since (a rerun's fresh computation) is never overwritten with a stale copy.
        False when the row changed (or was never read from this file)."""
        if read._stored is None:
            return False
        assigns = ", ".join(f"{c} = ?" for c in _COLUMNS)
        unchanged = " AND ".join(f"{c} IS ?" for c in _COLUMNS)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            changed = self._db.execute(
                f"UPDATE rows SET {assigns} WHERE {unchanged}", (*row.values(), *read._stored.values)
            ).rowcount
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return changed == 1

    def finished(self, suite: str, key: str) -> set[str]:
        """Items that have a finished row for this arm configuration."""
        found = self._read("SELECT item FROM rows WHERE suite = ? AND arm_key = ? AND status = 'done'", (suite, key))
        return {item for (item,) in found}

    def get(self, suite: str, item: str, key: str) -> ResultRow | None:
        found = self.rows(suite, [key], [item])
        return found[0] if found else None

    def rows(self, suite: str, keys: Iterable[str], items: Sequence[str] | None = None) -> list[ResultRow]:
        """The rows of these arm keys (and items), each validated: a bad one is a one-line ConfigError."""
        keys = list(keys)
        if not keys:
            return []
        query = f"SELECT {self._selected} FROM rows WHERE suite = ? AND arm_key IN ({', '.join('?' * len(keys))})"
        wanted = None if items is None else set(items)
        rows = []
        for values in self._read(query, (suite, *keys)):
            if wanted is not None and values[1] not in wanted:
                continue
            rows.append(self._row(tuple(values)))
        return rows

    def models_used(self, suite: str, arms: Iterable[str]) -> list[dict[str, str]]:
        """The distinct model labels (``{"base": SPEC, ROLE: SPEC}``) of this suite's rows for these arm labels, most
        rows first: what a command must name with ``--model`` to find those rows again."""
        arms = list(arms)
        if not arms:
            return []
        query = (
            f"SELECT models, COUNT(*) FROM rows WHERE suite = ? AND arm IN ({', '.join('?' * len(arms))}) "
            "GROUP BY models ORDER BY COUNT(*) DESC"
        )
        found = []
        for text, _ in self._read(query, (suite, *arms)):
            models = load_json_as(text, f"results file {self.path}: column models", dict, JSON_BOUNDS)
            found.append({str(role): str(spec) for role, spec in models.items()})
        return found

    def _read(self, query: str, params: Sequence[Any]) -> list[Any]:
        try:
            return self._db.execute(query, params).fetchall()
        except SQLITE_ERRORS as exc:
            raise ConfigError(f"cannot read results file {self.path}: {one_line(str(exc), 200)}") from None

    def _row(self, values: tuple[Any, ...]) -> ResultRow:
        """One stored row as a ResultRow, every column checked (see the module docstring)."""
        data = dict(zip(_COLUMNS, values, strict=True))
        item, arm = one_line(str(data["item"]), 80), one_line(str(data["arm"]), 40)
        where = f"results file {self.path}, row {item!r} (arm {arm})"
        for column, kind in _JSON_COLUMNS.items():
            data[column] = load_json_as(data[column], f"{where}: column {column}", kind, JSON_BOUNDS)
        if data["model_identity"] is not None:
            data["model_identity"] = _identity(data["model_identity"], f"{where}: column model_identity")
        if data["partial"] not in (0, 1):
            raise ConfigError(f"{where}: column partial holds {one_line(repr(data['partial']), 40)}; 0 or 1 is valid")
        for column in ("score", "wall_seconds", "cost_usd"):
            if isinstance(data[column], float) and not math.isfinite(data[column]):
                raise ConfigError(f"{where}: column {column} holds {data[column]}; a finite number is valid")
        try:
            _ScoredMetrics.model_validate(data["metrics"])
            row = ResultRow.model_validate(data, strict=True)
        except ValidationError as exc:
            error = exc.errors()[0]
            column = ".".join(str(part) for part in error["loc"])
            column = column if column in _COLUMNS else f"metrics.{column}"
            given = one_line(repr(error.get("input")), 60)
            raise ConfigError(f"{where}: column {column} holds {given}: {one_line(error['msg'], 120)}") from None
        row._stored = _Snapshot(values)
        return row

    def purpose(self) -> str:
        """The folder's stated purpose (``tuning`` or ``evaluation``), or ``unstated`` for a file from before
        purposes were recorded (no ``meta`` table, or no purpose in it)."""
        found = self._meta("purpose")
        if found is None:
            return UNSTATED
        if found not in PURPOSES:
            shown = one_line(repr(found), 40)
            raise ConfigError(f"results file {self.path}: its purpose is {shown}; tuning or evaluation is valid")
        return str(found)

    def record_purpose(self, purpose: Purpose | None) -> None:
        """State what the folder is for, once. ``None`` (not given) states ``evaluation`` for a new folder and
        leaves a folder that already holds rows as it was (its rows predate the statement: not claimed for it).
        A purpose other than the one recorded is refused: tuning and evaluation rows are kept in folders apart."""
        stated = self.purpose()
        if stated != UNSTATED:
            if purpose is not None and purpose != stated:
                raise ConfigError(
                    f"{self.path.parent} holds a {stated} run, so --purpose {purpose} cannot add to it: keep "
                    f"{purpose} rows in a folder of their own (give another --out), or give --purpose {stated}"
                )
            return
        if purpose is None and self._read("SELECT 1 FROM rows LIMIT 1", ()):
            return
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('purpose', ?)", (purpose or "evaluation",))
        self._db.commit()

    def tuned_on(self) -> list[str]:
        """The suite specs the folder records as having decided a protocol choice made elsewhere (``--tuned-on``),
        as given; empty when none is recorded (or the file predates the ``meta`` table). A stored value that is not a
        JSON list of non-blank specs is refused in one line naming the file and the key."""
        found = self._meta("tuned_on")
        if found is None:
            return []
        where = f"results file {self.path}: meta key tuned_on"
        specs = load_json_as(found, where, list, JSON_BOUNDS)
        bad = [spec for spec in specs if not (isinstance(spec, str) and spec.strip())]
        if bad:
            shown = one_line(repr(bad[0]), 40)
            raise ConfigError(f'{where} holds {shown}; a JSON list of suite specs (e.g. ["humaneval[:50]"]) is valid')
        return [str(spec) for spec in specs]

    def record_tuned_on(self, specs: Sequence[str]) -> None:
        """State which items decided a protocol choice made elsewhere: ``specs`` replace any list recorded before
        (a statement about items, not rows, so a later, fuller statement supersedes an earlier one)."""
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tuned_on', ?)", (json.dumps(list(specs)),))
        self._db.commit()

    def _meta(self, key: str) -> object | None:
        """The stored value of ``key`` in the ``meta`` table, as stored (callers check it); None when the key is not
        recorded, or the file is older than the table (opened read-only, it is not migrated)."""
        if not self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'", ()):
            return None
        found = next(iter(self._read("SELECT value FROM meta WHERE key = ?", (key,))), None)
        return None if found is None else found[0]

    def arm_keys(self, suite: str) -> list[str]:
        """Every arm configuration with a row of ``suite`` in this file, whichever comparison ran it (a report counts
        the variants run on its items)."""
        return [key for (key,) in self._read("SELECT DISTINCT arm_key FROM rows WHERE suite = ?", (suite,))]

    def suite_keys(self) -> set[str]:
        """Every suite key with a row in this file (a report names the items a folder has not run yet)."""
        return {key for (key,) in self._read("SELECT DISTINCT suite FROM rows", ())}

    def items(self, suite: str) -> set[str]:
        """Every item of ``suite`` with a row in this file, whichever arm ran it."""
        return {item for (item,) in self._read("SELECT DISTINCT item FROM rows WHERE suite = ?", (suite,))}

    def close(self) -> None:
        self._db.close()


def _identity(text: object, where: str) -> dict[str, str]:
    """A stored ``model_identity``: a JSON object of role -> text, else one ConfigError naming the column."""
    found = load_json_as(text, where, dict, JSON_BOUNDS)
    if not all(isinstance(v, str) for v in found.values()):
        raise ConfigError(f"{where} holds a value that is not text; an object of role -> identity text is valid")
    return {str(role): value for role, value in found.items()}
