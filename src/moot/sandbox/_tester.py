"""The sandbox process that runs the tests; it never runs the code under test.

Copied into its own throwaway work directory and run as ``python -I -B`` by
:mod:`moot.sandbox._sandbox`; moot never imports it (stdlib only).

The code runs in another process (``_code_host.py``). Here, each name the
code's module defines is a plain value or a :class:`Remote` stand-in:
calling it, iterating it or reading an attribute sends a request (relayed
by the parent) and gets back plain data, built afresh from JSON, so every
comparison a test makes runs on built-in objects in this process. The code
can neither see the tests nor reach the objects that decide the verdict.

A test is a snippet of Python statements run in a copy of those names; it
passes if it runs without raising. ``assert`` statements in it are
rewritten so a failing comparison reports both sides:
``assert slugify("a  b") == "a-b"`` fails with ``got 'a--b', expected 'a-b'``.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import linecache
import os
import random
import sys
import traceback
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's directory out
import _moot_child as child  # type: ignore[import-not-found]  # copied next to this file
import _moot_wire as wire  # type: ignore[import-not-found]

del sys.path[0]

REPR_CHARS = 160


class CodeFault(BaseException):
    """The code's process ended, or answered outside the protocol, during a request.

    A BaseException, like the step timeout, so a test's ``except Exception``
    cannot turn a crashed candidate into a pass.
    """


# ------------------------------------------------------------------ the code, at a distance
class Link:
    """Requests to the code's process, relayed by the parent, under the current step's alarm."""

    def __init__(self, channel: wire.Channel) -> None:
        self.channel = channel
        self.alarm: child.Alarm | None = None
        self._count = 0

    def request(self, op: str, target: Remote | None, **fields: Any) -> Any:
        self._count += 1
        alarm = self.alarm
        remaining = alarm.remaining() if alarm is not None else 1.0
        if alarm is not None:
            alarm.disarm()  # the parent times the code from here
        if remaining <= 0:
            raise child.StepTimeout
        ref = target._ref if target is not None else None
        self.channel.send({"op": op, "id": self._count, "target": ref, "seconds": remaining, **fields})
        reply = self.channel.recv()
        if alarm is not None:
            alarm.arm()
        return self._unpack(reply, op)

    def _unpack(self, reply: dict[str, Any], op: str) -> Any:
        if reply.get("timeout"):
            raise child.StepTimeout(child.clip(str(reply["timeout"]), child.MESSAGE_CHARS))
        if "died" in reply:
            raise _fault(str(reply["died"]))
        if "raised" in reply:
            raise _exception(reply["raised"], op)
        try:
            return wire.decode(reply.get("ok"), resolve)
        except (wire.WireError, RecursionError, MemoryError) as exc:
            raise _fault(f"the code answered with something that is not plain data ({exc})") from None


LINK: Link | None = None


def _request(op: str, target: Remote | None, **fields: Any) -> Any:
    if LINK is None:
        raise RuntimeError("no link to the code's process")
    return LINK.request(op, target, **fields)


def _to_code(value: Any) -> Any:
    """A test's value, as the code will receive it: plain data, or the code's own objects given back."""
    return wire.encode(value, _refer)


def _refer(value: Any) -> dict[str, Any]:
    if isinstance(value, Remote):
        return value._ref
    raise TypeError(
        f"only plain data ({wire.PLAIN}) and the code's own objects can be passed to the code, "
        f"not {type(value).__name__}"
    )


class Remote:
    """One of the code's objects that is not plain data: usable, never compared by the code's own rules.

    Calls, attribute reads, iteration, ``len`` and indexing are answered by the
    code: they give plain data, which the test then checks here. Equality,
    ordering and hashing are this process's (identity only, so an object whose
    ``__eq__`` is always true is equal to nothing here), and a truth or
    membership test of the code's object fails: no verdict is the code's own answer.
    """

    __slots__ = ("_ref", "_repr", "_type")

    def __init__(self, ref: dict[str, Any]) -> None:
        self._ref = {"~": "ref", "id": ref.get("id")}
        self._type = str(ref.get("type", "object"))[:80]
        self._repr = str(ref.get("repr", ""))[:REPR_CHARS]

    def __repr__(self) -> str:
        return f"<{self._type} object of the code: {self._repr}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The code gets copies (rebuilt from plain data): what it does to them never reaches the test's values."""
        kwargs_data = {k: _to_code(v) for k, v in kwargs.items()}
        return _request("call", self, args=[_to_code(a) for a in args], kwargs=kwargs_data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _request("getattr", self, name=name)

    def __iter__(self) -> Any:
        result = _request("iter", self)
        return result if isinstance(result, Remote) else iter(result)

    def __next__(self) -> Any:
        return _request("next", self)

    def __len__(self) -> int:
        return int(_request("len", self))

    def __bool__(self) -> bool:
        """Truth is tested here, on plain data: the code's object would answer by its own rules."""
        raise child.CompareFailed(
            f"got {self!r}, which is not plain data: only {wire.PLAIN} values are tested for truth"
        )

    def __getitem__(self, key: Any) -> Any:
        return _request("getitem", self, key=_to_code(key))

    def __contains__(self, item: Any) -> bool:
        """Membership is tested here, on plain data: the code's object would see the item looked for, and say yes."""
        raise child.CompareFailed(f"got {self!r}, which is not plain data: only {wire.PLAIN} values hold items here")


def resolve(ref: dict[str, Any]) -> Any:
    """A reference the code sent: a :class:`Remote`, or for a coroutine, a coroutine here that awaits it there."""
    remote = Remote(ref)
    return _completion(remote) if ref.get("awaitable") is True else remote


async def _completion(remote: Remote) -> Any:
    """Awaiting one of the code's coroutines runs it to completion in the code's process."""
    return _request("await", remote)


CONTROL_FLOW = frozenset({"StopIteration", "StopAsyncIteration"})
"""Exceptions that end a loop instead of failing it: raised out of a call, ``all(map(f, xs))`` would pass.
(GeneratorExit, SystemExit and KeyboardInterrupt are not Exceptions: they arrive as a CodeFault anyway.)"""


def _exception(raised: Any, op: str) -> BaseException:
    """The nearest built-in exception to what the code raised, carrying the code's own description.

    Everything in ``raised`` is the code's to write (its process can send anything), so each field is
    coerced to the text a report holds. An exception that would steer the test rather than fail it
    becomes a CodeFault: the only StopIteration raised here is the end of the code's own iterator (``next``).
    """
    raised = raised if isinstance(raised, dict) else {}
    names = raised.get("types")
    names = [name for name in names[:64] if type(name) is str] if type(names) is list else []
    kind, steering = _nearest_builtin(names, op)
    message = _text(raised.get("message"), child.MESSAGE_CHARS)
    error_type = _text(raised.get("error_type"), 80) or None
    if steering:
        message = f"{steering} raised out of the code ({message or 'no message'}): an error, not the end of a loop"
    try:
        exc = kind(message)
    except Exception:
        exc = CodeFault(message)
    exc.__moot_remote__ = {  # type: ignore[attr-defined]
        "error_type": error_type,
        "message": message,
        "where": _text(raised.get("where"), child.MESSAGE_CHARS) or None,
        "traceback": _text(raised.get("traceback"), child.TRACEBACK_CHARS),
    }
    return exc


def _nearest_builtin(names: list[str], op: str) -> tuple[type[BaseException], str]:
    """The class to raise here, and the control-flow exception it stands in for ("" if none)."""
    for name in names:
        kind = getattr(builtins, name, None)
        if isinstance(kind, type) and issubclass(kind, Exception):
            if name in CONTROL_FLOW and not (op == "next" and kind is StopIteration):
                return CodeFault, name
            return kind, ""
    return CodeFault, ""


def _text(value: Any, limit: int) -> str:
    """A field the code sent, as bounded text whatever its type."""
    if value is None:
        return ""
    return child.clip(value if type(value) is str else child.show(value), limit)


def _fault(message: str) -> CodeFault:
    fault = CodeFault(message)
    fault.__moot_remote__ = {"error_type": None, "message": message}  # type: ignore[attr-defined]
    return fault


class CodeNames(dict):  # type: ignore[type-arg]
    """A test's builtins: the code's module names, read from the code at each use, and Python's own.

    As builtins rather than globals, so what a test assigns (and the task's own setup run ahead of it)
    stays its own, and a function the test defines sees the code's names too. Which comes first where a
    code name is also a builtin's:

    * the names under test (``entry_points``, when the caller knows them) are the code's: an answer whose
      entry point is named like a builtin (``pow``, ``round``, ``filter``) is what a check of that name
      tests, never the builtin (which would pass ``def pow(b, e): return 0``);
    * every other builtin is Python's own: an answer that also defines ``abs`` or ``len`` does not change
      what a check computes with them;
    * with no entry points given, the code's names all come first, exactly as in one module.

    Reading the code's names at each use keeps them live, as an imported module's are: a test sees what
    the calls before it did to the module's globals.
    """

    def __init__(self, names: dict[str, Any], entry_points: list[str] | None = None) -> None:
        super().__init__(vars(builtins))
        self.names = set(names)
        self.first = self.names if entry_points is None else self.names & set(entry_points)
        """The code's names that take a builtin's place."""

    def __getitem__(self, key: str) -> Any:
        if key in self.first or (key in self.names and not super().__contains__(key)):
            return _request("name", None, name=key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or key in self.names


SHARED_MODULES = frozenset(
    {
        "array", "asyncio", "base64", "binascii", "bisect", "calendar", "cmath", "collections", "collections.abc",
        "contextlib", "copy", "dataclasses", "datetime", "decimal", "difflib", "enum", "fractions", "functools",
        "hashlib", "heapq", "inspect", "io", "itertools", "json", "math", "numbers", "numpy", "operator", "os",
        "pprint", "queue", "random", "re", "statistics", "string", "struct", "sys", "textwrap", "threading", "time",
        "types", "typing", "unicodedata", "weakref", "zlib",
    }
)  # fmt: skip
"""Modules a test may use by the name the code imported them under, as this process's own copy (never the
code's, which it may have patched): side-effect-free modules that tests check with. The code only picks
among these by name; any other module it imported stays its own object, answered by the code."""


def _shared_module(module: str | None) -> Any:
    """This process's own copy of a shared module, or None (never an import of a name the code chose)."""
    if module not in SHARED_MODULES:
        return None
    try:
        return importlib.import_module(module)
    except Exception:
        return None


def test_scope(exports: dict[str, Any], entry_points: list[str] | None = None) -> dict[str, Any]:
    """The globals a test starts with: the code's names (live), and this process's copies of shared modules.

    ``entry_points``: the names the tests are about; None when the caller named none (see :class:`CodeNames`).
    """
    scope: dict[str, Any] = {"__name__": "test", "__moot_compare__": compare, "__moot_true__": truthy}
    live = {}
    for name, module in exports.items():
        if not name.isidentifier() or (name.startswith("__") and name.endswith("__")):
            continue  # the parent passes only names like these; a ``__dunder__`` would reach the test's own
        shared = _shared_module(module)
        if shared is not None:
            scope[name] = shared
        else:
            live[name] = None
    scope["__builtins__"] = CodeNames(live, entry_points)
    return scope


# ------------------------------------------------------------------ assertion rewriting
_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}
_CHECKS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "is": lambda a, b: a is b,
    "is not": lambda a, b: a is not b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}
