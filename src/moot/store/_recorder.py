"""RunRecorder: the TeamHooks that write a run into a RunStore, holding the run's lease while it runs."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from moot.errors import LeaseLostError
from moot.store._hooks import RunInfo, TeamHooks
from moot.store._lease import LEASE_SECONDS
from moot.store._status import RunStatus
from moot.store._store import RunStore

__all__ = ["RunRecorder"]


class RunRecorder(TeamHooks):
    """Record runs, turns and checkpoints as they happen."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._heartbeats: dict[str, asyncio.Task[None]] = {}

    async def on_run_start(self, run_id: str, info: RunInfo, resumed: bool) -> None:
        if resumed:
            self.store.acquire(run_id, info.config, force=info.force)
        else:
            self.store.create_run(
                run_id,
                team=info.team,
                task=info.task,
                scenario=info.scenario,
                models=info.models,
                options=info.options,
                config=info.config,
            )
        self._heartbeats[run_id] = asyncio.create_task(self._beat(run_id))

    async def _beat(self, run_id: str) -> None:
        """Renew the lease while a turn runs long (a slow model call): a live run never looks dead."""
        with contextlib.suppress(LeaseLostError):
            while True:
                await asyncio.sleep(LEASE_SECONDS / 3)
                self.store.heartbeat(run_id)

    async def on_batch(
        self, run_id: str, seq: int, messages: Sequence[Mapping[str, Any]], state: Mapping[str, Any]
    ) -> None:
        self.store.record(run_id, seq, messages, state)

    async def on_run_end(
        self, run_id: str, status: RunStatus, stop_reason: str | None, result: Mapping[str, Any] | None
    ) -> None:
        beat = self._heartbeats.pop(run_id, None)
        if beat is not None:
            beat.cancel()
        ended = RunStatus(status)
        if ended in (RunStatus.INTERRUPTED, RunStatus.FAILED):
            self.store.fail(run_id, ended, stop_reason or ended)
        else:
            self.store.finish(run_id, ended, stop_reason, result)
