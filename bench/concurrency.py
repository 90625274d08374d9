"""Concurrency: N reflections at once vs one after another, against a local OpenAI-compatible server.

The benchmark starts ``python -m llama_cpp.server`` on 127.0.0.1 with the
embedded model's weights, points moot at it with an ``openai:...?base_url=``
spec, and stops it at the end. It measures what a user gets from
``--concurrency`` against a single-model server on this machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

from moot import ModelSpec, RoleAgent, role
from moot.conditions import MaxRounds
from moot.models._local import model_path
from moot.teams import Reflection
from moot.tracing import Tracer

TASKS = [f"Write a Python function that returns the {n}th triangular number." for n in ("3rd", "5th", "7th", "9th")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def llama_server() -> Iterator[str]:
    """Start the server on loopback, wait until it answers, stop it afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "8192",
            "--model_alias",
            "qwen",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("llama_cpp.server did not start") from None
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def one(spec: ModelSpec, task: str) -> int:
    team = Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec), stop=MaxRounds(1))
    team.record, team.tracer = False, Tracer([])
    result = await team.run(task=task)
    return sum(u.completion_tokens for u in result.usage.values())


async def measure() -> dict[str, Any]:
    with llama_server() as base:
        spec = ModelSpec.parse(f"openai:qwen@0.2?base_url={base}&max_tokens=160&seed=1")
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
