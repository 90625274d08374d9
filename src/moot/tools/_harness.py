"""The sandbox child: confine this process, run the candidate code, then each test, and report.

Copied into the throwaway work directory and run as ``python -I -B`` by
:mod:`moot.tools._sandbox`; moot never imports it (stdlib only).

Protocol. The job arrives as JSON on stdin (which is then replaced by
/dev/null): the code, the tests, the limits, the descriptor to report on and a
random nonce. Reports are JSON lines written to that inherited descriptor (an
unnamed file, so no path to guess) and carry the nonce, so text the candidate
prints, or writes anywhere it can name, is never taken for a result. Each step
is bracketed: ``begin`` is written before the candidate runs and ``end`` after,
so when the process dies the parent knows whether it died inside the
candidate's code (a content fault) or inside the harness (a tool fault).

A test is a snippet of Python statements run after the code, in a copy of the
code's namespace; it passes if it runs without raising. ``assert`` statements
in it are rewritten so a failing comparison reports both sides:
``assert slugify("a  b") == "a-b"`` fails with ``got 'a--b', expected 'a-b'``.
"""

from __future__ import annotations

import ast
import builtins
import json
import linecache
import os
import reprlib
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

CANDIDATE = "candidate.py"
MESSAGE_CHARS = 400
TRACEBACK_CHARS = 1200

_write = os.write
_dumps = json.dumps
_clock = time.perf_counter


class StepTimeout(BaseException):
    """Raised by the per-step alarm; a BaseException so the candidate's ``except Exception`` cannot swallow it."""


class CompareFailed(AssertionError):
    """A rewritten ``assert`` failed; the message already holds got-vs-expected."""


# ------------------------------------------------------------------ reporting
class Reporter:
    """Writes nonce-stamped JSON lines to the inherited result descriptor.

    Holds a memory reserve: code that exhausts memory and keeps it (a global
    list) must not leave the harness unable to say so. The reserve is given
    up the first time a report cannot be built; after that, ``main`` exits
    with the memory exit code and the parent blames the code.
    """

    def __init__(self, fd: int, nonce: str) -> None:
        self._fd, self._nonce = fd, nonce
        self._reserve: bytearray | None = bytearray(4 * 1024 * 1024)

    def __call__(self, event: str, **fields: Any) -> None:
        try:
            line = _dumps({"nonce": self._nonce, "event": event, **fields}) + "\n"
        except MemoryError:
            self._reserve = None
            line = _dumps({"nonce": self._nonce, "event": event, **fields}) + "\n"
        _write(self._fd, line.encode("utf-8", "replace"))


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 120
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 12


def show(value: object) -> str:
    """A short repr that cannot take the harness down with it."""
    try:
        return _REPR.repr(value)
    except Exception as exc:
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


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
    if _CHECKS[op](left, right):
        return
    if op in ("==", "is"):
        expected = show(right)
    elif op in ("!=", "is not"):
        expected = f"anything but {show(right)}"
    else:
        expected = f"a value {op} {show(right)}"
    _fail(f"got {show(left)}, expected {expected}", message)


def truthy(value: object, message: Callable[[], object] | None = None) -> None:
    if not value:
        _fail(f"got {show(value)}, expected a true value", message)


def _fail(detail: str, message: Callable[[], object] | None) -> None:
    raise CompareFailed(f"{message()} ({detail})" if message is not None else detail)


def compile_source(source: str, filename: str, rewrite: bool) -> Any:
    """Compile with the source registered in linecache, so tracebacks show the offending line."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.parse(source, filename)
    if rewrite:
        tree = ast.fix_missing_locations(RewriteAsserts().visit(tree))
    return compile(tree, filename, "exec")


# ------------------------------------------------------------------ running one step
_ALARM = {"armed": False}
"""A late SIGALRM (delivered while the step is being disarmed) must not hit the harness's own code."""


def _on_alarm(signum: int, frame: object) -> None:
    if _ALARM["armed"]:
        raise StepTimeout


