"""RowContext: what an arm (or a scorer) gets for one row: agents on the comparison's models, the sandbox, a seed.

Agents are built here, never by the arm from a spec, so every call they make
is metered, cached and limited (see ``_calls``) and lands in this row's meter.
Model roles for ``--model ROLE=SPEC``: ``generator`` (whoever writes the
answer), ``critic``, ``expert`` (all debaters) and ``expert_N`` (one of them),
``arbiter``, ``judge`` (LLM-judge scoring); an arm may add its own (its ``model_roles``, read by
``_registry.model_roles``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from moot.models import Meter, ModelSpec
from moot.roles import Role, RoleAgent, RoleModels
from moot.sandbox import SandboxRunner, run_tests
from moot.tracing import JsonlSink, Tracer

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient

__all__ = ["MAX_EXPERTS", "MODEL_ROLES", "Clients", "RowContext"]

MAX_EXPERTS = 8
MODEL_ROLES: tuple[str, ...] = (
    "generator",
    "critic",
    "expert",
    "arbiter",
    "judge",
    *(f"expert_{i}" for i in range(1, MAX_EXPERTS + 1)),
)


class Clients(Protocol):
    """Where a row's agents get their clients: the comparison's metered, cached, limited factory
    (``moot.harness.jobs._calls.ClientFactory``), named here as a protocol so arms need not import the job runner."""

    def client(self, spec: ModelSpec, agent: str, meter: Meter) -> ChatCompletionClient: ...


class RowContext:
    """Builds agents for one row; ``meter`` counts their calls (logical and billed)."""

    def __init__(
        self,
        models: RoleModels,
        clients: Clients,
        meter: Meter | None = None,
        *,
        seed: int = 0,
        sandbox: SandboxRunner = run_tests,
        trace_dir: Path | None = None,
    ) -> None:
        self.models = models
        self.clients = clients
        self.meter = meter or Meter()
        self.seed = seed
        self.sandbox = sandbox
        self.trace_dir = trace_dir
        self.trace_ids: list[str] = []

    def spec(self, model_role: str) -> ModelSpec:
        """The spec a model role runs on, by the one rule every run uses (``RoleModels.spec``)."""
        return self.models.spec(model_role)

    def sampled(self, model_role: str, index: int, temperature: float) -> ModelSpec:
        """Sample ``index``'s spec: its own seed (so caches never replay another sample), and ``temperature``
        unless the spec sets one."""
        spec = self.spec(model_role)
        seed = (spec.seed if spec.seed is not None else self.seed) + index
        return spec.resolve(
            ModelSpec(seed=seed, temperature=spec.temperature if spec.temperature is not None else temperature)
        )

    def agent(
        self,
        role: Role,
        *,
        model_role: str,
        name: str | None = None,
        spec: ModelSpec | None = None,
        max_parse_retries: int = 2,
    ) -> RoleAgent:
        name = name or role.name
        client = self.clients.client(spec or self.spec(model_role), name, self.meter)
        return RoleAgent(role, client, name=name, max_parse_retries=max_parse_retries)

    def prepare(self, team: Any) -> Any:
        """A team for one row: not in the run store (rows are the record), traced into the comparison's dir."""
        team.record = False
        team.tracer = Tracer([JsonlSink(self.trace_dir)] if self.trace_dir is not None else [])
        return team

    def note_run(self, team: Any) -> None:
        if getattr(team, "run_id", None):
            self.trace_ids.append(team.run_id)
