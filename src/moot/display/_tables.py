"""The terminal's tables of what is stored: recent runs (``moot runs``) and catalog listings (``moot roles`` ...)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table
from rich.text import Text

from moot.display._meter_text import usd
from moot.store import RunRecord

__all__ = ["WIDE_RUNS_TABLE", "catalog_table", "runs_table", "scenario_name"]


WIDE_RUNS_TABLE = 110
"""Terminal columns from which ``moot runs`` shows every column side by side."""


def runs_table(records: list[RunRecord], rounds: Mapping[str, int] | None = None, width: int = 200) -> Table:
    """Recent runs; ``rounds`` (completed rounds per run id) adds a rounds column.

    Run ids stay whole (they are copied into ``moot show`` / ``moot resume``). Below
    :data:`WIDE_RUNS_TABLE` columns the team, turns and start time are left out and the
    stop reason wraps under the id, so no column is squeezed to a few characters.
    """
    wide = width >= WIDE_RUNS_TABLE
    columns = ["id", "scenario", "team", "status", "stop reason", "rounds", "turns", "tokens", "started"]
    if not wide:
        columns = ["id", "scenario", "status", "rounds", "tokens"]
    if rounds is None:
        columns.remove("rounds")
    table = Table(title="runs (newest first)", show_edge=False)
    for column in columns:
        table.add_column(
            column, overflow="fold", no_wrap=wide and column == "id", min_width=32 if column == "id" else None
        )
    for r in records:
        reason = r.stop_reason or r.error or "-"
        cells = {
            "id": r.id if wide else Text.assemble(r.id, "\n", (reason, "dim")),
            "scenario": scenario_name(r),
            "team": r.team,
            "status": r.status,
            "stop reason": reason,
            "rounds": str((rounds or {}).get(r.id, 0)),
            "turns": str(r.turns),
            "tokens": _tokens_cell(r),
            "started": r.created_at[:19].replace("T", " "),
        }
        table.add_row(*(cells[c] for c in columns))
    return table


def _tokens_cell(r: RunRecord) -> str:
    """Logical tokens, and the run's cost when its prices are known."""
    cost = f" · {usd(r.tokens.cost)}" if r.tokens.cost else ""
    return f"{r.tokens.total_tokens}{cost}"


def catalog_table(kind: str, rows: list[tuple[str, str, str]]) -> Table:
    """A catalog listing (``moot roles`` ...): name, description, and where each entry comes from."""
    table = Table(title=kind, show_edge=False)
    for column in ("name", "description", "from"):
        table.add_column(column, overflow="fold", no_wrap=column == "name")
    for row in rows:
        table.add_row(*row)
    return table


def scenario_name(record: RunRecord) -> str:
    name = (record.scenario or "-").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if name.endswith((".py", ".yaml", ".yml")) else name
