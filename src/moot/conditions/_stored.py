"""What a run stores of its stop conditions, including conditions that cannot be stored at all.

AutoGen runs any ``TerminationCondition`` in its teams, including those that
have no component config: ``FunctionalTermination`` (it holds a function), a
user's own subclass that is not a ``Component``, or a ``Component`` whose class
is local to a function. moot runs them too. A run records its stop conditions
so that a resumption can refuse a team whose conditions differ; of a condition
that cannot be dumped it records what it can, its class, and the team warns
once that resuming the run needs that condition again, from Python.

So two stored forms compare equal when every storable part is equal and every
unstorable part is of the same class: moot cannot tell two functions apart,
and takes the condition a resuming team was given as the one the run had.
"""

from __future__ import annotations

import warnings
from typing import Any

from autogen_agentchat.base import TerminationCondition
from autogen_core import ComponentModel

from moot.conditions._base import AllOf, AnyOf
from moot.conditions._expression import CONDITIONS, parse_stop
from moot.conditions._round_end import AtRoundEnd
from moot.errors import ConfigError

__all__ = ["UnstoredStopWarning", "as_stop", "dumped_stop", "stored_stop", "unstored_parts"]


class UnstoredStopWarning(UserWarning):
    """A run's stop condition has no component config: the run cannot be resumed without it."""


def as_stop(stop: object) -> TerminationCondition:
    """``stop`` as a condition: a condition as it is, a string parsed as a stop expression (``max_rounds(3) |
    token_budget(40000)``); anything else is one ConfigError line naming what is valid."""
    if isinstance(stop, TerminationCondition):
        return stop
    if isinstance(stop, str):
        return parse_stop(stop)
    raise ConfigError(
        f"stop must be a termination condition or a stop expression, got {stop!r} ({type(stop).__name__}); "
        f"e.g. MaxRounds(3) | TokenBudget(40000), or 'max_rounds(3) | token_budget(40000)' ({', '.join(CONDITIONS)})"
    )


def dumped_stop(condition: TerminationCondition) -> ComponentModel | None:
    """The condition's component config, or None when it has none (see the module docstring)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # AutoGen warns of a provider in a private module: the dump is the probe
        try:
            return condition.dump_component()
        except (NotImplementedError, TypeError, ValueError, AttributeError):
            return None


def stored_stop(condition: TerminationCondition) -> dict[str, Any]:
    """What a run records of ``condition``: its component config when it has one; else its parts, each storable
    one as its config and each other one as ``{"unstored": "module.Class"}``."""
    dumped = dumped_stop(condition)
    if dumped is not None:
        return dumped.model_dump(mode="json")
    if isinstance(condition, AtRoundEnd):
        return {"at_round_end": stored_stop(condition.condition)}
    if isinstance(condition, AnyOf | AllOf):
        kind = "any_of" if isinstance(condition, AnyOf) else "all_of"
        return {kind: [stored_stop(part) for part in condition.parts]}
    return {"unstored": _class_name(condition)}


def unstored_parts(condition: TerminationCondition) -> list[str]:
    """The class names of the parts of ``condition`` a run cannot store, in order; empty when it stores whole."""
    return _unstored(stored_stop(condition))


def _unstored(stored: Any) -> list[str]:
    if isinstance(stored, dict) and "unstored" in stored and len(stored) == 1:
        return [str(stored["unstored"]).rsplit(".", 1)[-1]]
    if isinstance(stored, dict) and "provider" not in stored:
        return [name for value in stored.values() for name in _unstored(value)]
    if isinstance(stored, list):
        return [name for value in stored for name in _unstored(value)]
    return []


def _class_name(condition: TerminationCondition) -> str:
    kind = type(condition)
    return f"{kind.__module__}.{kind.__qualname__}"
