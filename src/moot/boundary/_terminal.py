"""The one way moot writes to a terminal: a rich console that shows outside text and never obeys it.

What moot prints is full of text it did not write: a model's reply, a program's output, an exception's
message, a run's stored stop reason, a suite's item ids. Any of it may hold a NUL, an OSC 52 clipboard
write, a window title, a clear-screen, a C1 control or a bidi override, which a terminal would *act on*.
:class:`TerminalConsole` passes every piece of text it renders through :func:`terminal_safe` (a visible
escape instead of the character), in two places:

* before layout: each ``str`` and :class:`rich.text.Text` it is asked to render is made safe first, so the
  escapes are measured and wrapped like any other text (panels and tables keep their shape);
* after layout: every segment it emits is checked again, so a renderable that writes segments of its own
  (syntax highlighting, a third-party renderable) cannot get a raw control character past it.

The console's own control sequences (colours, cursor moves for a live progress bar) are rich's, never the
text's, and pass untouched. Rich *markup* in a string is still parsed, so text from outside that is
interpolated into a markup string must be escaped with :func:`rich.markup.escape` where it is written, or
passed as a ``Text``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Span, Text

from moot.boundary._text import terminal_safe

__all__ = ["TerminalConsole", "safe_rich_text"]


def safe_rich_text(text: Text) -> Text:
    """``text`` with its characters made terminal-safe and its styled spans moved to match; unchanged if safe."""
    plain = text.plain
    safe = terminal_safe(plain)
    if safe == plain:
        return text
    offsets = [0]
    for index, char in enumerate(plain):  # one pass: where each original character starts in the escaped text
        crlf = char == "\r" and plain[index + 1 : index + 2] == "\n"  # shown as the newline alone, as in `safe`
        offsets.append(offsets[-1] + (0 if crlf else len(terminal_safe(char))))
    spans = [Span(offsets[span.start], offsets[min(span.end, len(plain))], span.style) for span in text.spans]
    return Text(
        safe,
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
        tab_size=text.tab_size,
        spans=spans,
    )


def _safe_segments(segments: Iterable[Segment]) -> Iterable[Segment]:
    for segment in segments:
        if segment.control or not segment.text:
            yield segment
            continue
        safe = terminal_safe(segment.text)
        yield segment if safe == segment.text else Segment(safe, segment.style, segment.control)


class TerminalConsole(Console):
    """A rich ``Console`` that renders all text terminal-safe (see the module docstring); moot prints through it."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """A string as rich reads it (markup, highlighting), then made terminal-safe before it is laid out."""
        return safe_rich_text(super().render_str(text, **kwargs))

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """Rich's rendering, with every ``Text`` made safe before layout and every segment checked after it."""
        if isinstance(renderable, Text):
            renderable = safe_rich_text(renderable)
        return _safe_segments(super().render(renderable, options))
