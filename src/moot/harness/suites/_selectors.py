"""The compact string form shared by suites and arms: ``NAME[SLICE][?key=value&...]``.

One grammar for both keeps the command line learnable: ``humaneval[:20]``,
``reasoning-gym:gsm_symbolic?n=50&seed=1``, ``self-consistency?k=7``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from moot._renamed import former_key
from moot.errors import ConfigError

__all__ = ["FORMER_CHOICES", "SpecParts", "key_query", "parse_spec", "renamed_choices"]

_SPEC = re.compile(r"^(?P<name>[^\[\]?]+)(?:\[(?P<slice>[^\]]*)\])?(?:\?(?P<query>.*))?$", re.DOTALL)
_SLICE = re.compile(r"^\s*(-?\d*)\s*(?::\s*(-?\d*)\s*)?$")


@dataclass(frozen=True)
class SpecParts:
    name: str
    slice: slice | None = None
    params: dict[str, str] = field(default_factory=dict)

    def take(self, key: str, default: str | None = None) -> str | None:
        """Pop one parameter (so what is left over can be reported as unknown)."""
        return self.params.pop(key, default)


def parse_spec(text: str, *, what: str, forms: str) -> SpecParts:
    """Split ``text``; a malformed one is a ConfigError naming the valid ``forms``."""
    match = _SPEC.match(text.strip())
    if match is None:
        raise ConfigError(f"bad {what} {text!r}; valid forms: {forms}")
    where = match.group("slice")
    cut = None if where is None else _parse_slice(text, where, what, forms)
    query = match.group("query") or ""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ConfigError(f"bad {what} {text!r}: parameters must be key=value pairs joined by '&'") from None
    params: dict[str, str] = {}
    for key, value in pairs:
        if key in params:
            raise ConfigError(f"bad {what} {text!r}: parameter {key!r} given twice")
        params[key] = value
    return SpecParts(match.group("name").strip(), cut, params)


def _parse_slice(text: str, where: str, what: str, forms: str) -> slice:
    match = _SLICE.match(where)
    if match is None or (match.group(2) is None and not match.group(1)):
        raise ConfigError(f"bad {what} {text!r}: slice [{where}] must look like [:20], [10:30] or [5]; forms: {forms}")
    start, stop = match.group(1), match.group(2)
    if stop is None:  # [5]: one item
        index = int(start)
        return slice(index, index + 1 if index != -1 else None)
    return slice(int(start) if start else None, int(stop) if stop else None)


def int_param(parts: SpecParts, key: str, default: int, *, what: str, minimum: int | None = None) -> int:
    raw = parts.take(key)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{what}: {key} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{what}: {key} must be at least {minimum}, got {value}")
    return value


def reject_unknown(parts: SpecParts, *, what: str, valid: str) -> None:
    if parts.params:
        raise ConfigError(f"{what}: unknown parameter(s) {', '.join(sorted(parts.params))}; valid parameters: {valid}")


FORMER_CHOICES = "options"
"""What a suite's closed answer set was called before ``choices`` (a suite file's field, a spec's parameter). Suite keys
still spell it so: results rows are stored under them."""


def renamed_choices(params: Mapping[str, str], label: str) -> dict[str, str]:
    """A suite spec's parameters with ``options=`` read as ``choices=`` (warning that it was renamed)."""
    return former_key(params, FORMER_CHOICES, "choices", where=f"suite {label!r}")


def key_query(params: Mapping[str, str]) -> str:
    """Parameters as a suite's key spells them, sorted, ``choices`` under its former name (the key rows have)."""
    stored = {(FORMER_CHOICES if key == "choices" else key): value for key, value in params.items()}
    return "&".join(f"{key}={value}" for key, value in sorted(stored.items()))
