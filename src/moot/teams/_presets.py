"""Team presets: one YAML file per team in a catalog ``teams/`` folder, built into a moot team.

A preset names a topology, its participants by role name, an arbiter by name
(debates), a stop expression over the built-in conditions and the topology's
options::

    name: expert_panel
    description: architect, ops and business debate; a model arbiter rules
    topology: debate
    roles: [architect, ops, business]
    arbiter: model_arbiter
    termination: consensus | no_progress(1) | max_rounds(3) | token_budget(40000)
    options: {choices: [split, keep, defer]}

Participants by topology: ``reflection`` the first role writes and the others
review; ``debate`` and ``code_debate`` every role is an expert; ``planner_executor`` a planner
then an executor. Each topology is one class in ``_topologies.py`` (its options,
seats, arbiter rule, team class and how the team is built), looked up by name
with ``topology`` (moot's own, an installed plugin's, or one registered from code).
A preset is data AutoGen tooling can read too: :meth:`TeamPreset.component` is
the team's ``dump_component()`` form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from autogen_agentchat.base import TerminationCondition
from autogen_core import ComponentModel
from pydantic import BaseModel, ValidationError, field_validator

from moot.arbiters import Arbiter, ArbiterSpec, load_arbiter
from moot.boundary import argument_error, checked_optional_text, checked_strings, checked_text
from moot.catalog import CatalogFile, Document, entries, find_entry, read_document
from moot.conditions import CONDITIONS, dead_conditions, parse_stop, reported
from moot.errors import ConfigError
from moot.models import ModelSpec, Script
from moot.roles import ModelsFor, RoleAgent, role, role_models
from moot.teams._base import MootTeam
from moot.teams._topologies import TeamParts, Topology, topology, topology_names

__all__ = ["TeamFile", "TeamPreset", "known_presets", "load_preset"]


class TeamFile(CatalogFile):
    """The fields of a team preset file."""

    topology: str
    """A name :func:`topology_names` lists: a preset file naming another is refused with the valid ones listed."""
    roles: list[str]
    arbiter: str | None = None
    termination: str | None = None
    """A stop expression (``consensus | max_rounds(3)``); none: the topology's default stop."""
    options: dict[str, Any] = {}

    @field_validator("topology")
    @classmethod
    def _known(cls, name: str) -> str:
        """A topology moot has, an installed plugin adds, or code registered; any other is refused, listing them."""
        names = topology_names()
        if name not in names:
            raise ValueError(f"unknown topology {name!r}; valid topologies: {', '.join(names)}")
        return name


@dataclass(frozen=True)
class TeamPreset:
    """A checked preset: every role and the arbiter exist, the termination parses, the options fit."""

    name: str
    description: str
    topology: str
    """A name :func:`topology_names` lists."""
    roles: tuple[str, ...]
    arbiter: ArbiterSpec | None
    termination: str | None
    options: BaseModel
    path: Path | None = None

    @property
    def kind(self) -> type[Topology[Any]]:
        """The topology class :attr:`topology` names."""
        return topology(self.topology)

    @property
    def participants(self) -> tuple[str, ...]:
        """The role names that run on a model (``--model ROLE=SPEC`` may name them)."""
        ruling = self.arbiter.role if self.arbiter is not None else None
        return (*self.roles, ruling.name) if ruling is not None else self.roles

    def with_parts(self, roles: Sequence[str] | None = None, arbiter: str | None = None) -> TeamPreset:
        """This preset with other participants or another arbiter (``moot run --roles --arbiter``)."""
        roles = (
            None
            if roles is None
            else checked_strings(roles, "TeamPreset.with_parts", "roles", example="['architect', 'ops']")
        )
        arbiter = checked_optional_text(arbiter, "TeamPreset.with_parts", "arbiter")
        chosen = replace(
            self,
            roles=tuple(roles) if roles else self.roles,
            arbiter=load_arbiter(arbiter) if arbiter else self.arbiter,
        )
        _check(chosen)
        return chosen

    def with_options(self, options: Mapping[str, Any]) -> TeamPreset:
        """This preset with some of its topology's options changed (a YAML scenario's ``options``)."""
        if not isinstance(options, Mapping):
            raise argument_error("TeamPreset.with_options", "options", "a mapping of option name to value", options)
        if not options:
            return self
        model = type(self.options)
        try:
            changed = model.model_validate(options).model_dump(exclude_unset=True)  # (a former option name, renamed)
            return replace(self, options=model.model_validate({**self.options.model_dump(), **changed}))
        except ValidationError as exc:
            raise ConfigError(_option_problem(exc, model, self.topology)) from None

    def stop(self) -> TerminationCondition | None:
        return parse_stop(self.termination) if self.termination else None

    def _check_stop(self) -> None:
        """The stop expression parses, and each of its conditions can fire for this topology (written in the
        expression syntax, as the file is)."""
        stop = self.stop()
        team = self.kind.team
        dead = dead_conditions(stop, team._signals) if stop is not None else []
        if dead:
            names = {kind: name for name, kind in CONDITIONS.items()}
            listed = ", ".join(f"{names.get(type(d), type(d).__name__)} (waits for {d.needs})" for d in dead)
            raise ConfigError(
                f"{listed} can never fire for a {self.topology} team, whose rounds report "
                f"{reported(team._signals)}; remove it, or stop on what it reports or on a limit, "
                "e.g. max_rounds(5) | token_budget(40000)"
            )

    def build(self, models: ModelsFor | Script) -> MootTeam:
        """The team on ``models``, by the command line's rule (``moot.roles.role_models``): one ``ModelSpec`` is
        ``--model SPEC``, a function of the role name is ``--model ROLE=SPEC`` for each role, and a role file's
        own ``model:`` layer applies under either. A scripted model given as it is (a ``ScriptedModel``) plays
        every role, each on its own script."""
        model = _model_per_role(models, self.participants)
        agents = [RoleAgent(role(name), model(name)) for name in self.roles]
        parts = TeamParts(agents, self._arbiter_agent(model), self.stop(), self.name, self.description)
        return self.kind.build(parts, self.options)

    def _arbiter_agent(self, model: Callable[[str], ModelSpec | Script]) -> RoleAgent | Arbiter | None:
        """The arbiter a debate preset names: the role that rules, on its model, or the vote it is."""
        if self.arbiter is None:
            return None
        ruling = self.arbiter.role
        return RoleAgent(ruling, model(ruling.name)) if ruling is not None else self.arbiter.vote()

    def component(self, models: ModelsFor | Script) -> ComponentModel:
        """The preset on ``models`` (as :meth:`build` takes them) as an AutoGen component config (what
        ``Team.load_component`` reads)."""
        return self.build(models).dump_component()


