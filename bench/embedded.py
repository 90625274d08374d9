"""The embedded model: wall time and tokens/s of a reflection and a debate, time outside model calls,
and what a stable message prefix saves through llama.cpp's prompt-cache reuse.

Timings come from moot's own trace events (run span vs its model_call spans),
so "outside the model" is everything moot does around the calls.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from moot import ModelSpec, RoleAgent, role
from moot.conditions import MaxRounds
from moot.teams import Debate, Reflection
from moot.tracing import TraceEvent, Tracer

SPEC = ModelSpec.parse("local?max_tokens=256&seed=1")
TASK = "Write a Python function is_even(n: int) -> bool with a docstring."
DEBATE_TASK = "Should a 3-person startup adopt microservices now? Answer yes or no."


class Collect:
    """A TraceSink that keeps events in memory."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    def emit(self, event: TraceEvent) -> None:
        self.events.append(event)


def split_time(events: list[TraceEvent]) -> dict[str, float]:
    run = next(e for e in events if e.kind == "run")
    calls = [e for e in events if e.kind == "model_call"]
    wall = run.end - run.start
    in_model = sum(e.end - e.start for e in calls)
    completion = sum(e.completion_tokens for e in calls)
    return {
        "wall_s": wall,
        "model_s": in_model,
        "outside_model_share": (wall - in_model) / wall,
        "model_calls": len(calls),
        "prompt_tokens": sum(e.prompt_tokens for e in calls),
        "completion_tokens": completion,
        "completion_tokens_per_s": completion / in_model,
    }


async def traced_run(team: Any, task: str) -> dict[str, float]:
    sink = Collect()
    team.record, team.tracer = False, Tracer([sink])
    await team.run(task=task)
    return split_time(sink.events)


async def loops() -> dict[str, Any]:
    reflection = Reflection(RoleAgent(role("generator"), SPEC), RoleAgent(role("critic"), SPEC), stop=MaxRounds(2))
    debate = Debate(
        [RoleAgent(role(name), SPEC) for name in ("architect", "ops")],
        RoleAgent(role("arbiter"), SPEC),
        stop=MaxRounds(2),
        options=("yes", "no"),
    )
    return {
        "reflection (at most 2 rounds)": await traced_run(reflection, TASK),
        "debate (2 experts, at most 2 rounds)": await traced_run(debate, DEBATE_TASK),
    }


def prompt_cache(repetitions: int = 5) -> dict[str, Any]:
    """Prompt processing time for a long shared prefix: reused from llama.cpp's cache vs recomputed."""
    from moot.embedded import model_path, shared_engine

    llm = shared_engine(model_path())
    system = {"role": "system", "content": RoleAgent(role("critic"), SPEC).system_message().content}
    body = {
        "role": "user",
        "content": "Task:\n" + TASK + "\n\nDraft to review:\n" + "def is_even(n): return n % 2 == 0\n" * 8,
    }

    def process(messages: list[dict[str, str]]) -> float:
        start = time.perf_counter()
        llm.create_chat_completion(messages=messages, max_tokens=1, temperature=0.0)
        return time.perf_counter() - start

    stable, changed = [], []
    for i in range(repetitions):
        process([system, body])  # warm: the prefix is now in the cache
        stable.append(process([system, {**body, "content": body["content"] + f"\nRound {i}."}]))
        changed.append(process([{**system, "content": f"Session {i}.\n" + system["content"]}, body]))
    return {
        "prefix_reused_s": statistics.median(stable),
        "prefix_changed_s": statistics.median(changed),
        "saved_share": 1 - statistics.median(stable) / statistics.median(changed),
        "repetitions": repetitions,
    }


async def measure() -> dict[str, Any]:
    return {"loops": await loops(), "prompt_cache": prompt_cache()}


if __name__ == "__main__":
    print(asyncio.run(measure()))
