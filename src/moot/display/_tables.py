"""The terminal's tables of what is stored: recent runs (``moot runs``) and catalog listings (``moot roles`` ...)."""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Iterable, Mapping, Sequence

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from moot.display._meter_text import usd
from moot.store import RunRecord

__all__ = ["WIDE_RUNS_TABLE", "catalog_table", "fits", "fitted_table", "least_width", "runs_table", "scenario_name"]


WIDE_RUNS_TABLE = 110
"""Terminal columns from which ``moot runs`` shows every column side by side."""


def runs_table(records: list[RunRecord], rounds: Mapping[str, int] | None = None, width: int = 200) -> Table:
    """Recent runs; ``rounds`` (completed rounds per run id) adds a rounds column.

    Run ids stay whole (they are copied into ``moot show`` / ``moot resume``), and so do the numbers (rounds,
    tokens): those columns never wrap. Below :data:`WIDE_RUNS_TABLE` columns the team, turns and start time are
    left out and the stop reason goes under the id; where even that does not fit ``width`` (60 columns), the
    scenario and the status go under the id too, so no number is squeezed or dropped.
    """
    layouts = ("wide", "medium", "narrow") if width >= WIDE_RUNS_TABLE else ("medium", "narrow")
    table = _runs_layout(records, rounds, layouts[0])
    for layout in layouts[1:]:
        if fits(table, width):
            break
        table = _runs_layout(records, rounds, layout)
    return table


_RUN_COLUMNS = {
    "wide": ["id", "scenario", "team", "status", "stop reason", "rounds", "turns", "tokens", "started"],
    "medium": ["id", "scenario", "status", "rounds", "tokens"],
    "narrow": ["id", "rounds", "tokens"],
}
_WHOLE = frozenset({"rounds", "turns", "tokens", "started"})
"""Columns that are never wrapped or cut: numbers are read whole (and ids, copied into commands, are as wide as
their column)."""
ID_WIDTH = 32
"""A run id's length (a UUID's hex)."""