def run_step(body: Callable[[], None], seconds: float, own_file: str, memory_mb: int) -> dict[str, Any]:
    """Run ``body`` under the per-step alarm and describe how it ended."""
    start = _clock()
    memory = False
    try:
        try:
            _ALARM["armed"] = True
            signal.setitimer(signal.ITIMER_REAL, seconds)
            body()
        finally:
            _ALARM["armed"] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except StepTimeout:
        return {"outcome": "timeout", "message": f"took longer than {seconds:g} s", "seconds": _clock() - start}
    except MemoryError:
        memory = True  # handled outside the except block, once the frames holding the memory are released
    except BaseException as exc:
        return {**describe(exc, own_file), "seconds": _clock() - start}
    if memory:
        message = f"memory limit of {memory_mb} MB exceeded (MemoryError)"
        return {"outcome": "error", "error_type": "MemoryError", "message": message, "seconds": _clock() - start}
    return {"outcome": "passed", "seconds": _clock() - start}


def describe(exc: BaseException, own_file: str) -> dict[str, Any]:
    """Outcome, message, exception type, innermost location and a short traceback of the candidate/test frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in (CANDIDATE, own_file)]
    failed = isinstance(exc, CompareFailed) or (
        isinstance(exc, AssertionError) and bool(frames) and frames[-1].filename == own_file
    )
    where = f"{frames[-1].filename} line {frames[-1].lineno}, in {frames[-1].name}" if frames else None
    if isinstance(exc, SyntaxError) and exc.filename in (CANDIDATE, own_file):
        message = f"{exc.msg}: {exc.text.strip()!r}" if exc.text else str(exc.msg)
        where = f"{exc.filename} line {exc.lineno}"
    elif isinstance(exc, SystemExit):
        message = f"the code called sys.exit({show(exc.code)})"
    else:
        message = message_of(exc) or ("assertion failed" if failed else "")
    return {
        "outcome": "failed" if failed else "error",
        "error_type": None if failed else type(exc).__name__,
        "message": clip(message, MESSAGE_CHARS),
        "where": where,
        "traceback": clip("".join(traceback.format_list(frames[-4:])), TRACEBACK_CHARS),
    }


def message_of(exc: BaseException) -> str:
    """``str(exc)``, which is the code's own ``__str__`` and may itself raise."""
    try:
        return str(exc)
    except Exception as inner:
        return f"<unprintable {type(exc).__name__}: {type(inner).__name__}>"


# ------------------------------------------------------------------ main
def run_job(job: dict[str, Any], report: Reporter) -> None:
    seconds, memory_mb = float(job["limits"]["test_seconds"]), int(job["limits"]["memory_mb"])
    namespace: dict[str, Any] = {"__name__": "candidate", "__file__": CANDIDATE, "__builtins__": builtins}

    def load() -> None:
        exec(compile_source(job["code"], CANDIDATE, rewrite=False), namespace)

    report("begin", step="load")
    loaded = run_step(load, seconds, CANDIDATE, memory_mb)
    report("end", step="load", **loaded)
    if loaded["outcome"] != "passed":
        return
    for index, source in enumerate(job["tests"]):
        filename = f"test_{index + 1}.py"
        scope = {**namespace, "__name__": "test", "__moot_compare__": compare, "__moot_true__": truthy}

        def test(source: str = source, filename: str = filename, scope: dict[str, Any] = scope) -> None:
            exec(compile_source(source, filename, rewrite=True), scope)

        report("begin", step="test", index=index)
        report("end", step="test", index=index, **run_step(test, seconds, filename, memory_mb))


def main() -> None:
    job = json.loads(sys.stdin.buffer.read())
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the job (with the nonce) is no longer readable; input() sees end of file
    os.close(null)
    report = Reporter(int(job["result_fd"]), str(job["nonce"]))
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _moot_confine  # type: ignore[import-not-found]  # copied next to this file

    del sys.path[0]
    del sys.modules["_moot_confine"]  # out of the code's easy reach (`import _moot_confine` finds nothing)
    try:
        report("ready", isolation=_moot_confine.confine(job["limits"], job["workdir"]))
        run_job(job, report)
        report("done")
    except MemoryError:
        # The harness needs almost nothing; out of memory here means the code's data still holds it all.
        os._exit(int(job["memory_exit_code"]))
    except BaseException as exc:  # a bug of ours, not the code's: every step catches what the code raises
        report("harness_error", error=clip("".join(traceback.format_exception(exc)), TRACEBACK_CHARS))
        raise
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # the code may have closed or broken its own output; the report is already written
            pass
    os._exit(0)  # skip atexit handlers and finalizers the code may have registered


if __name__ == "__main__":
    main()
