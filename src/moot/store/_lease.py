"""Who is driving a run: a lease (owner and heartbeat) so that only one process writes a run at a time.

The process running a run holds its lease and renews it while the run is
alive; a run whose owner died (``kill -9``, a crash, a closed laptop) is
recognised by a stale heartbeat, or at once when the owner was on this host
and its process is gone, and shows as ``interrupted``. Resuming takes over
only a lease that is free or dead; a second process is refused.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass

from moot.boundary import one_line

__all__ = ["LEASE_SECONDS", "Lease", "me"]

LEASE_SECONDS = 30.0
"""A heartbeat older than this means the owner is gone (renewed every third of it)."""


def me() -> str:
    """This process as a lease owner: ``pid@host``."""
    return f"{os.getpid()}@{socket.gethostname()}"


@dataclass(frozen=True)
class Lease:
    owner: str | None
    heartbeat: float | None
    """Seconds since the epoch of the owner's last renewal."""

    def alive(self, now: float | None = None) -> bool:
        """Whether a process still drives the run."""
        if self.owner is None or self.heartbeat is None:
            return False
        pid, _, host = self.owner.partition("@")
        if host == socket.gethostname() and pid.isdigit() and not _process_exists(int(pid)):
            return False
        return (now if now is not None else time.time()) - self.heartbeat < LEASE_SECONDS

    def describe(self, now: float | None = None) -> str:
        """The owner as one line of a message: the owner is read from the store file, which anyone may have written,
        so its parts are shown as outside text (one line, terminal-safe, bounded)."""
        ago = (now if now is not None else time.time()) - (self.heartbeat or 0.0)
        pid, _, host = (self.owner or "?@?").partition("@")
        return f"process {one_line(pid, 40) or '?'} on {one_line(host, 80) or '?'} (heartbeat {ago:.0f} s ago)"


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True
