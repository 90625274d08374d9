"""The run store: runs, turns and checkpoints in SQLite, for inspection and crash resume."""

from moot.store._migrations import Migration, migrate
from moot.store._recorder import RunRecorder
from moot.store._status import FINISHED, RESUMABLE, RunStatus
from moot.store._store import RunRecord, RunStore, TurnRecord, resumable_state

__all__ = [
    "FINISHED",
    "RESUMABLE",
    "Migration",
    "RunRecord",
    "RunRecorder",
    "RunStatus",
    "RunStore",
    "TurnRecord",
    "migrate",
    "resumable_state",
]
