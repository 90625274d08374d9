"""The run store: runs, turns and checkpoints in SQLite, for inspection and crash resume.

A team reports its run through the lifecycle hooks of ``_hooks.py`` (TeamHooks, RunInfo), which
the store's RunRecorder implements; they live here, below the teams, so the store never loads a team.
"""

from moot.store._hooks import RunInfo, TeamHooks
from moot.store._migrations import Migration, migrate
from moot.store._recorder import RunRecorder
from moot.store._status import FINISHED, RESUMABLE, RunStatus
from moot.store._store import RunRecord, RunStore, TurnRecord, resumable_state

__all__ = [
    "FINISHED",
    "RESUMABLE",
    "Migration",
    "RunInfo",
    "RunRecord",
    "RunRecorder",
    "RunStatus",
    "RunStore",
    "TeamHooks",
    "TurnRecord",
    "migrate",
    "resumable_state",
]
