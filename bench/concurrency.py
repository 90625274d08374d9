"""Concurrency: N reflections at once vs one after another, against a local OpenAI-compatible server.

The benchmark starts ``python -m llama_cpp.server`` on 127.0.0.1 with the
embedded model's weights, points moot at it with an ``openai:...?base_url=``
spec, and stops it at the end. It measures what a user gets from
``--concurrency`` against a single-model server on this machine.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.served import SERVED_SPEC, llama_server
from moot import ModelSpec, RoleAgent, role
from moot.conditions import MaxRounds
from moot.teams import Reflection
from moot.tracing import Tracer

TASKS = [f"Write a Python function that returns the {n}th triangular number." for n in ("3rd", "5th", "7th", "9th")]


async def one(spec: ModelSpec, task: str) -> int:
    team = Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec), stop=MaxRounds(1))
    team.record, team.tracer = False, Tracer([])
    result = await team.run(task=task)
    return sum(u.completion_tokens for u in result.usage.values())


async def measure() -> dict[str, Any]:
    with llama_server() as base:
        spec = ModelSpec.parse(SERVED_SPEC.format(base=base) + "&max_tokens=160&seed=1")
        await one(spec, TASKS[0])  # warm-up
        start = time.perf_counter()
        sequential_tokens = [await one(spec, task) for task in TASKS]
        sequential = time.perf_counter() - start
        start = time.perf_counter()
        concurrent_tokens = await asyncio.gather(*(one(spec, task) for task in TASKS))
        concurrent = time.perf_counter() - start
    return {
        "scenarios": len(TASKS),
        "sequential_s": sequential,
        "concurrent_s": concurrent,
        "throughput_ratio": sequential / concurrent,
        "completion_tokens": {"sequential": sum(sequential_tokens), "concurrent": sum(concurrent_tokens)},
    }


if __name__ == "__main__":
    print(asyncio.run(measure()))
