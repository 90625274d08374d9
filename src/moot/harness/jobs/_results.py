"""The results file: one SQLite row per item x arm, written the moment it finishes.

A row is keyed by the suite's source (``humaneval``, not the slice), the item
and the arm's full configuration (name, settings, models), so re-running a
command finds its finished rows and computes only the missing ones, and a
changed model or setting never reuses a stale row. Rows that failed are
kept with their error and recomputed on the next run.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.errors import ConfigError
from moot.models import TokenTotals
from moot.store import Migration, migrate

__all__ = ["ResultRow", "ResultStore", "TokenTotals", "arm_key"]

_COLUMNS = (
    "suite", "item", "arm_key", "arm", "settings", "models", "status", "answer", "score", "score_detail",
    "prompt_tokens", "completion_tokens", "billed_prompt_tokens", "billed_completion_tokens", "model_calls",
    "billed_calls", "scoring_calls", "scoring_billed_calls", "wall_seconds", "rounds", "stop_reason",
    "parse_failures", "partial", "metrics", "error", "trace_ids", "finished_at", "cost_usd", "code_version",
    "machine",
)  # fmt: skip
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
]
"""The results file's schema, as named migrations (see ``moot.store.migrate``)."""


def arm_key(name: str, settings: Mapping[str, Any], models: Mapping[str, str]) -> str:
    """What makes two rows comparable: the arm, its settings and every model spec it may use."""
    text = json.dumps({"arm": name, "settings": settings, "models": models}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class ResultRow(TokenTotals, BaseModel):
    """One item x arm."""

    suite: str
    item: str
    arm_key: str
    arm: str
    """The arm's label in this comparison (e.g. ``self-consistency``)."""
    settings: dict[str, Any] = {}
    models: dict[str, str] = {}
    status: Literal["done", "error"] = "done"
    answer: str = ""
    score: float | None = None
    score_detail: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    billed_prompt_tokens: int = 0
    billed_completion_tokens: int = 0
    model_calls: int = 0
    """Logical calls: every call the arm made, cache hits included."""
    billed_calls: int = 0
    """Calls that reached a model (cache misses)."""
    scoring_calls: int = 0
    scoring_billed_calls: int = 0
    cost_usd: float | None = None
    """What the arm's billed calls cost in USD (scoring excluded); None when a model has no price."""
    wall_seconds: float = 0.0
    """The arm's wall time on this item (waits for a busy endpoint included, scoring excluded)."""
    rounds: int = 0
    stop_reason: str = ""
    parse_failures: int = 0
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

    def values(self) -> tuple[Any, ...]:
        data = self.model_dump()
        for key in ("settings", "models", "metrics", "trace_ids"):
            data[key] = json.dumps(data[key], sort_keys=True, default=str)
        data["partial"] = int(self.partial)
        return tuple(data[c] for c in _COLUMNS)


class ResultStore:
    """The SQLite results file of one output directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path)
            self._db.execute("PRAGMA journal_mode=WAL")
            migrate(self._db, MIGRATIONS)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise ConfigError(f"cannot use results file {path}: {exc}") from None
        except ConfigError as exc:  # written by a newer moot
            raise ConfigError(f"results file {path}: {exc}") from None

    def put(self, row: ResultRow) -> None:
        marks = ", ".join("?" for _ in _COLUMNS)
        self._db.execute(f"INSERT OR REPLACE INTO rows ({', '.join(_COLUMNS)}) VALUES ({marks})", row.values())
        self._db.commit()

    def finished(self, suite: str, key: str) -> set[str]:
        """Items that have a finished row for this arm configuration."""
        found = self._db.execute(
            "SELECT item FROM rows WHERE suite = ? AND arm_key = ? AND status = 'done'", (suite, key)
        )
        return {item for (item,) in found}

    def get(self, suite: str, item: str, key: str) -> ResultRow | None:
        found = self.rows(suite, [key], [item])
        return found[0] if found else None

    def rows(self, suite: str, keys: Iterable[str], items: Sequence[str] | None = None) -> list[ResultRow]:
        keys = list(keys)
        if not keys:
            return []
        query = f"SELECT {', '.join(_COLUMNS)} FROM rows WHERE suite = ? AND arm_key IN ({', '.join('?' * len(keys))})"
        wanted = None if items is None else set(items)
        rows = []
        for values in self._db.execute(query, (suite, *keys)):
            data = dict(zip(_COLUMNS, values, strict=True))
            if wanted is not None and data["item"] not in wanted:
                continue
            for key in ("settings", "models", "metrics", "trace_ids"):
                data[key] = json.loads(data[key])
            rows.append(ResultRow.model_validate(data))
        return rows

    def close(self) -> None:
        self._db.close()
