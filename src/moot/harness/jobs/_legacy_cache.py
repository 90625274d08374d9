"""Reading a call-cache folder written by an earlier moot (diskcache's ``cache.db``), once, without trusting it.

Earlier moots kept each spec's calls in a diskcache folder: a SQLite index whose values are pickles of AutoGen's
``CreateResult``. A plain unpickle runs whatever a crafted pickle names, so this reader:

* reads diskcache's index directly, read-only (its triggers cannot fire; a view or generated column is refused
  by :func:`moot.boundary._sqlite.open_sqlite`); the ``diskcache`` package is not used;
* never unpickles: the pickle's opcodes are read as data (``pickletools.genops`` only decodes them) by a small
  reader that builds containers and scalars, names only the exact classes AutoGen stores (and builds none of
  them: each instance is a stub holding the state the stream gives it), and refuses every other opcode, so
  nothing is imported or called; the result is turned into plain data (nodes and depth bounded, so shared
  references cannot expand without limit) and validated like any cache entry;
* takes a value kept in a side file only when its name is diskcache's own shape (``ab/cd/<28 hex>.val``)
  and it is a regular file inside the folder (no symlink), of bounded size: the index names nothing else;
* skips, and counts, every entry it refuses; nothing is deleted.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from pickletools import genops
from typing import Any

from moot.boundary import SQLITE_ERRORS, one_line, open_sqlite, require_columns
from moot.errors import ConfigError
from moot.harness.jobs._call_values import ENTRY_BOUNDS, CallValue, parse_value

__all__ = ["LEGACY_FILE", "legacy_entries", "migrate_folder"]

log = logging.getLogger(__name__)

LEGACY_FILE = "cache.db"
_MODE_PICKLE = 4
"""diskcache's mode for a pickled value."""
_SIDE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")
_ALLOWED = {
    ("autogen_core.models._types", "CreateResult"),
    ("autogen_core.models._types", "RequestUsage"),
    ("autogen_core.models._types", "ChatCompletionTokenLogprob"),
    ("autogen_core.models._types", "TopLogprob"),
    ("autogen_core._types", "FunctionCall"),
}
"""The classes AutoGen 0.7's ChatCompletionCache pickles into a cache: a reply, its usage, its tool calls and
log-probabilities."""


class _Stub:
    """What an instance of an allowed class becomes: an empty object that keeps the state the stream gives it."""

    def __init__(self) -> None:
        self.state: Any = None


class _Allowed:
    """An allowed class, as the stream names it: never imported, only a marker that ``NEWOBJ`` turns into a stub."""


_SCALARS = frozenset(
    "INT BININT BININT1 BININT2 LONG LONG1 LONG4 FLOAT BINFLOAT UNICODE SHORT_BINUNICODE "
    "BINUNICODE BINUNICODE8 SHORT_BINBYTES BINBYTES BINBYTES8".split()
)
"""Opcodes that push the value ``genops`` decoded (bytes pushed here are refused later: no reply holds them)."""
_CONSTANTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False}
"""Opcodes that carry no argument: the value is the opcode."""
_EMPTY: dict[str, Callable[[], Any]] = {"EMPTY_DICT": dict, "EMPTY_LIST": list, "EMPTY_TUPLE": tuple, "EMPTY_SET": set}
_TUPLES = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}


class _PickleData:
    """The value a pickle describes, read from its opcodes as data: the subset of pickle's machine that builds
    containers, scalars and instances of :data:`_ALLOWED` classes (``NEWOBJ`` then ``BUILD``); any other opcode
    (``REDUCE``, ``INST``, ``OBJ``, extension codes, persistent ids ...) or class refuses the whole entry."""

    def __init__(self) -> None:
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}

    def read(self, data: bytes) -> Any:
        for opcode, arg, _ in genops(data):
            name = opcode.name
            if name == "STOP":
                return self.stack.pop()
            self._step(name, arg)
        raise ValueError("the pickle has no STOP")

    def _step(self, name: str, arg: Any) -> None:  # noqa: C901 (one branch per opcode reads best as a table)
        stack = self.stack
        if name in ("PROTO", "FRAME"):
            return
        if name in _SCALARS:
            stack.append(arg)
        elif name in _CONSTANTS:
            stack.append(_CONSTANTS[name])
        elif name in _EMPTY:
            stack.append(_EMPTY[name]())
        elif name == "MARK":
            self.marks.append(len(stack))
        elif name in _TUPLES:
            items = stack[len(stack) - _TUPLES[name] :]
            del stack[len(stack) - _TUPLES[name] :]
            stack.append(tuple(items))
        elif name in ("TUPLE", "LIST", "FROZENSET"):
            items = self._since_mark()
            stack.append({"TUPLE": tuple, "LIST": list, "FROZENSET": frozenset}[name](items))
        elif name == "DICT":
            items = self._since_mark()
            stack.append(dict(zip(items[::2], items[1::2], strict=True)))
        elif name == "APPEND":
            value = stack.pop()
            self._top(list).append(value)
        elif name == "APPENDS":
            items = self._since_mark()
            self._top(list).extend(items)
        elif name == "SETITEM":
            value, key = stack.pop(), stack.pop()
            self._top(dict)[key] = value
        elif name == "SETITEMS":
            items = self._since_mark()
            self._top(dict).update(zip(items[::2], items[1::2], strict=True))
        elif name == "ADDITEMS":
            items = self._since_mark()
            self._top(set).update(items)
        elif name in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
            self.memo[len(self.memo) if name == "MEMOIZE" else int(arg)] = stack[-1]
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(self.memo[int(arg)])
        elif name in ("GLOBAL", "STACK_GLOBAL"):
            module, qualname = str(arg).split(" ", 1) if name == "GLOBAL" else (stack.pop(-2), stack.pop())
            if (module, qualname) not in _ALLOWED:
                raise ValueError(f"{module}.{qualname} is not a class a call cache holds")
            stack.append(_Allowed())
        elif name == "NEWOBJ":
            args, kind = stack.pop(), stack.pop()
            if not isinstance(kind, _Allowed) or args != ():
                raise ValueError("an object built other than as a cached reply's are")
            stack.append(_Stub())
        elif name == "BUILD":
            state = stack.pop()
            self._top(_Stub).state = state
        else:
            raise ValueError(f"opcode {name}, which no pickle of a cached reply uses")

    def _since_mark(self) -> list[Any]:
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items

    def _top(self, kind: type) -> Any:
        top = self.stack[-1]
        if not isinstance(top, kind):
            raise ValueError(f"a {type(top).__name__} where the stream needs a {kind.__name__}")
        return top


