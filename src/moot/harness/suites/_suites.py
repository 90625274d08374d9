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
"""Builds a suite from its spec's parts (name, slice, parameters) and the spec as written (its label). A spec
``KIND:ARG`` (``reasoning-gym:chain_sum``) is built by the factory registered as ``KIND``; ``parts.name`` keeps the
``ARG``."""


def _humaneval(parts: SpecParts, label: str) -> Suite:
    if parts.name != "humaneval":
        raise ConfigError(f"bad suite spec {label!r}: humaneval takes no ':' part; valid forms: {SUITE_FORMS}")
    reject_unknown(parts, what=f"suite {label!r}", valid="none (slice it instead: humaneval[:20])")
    return humaneval_suite(parts.slice, label)


def _reasoning_gym(parts: SpecParts, label: str) -> Suite:
    task = parts.name.partition(":")[2].strip()
    if not task:
        raise ConfigError(f"bad suite spec {label!r}: name the task, e.g. reasoning-gym:gsm_symbolic")
    return gym_suite(task, parts, label)


_SUITES: Registry[SuiteFactory] = Registry(
    "suite",
    "moot.suites",
    callable,
    "a suite factory (a callable taking the spec's parts and its label, returning a Suite)",
    builtins={"humaneval": _humaneval, "reasoning-gym": _reasoning_gym},
)
"""Suite kinds by name: moot's own (HumanEval, reasoning-gym's tasks), installed plugins' (entry-point group
``moot.suites``), then those registered from code. A spec naming none of them is a suite file."""


def register_suite(name: str, factory: SuiteFactory) -> None:
    """Make ``name[SLICE][?key=value]`` (and ``name:ARG...``) a suite spec; ``factory(parts, label)`` builds it
    (apply ``parts.slice``). Registering a built-in kind's name replaces it."""
    _SUITES.register(name, factory)


def unregister_suite(name: str) -> None:
    """Forget a suite kind registered from code."""
    _SUITES.unregister(name)


def load_suite(spec: str) -> Suite:
    """The suite a spec names; a bad spec is a one-line ConfigError naming the valid forms."""
    parts = parse_spec(spec, what="suite spec", forms=SUITE_FORMS)
    kind, colon, _ = parts.name.partition(":")
    factory = _SUITES.get(parts.name) or (_SUITES.get(kind) if colon else None)
    if factory is not None:
        return factory(parts, spec)
    if parts.name.endswith(FILE_SUFFIXES) or Path(parts.name).expanduser().is_dir():
        return file_suite(suite_file(parts.name), parts, spec)
    registered = sorted(_SUITES.added_names())
    extra = f"; registered: {', '.join(registered)}" if registered else ""
    raise ConfigError(f"unknown suite {spec!r}; valid forms: {SUITE_FORMS}{extra}")
