"""How every ``moot`` command ends: its exit codes and its one-line refusal.

Scripts and CI branch on the code, never on the text:

- 0: the run (or every row of a comparison) finished;
- 1: the run failed with no result (an unexpected error; its one line says which);
- 2: bad input (spec, scenario, suite, store, option, key): nothing was run or written;
- 3: the run stopped early with its best-so-far result (``partial``), is suspended
  waiting for feedback, or a comparison left rows failed; the same command (or
  ``moot resume``) goes on;
- 130 (Ctrl-C) and 143 (SIGTERM): the run was interrupted; it is stored as
  ``interrupted`` and ``moot resume ID`` goes on (the shell's 128 + signal number).
  A comparison keeps every finished row, and the same ``moot compare`` command
  with the same ``--out`` goes on (``COMPARE_EXIT_CODES_HELP``).

How a long command stops on Ctrl-C (SIGINT) or SIGTERM: ``asyncio.run`` already turns Ctrl-C into a cancellation
of the running task; :func:`run_until_signal` does the same for SIGTERM (a ``kill``, a CI timeout, a container
stop), so the command's own cleanup (``finally`` blocks, a run marked interrupted, files closed) runs either way,
and reports which signal it was as :class:`Interrupted` (exit 130 or 143). Work blocked in a thread (a model call
in the embedded engine, a sandbox run) cannot be cancelled; its threads are daemons there, so neither the event
loop's shutdown nor the interpreter's exit waits for a call whose answer nobody will read.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import typer

from moot._redact import redact
from moot.boundary import TerminalConsole
from moot.store import RunStatus

__all__ = [
    "BAD_INPUT",
    "COMPARE_EXIT_CODES_HELP",
    "EXIT_CODES_HELP",
    "FAILED",
    "FINISHED",
    "INTERRUPTED",
    "PARTIAL",
    "TERMINATED",
    "Interrupted",
    "exit_code",
    "refuse",
    "run_until_signal",
    "say_error",
]

FINISHED, FAILED, BAD_INPUT, PARTIAL = 0, 1, 2, 3
INTERRUPTED, TERMINATED = 130, 143
EXIT_CODES_HELP = (
    "Exit codes: 0 finished; 1 failed; 2 bad input (nothing run); 3 partial, suspended, or rows failed "
    "(re-run or resume to go on); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM): moot resume ID goes on."
)

COMPARE_EXIT_CODES_HELP = (
    "Exit codes: 0 finished; 1 failed; 2 bad input (nothing run or written); 3 partial: rows failed or missed the "
    "cache (the report is written); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM): finished rows are kept. "
    "To go on, run the same command again with the same --out: it computes only the rows still missing."
)

_err = TerminalConsole(stderr=True)


def say_error(message: str) -> None:
    """``moot: error: ...`` as exactly one line on stderr, secrets redacted, however long or multi-line the text."""
    line = " ".join((redact(message) or "").split())
    _err.print(f"moot: error: {line}", markup=False, highlight=False, soft_wrap=True)


def refuse(message: str) -> typer.Exit:
    """Bad input: print its one line and return the exit to raise (``raise refuse(...) from None``)."""
    say_error(message)
    return typer.Exit(BAD_INPUT)


def exit_code(status: RunStatus) -> int:
    """The exit code of a run that ended with ``status`` (as the run store records it)."""
    if status is RunStatus.FINISHED:
        return FINISHED
    return PARTIAL if status in (RunStatus.PARTIAL, RunStatus.SUSPENDED) else FAILED


T = TypeVar("T")


class Interrupted(Exception):
    """The command was stopped by a signal: ``code`` is its exit code, ``how`` names the signal for a person."""

    def __init__(self, code: int, how: str) -> None:
        super().__init__(how)
        self.code = code
        self.how = how


class _DaemonThreads(ThreadPoolExecutor):
    """The event loop's default executor: one daemon thread per call, never waited for on shutdown or exit.
    (A ThreadPoolExecutor by type, which asyncio requires, whose pool is never used: its workers are joined at
    exit, however long the call they are in.)"""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to the awaiting task, as a ThreadPoolExecutor does
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=work, name="moot-call", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to join: a call still running has no one left to answer."""


class _Signals:
    """SIGTERM cancels the main task as Ctrl-C does; remembers that it did."""

    def __init__(self) -> None:
        self.terminated = False

    def watch(self) -> None:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        loop.set_default_executor(_DaemonThreads())
        if task is None:
            return
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
            loop.add_signal_handler(signal.SIGTERM, self._cancel, task)

    def _cancel(self, task: asyncio.Task[Any]) -> None:
        self.terminated = True
        task.cancel()


def run_until_signal(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``; Ctrl-C or SIGTERM cancels ``main`` (its cleanup runs) and raises :class:`Interrupted`."""
    signals = _Signals()

    async def watched() -> T:
        signals.watch()
        return await main

    try:
        return asyncio.run(watched())
    except KeyboardInterrupt:
        raise Interrupted(INTERRUPTED, "Ctrl-C") from None
    except asyncio.CancelledError:
        if not signals.terminated:
            raise
        raise Interrupted(TERMINATED, "SIGTERM") from None
