"""A document as a few plain blocks, and the two writers that turn it into Markdown and HTML
(``_rich_blocks.py`` is the third, for the terminal).

Whatever moot shows as a document (a result in Jupyter, ``_result_blocks.py``; the compare
report, ``harness/reports/_render.py``) is described once as blocks; ``to_markdown`` and
``to_html`` only lay them out, so the two forms cannot say different things. It is a public
module of ``moot.display`` because the compare report builds on it as the results do.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from moot.boundary import terminal_safe, text_of

__all__ = ["Block", "Bullets", "Fold", "Heading", "Image", "Note", "Paragraph", "Table", "to_html", "to_markdown"]


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 4


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Note:
    """A labelled line (``stop reason: ...``); ``alert`` marks a warning."""

    label: str
    text: str
    alert: bool = False


@dataclass(frozen=True)
class Table:
    """Rows under a header; a caption (if any) above it; ``folded`` shows it collapsed in HTML."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    folded: bool = False


@dataclass(frozen=True)
class Fold:
    """Text shown collapsed (HTML ``<details>``); Markdown shows it in a code block."""

    summary: str
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Image:
    src: str
    alt: str


Block = Heading | Paragraph | Note | Table | Fold | Bullets | Image


# --------------------------------------------------------------------- HTML
def to_html(blocks: Sequence[Block]) -> str:
    """The blocks as an HTML fragment, one block a line; control characters from outside text shown as escapes."""
    return terminal_safe(text_of("\n".join(_html(b) for b in blocks)))


def _html(block: Block) -> str:
    e = html.escape
    if isinstance(block, Heading):
        return f"<h{block.level}>{e(block.text)}</h{block.level}>"
    if isinstance(block, Paragraph):
        return f"<p>{e(block.text)}</p>"
    if isinstance(block, Note):
        style = ' style="color:#b00020"' if block.alert else ""
        return f"<p{style}><b>{e(block.label)}:</b> {e(block.text)}</p>"
    if isinstance(block, Fold):
        return f"<details><summary>{e(block.summary)}</summary><pre>{e(block.text)}</pre></details>"
    if isinstance(block, Bullets):
        return "<ul>" + "".join(f"<li>{e(item)}</li>" for item in block.items) + "</ul>"
    if isinstance(block, Image):
        return f'<img src="{e(block.src)}" alt="{e(block.alt)}">'
    return _html_table(block)


def _html_table(block: Table) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in block.header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in block.rows)
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if block.folded:
        return f"<details><summary>{e(block.caption)}</summary>{table}</details>"
    return f"<p><b>{e(block.caption)}</b></p>{table}" if block.caption else table


# ----------------------------------------------------------------- Markdown
def to_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as Markdown, a blank line between blocks. A report is read with ``cat`` as often as in a viewer,
    so the control characters outside text may hold (a program's output, an exception) are written as escapes."""
    return terminal_safe(text_of("\n\n".join(_markdown(b) for b in blocks) + "\n"))


def _markdown(block: Block) -> str:
    if isinstance(block, Heading):
        return f"{'#' * block.level} {block.text}"
    if isinstance(block, Paragraph):
        return block.text
    if isinstance(block, Note):
        text = f"**{block.label}:** {_md(block.text)}"
        return f"> {text}" if block.alert else text
    if isinstance(block, Fold):
        fence = "````" if "```" in block.text else "```"
        return f"**{block.summary}:**\n\n{fence}\n{block.text}\n{fence}"
    if isinstance(block, Bullets):
        return "\n".join(f"- {item}" for item in block.items)
    if isinstance(block, Image):
        return f"![{block.alt}]({block.src})"
    lines = [f"**{block.caption}**", ""] if block.caption else []
    lines += [_md_row(block.header), "|" + "---|" * len(block.header)]
    lines += [_md_row(row) for row in block.rows]
    return "\n".join(lines)


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(_md(c) for c in cells) + " |"


def _md(text: str) -> str:
    """One line, and a pipe that cannot break a table."""
    return " ".join(text.split()).replace("|", "\\|")
