"""The terminal writer of ``blocks.py``: the same blocks a notebook shows, as rich renderables.

``moot run`` prints a result through here and Jupyter through ``to_html`` /
``to_markdown``, so a result is described once (``_result_blocks.py``) and both show it.
A folded table (a transcript) stays folded: the terminal has no way to open it,
and the console has streamed those messages already, so only its caption shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from moot.display.blocks import Block, Bullets, Fold, Heading, Image, Note, Paragraph, Table

__all__ = ["print_blocks", "to_rich"]


def to_rich(blocks: Sequence[Block]) -> list[RenderableType]:
    """One renderable per block, in order."""
    return [_rich(block) for block in blocks]


def print_blocks(console: Console, blocks: Sequence[Block]) -> None:
    """Print the blocks one under another (``console.print(a, b)`` would join two texts on one line)."""
    for renderable in to_rich(blocks):
        console.print(renderable)


def _rich(block: Block) -> RenderableType:
    if isinstance(block, Heading):
        return Text(block.text, style="bold")
    if isinstance(block, Paragraph):
        return Text(block.text)
    if isinstance(block, Note):
        return Text.assemble((f"{block.label}: ", "bold red" if block.alert else "bold"), block.text)
    if isinstance(block, Fold):
        return Panel(Markdown(block.text), title=block.summary, title_align="left", border_style="green")
    if isinstance(block, Bullets):
        return Text("\n".join(f"- {item}" for item in block.items))
    if isinstance(block, Image):
        return Text(f"{block.alt}: {block.src}", style="dim")
    return _table(block)


def _table(block: Table) -> RenderableType:
    if block.folded:
        return Text(f"{block.caption} (folded)", style="dim")
    table = RichTable(title=block.caption or None, show_edge=False)
    for index, column in enumerate(block.header):
        numeric = index > 0 and all(_is_number(row[index]) for row in block.rows)
        table.add_column(column, justify="right" if numeric else "left", overflow="fold")
    for row in block.rows:
        table.add_row(*row)
    return table


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return cell == "-"
    return True
