"""Resolve a suite spec (``humaneval[:20]``, ``reasoning-gym:gsm_symbolic?n=50&seed=1``, ``qa.jsonl``) to a Suite."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from moot._plugins import Registry
from moot.errors import ConfigError
from moot.harness.suites._files import FILE_SUFFIXES, file_suite, suite_file
from moot.harness.suites._gym import gym_suite
from moot.harness.suites._humaneval import humaneval_suite
from moot.harness.suites._items import Suite
from moot.harness.suites._selectors import SpecParts, parse_spec, reject_unknown

__all__ = ["SUITE_FORMS", "SuiteFactory", "load_suite", "register_suite", "unregister_suite"]

SUITE_FORMS = (
    "humaneval[:N] | reasoning-gym:TASK[?n=N&seed=S] (e.g. gsm_symbolic, basic_arithmetic, knights_knaves) | "
    "PATH.jsonl|PATH.yaml[?scoring=exact|regex|numeric|judge|tests&tolerance=T]; any form takes a slice like [:20]"
)

SuiteFactory = Callable[[SpecParts, str], Suite]
_SUITES: Registry[SuiteFactory] = Registry(
    "suite",
    "moot.suites",
    callable,
    "a suite factory (a callable taking the spec's parts and its label, returning a Suite)",
    reserved=("humaneval", "reasoning-gym"),
)
"""Suite kinds by name beyond the built-in forms (read below, not from the table): installed plugins' (entry-point
group ``moot.suites``), then those registered from code."""


def register_suite(name: str, factory: SuiteFactory) -> None:
    """Make ``name[SLICE][?k=v&...]`` a suite spec; ``factory(parts, label)`` builds it (apply ``parts.slice``)."""
    _SUITES.register(name, factory)


def unregister_suite(name: str) -> None:
    """Forget a suite kind registered from code."""
    _SUITES.unregister(name)


def load_suite(spec: str) -> Suite:
    """The suite a spec names; a bad spec is a one-line ConfigError naming the valid forms."""
    parts = parse_spec(spec, what="suite spec", forms=SUITE_FORMS)
    name = parts.name
    if name == "humaneval":
        reject_unknown(parts, what=f"suite {spec!r}", valid="none (slice it instead: humaneval[:20])")
        return humaneval_suite(parts.slice, spec)
    if name.startswith("reasoning-gym:"):
        task = name.partition(":")[2].strip()
        if not task:
            raise ConfigError(f"bad suite spec {spec!r}: name the task, e.g. reasoning-gym:gsm_symbolic")
        return gym_suite(task, parts, spec)
    factory = _SUITES.get(name)
    if factory is not None:
        return factory(parts, spec)
    if name.endswith(FILE_SUFFIXES) or Path(name).expanduser().is_dir():
        return file_suite(suite_file(name), parts, spec)
    registered = sorted(_SUITES.names())
    extra = f"; registered: {', '.join(registered)}" if registered else ""
    raise ConfigError(f"unknown suite {spec!r}; valid forms: {SUITE_FORMS}{extra}")