_VALUE_OPS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in"})


class RewriteAsserts(ast.NodeTransformer):
    """``assert L op R, M`` -> ``__moot_compare__(L, "op", R, lambda: M)``; other asserts -> ``__moot_true__``.

    Both sides are evaluated once, in the original order; the message only on failure, as before.
    """

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        self.generic_visit(node)
        no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        message: ast.expr = ast.Lambda(args=no_args, body=node.msg) if node.msg else ast.Constant(None)
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPS:
            op = ast.Constant(_OPS[type(test.ops[0])])
            call = _call("__moot_compare__", test.left, op, test.comparators[0], message)
        else:
            call = _call("__moot_true__", test, message)
        return ast.copy_location(ast.Expr(call), node)


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def compare(left: object, op: str, right: object, message: Callable[[], object] | None = None) -> None:
    """An assert's comparison, made here on plain data: one of the code's objects would answer it by its own rules
    (``__eq__`` sees the expected value, ``__contains__`` the item looked for), so it fails instead."""
    if op in _VALUE_OPS and (isinstance(left, Remote) or isinstance(right, Remote)):
        side = left if isinstance(left, Remote) else right
        _fail(f"got {side!r}, which is not plain data: only {wire.PLAIN} values are compared", message)
    if _CHECKS[op](left, right):
        return
    if op in ("==", "is"):
        expected = child.show(right)
    elif op in ("!=", "is not"):
        expected = f"anything but {child.show(right)}"
    else:
        expected = f"a value {op} {child.show(right)}"
    _fail(f"got {child.show(left)}, expected {expected}", message)


