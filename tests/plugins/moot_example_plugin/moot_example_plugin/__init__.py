"""One extension of each kind moot has, written against moot's public API only.

* ``canned``: a provider whose model is moot's deterministic test model (valid replies, no network), declaring
  what a provider must: it runs in this process, its calls queue on their own endpoint, and which of its faults
  are worth retrying.
* ``echo``: an arm that asks one generator (on its own model role, ``echoer``) and reports its first round.
* ``doubles``: a suite kind, ``doubles[:N]?n=N``: "What is i + i?" for i in 1..n.
* ``pair``: a topology, a writer and one reviewer, run by moot's Reflection team.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from moot.harness import Attempt, ExactMatch, Item, Suite, agent_reply
from moot.models import DeterministicModel, Provider
from moot.roles import role
from moot.teams import Reflection, TeamParts, Topology


class CannedFault(Exception):
    """What the canned model's SDK would raise when its server is busy."""


def _transient(exc: BaseException) -> str | None:
    return "server_error" if isinstance(exc, CannedFault) else None


CANNED = Provider(
    build=lambda spec, agent: DeterministicModel().client(agent),
    runs_here=True,
    endpoint=lambda spec: f"canned:{spec.model or 'default'}",
    transient=_transient,
)


class EchoArm:
    """One call to the generator on the ``echoer`` model role; its reply is also the arm's first round."""

    name = "echo"
    first_round_name = "first echo"
    model_roles = ("echoer",)

    def __init__(self, params: Mapping[str, str]) -> None:
        unknown = set(params) - {"tone"}
        if unknown:
            raise ValueError(f"echo takes only the parameter tone, got {sorted(unknown)}")
        self.settings: dict[str, Any] = dict(params)

    def check(self, suite: Suite) -> None:
        """Runs on any suite."""

    async def solve(self, item: Item, ctx: Any) -> Attempt:
        reply = await agent_reply(ctx.agent(role("generator"), model_role="echoer"), item.task)
        return Attempt(reply.text, parse_failures=reply.parse_failures, first_round=reply.text)


def doubles(parts: Any, label: str) -> Suite:
    """``doubles[SLICE]?n=N``: N items, each scored by exact match."""
    n = int(dict(parts.params).get("n", "3"))
    items = [
        Item(id=f"d{i}", task=f"What is {i} + {i}?", reference=str(2 * i), scorer=ExactMatch(str(2 * i)))
        for i in range(1, n + 1)
    ]
    return Suite(key="doubles", label=label, items=items[parts.slice or slice(None)])


class PairOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PairTopology(Topology[PairOptions]):
    """The first role writes, the second reviews."""

    name = "pair"
    team = Reflection
    options = PairOptions
    least_roles = 2
    most_roles = 2

    @classmethod
    def build(cls, parts: TeamParts, options: PairOptions) -> Reflection:
        writer, reviewer = parts.agents
        return Reflection(writer, [reviewer], stop=parts.stop, name=parts.name, description=parts.description)
