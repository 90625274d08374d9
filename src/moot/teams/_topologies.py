"""The topologies a team preset may name, one ``Topology`` class each, listed in ``TOPOLOGIES``.

Adding a topology a preset can name takes, today: its team class, a ``MootTeam`` subclass with its state model
and the hooks docs/architecture.md lists under "What a topology writes" (written once, like ``_debate.py``); its
options model and ``Topology`` class here; and its entry in the ``TOPOLOGIES`` tuple below, which is also what
makes its name valid in a preset file (``_presets.py`` derives the names from it). A team class with no entry
(``CodeDebate``) runs from code and from moot compare, but no preset can name it. Optional: result blocks
registered for its result type in ``moot/display/_result_blocks.py`` (else the generic ones), and exports from
``moot.teams`` and ``moot``.

A topology class carries everything a preset needs to know of it: the name a
preset file gives (``topology: debate``), the options model its ``options:``
must fit, how many roles it seats, whether it needs an arbiter, the team class
that runs it (whose rounds report the signals a stop expression may wait for),
and how that team is built from the parts a preset has resolved.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from autogen_agentchat.base import TerminationCondition
from pydantic import BaseModel, ConfigDict, Field

from moot.arbiters import Arbiter
from moot.roles import RoleAgent
from moot.teams._base import MootTeam
from moot.teams._debate import Debate
from moot.teams._planner_executor import PlannerExecutor
from moot.teams._reflection import Reflection, Revision
from moot.tools import Tool, read_file_tool, run_python_tool, write_file_tool

__all__ = [
    "TOPOLOGIES",
    "DebateOptions",
    "PlannerExecutorOptions",
    "ReflectionOptions",
    "TeamParts",
    "Topology",
]


class ReflectionOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    revision: Revision = "continue"
    """``continue``: revise the latest draft shown its critique; ``fresh``: a new answer from the critiques,
    shown no draft (better for small models with a test critic: see :class:`moot.teams.Reflection`)."""


class DebateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answers: list[str] = []
    """The answers the experts and the arbiter must choose from (empty: free answers)."""
    answer_pattern: str | None = None
    seed: int = 0


class PlannerExecutorOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: list[Literal["run_python", "read_file", "write_file"]] = ["run_python", "read_file", "write_file"]
    work_dir: str = "work"
    """Where the file tools read and write, relative to the current directory."""
    max_replans: int = Field(default=3, ge=0)


@dataclass(frozen=True)
class TeamParts:
    """What a preset has resolved for its team: the role agents in file order, the arbiter, the stop."""

    agents: list[RoleAgent]
    arbiter: RoleAgent | Arbiter | None
    stop: TerminationCondition | None
    name: str
    description: str


OptionsT = TypeVar("OptionsT", bound=BaseModel)


class Topology(ABC, Generic[OptionsT]):
    """One kind of team a preset can name (never instantiated: the class is the entry)."""

    name: ClassVar[str]
    """What a preset file's ``topology:`` says."""
    team: ClassVar[type[MootTeam]]
    options: ClassVar[type[BaseModel]]
    """The model a preset's ``options:`` must fit."""
    least_roles: ClassVar[int] = 2
    most_roles: ClassVar[int | None] = None
    """None: no upper bound."""
    needs_arbiter: ClassVar[bool] = False
    """A preset of this topology must name an arbiter; one of any other topology must not."""

    @classmethod
    @abstractmethod
    def build(cls, parts: TeamParts, options: OptionsT) -> MootTeam:
        """The team on ``parts``, set up by the preset's ``options``."""


class ReflectionTopology(Topology[ReflectionOptions]):
    """The first role writes, the others review."""

    name = "reflection"
    team = Reflection
    options = ReflectionOptions

    @classmethod
    def build(cls, parts: TeamParts, options: ReflectionOptions) -> MootTeam:
        return Reflection(
            parts.agents[0],
            parts.agents[1:],
            stop=parts.stop,
            revision=options.revision,
            name=parts.name,
            description=parts.description,
        )


class DebateTopology(Topology[DebateOptions]):
    """Every role is an expert; the arbiter rules."""

    name = "debate"
    team = Debate
    options = DebateOptions
    needs_arbiter = True

    @classmethod
    def build(cls, parts: TeamParts, options: DebateOptions) -> MootTeam:
        assert parts.arbiter is not None
        return Debate(
            parts.agents, parts.arbiter, stop=parts.stop, options=options.answers,
            answer_pattern=options.answer_pattern, seed=options.seed, name=parts.name, description=parts.description,
        )  # fmt: skip


class PlannerExecutorTopology(Topology[PlannerExecutorOptions]):
    """A planner, then an executor that performs each step with one tool call."""

    name = "planner_executor"
    team = PlannerExecutor
    options = PlannerExecutorOptions
    most_roles = 2

    @classmethod
    def build(cls, parts: TeamParts, options: PlannerExecutorOptions) -> MootTeam:
        planner, executor = parts.agents
        return PlannerExecutor(
            planner, executor, tools=_tools(options), stop=parts.stop, max_replans=options.max_replans,
            name=parts.name, description=parts.description,
        )  # fmt: skip


def _tools(options: PlannerExecutorOptions) -> list[Tool]:
    """The preset's tools; the file tools share one work directory, created when missing."""
    if {"read_file", "write_file"} & set(options.tools):
        Path(options.work_dir).mkdir(parents=True, exist_ok=True)
    made = {"run_python": run_python_tool, "read_file": read_file_tool, "write_file": write_file_tool}
    return [made[name]() if name == "run_python" else made[name](options.work_dir) for name in options.tools]


TOPOLOGIES: dict[str, type[Topology[Any]]] = {
    t.name: t for t in (ReflectionTopology, DebateTopology, PlannerExecutorTopology)
}
"""Every topology a preset may name, by name, in the order error messages list them."""
