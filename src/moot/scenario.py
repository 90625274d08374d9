"""Scenarios: a task plus how to build the team that works on it.

A scenario is either a script (``scenarios/<name>.py``) that defines
``SCENARIO = Scenario(...)`` and ends with ``if __name__ == "__main__":
run_script(SCENARIO)`` (``moot.cli.run_script``: the command line owns its
options, so this module never imports it back), so it runs both as ``python scenarios/<name>.py`` and as
``moot run <name>``; or a YAML file that names a team preset and a task
(``team: expert_panel``, ``task: ...``). A team preset alone is runnable too,
given a task. The ``build`` function receives the resolved model spec for
each role it uses, so ``--model ROLE=SPEC`` can give any role its own model.
"""

from __future__ import annotations

import importlib.util
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autogen_agentchat.base import Team
from pydantic import Field

from moot._renamed import former_keywords
from moot.boundary import argument_error, checked_mapping, checked_strings, checked_text
from moot.catalog import CatalogFile, entries, read_document
from moot.errors import ConfigError
from moot.models import ModelSpec
from moot.roles import RoleModels, parse_model_options
from moot.teams import TeamPreset, load_preset

__all__ = [
    "SCENARIO_SUFFIXES",
    "RoleModels",
    "Scenario",
    "ScenarioFile",
    "known_scenarios",
    "load_scenario",
    "parse_model_options",
]

SCENARIO_SUFFIXES = (".py", ".yaml", ".yml")


@former_keywords(role_defaults="scenario_defaults")
@dataclass(frozen=True)
class Scenario:
    """A named task plus how to build the team that works on it."""

    name: str
    description: str
    task: str
    roles: tuple[str, ...]
    build: Callable[[RoleModels], Team]
    scenario_defaults: Mapping[str, str] = field(default_factory=dict)
    """The scenario's default spec per role (e.g. ``{"architect": "@0.9"}``): over the roles' own defaults,
    under ``--model``."""
    preset: TeamPreset | None = None
    """The team preset the scenario runs (YAML scenarios and presets), which ``compose`` may change."""
    source: Path | None = None
    """The file the scenario came from: what a stored run names, so ``moot resume`` finds it again."""

    def __post_init__(self) -> None:
        """Refuse a field of the wrong kind when the scenario is written, not when ``moot run`` builds it."""
        checked_text(self.name, "Scenario", "name")
        checked_text(self.description, "Scenario", "description", empty=True)
        checked_text(self.task, "Scenario", "task", empty=True)
        object.__setattr__(
            self, "roles", tuple(checked_strings(self.roles, "Scenario", "roles", example="('generator', 'critic')"))
        )
        if not callable(self.build):
            raise argument_error("Scenario", "build", "a function of the RoleModels that returns a team", self.build)
        defaults = checked_mapping(
            self.scenario_defaults,
            "Scenario",
            "scenario_defaults",
            "a mapping of role to spec string, e.g. {'critic': '@0.2'}",
        )
        for role_name, text in defaults.items():
            checked_text(text, "Scenario", f"scenario_defaults[{role_name!r}]")
            try:
                ModelSpec.parse(text)
            except ConfigError as exc:
                raise ConfigError(f"Scenario: scenario_defaults[{role_name!r}]: {exc}") from None
        if self.preset is not None and not isinstance(self.preset, TeamPreset):
            raise argument_error("Scenario", "preset", "None or a TeamPreset (moot.teams.load_preset)", self.preset)

    @former_keywords(options="model_options")
    def models(self, model_options: Sequence[str]) -> RoleModels:
        """The models for this scenario's roles from ``--model`` options, over the scenario's and roles' defaults."""
        defaults = {name: ModelSpec.parse(text) for name, text in self.scenario_defaults.items()}
        return parse_model_options(model_options, self.roles, scenario_defaults=defaults)

    def build_team(self, models: RoleModels) -> Team:
        """Call the scenario's ``build``: an error raised there is bad input (ConfigError naming the scenario
        and the line of its file that raised), not a traceback."""
        try:
            return self.build(models)
        except ConfigError:
            raise
        except Exception as exc:
            source = Path(self.build.__code__.co_filename) if hasattr(self.build, "__code__") else None
            raise ConfigError(f"scenario {self.name}: build() raised {_raised_in(exc, source)}") from None

    def compose(self, roles: Sequence[str] = (), arbiter: str | None = None) -> Scenario:
        """This scenario with other roles or another arbiter (``moot run --roles/--arbiter``)."""
        if not roles and arbiter is None:
            return self
        if self.preset is None:
            raise ConfigError(
                f"--roles and --arbiter apply to team presets and YAML scenarios; {self.name} is a script"
            )
        return _from_preset(self.preset.with_parts(roles, arbiter), self.name, self.description, self.task, self)

    @classmethod
    def from_preset(cls, preset: TeamPreset) -> Scenario:
        """A team preset as a scenario without a task of its own (``moot run PRESET --task ...``)."""
        return _from_preset(preset, preset.name, preset.description, "", None)


