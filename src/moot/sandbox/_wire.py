"""What crosses between the sandbox's processes: JSON lines, and values as plain data or references.

The code under test and the tests that check it run in two processes (see
``_sandbox.py``). Everything the code hands back is *data*: the receiving
side builds fresh built-in objects from JSON and nothing else, so a return
value cannot carry an ``__eq__`` that is always true, a ``__repr__`` that
lies, or any other behaviour. What is not plain data stays behind in the
code's process and travels as a reference (``{"~": "ref", "id": ...}``) on
which the tester may call, iterate or read attributes, each a new request.

Copied into the sandbox work directories and imported there, and imported
by moot's parent side for the framing: stdlib only, no moot imports.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import select
import time
from collections.abc import Callable
from typing import Any

PLAIN = "None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set and frozenset"
MAX_DEPTH = 100
MAX_LINE = 64 * 1024 * 1024
"""A message longer than this is refused: the receiver never holds an unbounded line."""
HEAD_LIMIT = 1024 * 1024
"""The most of one message the sandbox's parent parses into objects.

The parent relays the code's answers and the tester's requests without
reading their values: it parses only a message's *head* (ids, the kind of
answer) and passes the raw line on, so a reply costs the parent its bytes,
never the objects a parser would build from them (a line of ``[],[],...``
is ~20 objects per byte held). Every other message it parses is small.
"""
INLINE = 4096
"""A field whose JSON text is longer than this travels in the message's body, not its head."""
BODY = "~body"
"""The head's list of the fields that are in the body."""
_CHUNK = 1 << 16
MAX_INT_DIGITS = 100_000
"""The largest int that crosses, in decimal digits (roughly): an answer of 5,736 digits is an answer, and is
compared exactly. Beyond it an int is a content error of whoever sent it, never a crash of the receiver."""
MAX_INT_BITS = 332_193
"""The bit length of the largest int of :data:`MAX_INT_DIGITS` digits, ``(10**MAX_INT_DIGITS - 1).bit_length()``."""
_INLINE_INT_BITS = 10_000
"""Ints up to this many bits (about 3,000 digits, below Python's 4,300-digit str/int conversion limit) travel
as JSON numbers; longer ones as hex text (``{"~": "int", "v": "-1f..."}``), whose conversion is linear in
its length both ways, so neither side meets the conversion limit or its quadratic cost."""
_HEX = re.compile(r"-?[0-9a-f]+")


class WireError(Exception):
    """A message or value that does not follow the protocol (torn, too large, too deep, unknown tag)."""


class ChannelClosed(WireError):
    """The other side closed the channel (it ended, or hung up): not a fault of what it sent."""


# ------------------------------------------------------------------ framing
def frame(message: dict[str, Any]) -> bytes:
    """``message`` as one line: a JSON object of its short fields (the head) and, after a tab, one of its long ones.

    ``json.dumps`` escapes every control character, so the first raw tab of a line is where its head ends.
    """
    head, body = [], []
    for key, value in message.items():
        text = _dumps(value)
        (body if len(text) > INLINE else head).append((str(key), text))
    if body:
        head.append((BODY, _dumps([key for key, _ in body])))
    line = _object(head) + ("\t" + _object(body) if body else "") + "\n"
    return line.encode("ascii")


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=False, separators=(",", ":"))


def _object(fields: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{_dumps(key)}:{text}" for key, text in fields) + "}"


