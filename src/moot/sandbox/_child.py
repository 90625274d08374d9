"""What both sandbox processes share: the start-up ritual and running one step under a time limit.

Copied into each sandbox work directory (as ``_moot_child.py``) next to the
process's main file; stdlib only, no moot imports.
"""

from __future__ import annotations

import json
import os
import reprlib
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import _moot_confine  # type: ignore[import-not-found]  # copied next to this file

CANDIDATE = "candidate.py"
MESSAGE_CHARS = 400
TRACEBACK_CHARS = 1200

_clock = time.perf_counter


class StepTimeout(BaseException):
    """Raised by the per-step alarm; a BaseException so the candidate's ``except Exception`` cannot swallow it."""


class CompareFailed(AssertionError):
    """A rewritten ``assert`` failed; the message already holds got-vs-expected."""


def start() -> tuple[dict[str, Any], list[str]]:
    """Read the setup from stdin (then hide it), install the step alarm, confine this process.

    Returns the setup and the confinement layers that took effect.
    """
    setup = json.loads(sys.stdin.buffer.read())
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the setup is no longer readable; input() sees end of file
    os.close(null)
    signal.signal(signal.SIGALRM, _on_alarm)
    return setup, _moot_confine.confine(setup["limits"], setup["workdir"])


def flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # the code may have closed or broken its own output
            pass


def finish() -> None:
    """Flush what the process printed and exit, skipping atexit handlers and finalizers the code registered."""
    flush()
    os._exit(0)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 120
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 12


def show(value: object) -> str:
    """A short repr that cannot take the process down with it."""
    try:
        return _REPR.repr(value)
    except Exception as exc:
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


# ------------------------------------------------------------------ running one step
_ALARM = {"armed": False}
"""A late SIGALRM (delivered while the step is being disarmed) must not hit the process's own code."""


def _on_alarm(signum: int, frame: object) -> None:
    if _ALARM["armed"]:
        raise StepTimeout


class Alarm:
    """The per-step alarm, which can be paused while the step waits on the other process."""

    def __init__(self, seconds: float) -> None:
        self.deadline = _clock() + seconds

    def arm(self) -> None:
        _ALARM["armed"] = True
        signal.setitimer(signal.ITIMER_REAL, max(self.remaining(), 0.001))

    def disarm(self) -> None:
        _ALARM["armed"] = False
        signal.setitimer(signal.ITIMER_REAL, 0)

    def remaining(self) -> float:
        return self.deadline - _clock()


def run_step(body: Callable[[Alarm], None], seconds: float, own_file: str, memory_mb: int) -> dict[str, Any]:
    """Run ``body`` under the per-step alarm and describe how it ended."""
    start = _clock()
    alarm = Alarm(seconds)
    memory = False
    try:
        try:
            alarm.arm()
            body(alarm)
        finally:
            alarm.disarm()
    except StepTimeout as exc:
        message = str(exc) or f"took longer than {seconds:g} s"  # or the limit the code's process hit
        return {"outcome": "timeout", "message": message, "seconds": _clock() - start}
    except MemoryError:
        memory = True  # handled outside the except block, once the frames holding the memory are released
    except BaseException as exc:
        return {**describe(exc, own_file), "seconds": _clock() - start}
    if memory:
        message = f"memory limit of {memory_mb} MB exceeded (MemoryError)"
        return {"outcome": "error", "error_type": "MemoryError", "message": message, "seconds": _clock() - start}
    return {"outcome": "passed", "seconds": _clock() - start}


def describe(exc: BaseException, own_file: str) -> dict[str, Any]:
    """Outcome, message, exception type, innermost location and a short traceback of the candidate/test frames.

    An exception the code raised in the other process carries that process's
    description in ``__moot_remote__``; it is an error of the code, never a failed check.
    """
    remote = getattr(exc, "__moot_remote__", None)
    if isinstance(remote, dict):
        return {
            "outcome": "error",
            "error_type": remote.get("error_type"),
            "message": clip(str(remote.get("message", "")), MESSAGE_CHARS),
            "where": remote.get("where"),
            "traceback": clip(str(remote.get("traceback", "")), TRACEBACK_CHARS),
        }
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