def _raised_in(exc: BaseException, path: Path | None) -> str:
    """``ExcType: message (line N)``, the line being the last one of ``path`` the traceback passed through."""
    text = f"{type(exc).__name__}: {exc}"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if path and Path(f.filename) == path]
    return f"{text} (line {lines[-1]})" if lines else text


class ScenarioFile(CatalogFile):
    """The fields of a YAML scenario: a team preset and a task."""

    team: str
    """A team preset's name (see ``moot teams``)."""
    task: str = Field(min_length=1)
    roles: list[str] = []
    """Other participants than the preset's, by role name."""
    arbiter: str | None = None
    models: dict[str, str | dict[str, Any]] = {}
    """Per-role default model specs (``architect: "@0.9"``, or an AutoGen client's component config inline);
    ``--model`` wins."""
    options: dict[str, Any] = {}
    """Changes to the preset's options (a debate's ``choices`` ...)."""


def _from_preset(preset: TeamPreset, name: str, description: str, task: str, base: Scenario | None) -> Scenario:
    def build(models: RoleModels) -> Team:
        return preset.build(models)

    defaults = base.scenario_defaults if base is not None else {}
    return Scenario(
        name, description, task, preset.participants, build, defaults, preset, base.source if base else preset.path
    )


def known_scenarios() -> list[str]:
    return list(entries("scenarios", SCENARIO_SUFFIXES))


def load_scenario(name_or_path: str) -> Scenario:
    """A scenario (script or YAML) or a team preset, by path or by name: scenarios first, then team presets."""
    if isinstance(name_or_path, Path):
        name_or_path = str(name_or_path)
    checked_text(name_or_path, "load_scenario", "name_or_path (a scenario's name or file)")
    path = Path(name_or_path)
    if path.suffix in SCENARIO_SUFFIXES:
        if not path.is_file():
            raise ConfigError(f"scenario file {name_or_path!r} does not exist")
        return _load_file(path)
    found = entries("scenarios", SCENARIO_SUFFIXES).get(name_or_path)
    if found is not None:
        return _load_file(found.path)
    if name_or_path in entries("teams"):
        return Scenario.from_preset(load_preset(name_or_path))
    available = ", ".join(known_scenarios()) or "none found"
    raise ConfigError(f"unknown scenario {name_or_path!r}; available: {available} (or a team preset: moot teams)")


def _load_file(path: Path) -> Scenario:
    if path.suffix == ".py":
        return replace(_load_script(path), source=path.resolve())
    document = read_document(path)
    if "topology" in document.data:  # a team preset file given by path
        return Scenario.from_preset(load_preset(str(path)))
    spec = document.validate(ScenarioFile)
    try:
        preset = load_preset(spec.team)
    except ConfigError as exc:
        raise document.error(f"team: {exc}", ["team"]) from None
    try:
        preset = preset.with_options(spec.options)
    except ConfigError as exc:
        raise document.error(str(exc), ["options"]) from None
    models: dict[str, str] = {}
    for name, text in spec.models.items():
        try:
            parsed = ModelSpec.parse(text)
        except ValueError as exc:
            raise document.error(f"models: {exc}", ["models", name]) from None
        models[name] = text if isinstance(text, str) else f"component:{parsed.component}"  # (its inline string form)
    base = Scenario(spec.name, spec.description, spec.task.strip(), (), _no_build, models, preset, path.resolve())
    try:
        return _from_preset(preset, spec.name, spec.description, spec.task.strip(), base).compose(
            spec.roles, spec.arbiter
        )
    except ConfigError as exc:
        field_name = "roles" if spec.roles else "arbiter"
        raise document.error(str(exc), [field_name]) from None


def _no_build(models: RoleModels) -> Team:
    raise AssertionError("a YAML scenario builds its team from its preset")


def _load_script(path: Path) -> Scenario:
    spec = importlib.util.spec_from_file_location(f"moot_scenario_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load scenario file {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ConfigError(f"scenario file {path} has a syntax error at line {exc.lineno}: {exc.msg}") from None
    except Exception as exc:  # a missing import or any error at import time is the script's fault, not moot's
        raise ConfigError(f"scenario file {path} failed to import: {_raised_in(exc, path)}") from None
    scenario = getattr(module, "SCENARIO", None)
    if not isinstance(scenario, Scenario):
        raise ConfigError(f"scenario file {path} must define SCENARIO = moot.scenario.Scenario(...)")
    return scenario
