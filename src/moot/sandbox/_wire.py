"""What crosses between the sandbox's processes: JSON lines, and values as plain data or references.

The code under test and the tests that judge it run in two processes (see
``_sandbox.py``). Everything the code hands back is *data*: the receiving
side builds fresh built-in objects from JSON and nothing else, so a return
value cannot carry an ``__eq__`` that is always true, a ``__repr__`` that
lies, or any other behaviour. What is not plain data stays behind in the
code's process and travels as a reference (``{"~": "ref", "id": ...}``) on
which the judge may call, iterate or read attributes, each a new request.

Copied into the sandbox work directories and imported there, and imported
by moot's parent side for the framing: stdlib only, no moot imports.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Callable
from typing import Any

PLAIN = "None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set and frozenset"
MAX_DEPTH = 100
MAX_LINE = 64 * 1024 * 1024
"""A message longer than this is refused: the receiver never holds an unbounded line."""


class WireError(Exception):
    """A message or value that does not follow the protocol (torn, too large, too deep, unknown tag)."""


# ------------------------------------------------------------------ framing
class Channel:
    """Newline-delimited JSON objects over a connected stream socket's descriptor."""

    def __init__(self, fd: int, limit: int = MAX_LINE) -> None:
        self.fd, self.limit = fd, limit
        self._buffer = bytearray()

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def recv(self) -> dict[str, Any]:
        """The next message, waiting for it; WireError if the peer closed or sent a torn, oversized or bad line."""
        while True:
            message = self.take()
            if message is not None:
                return message
            self.fill()

    def take(self) -> dict[str, Any] | None:
        """The next message if a whole one is buffered, else None (never waits)."""
        end = self._buffer.find(b"\n")
        if end < 0:
            if len(self._buffer) > self.limit:
                raise WireError(f"a message longer than {self.limit // (1024 * 1024)} MB")
            return None
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return parse(line)

    def fill(self) -> None:
        """Read what the peer sent so far (waits if nothing is there yet)."""
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            raise WireError("the other side closed the channel")
        self._buffer += chunk


def parse(line: bytes) -> dict[str, Any]:
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
        return int(value)
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
    if tag in ("bytes", "bytearray") and type(payload) is str:
        raw = base64.b64decode(payload, validate=True)
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
