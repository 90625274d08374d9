"""RunRecorder: the TeamHooks that write a run into a RunStore."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moot.store._store import RunStore
from moot.teams._hooks import RunInfo, TeamHooks

__all__ = ["RunRecorder"]


class RunRecorder(TeamHooks):
    """Record runs, turns and checkpoints as they happen."""

    def __init__(self, store: RunStore) -> None:
        self.store = store

    async def on_run_start(self, run_id: str, info: RunInfo, resumed: bool) -> None:
        if not resumed:
            self.store.create_run(
                run_id, team=info.team, task=info.task, scenario=info.scenario, models=info.models, options=info.options
            )

    async def on_batch(
        self, run_id: str, seq: int, messages: Sequence[Mapping[str, Any]], state: Mapping[str, Any]
    ) -> None:
        self.store.record(run_id, seq, messages, state)

    async def on_run_end(
        self, run_id: str, status: str, stop_reason: str | None, result: Mapping[str, Any] | None
    ) -> None:
        if status in ("interrupted", "failed"):
            self.store.fail(run_id, status, stop_reason or status)
        else:
            self.store.finish(run_id, status, stop_reason, result)
