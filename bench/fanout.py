"""Fan-out: jobs per second of ``moot compare`` with the local executor vs the Ray executor, on one machine.

Both run the same comparison (a generated arithmetic suite, arm ``single``,
a zero-latency deterministic model, a fresh output directory and cache per
repetition), interleaved so load drifts hit both alike. With the model's
latency at zero, the difference is the executor's own cost per job: Ray's
task submission, pickling the job and its row, and the cache and limiter
round-trips through actors. Ray's start-up is measured once, apart.
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
from moot.harness import CompareOptions
from moot.harness._runner import prepare_comparison
from moot.testing import DeterministicModel

ITEMS = 120
CONCURRENCY = 4
REPETITIONS = 3


def write_suite(path: Path) -> Path:
    lines = (json.dumps({"id": f"q{i}", "input": f"What is {i} + {i}?", "answer": 2 * i}) for i in range(ITEMS))
    path.write_text("\n".join(lines) + "\n")
    return path


async def sweep(suite: Path, out: Path, executor: str) -> float:
    """Seconds to compute every row of a fresh comparison (results file, cache and executor set-up included)."""
    options = CompareOptions(
        suite=str(suite), arms=["single"], models=["scripted:bench-zero"], out=out, concurrency=CONCURRENCY,
        executor=executor, ray_cpus_per_job=0.5,
    )  # fmt: skip
    start = time.perf_counter()
    runner = prepare_comparison(options)
    try:
        comparison = await runner.run()
    finally:
        runner.close()
    seconds = time.perf_counter() - start
    if comparison.computed != ITEMS or comparison.failed:
        raise RuntimeError(f"{executor}: {comparison.computed} rows computed, {comparison.failed} failed")
    return seconds


async def measure() -> dict[str, Any]:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    model = DeterministicModel("bench-zero").register()
    started = time.perf_counter()
    ray.init(include_dashboard=False, logging_level="warning", log_to_driver=False)
    ray_start = time.perf_counter() - started
    seconds: dict[str, list[float]] = {"local": [], "ray": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = write_suite(Path(tmp) / "sums.jsonl")
            await sweep(suite, Path(tmp) / "warm-ray", "ray")  # first tasks start worker processes
            for rep in range(REPETITIONS):
                for executor in ("local", "ray"):
                    seconds[executor].append(await sweep(suite, Path(tmp) / f"{executor}-{rep}", executor))
    finally:
        ray.shutdown()
        model.unregister()
    jobs_per_s = {name: summary([ITEMS / s for s in samples]) for name, samples in seconds.items()}
    return {
        "jobs": ITEMS,
        "concurrency": CONCURRENCY,
        "repetitions": REPETITIONS,
        "ray_start_s": ray_start,
        "jobs_per_s": jobs_per_s,
        "ray_to_local": jobs_per_s["ray"]["median"] / jobs_per_s["local"]["median"],
    }


if __name__ == "__main__":
    print(asyncio.run(measure()))
