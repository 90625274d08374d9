"""Executors: who computes a comparison's jobs. The runner decides *what* to run and writes every row.

``local`` runs jobs as asyncio tasks in this process, sharing one client
stack (so the embedded model is loaded once and the endpoint limits are
plain semaphores). ``ray`` (``moot.harness.jobs._ray_executor``) fans the same
jobs out as Ray tasks. Either way an executor only hands outcomes back, in
completion order, through ``done``; the results file stays the driver's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, Protocol

from moot.harness.jobs._calls import BaseClientFactory, CallCache, ClientFactory, EndpointLimits
from moot.harness.jobs._jobs import Job, RowOutcome, compute_traced
from moot.sandbox import SandboxRunner
from moot.tracing import TraceArchive

__all__ = ["Executor", "ExecutorName", "LocalExecutor", "OnDone"]

ExecutorName = Literal["local", "ray"]

OnDone = Callable[[RowOutcome], None]
"""Called once per job, in the driver, as soon as its outcome is known; raising stops the run."""


class Executor(Protocol):
    async def run(self, jobs: Sequence[Job], done: OnDone) -> None:
        """Compute every job (at most ``slots`` at once) and pass each outcome to ``done``."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Jobs as asyncio tasks in this process: ``slots`` at a time, calls bounded per endpoint by semaphores."""

    def __init__(
        self,
        *,
        slots: int,
        per_endpoint: int,
        cache_dir: Path | None,
        base: BaseClientFactory | None,
        sandbox: SandboxRunner,
        traces: TraceArchive | None,
    ) -> None:
        self.slots = slots
        self.cache = CallCache(cache_dir) if cache_dir is not None else None
        self.clients = ClientFactory(EndpointLimits(per_endpoint), self.cache, base)
        self.sandbox = sandbox
        self.traces = traces

    async def run(self, jobs: Sequence[Job], done: OnDone) -> None:
        queue: asyncio.Queue[Job] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)
        workers = [asyncio.create_task(self._worker(queue, done)) for _ in range(min(self.slots, len(jobs)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()

    async def _worker(self, queue: asyncio.Queue[Job], done: OnDone) -> None:
        while not queue.empty():
            job = queue.get_nowait()
            outcome, traces = await compute_traced(job, self.clients, self.sandbox)
            if self.traces is not None:  # before the row is recorded: a recorded row has its traces
                self.traces.append(traces)
            done(outcome)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
