"""A result in the forms moot shows it: HTML and Markdown for Jupyter, a rich renderable for the terminal.

All three lay out the same blocks (``result_blocks``, dispatched on the result's type), so a
notebook and ``moot run`` cannot say different things. The results themselves carry none of
this: Jupyter finds these writers through the formatters ``_notebook.py`` registers, and rich
through the ``__rich__`` hook ``install_rich_views`` gives the result types.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from moot.display._meter_text import meter_line
from moot.display._result_blocks import result_blocks
from moot.display._rich_blocks import to_rich
from moot.display.blocks import to_html, to_markdown
from moot.teams import MootResult

__all__ = ["install_rich_views", "result_html", "result_markdown", "result_renderable"]


def result_html(result: MootResult) -> str:
    """The HTML a notebook shows for a result: its blocks in one ``moot-result`` div."""
    return '<div class="moot-result">\n' + to_html(result_blocks(result)) + "\n</div>"


def result_markdown(result: MootResult) -> str:
    """The same blocks as Markdown (Jupyter's other rendering; also handy in a report)."""
    return to_markdown(result_blocks(result))


def result_renderable(result: MootResult) -> RenderableType:
    """What ``moot run`` prints for a result: its blocks, then its calls, tokens and cost.

    ``rich.print(result_renderable(result))`` prints it from a script, as the terminal shows it.
    """
    return Group(*to_rich(result_blocks(result)), Text.from_markup(meter_line(result.tokens)))


def install_rich_views() -> None:
    """Give every moot result a ``__rich__`` hook: ``rich.print(result)`` (or a console, or a rich table cell) then
    shows :func:`result_renderable`, as ``moot run`` does, instead of a dump of every field. (A hook on the class,
    set here, so the results stay plain data that never import presentation; subclasses inherit it.)"""
    MootResult.__rich__ = result_renderable  # type: ignore[attr-defined]
