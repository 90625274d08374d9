"""Cancelling a sandbox run from the event loop: its processes die at once and no new one starts.

A run blocks a worker thread (``asyncio.to_thread``); cancelling the task
that awaits it cannot stop that thread, so without help the run would go on
to its wall limit, starting a fresh code process after each fault. Here the
awaiting side hands the run a :class:`Cancellation` (through a context
variable, which ``to_thread`` copies into the thread, so no runner's
signature changes); the moment the awaiting task is cancelled it kills every
process the run started, and the run's next attempt to start one raises
:class:`SandboxCancelled` instead. The thread then unwinds in milliseconds.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.sandbox._limits import SandboxLimits
    from moot.sandbox._results import SandboxResult
    from moot.sandbox._runner import SandboxRunner

__all__ = ["Cancellation", "SandboxCancelled", "current_cancellation", "run_in_thread"]


class SandboxCancelled(Exception):
    """The run was cancelled before it finished: there is no result to report."""


class Cancellation:
    """Ends one run from any thread; the run starts its processes through :meth:`spawn`.

    Processes are killed through a pidfd (Linux 5.3+), which names that
    process even after another thread has reaped it, so a recycled pid is
    never hit; elsewhere the process group is killed if it has not been
    reaped yet.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._running: dict[subprocess.Popen[bytes], int | None] = {}

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Kill every process the run started and refuse any new one; safe to call more than once."""
        with self._lock:
            self._cancelled = True
            for proc, pidfd in self._running.items():
                _kill(proc, pidfd)

    def spawn(self, start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
        """``start()``, unless the run is cancelled (SandboxCancelled); a cancel from now on kills the process."""
        with self._lock:  # held while starting, so a cancel cannot fall between the check and the start
            if self._cancelled:
                raise SandboxCancelled("the sandbox run was cancelled")
            proc = start()
            self._running[proc] = _pidfd(proc.pid)
            return proc

    def release(self, proc: subprocess.Popen[bytes]) -> None:
        """Forget a process the run has reaped."""
        with self._lock:
            pidfd = self._running.pop(proc, None)
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        return None


def _kill(proc: subprocess.Popen[bytes], pidfd: int | None) -> None:
    try:
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        elif proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_CURRENT: contextvars.ContextVar[Cancellation | None] = contextvars.ContextVar("moot_sandbox_cancel", default=None)


def current_cancellation() -> Cancellation:
    """The cancellation the awaiting side gave this run, or a fresh one nobody will trigger."""
    return _CURRENT.get() or Cancellation()


async def run_in_thread(
    runner: SandboxRunner, code: str, tests: Sequence[str], limits: SandboxLimits, entry_points: Sequence[str] = ()
) -> SandboxResult:
    """``runner(code, tests, limits, entry_points=...)`` in a worker thread; cancelling the awaiting task ends the
    run at once.

    Every async caller of a sandbox runner goes through here. A runner other
    than :func:`~moot.sandbox.run_tests` simply never looks at the cancellation.
    """
    cancellation = Cancellation()
    scope = _CURRENT.set(cancellation)
    try:  # the task copies the context now, so the thread sees this run's cancellation and nothing leaks here
        run = asyncio.to_thread(runner, code, list(tests), limits, entry_points=tuple(entry_points))
        future = asyncio.ensure_future(run)
    finally:
        _CURRENT.reset(scope)
    future.add_done_callback(lambda done: cancellation.cancel() if done.cancelled() else None)
    return await future
