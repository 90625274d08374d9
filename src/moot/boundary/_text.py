"""Text that came from outside moot (a program's output, a model's reply, a file), made safe to keep and to show.

Two steps, kept apart because they answer different questions:

* :func:`text_of` makes *valid* text: bytes are decoded as UTF-8 with every undecodable byte written as
  ``\\xNN``, and a ``str`` that cannot be encoded (a lone surrogate, which Python allows in a ``str`` but
  JSON writers, SQLite and terminals do not) gets the same treatment (``\\udXXX``). The result can be
  written anywhere, and it is bounded when a limit is given. Nothing is dropped silently: an escape shows
  what was there.
* :func:`terminal_safe` makes valid text *harmless to print*: control characters (NUL, the escape that
  starts OSC 52 clipboard writes, window titles and clear-screen, a carriage return that overwrites a
  line, the C1 controls some terminals obey) and the invisible bidirectional overrides that make text
  read differently from what it holds are shown as escapes. Newlines and tabs stay (a CRLF line end is
  shown as a newline).

Both are one ``str.translate`` or codec pass: linear in the text, whatever it holds.
"""

from __future__ import annotations

from typing import Any

__all__ = ["clip", "one_line", "terminal_safe", "text_in", "text_of"]

_KEPT = {"\n", "\t"}
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_UNSAFE = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI, *range(0xD800, 0xE000)]
_TERMINAL_TABLE = {
    code: (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}") for code in _UNSAFE if chr(code) not in _KEPT
}


def text_of(value: bytes | bytearray | str, limit: int | None = None) -> str:
    """Valid Unicode from bytes or a ``str`` of unknown origin: undecodable parts escaped, at most ``limit`` chars.

    The result encodes to UTF-8 without error, so JSON, SQLite and a terminal take it; a ``str`` that is
    already valid comes back unchanged (clipped, if a limit is given).
    """
    if isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "backslashreplace")
    else:
        try:
            value.encode("utf-8")
            text = value
        except UnicodeEncodeError:
            text = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if limit is None else clip(text, limit)


def text_in(value: Any) -> Any:
    """Parsed data (lists, dicts, scalars) with every string, keys too, made valid by :func:`text_of`.

    JSON's ``\\ud800`` escapes decode to lone surrogates, which no later writer accepts; callers bound the
    data's depth before parsing it, so the recursion here is bounded too.
    """
    if isinstance(value, str):
        return text_of(value)
    if isinstance(value, list):
        return [text_in(item) for item in value]
    if isinstance(value, dict):
        return {text_in(key): text_in(item) for key, item in value.items()}
    return value


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out (so a cut is never mistaken for all)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on, rather than show, written as a visible escape.

    Escapes (``\\x1b``, ``\\x07``, ``\\u202e``) rather than removal, so a reader sees that something was there;
    a lone surrogate is escaped too, so the result always encodes.
    """
    return text.replace("\r\n", "\n").translate(_TERMINAL_TABLE)


def one_line(text: str | bytes, limit: int = 500) -> str:
    """Outside text fit for a one-line message: valid, terminal-safe, whitespace runs as one space, bounded."""
    return clip(" ".join(terminal_safe(text_of(text)).split()), limit)