class Frame:
    """One line as received, parsed only as far as the reader asks: its head, or the whole message."""

    def __init__(self, raw: bytes | bytearray) -> None:
        self.raw = raw
        """The line as it came, newline included: what a relay passes on."""
        self._tab = raw.find(b"\t")
        self._head: dict[str, Any] | None = None

    def head(self) -> dict[str, Any]:
        """The head's fields (``BODY`` lists the body's); WireError if it is over :data:`HEAD_LIMIT` or malformed."""
        if self._head is None:
            end = self._tab if self._tab >= 0 else len(self.raw)
            if end > HEAD_LIMIT:
                raise WireError(f"a message head longer than {HEAD_LIMIT // 1024} KB")
            self._head = parse(bytes(self.raw[:end]))
        return self._head

    def fields(self) -> set[str]:
        """The names of every field, head and body, without reading the body."""
        head = self.head()
        named = head.get(BODY, [])
        if type(named) is not list or not all(type(name) is str for name in named):
            raise WireError(f"a malformed {BODY!r} field")
        return (set(head) - {BODY}) | set(named)

    def message(self, limit: int = MAX_LINE) -> dict[str, Any]:
        """The whole message, head and body; WireError if the line is longer than ``limit`` or malformed."""
        if len(self.raw) > limit:
            raise WireError(f"a message longer than {_size(limit)}")
        names, head = self.fields(), dict(self.head())
        head.pop(BODY, None)
        if self._tab < 0:
            if names != set(head):
                raise WireError("a message whose body is missing")
            return head
        body = parse(self.raw[self._tab + 1 :])
        if set(body) != names - set(head) or set(body) & set(head):
            raise WireError("a message whose body does not match its head")
        return head | body


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit // 1024} KB"


class Channel:
    """Newline-delimited messages (see :func:`frame`) over a connected stream socket's descriptor.

    Reading is bounded and streaming: each read is scanned once for the end
    of a line (never the whole buffer again), a line is handed over without
    a copy, and a line over ``limit`` is refused as soon as it gets there,
    not buffered to its end.
    """

    def __init__(self, fd: int, limit: int = MAX_LINE) -> None:
        self.fd, self.limit = fd, limit
        self._buffer = bytearray()
        self._scanned = 0
        self._broken: str | None = None

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(message))

    def write(self, data: bytes | bytearray, until: float | None = None) -> bool:
        """Write all of ``data``; with ``until`` (a non-blocking descriptor), False if it could not by then."""
        with memoryview(data) as view:
            while view:
                if until is not None:
                    remaining = until - time.monotonic()
                    if remaining <= 0 or not select.select([], [self.fd], [], remaining)[1]:
                        return False
                try:
                    view = view[os.write(self.fd, view) :]
                except BlockingIOError:
                    continue
        return True

    def recv(self) -> dict[str, Any]:
        """The next message, waiting for it; WireError if the peer closed or sent a torn, oversized or bad line."""
        while True:
            line = self.take()
            if line is not None:
                return line.message(self.limit)
            self.fill()

    def take(self) -> Frame | None:
        """The next line if a whole one is buffered, else None (never waits); WireError once a line is too long."""
        if self._broken is not None:
            raise WireError(self._broken)
        end = self._buffer.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buffer)
            if self._scanned > self.limit:
                self._break()
            return None
        if end >= self.limit:
            self._break()
        self._scanned = 0
        return Frame(self._cut(end + 1))

    def _break(self) -> None:
        self._buffer, self._scanned = bytearray(), 0  # nothing more of it is kept, and the channel is out of step
        self._broken = f"a message longer than {_size(self.limit)}"
        raise WireError(self._broken)

    def _cut(self, size: int) -> bytes | bytearray:
        """The first ``size`` bytes, removed from the buffer; a long line is the buffer itself, not a copy."""
        buffer = self._buffer
        if size <= _CHUNK:
            line = bytes(buffer[:size])
            del buffer[:size]  # cheap: a bytearray drops its head without moving the rest
            return line
        self._buffer = bytearray(buffer[size:])  # what followed it came with the last read: small
        del buffer[size:]
        return buffer

    def fill(self) -> None:
        """Read what the peer sent so far (waits if nothing is there yet, unless the descriptor is non-blocking)."""
        try:
            chunk = os.read(self.fd, _CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            raise ChannelClosed("the other side closed the channel")
        self._buffer += chunk


def parse(line: bytes | bytearray) -> dict[str, Any]:
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"a malformed message ({type(exc).__name__})") from None
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


