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
        originals = fields.pop("_originals", {})
        ref = target._ref if target is not None else None
        self.channel.send({"op": op, "id": self._count, "target": ref, "seconds": remaining, **fields})
        reply = self.channel.recv()
        if alarm is not None:
            alarm.arm()
        return self._unpack(reply, originals)

    def _unpack(self, reply: dict[str, Any], originals: dict[str, Any]) -> Any:
        if reply.get("timeout"):
            raise child.StepTimeout(str(reply["timeout"]))
        if "died" in reply:
            raise _fault(str(reply["died"]))
        if "raised" in reply:
            raise _exception(reply["raised"])
        try:
            value = wire.decode(reply.get("ok"), resolve)
            _apply_mutations(reply.get("mutated"), originals)
        except (wire.WireError, RecursionError, MemoryError) as exc:
            raise _fault(f"the code answered with something that is not plain data ({exc})") from None
        return value


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

    Calls, attribute reads, iteration, ``len``, ``bool``, ``in`` and indexing
    are answered by the code. Equality and ordering are this process's:
    identity only, so an object whose ``__eq__`` is always true is equal to nothing here.
    """

    __slots__ = ("_ref", "_repr", "_type")

    def __init__(self, ref: dict[str, Any]) -> None:
        self._ref = {"~": "ref", "id": ref.get("id")}
        self._type = str(ref.get("type", "object"))[:80]
        self._repr = str(ref.get("repr", ""))[:REPR_CHARS]

    def __repr__(self) -> str:
        return f"<{self._type} object of the code: {self._repr}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        originals = {str(i): v for i, v in enumerate(args)} | dict(kwargs)
        return _request(
            "call",
            self,
            args=[_to_code(a) for a in args],
            kwargs={k: _to_code(v) for k, v in kwargs.items()},
            _originals=originals,
        )

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
        return _request("bool", self) is True

    def __getitem__(self, key: Any) -> Any:
        return _request("getitem", self, key=_to_code(key))

    def __contains__(self, item: Any) -> bool:
        return _request("contains", self, item=_to_code(item)) is True


def resolve(ref: dict[str, Any]) -> Any:
    """A reference the code sent: a :class:`Remote`, or for a coroutine, a coroutine here that awaits it there."""
    remote = Remote(ref)
    return _completion(remote) if ref.get("awaitable") is True else remote


async def _completion(remote: Remote) -> Any:
    """Awaiting one of the code's coroutines runs it to completion in the code's process."""
    return _request("await", remote)


def _apply_mutations(mutated: Any, originals: dict[str, Any]) -> None:
    """Arguments the code changed in place (``xs.sort()``), changed in place here too."""
    if not isinstance(mutated, dict):
        return
    for key, data in mutated.items():
        target = originals.get(key)
        value = wire.decode(data, resolve)
        if type(target) is not type(value):
            continue
        if isinstance(target, list | bytearray):
            target[:] = value
        elif isinstance(target, dict | set):
            target.clear()
            target.update(value)


def _exception(raised: Any) -> BaseException:
    """The nearest built-in exception to what the code raised, carrying the code's own description."""
    raised = raised if isinstance(raised, dict) else {}
    kind: type[BaseException] = CodeFault
    for name in raised.get("types", []):
        candidate = getattr(builtins, str(name), None)
        if isinstance(candidate, type) and issubclass(candidate, Exception):
            kind = candidate
            break
    message = str(raised.get("message", ""))
    try:
        exc = kind(message)
    except Exception:
        exc = Exception(message)
    exc.__moot_remote__ = {  # type: ignore[attr-defined]
        "error_type": raised.get("error_type"),
        "message": message,
        "where": raised.get("where"),
        "traceback": str(raised.get("traceback", "")),
    }
    return exc


def _fault(message: str) -> CodeFault:
    fault = CodeFault(message)
    fault.__moot_remote__ = {"error_type": None, "message": message}  # type: ignore[attr-defined]
    return fault


class CodeNames(dict):  # type: ignore[type-arg]
    """A test's builtins: Python's own, then the code's module names, read from the code at each use.

    As builtins rather than globals, so what a test assigns stays its own, and
    a function the test defines sees the code's names too. Python's builtins
    come first: code that defines its own ``abs`` or ``len`` must not change
    what the test's checks compute. Reading the code's names at each use keeps
    them live, as an imported module's are: a test sees what the calls before
    it did to the module's globals.
    """

    def __init__(self, names: dict[str, Any]) -> None:
        super().__init__(vars(builtins))
        self.names = set(names)

    def __getitem__(self, key: str) -> Any:
        if not super().__contains__(key) and key in self.names:
            return _request("name", None, name=key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or key in self.names


def _own_import(module: str) -> Any:
    """This process's own copy of a module the code imported (never the code's object: it may be a fake)."""
    try:
        return importlib.import_module(module)
    except Exception:
        return None


def test_scope(exports: dict[str, Any]) -> dict[str, Any]:
    """The globals a test starts with: the code's names (live), and the standard-library modules it imported."""
    scope: dict[str, Any] = {"__name__": "test", "__moot_compare__": compare, "__moot_true__": truthy}
    live = {}
    for name, module in exports.items():
        if module is None:
            live[name] = None
        elif (imported := _own_import(str(module))) is not None:
            scope[name] = imported
    scope["__builtins__"] = CodeNames(live)
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
_VALUE_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})


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
    if not value:
        _fail(f"got {child.show(value)}, expected a true value", message)


def _fail(detail: str, message: Callable[[], object] | None) -> None:
    raise child.CompareFailed(f"{message()} ({detail})" if message is not None else detail)


def compile_test(source: str, filename: str) -> Any:
    """Compile with the source registered in linecache, so tracebacks show the offending line."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.fix_missing_locations(RewriteAsserts().visit(ast.parse(source, filename)))
    return compile(tree, filename, "exec")


# ------------------------------------------------------------------ main
def run_tests(job: dict[str, Any], link: Link) -> None:
    limits = job["limits"]
    seconds, memory_mb = float(limits["test_seconds"]), int(limits["memory_mb"])
    for index, source in enumerate(job["tests"]):
        filename = f"test_{index + 1}.py"
        scope = test_scope(job["exports"])

        def test(alarm: child.Alarm, source: str = source, filename: str = filename, scope: dict = scope) -> None:
            link.alarm = alarm
            exec(compile_test(source, filename), scope)

        link.channel.send({"event": "begin", "step": "test", "index": index})
        ended = child.run_step(test, seconds, filename, memory_mb)
        link.channel.send({"event": "end", "step": "test", "index": index, **ended})


def main() -> None:
    global LINK
    job, isolation = child.start()
    LINK = Link(wire.Channel(int(job["channel_fd"])))
    LINK.channel.send({"event": "ready", "isolation": isolation})
    try:
        run_tests(job, LINK)
        LINK.channel.send({"event": "done"})
    except MemoryError:
        os._exit(int(job["memory_exit_code"]))
    except BaseException as exc:  # a bug of ours, not the code's: every step catches what a test raises
        error = child.clip("".join(traceback.format_exception(exc)), child.TRACEBACK_CHARS)
        LINK.channel.send({"event": "harness_error", "error": error})
        raise
    child.finish()


if __name__ == "__main__":
    main()