def _model_per_role(models: ModelsFor | Script, roles: Sequence[str]) -> Callable[[str], ModelSpec | Script]:
    """What each role runs on: a script given as it is runs them all (a script holds no spec layers to apply);
    anything else resolves by the command line's layers."""
    if isinstance(models, Script):
        return lambda name: models
    return role_models(models, roles).spec


def _check(preset: TeamPreset) -> None:
    """Participants and arbiter fit the topology; every role exists. ConfigError otherwise."""
    least, most = preset.kind.least_roles, preset.kind.most_roles
    count = len(preset.roles)
    if count < least or (most is not None and count > most):
        wanted = f"exactly {least}" if least == most else f"at least {least}"
        raise ConfigError(f"roles: a {preset.topology} team takes {wanted} roles, got {count}")
    for name in preset.roles:
        role(name)
    if (preset.arbiter is None) == preset.kind.needs_arbiter:
        raise ConfigError("arbiter: a debate needs one (e.g. model_arbiter, majority_vote); other teams take none")


def load_preset(name_or_path: str) -> TeamPreset:
    """A team preset by name (project first, then built-in) or by path to a ``.yaml`` file."""
    if isinstance(name_or_path, Path):
        name_or_path = str(name_or_path)
    checked_text(name_or_path, "load_preset", "name_or_path (a preset's name or a .yaml file's path)")
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = find_entry("teams", name_or_path).path
    elif not path.is_file():
        raise ConfigError(f"team preset file {name_or_path!r} does not exist")
    return _load(path.resolve(), path.stat().st_mtime_ns)


def known_presets() -> list[str]:
    return list(entries("teams"))


@cache
def _load(path: Path, mtime_ns: int) -> TeamPreset:
    document = read_document(path)
    spec = document.validate_named(TeamFile)
    preset = TeamPreset(
        spec.name, spec.description, spec.topology, tuple(spec.roles),
        _arbiter(document, spec.arbiter), spec.termination, _options(document, spec), path,
    )  # fmt: skip
    for field, check in (("termination", preset._check_stop), ("roles", lambda: _check(preset))):
        try:
            check()
        except ConfigError as exc:
            loc = ["roles", _unknown_role(spec.roles)] if field == "roles" else [field]
            raise document.error(f"{field}: {exc}" if field == "termination" else str(exc), loc) from None
    return preset


def _arbiter(document: Document, name: str | None) -> ArbiterSpec | None:
    if name is None:
        return None
    try:
        return load_arbiter(name)
    except ConfigError as exc:
        raise document.error(f"arbiter: {exc}", ["arbiter"]) from None


def _options(document: Document, spec: TeamFile) -> BaseModel:
    model = topology(spec.topology).options
    try:
        return model.model_validate(spec.options)
    except ValidationError as exc:
        loc = ["options", *exc.errors()[0]["loc"]]
        raise document.error(_option_problem(exc, model, spec.topology), loc) from None


def _option_problem(exc: ValidationError, model: type[BaseModel], topology: str) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    valid = ", ".join(model.model_fields) or "none"
    problem = f"unknown option {where!r}" if first["type"] == "extra_forbidden" else f"{where}: {first['msg']}"
    return f"options: {problem}; {topology} options: {valid}"


def _unknown_role(names: Sequence[str]) -> int:
    """The index of the first role that does not exist (0 when all do: the problem is their number)."""
    for index, name in enumerate(names):
        try:
            role(name)
        except ConfigError:
            return index
    return 0
