"""Named, append-only schema migrations, for the run store and any other SQLite file moot keeps.

Never edit a migration that has shipped: add a new one. Each runs once, in
order, inside a transaction, and is recorded in the file's ``migrations``
table, so a file written by an older moot is brought up to date on open.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime

from moot.errors import ConfigError

Migration = tuple[str, str]
"""A name (``0002_run_lease_and_config``) and the SQL statements it runs."""

MIGRATIONS: list[Migration] = [
    (
        "0001_runs_turns_checkpoints",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            scenario TEXT,
            team TEXT NOT NULL,
            task TEXT NOT NULL,
            models TEXT NOT NULL DEFAULT '{}',
            options TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL,
            stop_reason TEXT,
            result TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX runs_by_time ON runs (created_at);
        CREATE TABLE turns (
            run_id TEXT NOT NULL REFERENCES runs (id),
            seq INTEGER NOT NULL,
            step_id TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            payload TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE checkpoints (
            run_id TEXT PRIMARY KEY REFERENCES runs (id),
            seq INTEGER NOT NULL,
            state TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    ),
    (
        "0002_run_lease_and_config",
        """
        ALTER TABLE runs ADD COLUMN owner TEXT;
        ALTER TABLE runs ADD COLUMN heartbeat_at REAL;
        ALTER TABLE runs ADD COLUMN config TEXT
        """,
    ),
]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply every migration not yet applied (the run store's unless given); return the names applied now.

    Runs under BEGIN IMMEDIATE, so two processes opening a new store at once
    serialise here instead of both creating the tables.
    """
    applied = []
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        # (a name that is not text, in a damaged or foreign file, is an unknown migration like any other)
        done = {
            row[0] if isinstance(row[0], str) else repr(row[0]) for row in db.execute("SELECT name FROM migrations")
        }
        unknown = sorted(done - {name for name, _ in migrations})
        if unknown:
            raise ConfigError(
                f"written by a newer moot (its migrations {', '.join(unknown)} are unknown here); "
                f"this moot knows up to {migrations[-1][0]}: upgrade moot to use it"
            )
        for name, script in migrations:
            if name in done:
                continue
            for statement in filter(str.strip, script.split(";")):
                db.execute(statement)
            db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, now()))
            applied.append(name)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return applied
