"""The topologies a team preset may name, one ``Topology`` class each: moot's own in ``TOPOLOGIES``, then those
installed packages declare under the entry-point group ``moot.topologies``, then those registered from code with
:func:`register_topology` (:func:`topology` looks a name up in all three).

Adding a topology a preset can name takes: its team class, a ``MootTeam`` subclass with its state model and the
hooks docs/architecture.md lists under "What a topology writes" (written once, like ``_debate.py``); its options
model and ``Topology`` subclass; and, in moot, its entry in ``TOPOLOGIES`` below (from a plugin, the entry point
instead). Optional: result blocks registered for its result type in ``moot/display/_result_blocks.py`` (else the
generic ones), and exports from ``moot.teams`` and ``moot``.

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
from pydantic import BaseModel, ConfigDict, Field, model_validator

from moot._plugins import Registry
from moot._renamed import warn_renamed
from moot.arbiters import Arbiter
from moot.errors import ConfigError
from moot.roles import RoleAgent
from moot.teams._base import MootTeam
from moot.teams._code_debate import CodeDebate
from moot.teams._debate import Debate
from moot.teams._planner_executor import PlannerExecutor
from moot.teams._reflection import Reflection, Revision
from moot.tools import Tool, read_file_tool, run_python_tool, write_file_tool

__all__ = [
    "TOPOLOGIES",
    "CodeDebateOptions",
    "DebateOptions",
    "PlannerExecutorOptions",
    "ReflectionOptions",
    "TeamParts",
    "Topology",
    "register_topology",
    "topology",
    "topology_names",
    "unregister_topology",
]


class ReflectionOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    revision: Revision = "continue"
    """``continue``: revise the latest draft shown its critique; ``fresh``: a new answer from the critiques,
    shown no draft (better for small models with a test critic: see :class:`moot.teams.Reflection`)."""


class DebateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    choices: list[str] = []
    """The closed answer set the experts and the arbiter must choose from (empty: free answers)."""
    answer_pattern: str | None = None
    seed: int = 0

    @model_validator(mode="before")
    @classmethod
    def _former_answers(cls, data: Any) -> Any:
        """A preset or scenario written before ``answers:`` was called ``choices:`` still loads, warning."""
        if isinstance(data, dict) and "answers" in data:
            if "choices" in data:
                raise ValueError("give the closed answer set once, as choices: (answers: is its former name)")
            warn_renamed("a debate's answers: option", "choices:", stacklevel=2)
            data = {("choices" if key == "answers" else key): value for key, value in data.items()}
        return data


class CodeDebateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tests: list[str] = Field(min_length=1)
    """The visible tests every candidate program runs on (``assert add(1, 2) == 3``)."""
    stub: str = ""
    """The signature and docstring the programs complete."""
    entry_point: str | None = None
    """The tested function's name."""
    probe_calls: list[str] = []
    """Calls whose outputs group candidates by behaviour (``add(2, 2)``)."""


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
            parts.agents, parts.arbiter, stop=parts.stop, choices=options.choices,
            answer_pattern=options.answer_pattern, seed=options.seed, name=parts.name, description=parts.description,
        )  # fmt: skip


class CodeDebateTopology(Topology[CodeDebateOptions]):
    """Every role is an expert writing a program; the tests' evidence rules (no arbiter)."""

    name = "code_debate"
    team = CodeDebate
    options = CodeDebateOptions

    @classmethod
    def build(cls, parts: TeamParts, options: CodeDebateOptions) -> MootTeam:
        return CodeDebate(
            parts.agents, options.tests, stub=options.stub, entry_point=options.entry_point,
            probe_calls=options.probe_calls, stop=parts.stop, name=parts.name, description=parts.description,
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
    t.name: t for t in (ReflectionTopology, DebateTopology, CodeDebateTopology, PlannerExecutorTopology)
}
"""moot's own topologies, by name, in the order error messages list them."""


def _is_topology(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, Topology)


_TOPOLOGIES: Registry[type[Topology[Any]]] = Registry(
    "topology", "moot.topologies", _is_topology, "a Topology subclass (moot.teams.Topology)", builtins=TOPOLOGIES
)


def register_topology(kind: type[Topology[Any]]) -> None:
    """Make ``topology: NAME`` (``kind.name``) valid in a preset file, from code."""
    _TOPOLOGIES.register(kind.name, kind)


def unregister_topology(name: str) -> None:
    """Forget a topology registered from code."""
    _TOPOLOGIES.unregister(name)


def topology_names() -> list[str]:
    """Every name a preset may give: moot's own, then plugins', then those registered from code."""
    return _TOPOLOGIES.names()


def topology(name: str) -> type[Topology[Any]]:
    """The topology a preset names; an unknown name is one ConfigError line listing the valid ones."""
    found = _TOPOLOGIES.get(name)
    if found is None:
        raise ConfigError(f"unknown topology {name!r}; valid topologies: {', '.join(topology_names())}")
    return found