def _runs_layout(records: list[RunRecord], rounds: Mapping[str, int] | None, layout: str) -> Table:
    columns = [c for c in _RUN_COLUMNS[layout] if c != "rounds" or rounds is not None]
    table = Table(title="runs (newest first)", show_edge=False)
    id_width = max([cell_len(r.id) for r in records] + [ID_WIDTH])
    for column in columns:
        if column == "id":  # as wide as the ids, so each stays on one line; what is under it wraps
            table.add_column(column, overflow="fold", width=id_width)
            continue
        whole = column in _WHOLE
        table.add_column(column, overflow="fold", no_wrap=whole, justify="right" if whole else "left")
    for r in records:
        reason = r.stop_reason or r.error or "-"
        under = {"wide": [], "medium": [reason], "narrow": [f"{scenario_name(r)} · {r.status}", reason]}[layout]
        cells = {
            "id": Text.assemble(r.id, *(part for line in under for part in ("\n", (line, "dim")))),
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


def fits(table: Table, width: int) -> bool:
    """Whether ``table`` can be laid out in ``width`` columns without cutting a cell that may not wrap.

    (Rich measures a column by its longest word even where it may not wrap, and then cuts the cells: the least
    width of a ``no_wrap`` column is its longest line here.)"""
    return least_width(table) <= width


def least_width(table: Table) -> int:
    """The fewest terminal columns ``table`` takes with nothing cut: no-wrap columns at their longest line, the
    others at their longest word, plus padding and rules."""
    total = 0
    for column in table.columns:
        texts = [_plain(column.header), *(_plain(cell) for cell in column.cells)]
        if column.width is not None:
            need = column.width
        elif column.no_wrap:
            need = max((cell_len(line) for text in texts for line in text.splitlines()), default=1)
        else:
            need = max((cell_len(word) for text in texts for word in text.split()), default=1)
        left, right = (table.padding[3], table.padding[1]) if len(table.padding) == 4 else (1, 1)
        total += max(need, column.min_width or 0) + left + right
    rules = len(table.columns) - 1 + (2 if table.show_edge else 0)
    return total + rules


def _plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def fitted_table(
    title: str, head: Sequence[str], rows: Sequence[Sequence[str]], text: Collection[str], width: int
) -> RenderableType:
    """A table whose numbers are never cut: every column but the ``text`` ones is kept on one line (headers wrap to
    the width of their numbers instead), and the text columns wrap between words.

    Where the columns side by side do not fit ``width``, they are split over several tables, each repeating the
    first column (the row's name); where not even one column fits beside it, each row becomes a small table of
    its own, one ``column  value`` line each. Either way every number shows whole, at 60 columns as at 200.
    """
    whole = _columns_table(title, head, rows, text, range(len(head)), width)
    if whole is not None or len(head) < 2:
        return whole or _cards(title, head, rows, text)
    parts: list[Table] = []
    chunk: list[int] = []
    for index in range(1, len(head)):
        if chunk and _columns_table("", head, rows, text, [0, *chunk, index], width) is None:
            parts.append(_columns_table("" if parts else title, head, rows, text, [0, *chunk], width))  # type: ignore[arg-type]
            chunk = []
        chunk.append(index)
    last = _columns_table("" if parts else title, head, rows, text, [0, *chunk], width)
    if last is None or any(part is None for part in parts):
        return _cards(title, head, rows, text)
    return Group(*parts, last)


HEADER_WIDTH = 8
"""A number column's header wraps to its widest number, but not narrower than this (a tall header is no help)."""


def _columns_table(
    title: str,
    head: Sequence[str],
    rows: Sequence[Sequence[str]],
    text: Collection[str],
    columns: Iterable[int],
    width: int,
) -> Table | None:
    """The ``columns`` of a report table laid out in ``width``, or None where they cannot be without cutting a
    number: number columns stay on one line under wrapped headers, and the text columns share what is left
    (each at least its longest word, which rich's own layout would not keep)."""
    chosen = list(columns)
    table = Table(title=title or None, show_edge=False)
    fixed, words, lines = 0, {}, {}
    for index in chosen:
        cells = [str(row[index]) for row in rows]
        if head[index] in text:
            words[index] = max(cell_len(w) for c in [head[index], *cells] for w in c.split() or [""])
            lines[index] = max(cell_len(line) for c in [head[index], *cells] for line in c.splitlines() or [""])
            continue
        widest = max([cell_len(c) for c in cells] + [cell_len(w) for w in head[index].split()] + [1])
        header = textwrap.fill(head[index], max(widest, HEADER_WIDTH)) or head[index]
        fixed += max(widest, *(cell_len(line) for line in header.splitlines()))
    spare = width - fixed - 3 * len(chosen) + 1  # each column's padding (2) and the rules between them
    shares = _shares(words, lines, spare)
    if shares is None:
        return None
    for index in chosen:
        column = head[index]
        if column in text:
            table.add_column(column, justify="left", overflow="fold", width=shares[index])
            continue
        widest = max([cell_len(str(row[index])) for row in rows] + [cell_len(w) for w in column.split()] + [1])
        table.add_column(textwrap.fill(column, max(widest, HEADER_WIDTH)) or column, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*(str(row[i]) for i in chosen))
    return table


def _shares(least: Mapping[int, int], most: Mapping[int, int], spare: int) -> dict[int, int] | None:
    """Widths for the text columns: each its ``least`` (longest word), the rest of ``spare`` given out towards its
    ``most`` (longest line); None when ``spare`` cannot hold every column's least."""
    if sum(least.values()) > spare:
        return None
    widths = dict(least)
    left = spare - sum(widths.values())
    wanting = [i for i in widths if most[i] > widths[i]]
    while left > 0 and wanting:
        for index in list(wanting):
            if left == 0:
                break
            widths[index] += 1
            left -= 1
            if widths[index] >= most[index]:
                wanting.remove(index)
    return widths


def _cards(title: str, head: Sequence[str], rows: Sequence[Sequence[str]], text: Collection[str]) -> Group:
    """Each row as a small table under its name: ``column  value`` per line (the narrowest form of a table)."""
    cards: list[RenderableType] = [Text(title, style="italic")] if title else []
    for row in rows:
        card = Table(title=str(row[0]), title_justify="left", show_header=False, show_edge=False, box=None)
        card.add_column(style="dim", overflow="fold")
        card.add_column(overflow="fold")
        for column, cell in zip(head[1:], row[1:], strict=True):
            card.add_row(column, Text(str(cell), no_wrap=column not in text))
        cards.append(card)
    return Group(*cards)


def _tokens_cell(r: RunRecord) -> str:
    """Logical tokens, and under them the run's cost when its prices are known (two short lines, never cut)."""
    cost = f"\n{usd(r.tokens.cost)}" if r.tokens.cost else ""
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
