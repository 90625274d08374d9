"""One embedded-model call at a time on this machine, across processes.

llama.cpp's worker threads spin while they wait for work, so two processes
decoding on the same cores slow each other down many times, not twice (a
debate that takes 80 s alone took over 15 minutes beside two others). A lock
file taken around each call makes concurrent moot processes take turns call
by call; the first time a process has to wait it says who holds the lock.

Not the filelock package: it takes a lock by polling (one non-blocking
attempt, then a sleep of ``poll_interval``, 50 ms by default), and it has no
blocking acquire. Here the waiting process must get the lock when the holder
lets go, but the holder takes it again for its next call a few milliseconds
later, before a poller wakes: two processes making 100 ms calls 5 ms apart
alternated call by call with a blocking ``flock`` (42 calls of 42), and with
filelock 4.3.1 one of them made 8 calls in a row while the other waited. A
blocking ``flock`` queues the waiter in the kernel, which wakes it at the
release. (Windows has no ``flock``; there every call runs at once, as before.)
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; every call runs at once, as before
    fcntl = None  # type: ignore[assignment]

__all__ = ["MachineLock"]


class MachineLock:
    """A re-usable exclusive lock on ``path`` (flock), held for the duration of a ``with`` block."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._warned = False
        self._guard = threading.Lock()

    def __enter__(self) -> MachineLock:
        self._guard.acquire()
        if fcntl is None:
            return self
        try:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._announce_wait(fd)
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except BaseException:
            self._guard.release()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            if fcntl is not None and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._guard.release()

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        return self._fd

    def _announce_wait(self, fd: int) -> None:
        if self._warned:
            return
        self._warned = True
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        print(
            f"moot: another process (pid {holder}) is running the embedded model on this machine; "
            "calls take turns instead of slowing each other down (MOOT_LOCAL_MACHINE_LOCK=0 turns this off)",
            file=sys.stderr,
            flush=True,
        )
