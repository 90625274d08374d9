"""What runs inside the Ray cluster: the job task, the endpoint limiter and the call-cache server.

* ``run_job`` computes one row on a worker with the same ``compute_row`` the
  local executor uses; its clients are built there, from the specs, so a
  secret travels only as the env var name in ``api_key_env`` and is read on
  the worker. Traces are written to a scratch directory and returned with
  the row: the driver keeps every file of the output directory.
* ``EndpointLimiter`` is one async actor holding a semaphore per endpoint,
  so ``--concurrency`` bounds calls to a server across the whole cluster.
  Permits are held per job attempt; when a worker dies the driver frees its
  permits (and refuses any grant still in flight for it), so a dead worker
  cannot starve the endpoint.
* ``CacheServer`` owns the comparison's call cache on the driver's node:
  workers read and write it through the actor, so a replay makes zero calls
  on a cluster with no shared filesystem.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import ray
from autogen_core import CacheStore

from moot.harness.jobs._calls import BaseClientFactory, CallCache, ClientFactory, spec_label
from moot.harness.jobs._jobs import Job, RowOutcome, compute_traced
from moot.models import ModelSpec, Script, register_script
from moot.sandbox import SandboxRunner

__all__ = ["CacheServer", "EndpointLimiter", "WorkerSetup", "run_job"]


class EndpointLimiter:
    """At most ``per_endpoint`` calls in flight per endpoint, cluster-wide (a Ray async actor)."""

    def __init__(self, per_endpoint: int) -> None:
        self.per_endpoint = per_endpoint
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._held: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._dead: set[str] = set()
        self._in_flight: Counter[str] = Counter()
        self._peak: Counter[str] = Counter()

    def _semaphore(self, endpoint: str) -> asyncio.Semaphore:
        return self._semaphores.setdefault(endpoint, asyncio.Semaphore(self.per_endpoint))

    async def acquire(self, endpoint: str, holder: str) -> None:
        await self._semaphore(endpoint).acquire()
        if holder in self._dead:  # its worker died while this grant was queued: hand the permit straight back
            self._semaphore(endpoint).release()
            raise RuntimeError(f"job attempt {holder} was abandoned")
        self._held[holder][endpoint] += 1
        self._in_flight[endpoint] += 1
        self._peak[endpoint] = max(self._peak[endpoint], self._in_flight[endpoint])

    async def release(self, endpoint: str, holder: str) -> None:
        held = self._held.get(holder)
        if held and held[endpoint] > 0:  # an abandoned holder's permits were already freed
            held[endpoint] -= 1
            self._free(endpoint, 1)

    async def abandon(self, holder: str) -> int:
        """Free every permit a job attempt holds (its worker died); returns how many were freed."""
        self._dead.add(holder)
        held = self._held.pop(holder, Counter())
        for endpoint, count in held.items():
            self._free(endpoint, count)
        return sum(held.values())

    def _free(self, endpoint: str, count: int) -> None:
        self._in_flight[endpoint] -= count
        for _ in range(count):
            self._semaphore(endpoint).release()

    async def peak(self) -> dict[str, int]:
        """The most calls that were ever in flight at once, per endpoint."""
        return dict(self._peak)


class CacheServer:
    """The comparison's call cache, served from the driver's node (a Ray actor)."""

    def __init__(self, directory: str) -> None:
        self.cache = CallCache(Path(directory))

    def get(self, label: str, key: str) -> Any:
        return self.cache.labelled(label).get(key)

    def set(self, label: str, key: str, value: Any) -> None:
        self.cache.labelled(label).set(key, value)

    def close(self) -> None:
        self.cache.close()


class _RemoteStore(CacheStore[Any]):
    """AutoGen's CacheStore interface over the CacheServer actor, for one model spec."""

    def __init__(self, server: Any, label: str) -> None:
        self.server, self.label = server, label

    def get(self, key: str, default: Any = None) -> Any:
        found = ray.get(self.server.get.remote(self.label, key))
        return default if found is None else found

    def set(self, key: str, value: Any) -> None:
        # Not awaited: the actor runs one caller's calls in order, so a later get still sees it.
        self.server.set.remote(self.label, key, value)


class _RemoteCache:
    """The CallCache interface ClientFactory uses, answered by the CacheServer."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def store(self, spec: ModelSpec) -> CacheStore[Any]:
        return _RemoteStore(self.server, spec_label(spec))


class _Permit:
    """One call's permit from the EndpointLimiter, as an async context manager."""

    def __init__(self, limiter: Any, endpoint: str, holder: str) -> None:
        self.limiter, self.endpoint, self.holder = limiter, endpoint, holder

    async def __aenter__(self) -> None:
        await self.limiter.acquire.remote(self.endpoint, self.holder)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.limiter.release.remote(self.endpoint, self.holder)  # not awaited: the call's result is ready now


@dataclass
class WorkerSetup:
    """What every job of a comparison shares, put in Ray's object store once."""

    limiter: Any
    cache: Any | None
    base: BaseClientFactory | None
    sandbox: SandboxRunner
    scripted: dict[str, Script] = field(default_factory=dict)
    """Scripted test models the specs name, registered on the worker as they were on the driver."""

    def install(self) -> None:
        for script in self.scripted.values():
            register_script(script, replace=False)


def run_job(job: Job, holder: str, setup: WorkerSetup) -> tuple[RowOutcome, dict[str, str]]:
    """Compute one row on this worker; returns the outcome and the traces it wrote (file name -> JSONL)."""
    setup.install()
    cache = _RemoteCache(setup.cache) if setup.cache is not None else None
    clients = ClientFactory(lambda endpoint: _Permit(setup.limiter, endpoint, holder), cache, setup.base)
    return asyncio.run(compute_traced(job, clients, setup.sandbox))
