"""Scenarios: runnable scripts that build a team for a task.

A scenario script (``scenarios/<name>.py``) defines ``SCENARIO = Scenario(...)``
and ends with ``if __name__ == "__main__": SCENARIO.main()``, so it runs both
as ``python scenarios/<name>.py`` and as ``moot run <name>``. The ``build``
function receives the resolved model spec for each role it uses, so
``--model ROLE=SPEC`` can give any role its own model.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autogen_agentchat.base import Team

from moot.errors import ConfigError
from moot.models import ModelSpec

__all__ = [
    "RoleModels",
    "Scenario",
    "find_scenario",
    "known_scenarios",
    "load_scenario",
    "parse_model_options",
]

_ROLE_ASSIGNMENT = re.compile(r"^([a-z][a-z0-9_]*)=(.*)$", re.DOTALL)


@dataclass(frozen=True)
class RoleModels:
    """A base spec, a scenario's per-role defaults, and the user's per-role overrides, in that order.

    ``spec(role)`` layers them: the user's ``--model ROLE=SPEC`` always wins
    over the scenario's default for that role (e.g. a hotter temperature for
    one expert, for diverse first answers), which wins over the base.
    """

    base: ModelSpec = field(default_factory=ModelSpec)
    overrides: Mapping[str, ModelSpec] = field(default_factory=dict)
    defaults: Mapping[str, ModelSpec] = field(default_factory=dict)

    def spec(self, role: str) -> ModelSpec:
        return self.base.resolve(self.defaults.get(role)).resolve(self.overrides.get(role))


def parse_model_options(options: Sequence[str], roles: Sequence[str], default: str = "local") -> RoleModels:
    """Read repeated ``--model SPEC`` / ``--model ROLE=SPEC`` options.

    A bare SPEC sets the base for every role (at most once); ``ROLE=SPEC``
    overrides one role, which must be one the scenario uses.
    """
    base: ModelSpec | None = None
    overrides: dict[str, ModelSpec] = {}
    for option in options:
        match = _ROLE_ASSIGNMENT.match(option)
        if match is None:
            if base is not None:
                raise ConfigError(f"--model {option!r}: a base model is already set ({base}); use ROLE=SPEC")
            base = ModelSpec.parse(option)
            continue
        name, text = match.groups()
        if name not in roles:
            raise ConfigError(f"--model {option!r}: unknown role {name!r}; roles here: {', '.join(roles)}")
        overrides[name] = ModelSpec.parse(text)
    return RoleModels(base or ModelSpec.parse(default), overrides)


@dataclass(frozen=True)
class Scenario:
    """A named task plus how to build the team that works on it."""

    name: str
    description: str
    task: str
    roles: tuple[str, ...]
    build: Callable[[RoleModels], Team]
    role_defaults: Mapping[str, str] = field(default_factory=dict)
    """Per-role spec overrides the scenario suggests (e.g. ``{"architect": "@0.9"}``); ``--model`` wins."""

    def models(self, options: Sequence[str]) -> RoleModels:
        """The models for this scenario's roles from ``--model`` options, over the scenario's defaults."""
        parsed = parse_model_options(options, self.roles)
        defaults = {role: ModelSpec.parse(text) for role, text in self.role_defaults.items()}
        return RoleModels(parsed.base, parsed.overrides, defaults)

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

    def main(self, argv: Sequence[str] | None = None) -> None:
        """Run this scenario as a script, with the same options as ``moot run``."""
        from moot.cli import run_scenario_main

        run_scenario_main(self, list(sys.argv[1:] if argv is None else argv))


def _raised_in(exc: BaseException, path: Path | None) -> str:
    """``ExcType: message (line N)``, the line being the last one of ``path`` the traceback passed through."""
    text = f"{type(exc).__name__}: {exc}"
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if path and Path(f.filename) == path]
    return f"{text} (line {lines[-1]})" if lines else text


BUILT_IN = Path(__file__).resolve().parent / "_catalog" / "scenarios"
"""The scenarios moot ships: in a checkout a link to the repository's ``scenarios/``, in a wheel a copy."""


def _search_dirs() -> list[Path]:
    dirs = [Path.cwd() / "scenarios"]
    if extra := os.environ.get("MOOT_SCENARIOS"):
        dirs.extend(Path(p) for p in extra.split(os.pathsep) if p)
    dirs.append(BUILT_IN)
    unique: list[Path] = []
    for directory in dirs:
        if directory.is_dir() and directory.resolve() not in [u.resolve() for u in unique]:
            unique.append(directory)
    return unique


def known_scenarios() -> list[str]:
    names = {p.stem for d in _search_dirs() for p in d.glob("*.py") if not p.name.startswith("_")}
    return sorted(names)


def find_scenario(name_or_path: str) -> Path:
    """A path to a script, or a scenario name looked up in ./scenarios, $MOOT_SCENARIOS, then the built-ins."""
    path = Path(name_or_path)
    if path.suffix == ".py":
        if path.is_file():
            return path
        raise ConfigError(f"scenario file {name_or_path!r} does not exist")
    for directory in _search_dirs():
        candidate = directory / f"{name_or_path}.py"
        if candidate.is_file():
            return candidate
    available = ", ".join(known_scenarios()) or "none found"
    raise ConfigError(f"unknown scenario {name_or_path!r}; available: {available}")


def load_scenario(name_or_path: str) -> Scenario:
    path = find_scenario(name_or_path)
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