class _Plain:
    """Stubs and containers as plain JSON-like data, with every node counted (shared references included)."""

    def __init__(self) -> None:
        self.nodes = 0

    def __call__(self, value: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > ENTRY_BOUNDS.max_nodes or depth > ENTRY_BOUNDS.max_depth:
            raise ValueError("the entry holds more data than a cached reply")
        if isinstance(value, _Stub):
            state = value.state  # (no BUILD opcode: no state at all)
            fields = state.get("__dict__", state) if isinstance(state, dict) else None  # a pydantic model's, or not
            if not isinstance(fields, dict):
                raise ValueError("an object without the fields of a model or dataclass")
            return {str(k): self(v, depth + 1) for k, v in fields.items()}
        if isinstance(value, list | tuple):
            return [self(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {str(k): self(v, depth + 1) for k, v in value.items()}
        if value is None or isinstance(value, str | int | float | bool):
            return value
        raise ValueError(f"a {type(value).__name__}, which no cached reply holds")


def load_legacy_value(data: bytes) -> CallValue:
    """One diskcache value (a pickle) as a validated cache value; ValueError when it is anything else."""
    if len(data) > ENTRY_BOUNDS.max_bytes:
        raise ValueError(f"{len(data):,} bytes, more than a cached reply")
    try:
        loaded = _PickleData().read(data)
    except Exception as exc:  # a malformed or crafted stream (bad opcodes, an empty stack, unhashable keys ...)
        raise ValueError(f"not a pickle of a cached reply: {one_line(str(exc), 120)}") from None
    return parse_value(_Plain()(loaded))


def legacy_entries(folder: Path) -> tuple[list[tuple[str, CallValue]], int]:
    """The entries of ``folder/cache.db`` that validate, and how many were refused; ConfigError if it is no index."""
    path = folder / LEGACY_FILE
    db = open_sqlite(path, "old call cache", read_only=True, max_value_bytes=ENTRY_BOUNDS.max_bytes)
    try:
        require_columns(db, f"old call cache {path}", {"Cache": ("key", "mode", "filename", "value")})
        found = db.execute(  # (length() reads a value's size from its header: an oversized one is never loaded)
            "SELECT key, mode, filename, CASE WHEN length(value) <= ? THEN value END, length(value) FROM Cache",
            (ENTRY_BOUNDS.max_bytes,),
        ).fetchall()
    except SQLITE_ERRORS as exc:
        raise ConfigError(f"old call cache {path} cannot be read: {one_line(str(exc), 200)}") from None
    finally:
        db.close()
    entries, refused = [], []
    for key, mode, filename, value, size in found:
        try:
            if not isinstance(key, str) or mode != _MODE_PICKLE:
                raise ValueError("not a call cache entry (a text key and a pickled value)")
            if value is None and size is not None:
                raise ValueError(f"a value of {size:,} bytes, more than a cached reply")
            data = value if isinstance(value, bytes) else _side_file(folder, filename)
            entries.append((key, load_legacy_value(data)))
        except ValueError as exc:
            refused.append(one_line(str(exc), 200))
    if refused:
        log.warning("old call cache %s: %d entries refused (misses), the first: %s", path, len(refused), refused[0])
    return entries, len(refused)


def _side_file(folder: Path, name: object) -> bytes:
    """A value diskcache kept in its own file: read only under the folder, by a name of diskcache's own shape."""
    if not isinstance(name, str) or not _SIDE_FILE.fullmatch(name):
        raise ValueError(f"names a value file {one_line(repr(name), 80)}, not one of diskcache's own")
    path = folder / name
    if path.is_symlink() or not path.is_file() or path.resolve().parent.parent.parent != folder.resolve():
        raise ValueError(f"value file {name} is not a regular file inside the folder")
    if path.stat().st_size > ENTRY_BOUNDS.max_bytes:
        raise ValueError(f"value file {name} is larger than a cached reply")
    return path.read_bytes()


def migrate_folder(folder: Path, put_many: Callable[[list[tuple[str, CallValue]]], int]) -> int:
    """Copy a diskcache folder's valid entries with ``put_many`` (a new store's; once); how many were copied."""
    if not (folder / LEGACY_FILE).is_file():
        return 0
    entries, refused = legacy_entries(folder)
    copied = put_many(entries)
    log.info("call cache %s: %d entries migrated from %s, %d refused", folder, copied, LEGACY_FILE, refused)
    return copied
