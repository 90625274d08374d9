"""RunStatus: how a stored run stands, one closed set of values instead of strings spelled in many modules.

The store writes a member's value to the ``status`` column; a ``StrEnum``
member is that very string, so stores written before the enum existed read
back unchanged and ``moot runs --json`` prints the same text.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FINISHED", "RESUMABLE", "RunStatus"]


class RunStatus(StrEnum):
    """Where a run is: still going, paused, or how it ended."""

    RUNNING = "running"
    """A process drives it (or did, until its lease expires: then it reads as ``INTERRUPTED``)."""
    SUSPENDED = "suspended"
    """Paused at a feedback point, waiting for a human's answer (``moot resume`` gives one)."""
    INTERRUPTED = "interrupted"
    """Stopped from outside (Ctrl-C, SIGTERM) or its process died; it can be resumed."""
    FAILED = "failed"
    """Ended by an error, with no result; it can be resumed from its last checkpoint."""
    FINISHED = "finished"
    """Ended by its stop condition, with a result."""
    PARTIAL = "partial"
    """Ended early (a fault, a cut-short stop) with its best-so-far result."""


FINISHED = (RunStatus.FINISHED, RunStatus.PARTIAL)
"""The statuses of a run that has its result: nothing to resume."""
RESUMABLE = (RunStatus.RUNNING, RunStatus.INTERRUPTED, RunStatus.SUSPENDED, RunStatus.FAILED)
"""The statuses of a run that can go on from its last checkpoint (once no live process drives it)."""
