"""``--executor ray``: a comparison's item x arm jobs as Ray tasks (the ``[ray]`` extra).

The driver (this process) stays the only writer of the results file: tasks
return rows and the runner records them, so resume, replay and the report
work exactly as with the local executor. At most ``slots`` jobs are in
flight; each endpoint's calls are bounded cluster-wide by one limiter actor,
and the call cache is served by an actor on the driver's node (see
``_ray_worker``).

A job whose worker dies (killed, out of memory, node lost) is retried once
on another attempt, with the permits it held freed; if that attempt dies
too, the row is recorded as failed with the reason, and the next run of the
same command retries it. Ray's own task retries are off, so every retry is
this one, visible and counted in ``retried``.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot._extras import require
from moot.errors import ConfigError
from moot.harness.jobs._calls import BaseClientFactory
from moot.harness.jobs._executor import OnDone
from moot.harness.jobs._jobs import Job, RowOutcome
from moot.models import ModelSpec, Script, registered_scripts
from moot.sandbox import SandboxRunner
from moot.tracing import TraceArchive

__all__ = ["RayExecutor"]

ATTEMPTS = 2
"""A job runs at most twice: once, and once more if its worker died."""


@dataclass
class _Attempt:
    """One submission of a job: its number, the holder name its permits are held under, its Ray ref."""

    job: Job
    number: int
    holder: str
    ref: Any


Pending = dict[asyncio.Future[Any], _Attempt]


def _ray() -> Any:
    require("ray", "--executor ray (or use --executor local)")
    import ray

    return ray


def _check_reachable(address: str) -> None:
    """Refuse a ``HOST:PORT`` nobody listens on at once: ``ray.init`` would retry it for minutes."""
    match = re.fullmatch(r"(?:ray://)?\[?([^\]/]+?)\]?:(\d+)", address)
    if match is None:
        return  # "auto", "local" and the like: ray.init resolves (and refuses) those quickly
    try:
        socket.create_connection((match.group(1), int(match.group(2))), timeout=3).close()
    except OSError as exc:
        raise ConfigError(
            f"cannot reach Ray at {address} ({exc.strerror or exc}); start one with 'ray start --head', "
            "pass its address (HOST:6379, ray://HOST:10001 or auto), or omit --ray-address for a local Ray"
        ) from None


def _connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at ``address`` (or ``RAY_ADDRESS``), else start a local one; True if we started it."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        _check_reachable(address)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline by default: no usage reporting
    try:
        ray.init(address=address, include_dashboard=False, logging_level="warning", log_to_driver=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = address or "a new local cluster"
        raise ConfigError(f"cannot start or reach Ray at {where}: {exc}".splitlines()[0]) from None
    return True


def _scripted_models(specs: Sequence[ModelSpec]) -> dict[str, Script]:
    """The registered scripts the specs name: a worker process must register them to resolve the same names."""
    names = {s.model or "default" for s in specs if s.effective_provider == "scripted"}
    return {name: script for name, script in registered_scripts().items() if name in names}


class RayExecutor:
    """Jobs as Ray tasks; see the module docstring."""

    def __init__(
        self,
        *,
        address: str | None,
        slots: int,
        per_endpoint: int,
        cache_dir: Path | None,
        base: BaseClientFactory | None,
        specs: Sequence[ModelSpec],
        sandbox: SandboxRunner,
        traces: TraceArchive | None,
        cpus_per_job: float = 1.0,
    ) -> None:
        ray = self.ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from moot.harness.jobs._ray_worker import CacheServer, EndpointLimiter, WorkerSetup, run_job

        self._started = _connect(ray, address)
        here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        self.limiter = ray.remote(EndpointLimiter).options(num_cpus=0, max_concurrency=10_000).remote(per_endpoint)
        self.cache = None
        if cache_dir is not None:  # on the driver's node, where OUT/cache is
            self.cache = ray.remote(CacheServer).options(num_cpus=0, scheduling_strategy=here).remote(str(cache_dir))
        setup = WorkerSetup(self.limiter, self.cache, base, sandbox, _scripted_models(specs))
        self.setup = ray.put(setup)
        self.task = ray.remote(run_job).options(num_cpus=cpus_per_job, max_retries=0)
        self.slots = slots
        self.traces = traces
        self.retried = 0
        """Jobs retried because their worker died (this executor's lifetime)."""
        self.peak_calls: dict[str, int] = {}
        """The most calls ever in flight at once per endpoint, across the cluster (read at close)."""
        self._serial = 0

    async def run(self, jobs: Sequence[Job], done: OnDone) -> None:
        queue = deque(jobs)
        pending: Pending = {}
        try:
            while queue or pending:
                while queue and len(pending) < self.slots:
                    self._submit(pending, queue.popleft(), 1)
                finished, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in finished:
                    outcome = await self._outcome(future, pending.pop(future), pending)
                    if outcome is not None:
                        done(outcome)
        finally:
            await self._cancel(pending)

    def _submit(self, pending: Pending, job: Job, number: int) -> None:
        self._serial += 1
        holder = f"{self._serial}:{job.name}#{number}"
        ref = self.task.remote(job, holder, self.setup)
        pending[asyncio.wrap_future(ref.future())] = _Attempt(job, number, holder, ref)

    async def _outcome(self, future: asyncio.Future[Any], attempt: _Attempt, pending: Pending) -> RowOutcome | None:
        """The job's outcome; None when it was resubmitted after its worker died."""
        try:
            outcome, traces = future.result()
        except self.ray.exceptions.RayError as exc:
            await self.limiter.abandon.remote(attempt.holder)
            if attempt.number < ATTEMPTS:
                self.retried += 1
                self._submit(pending, attempt.job, attempt.number + 1)
                return None
            return _lost(attempt.job, exc)
        if self.traces is not None:  # before the row is recorded: a recorded row has its traces
            self.traces.append(traces)
        return outcome

    async def _cancel(self, pending: Pending) -> None:
        """An interrupt (or a fatal row) stops the sweep: cancel what is in flight and free its permits."""
        for future, attempt in pending.items():
            self.ray.cancel(attempt.ref, force=True)
            future.cancel()
            await self.limiter.abandon.remote(attempt.holder)
        pending.clear()

    def close(self) -> None:
        self.peak_calls = self.ray.get(self.limiter.peak.remote())
        if self.cache is not None:
            self.ray.get(self.cache.close.remote())
        for actor in (self.limiter, self.cache):
            if actor is not None:
                self.ray.kill(actor)
        if self._started:
            self.ray.shutdown()


def _lost(job: Job, exc: BaseException) -> RowOutcome:
    """The row of a job whose worker died on every attempt: failed, with the reason, retried on the next run."""
    reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
    return RowOutcome(job.blank_row(status="error", error=f"the Ray worker died on all {ATTEMPTS} attempts ({reason})"))
