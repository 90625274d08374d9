"""A model spec's compact string form, ``PROVIDER[:MODEL][@TEMPERATURE][?key=value&...]``, read into fields.

Pure text work: which providers exist is the caller's to say (``ModelSpec.parse``
passes the registered names), so this module needs nothing else of moot's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args
from urllib.parse import parse_qsl

from moot.errors import ConfigError

__all__ = ["QUERY_KEYS", "RESPONSE_FORMATS", "SPEC_FORM", "ResponseFormat", "parse_fields"]

ResponseFormat = Literal["json_schema", "json_object_schema", "json_object"]
"""How a served model is sent the schema of a structured reply (see ``ModelSpec.response_format``)."""
RESPONSE_FORMATS: tuple[str, ...] = get_args(ResponseFormat)
SPEC_FORM = (
    "PROVIDER[:MODEL][@TEMPERATURE][?seed=N&max_tokens=N&timeout=S&base_url=URL&api_key_env=VAR"
    "&price_in=USD&price_out=USD&response_format=" + "|".join(RESPONSE_FORMATS) + "]"
    " (PROVIDER:MODEL is component:FILE.json, component:FILE.yaml or component:{JSON} for any AutoGen model "
    "client, by the config its dump_component() writes)"
)
QUERY_KEYS = (
    "seed", "max_tokens", "timeout", "base_url", "api_key_env", "price_in", "price_out", "response_format",
    "temperature",
)  # fmt: skip
"""The fields a spec's query may set, in the order its string form writes them."""
_NUMBERS = {
    "seed": int, "max_tokens": int, "temperature": float, "timeout": float, "price_in": float, "price_out": float
}  # fmt: skip


def parse_fields(text: str, providers: Sequence[str]) -> dict[str, object]:
    """Split ``PROVIDER[:MODEL][@TEMP][?k=v&...]`` into ModelSpec fields; ``providers`` are the valid names."""
    raw = text.strip()
    if not raw:
        raise ConfigError(f"empty model spec; form: {SPEC_FORM}, e.g. local or local@0.7")
    head, _, query = raw.partition("?")
    fields: dict[str, object] = {}
    if "@" in head:
        head, _, temp = head.rpartition("@")
        fields["temperature"] = _number(text, "temperature", temp)
    provider, sep, model = head.partition(":")
    if provider:
        if provider not in providers:
            raise ConfigError(
                f"bad model spec {text!r}: unknown provider {provider!r}; valid providers: {', '.join(providers)}"
            )
        fields["provider"] = provider
    if sep:
        if not model:
            raise ConfigError(f"bad model spec {text!r}: empty model name after ':'; form: {SPEC_FORM}")
        fields["model"] = model
    fields.update(_parse_query(text, query))
    return fields


def _parse_query(text: str, query: str) -> dict[str, object]:
    fields: dict[str, object] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ConfigError(f"bad model spec {text!r}: parameters must be key=value pairs joined by '&'") from None
    for key, value in pairs:
        if key not in QUERY_KEYS:
            raise ConfigError(
                f"bad model spec {text!r}: unknown parameter {key!r}; valid parameters: {', '.join(QUERY_KEYS)}"
            )
        if key in fields:
            raise ConfigError(f"bad model spec {text!r}: parameter {key!r} is given twice; give it once")
        fields[key] = _number(text, key, value) if key in _NUMBERS else value
    return fields


def _number(text: str, key: str, value: str) -> float | int:
    try:
        number = _NUMBERS[key](value)
    except ValueError:
        kind = "a number" if _NUMBERS[key] is float else "an integer"
        raise ConfigError(f"bad model spec {text!r}: {key} must be {kind}, got {value!r}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ConfigError(f"bad model spec {text!r}: {key} must be finite, got {value!r}")
    return number
