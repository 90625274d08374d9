"""Argument checks for moot's public constructors: a bad argument is refused where it is given, in one line.

Why here: a team, an agent, a tool or a condition that takes a wrong argument must not accept it and fail later
inside ``run()`` (an ``AttributeError`` from deep in moot, a model call wasted first), nor print a many-line
schema dump. An argument from a user's code is input moot did not write, so its checks sit with the other
boundary checks, in the lowest package every constructor's module already builds on. Every check raises
:class:`~moot.errors.ConfigError` (a ``ValueError``) whose one line says where (``Debate: arbiter``), what is
valid, and what was given.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from moot.boundary._text import one_line
from moot.errors import ConfigError

__all__ = [
    "argument_error",
    "checked_choice",
    "checked_count",
    "checked_mapping",
    "checked_number",
    "checked_optional_text",
    "checked_pattern",
    "checked_strings",
    "checked_text",
    "shown",
]

_SHOWN = 80
"""How much of a bad value a message repeats: enough to recognise it, never enough to wrap."""


def shown(value: object) -> str:
    """A bad value as a message names it: its type, then its (clipped, one-line) repr."""
    if isinstance(value, type):
        return f"the class {value.__name__}"
    return f"{type(value).__name__} {one_line(repr(value), _SHOWN)}"


def argument_error(where: str, argument: str, valid: str, got: object) -> ConfigError:
    """The one-line refusal of ``argument`` of ``where``: what is valid, and what was given."""
    return ConfigError(f"{where}: {argument} must be {valid}, got {shown(got)}")


def checked_text(value: object, where: str, argument: str, *, empty: bool = False) -> str:
    """A string (non-blank unless ``empty``)."""
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise argument_error(where, argument, "a string" if empty else "a non-empty string", value)
    return value


def checked_optional_text(value: object, where: str, argument: str) -> str | None:
    """None, or a non-empty string."""
    return None if value is None else checked_text(value, where, argument)


def checked_count(value: object, where: str, argument: str, least: int = 0, most: int | None = None) -> int:
    """A whole number (not a bool, not a string of digits) from ``least`` to ``most``."""
    within = isinstance(value, int) and not isinstance(value, bool) and value >= least
    if not within or (most is not None and value > most):  # type: ignore[operator]
        bounds = f"from {least} to {most}" if most is not None else f"{least} or more"
        raise argument_error(where, argument, f"a whole number, {bounds}", value)
    return value  # type: ignore[return-value]


def checked_number(value: object, where: str, argument: str, least: float, most: float) -> float:
    """A real number (not a bool) from ``least`` to ``most``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not least <= value <= most:
        raise argument_error(where, argument, f"a number from {least} to {most}", value)
    return float(value)


def checked_choice(value: object, where: str, argument: str, choices: Collection[str]) -> str:
    """One of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise argument_error(where, argument, f"one of {', '.join(choices)}", value)
    return value


def checked_strings(value: object, where: str, argument: str, *, example: str = "") -> list[str]:
    """A sequence of non-empty strings; a lone string is refused (it would be taken as its letters)."""
    valid = f"a list of non-empty strings{f', e.g. {example}' if example else ''}"
    if isinstance(value, str | bytes) or not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise argument_error(where, argument, valid, value)
    items = list(value)
    bad = next((item for item in items if not isinstance(item, str) or not item.strip()), None)
    if bad is not None:
        raise ConfigError(f"{where}: {argument} must be {valid}, got {shown(bad)} among them")
    return items


def checked_mapping(value: object, where: str, argument: str, valid: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise argument_error(where, argument, valid, value)
    return value


def checked_pattern(value: object, where: str, argument: str) -> str | None:
    """None, or a regular expression that compiles."""
    if value is None:
        return None
    checked_text(value, where, argument)
    try:
        re.compile(value)  # type: ignore[arg-type]
    except re.error as exc:
        raise ConfigError(f"{where}: {argument} {value!r} is not a regular expression ({exc})") from None
    return value  # type: ignore[return-value]
