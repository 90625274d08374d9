"""Orchestration overhead per agent turn: moot vs bare AutoGen vs a plain loop, same agents, zero-latency model.

The model is moot.testing.DeterministicModel (a hash of the prompt, no sleep), so
what is timed is orchestration: prompt rendering, message handling, termination
checks, and for moot its run store and trace writes.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.messages import StructuredMessage
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core.models import UserMessage

from bench._common import summary, timed
from moot import Critique, ModelSpec, RoleAgent, role
from moot.arbiters import MajorityVote
from moot.conditions import MaxRounds
from moot.teams import Debate, Reflection
from moot.testing import DeterministicModel
from moot.tracing import Tracer

ROUNDS = 50  # agent turns per run: 2 per reflection round
TASK = "Write a Python function slugify(title: str) -> str."
SPEC = ModelSpec(provider="scripted", model="bench")


def agents() -> tuple[RoleAgent, RoleAgent]:
    return RoleAgent(role("generator"), SPEC), RoleAgent(role("critic"), SPEC)


async def plain_loop() -> int:
    generator, critic = agents()
    system_g, system_c = generator.system_message(), critic.system_message()
    draft = ""
    for _ in range(ROUNDS):
        result = await generator.model_client.create([system_g, UserMessage(content=TASK + draft, source="user")])
        draft = str(result.content)
        await critic.model_client.create([system_c, UserMessage(content=draft, source="user")], json_output=Critique)
    return 2 * ROUNDS


async def bare_autogen() -> int:
    generator, critic = agents()
    team = RoundRobinGroupChat(
        [generator, critic],
        termination_condition=MaxMessageTermination(2 * ROUNDS + 1),
        custom_message_types=[StructuredMessage[Critique]],
    )
    await team.run(task=TASK)
    return 2 * ROUNDS


def moot_team(kind: str, persist: bool, store: Path) -> Any:
    if kind == "reflection":
        team: Any = Reflection(*agents(), stop=MaxRounds(ROUNDS))
    else:
        experts = [RoleAgent(role(name), SPEC) for name in ("architect", "ops")]
        team = Debate(experts, MajorityVote(), stop=MaxRounds(ROUNDS), options=("yes", "no"))
    team.record = persist
    team.store_path = str(store / "runs.sqlite3")
    team.tracer = Tracer.default(store / "traces") if persist else Tracer([])
    return team


async def run_moot(kind: str, persist: bool, store: Path) -> int:
    await moot_team(kind, persist, store).run(task=TASK)
    return 2 * ROUNDS


async def measure(repetitions: int) -> dict[str, Any]:
    DeterministicModel("bench").register()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp)
        variants = {
            "plain loop": plain_loop,
            "bare AutoGen RoundRobinGroupChat": bare_autogen,
            "moot Reflection (store + traces)": lambda: run_moot("reflection", True, store),
            "moot Reflection (no persistence)": lambda: run_moot("reflection", False, store),
            "moot Debate (store + traces)": lambda: run_moot("debate", True, store),
            "moot Debate (no persistence)": lambda: run_moot("debate", False, store),
        }
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(repetitions):  # interleaved, so drift in machine load hits every variant alike
            for name, run in variants.items():
                samples[name].append(1000 * await timed(run) / (2 * ROUNDS))
    per_turn = {name: summary(values) for name, values in samples.items()}
    autogen = per_turn["bare AutoGen RoundRobinGroupChat"]["median"]
    return {
        "turns_per_run": 2 * ROUNDS,
        "unit": "ms per agent turn",
        "per_turn": per_turn,
        "ratio_to_bare_autogen": {name: s["median"] / autogen for name, s in per_turn.items()},
    }


if __name__ == "__main__":
    print(asyncio.run(measure(3)))
