"""Fan-out: jobs per second of ``moot compare`` with the local executor vs the Ray executor, on one machine.

Both run the same comparison (a generated arithmetic suite, arm ``single``,
a zero-latency deterministic model, a fresh output directory and cache per
repetition), interleaved so load drifts hit both alike. With the model's
latency at zero, the difference is the executor's own cost: per sweep (Ray
starts a limiter and a cache actor, each a process) and per job (task
submission, pickling the job and its row, the cache and limiter round-trips
through those actors). Each sweep reports its time to the first row, its
steady rate after it, and its overall rate. Ray's own start-up is measured
once, apart.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import summary
from moot.harness import CompareRequest
from moot.harness.jobs._runner import prepare_comparison
from moot.testing import DeterministicModel

ITEMS = 300
CONCURRENCY = 4
REPETITIONS = 3


def write_suite(path: Path) -> Path:
    lines = (json.dumps({"id": f"q{i}", "input": f"What is {i} + {i}?", "answer": 2 * i}) for i in range(ITEMS))
    path.write_text("\n".join(lines) + "\n")
    return path


class _Clock:
    """A ProgressSink that notes when each row arrived."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []

    def start(self, phase: str, total: int, done: int) -> None:
        pass

    def advance(self, row: Any) -> None:
        self.arrivals.append(time.perf_counter())


async def sweep(suite: Path, out: Path, executor: str) -> dict[str, float]:
    """One fresh comparison (results file, cache and executor set-up included): first row, steady and overall rate."""
    request = CompareRequest(
        suite=str(suite), arms=["single"], models=["scripted:bench-zero"], out=out, concurrency=CONCURRENCY,
        executor=executor, ray_cpus_per_job=0.5,
    )  # fmt: skip
    clock = _Clock()
    start = time.perf_counter()
    runner = prepare_comparison(request, progress=clock)
    try:
        comparison = await runner.run()
    finally:
        runner.close()
    seconds = time.perf_counter() - start
    if comparison.computed != ITEMS or comparison.failed:
        raise RuntimeError(f"{executor}: {comparison.computed} rows computed, {comparison.failed} failed")
    first, last = clock.arrivals[0], clock.arrivals[-1]
    return {
        "first_row_s": first - start,
        "steady_jobs_per_s": (ITEMS - 1) / (last - first),
        "jobs_per_s": ITEMS / seconds,
    }


async def measure() -> dict[str, Any]:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    model = DeterministicModel("bench-zero").register()
    started = time.perf_counter()
    ray.init(include_dashboard=False, logging_level="warning", log_to_driver=False)
    ray_start = time.perf_counter() - started
    samples: dict[str, list[dict[str, float]]] = {"local": [], "ray": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = write_suite(Path(tmp) / "sums.jsonl")
            await sweep(suite, Path(tmp) / "warm-ray", "ray")  # first tasks start worker processes
            for rep in range(REPETITIONS):
                for executor in ("local", "ray"):
                    samples[executor].append(await sweep(suite, Path(tmp) / f"{executor}-{rep}", executor))
    finally:
        ray.shutdown()
        model.unregister()
    metrics = ("jobs_per_s", "steady_jobs_per_s", "first_row_s")
    stats = {name: {m: summary([s[m] for s in runs]) for m in metrics} for name, runs in samples.items()}
    return {
        "jobs": ITEMS,
        "concurrency": CONCURRENCY,
        "repetitions": REPETITIONS,
        "ray_start_s": ray_start,
        "executors": stats,
        "ray_to_local": stats["ray"]["jobs_per_s"]["median"] / stats["local"]["jobs_per_s"]["median"],
        "ray_to_local_steady": stats["ray"]["steady_jobs_per_s"]["median"]
        / stats["local"]["steady_jobs_per_s"]["median"],
    }


if __name__ == "__main__":
    print(asyncio.run(measure()))