def truthy(value: object, message: Callable[[], object] | None = None) -> None:
    """A bare ``assert value``: true by this process's rules, so the value must be plain data, not the code's object."""
    if isinstance(value, Remote):
        _fail(f"got {value!r}, which is not plain data: only {wire.PLAIN} values are tested for truth", message)
    if value is NotImplemented:  # ``x.__eq__(y)`` that declined to compare: true by Python's rules, yet no answer
        _fail("got NotImplemented: the comparison was never made", message)
    if not value:
        _fail(f"got {child.show(value)}, expected a true value", message)


def _fail(detail: str, message: Callable[[], object] | None) -> None:
    raise child.CompareFailed(f"{message()} ({detail})" if message is not None else detail)


def compile_test(source: str, filename: str) -> Any:
    """Compile with the source registered in linecache, so tracebacks show the offending line."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.fix_missing_locations(RewriteAsserts().visit(ast.parse(source, filename)))
    return compile(tree, filename, "exec", dont_inherit=True)  # as Python runs it alone: not under our __future__


# ------------------------------------------------------------------ main
def run_tests(setup: dict[str, Any], link: Link) -> None:
    """Each test in turn, each from the same random state: a test that draws its inputs at random (HumanEval/38
    encodes random strings) gives the same verdict and failure text on every run, so a replay reproduces its row."""
    limits = setup["limits"]
    seconds, memory_mb = float(limits["test_seconds"]), int(limits["memory_mb"])
    for index, source in enumerate(setup["tests"]):
        filename = f"test_{index + 1}.py"

        def test(alarm: child.Alarm, source: str = source, filename: str = filename) -> None:
            link.alarm = alarm
            # Inside the step: the names are the code's, so their cost is charged to the code, never to the time
            # between steps (the sandbox's own, where a wall-clock overrun would be blamed on the sandbox).
            exec(compile_test(source, filename), test_scope(setup["exports"], setup.get("entry_points") or None))

        random.seed(index)
        link.channel.send({"event": "begin", "step": "test", "index": index})
        ended = child.run_step(test, seconds, filename, memory_mb)
        link.channel.send({"event": "end", "step": "test", "index": index, **ended})


def main() -> None:
    global LINK
    setup, isolation = child.start()
    LINK = Link(wire.Channel(int(setup["channel_fd"])))
    LINK.channel.send({"event": "ready", "isolation": isolation})
    try:
        run_tests(setup, LINK)
        LINK.channel.send({"event": "done"})
    except MemoryError:
        os._exit(int(setup["memory_exit_code"]))
    except BaseException as exc:  # a bug of ours, not the code's: every step catches what a test raises
        error = child.clip("".join(traceback.format_exception(exc)), child.TRACEBACK_CHARS)
        LINK.channel.send({"event": "harness_error", "error": error})
        raise
    child.finish()


if __name__ == "__main__":
    main()