# ------------------------------------------------------------------ values
def encode(value: Any, refer: Callable[[Any], dict[str, Any]], depth: int = 0) -> Any:
    """``value`` as JSON-ready plain data; anything else becomes ``refer(value)`` (a reference, or raise)."""
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return None if value is None else bool(value)
    if isinstance(value, int):
        return _encode_int(int(value))
    if isinstance(value, float):
        number = float(value)
        return number if math.isfinite(number) else {"~": "float", "v": repr(number)}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, list | tuple | set | frozenset | dict):
        return _encode_container(value, refer, depth)
    if isinstance(value, bytes | bytearray):
        tag = "bytearray" if isinstance(value, bytearray) else "bytes"
        return {"~": tag, "v": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, complex):
        return {"~": "complex", "v": [encode(value.real, refer), encode(value.imag, refer)]}
    if type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None)):
        return encode(value.tolist(), refer, depth + 1)  # numpy arrays and scalars, as the lists and numbers they hold
    return refer(value)


def _encode_int(number: int) -> Any:
    """A JSON number, or for a long int its hex text; WireError beyond :data:`MAX_INT_DIGITS` (checked on bits)."""
    bits = number.bit_length()
    if bits <= _INLINE_INT_BITS:
        return number
    if bits > MAX_INT_BITS:
        raise WireError(f"an int of more than {MAX_INT_DIGITS:,} digits (only ints up to that size cross the wire)")
    return {"~": "int", "v": format(number, "x")}


def _decode_int(payload: Any) -> int:
    """The int a hex payload stands for; WireError unless it is lowercase hex within :data:`MAX_INT_BITS`."""
    if type(payload) is not str or len(payload) > MAX_INT_BITS // 4 + 2 or not _HEX.fullmatch(payload):
        raise WireError(f"a malformed 'int' value (hex digits, at most {MAX_INT_DIGITS:,} decimal digits' worth)")
    number = int(payload, 16)
    if number.bit_length() > MAX_INT_BITS:
        raise WireError(f"an int of more than {MAX_INT_DIGITS:,} digits (only ints up to that size cross the wire)")
    return number


def _encode_container(value: Any, refer: Callable[[Any], dict[str, Any]], depth: int) -> Any:
    def inner(item: Any) -> Any:
        return encode(item, refer, depth + 1)

    if isinstance(value, dict):
        return {"~": "dict", "v": [[inner(k), inner(v)] for k, v in dict.items(value)]}
    items = [inner(item) for item in value]
    if isinstance(value, list):
        return items
    tag = "tuple" if isinstance(value, tuple) else "frozenset" if isinstance(value, frozenset) else "set"
    return {"~": tag, "v": items}


def decode(data: Any, resolve: Callable[[dict[str, Any]], Any], depth: int = 0) -> Any:
    """Fresh built-in objects from ``data``; references become ``resolve(data)``. WireError on anything else."""
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels")
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [decode(item, resolve, depth + 1) for item in data]
    if kind is not dict or not isinstance(data.get("~"), str):
        raise WireError(f"a value that is not plain data ({kind.__name__})")
    return _decode_tagged(data, resolve, depth)


def _decode_tagged(data: dict[str, Any], resolve: Callable[[dict[str, Any]], Any], depth: int) -> Any:
    tag, payload = data["~"], data.get("v")
    if tag == "ref":
        return resolve(data)
    if tag == "float" and payload in ("nan", "inf", "-inf"):
        return float(payload)
    if tag == "int":
        return _decode_int(payload)
    if tag in ("bytes", "bytearray") and type(payload) is str:
        try:
            raw = base64.b64decode(payload, validate=True)
        except ValueError:  # binascii.Error: not base64
            raise WireError(f"a malformed {tag!r} value") from None
        return bytearray(raw) if tag == "bytearray" else raw
    if type(payload) is not list:
        raise WireError(f"a malformed {tag!r} value")
    items = [decode(item, resolve, depth + 1) for item in payload]
    try:
        if tag == "tuple":
            return tuple(items)
        if tag in ("set", "frozenset"):
            return set(items) if tag == "set" else frozenset(items)
        if tag == "dict" and all(type(pair) is list and len(pair) == 2 for pair in items):
            return {key: value for key, value in items}
        if tag == "complex" and len(items) == 2 and all(type(part) is float for part in items):
            return complex(items[0], items[1])
    except TypeError as exc:  # an unhashable key or member
        raise WireError(f"a malformed {tag!r} value ({exc})") from None
    raise WireError(f"an unknown or malformed value tag {tag!r}")
