"""An AutoGen model client's component config (what ``client.dump_component()`` writes) as a spec holds it.

A spec names any AutoGen ``ChatCompletionClient`` by its component config: inline (a mapping in a role file or a
scenario, ``component:{...}`` on the command line) or as a file (``component:PATH.json`` / ``.yaml``). The spec
keeps it as canonical JSON text (sorted keys, compact): a bounded, checked value that hashes, compares and
serialises like every other spec field. Nothing here imports the class the config names; that happens only
when a client is built (``_component.py``), from a spec the user named.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autogen_core import ComponentModel
from pydantic import BaseModel, ValidationError

from moot.boundary import DataBounds, json_depth, load_json, load_yaml, one_line, read_bounded
from moot.errors import ConfigError

__all__ = [
    "COMPONENT",
    "COMPONENT_BOUNDS",
    "COMPONENT_FORM",
    "MASKED_SECRET",
    "canonical_component",
    "component_data",
    "component_label",
    "component_provider",
    "file_alias",
    "split_component",
]

COMPONENT = "component"
"""The provider whose specs carry a client component config."""
COMPONENT_BOUNDS = DataBounds(max_bytes=256_000, max_depth=24, max_nodes=20_000)
"""A client's config is a few hundred bytes; a quarter megabyte is far above any, far below a strain."""
COMPONENT_FORM = (
    "component:PATH.json, component:PATH.yaml (or @PATH.json, @PATH.yaml) or component:{...} (the config AutoGen's "
    'client.dump_component() writes: {"provider": "module.Class", "config": {...}})'
)
MASKED_SECRET = "**********"
"""What AutoGen's ``dump_component`` writes in place of a secret (pydantic's ``SecretStr``): not a key."""
_SUFFIXES = (".json", ".yaml", ".yml")
_KEYS = tuple(ComponentModel.model_fields)
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_LABELLED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*#[0-9a-f]{12}$")
_TAIL = re.compile(r"[@?]")


def canonical_component(value: object, what: str = "client component") -> str:
    """The canonical JSON text of a client component config given as a mapping, a ``ComponentModel`` or JSON text;
    ConfigError (one line naming what is wrong and what is valid) for anything else."""
    data = _plain(value, what)
    provider = data.get("provider")
    if provider is None:
        raise ConfigError(f'{what} names no "provider" (the client class, e.g. "{_EXAMPLE}"); form: {COMPONENT_FORM}')
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{what}: unknown key {unknown[0]!r}; valid keys: {', '.join(_KEYS)}")
    if not isinstance(provider, str) or not _DOTTED.match(provider):
        raise ConfigError(f'{what}: "provider" must name a class as module.Class (e.g. "{_EXAMPLE}"), got {provider!r}')
    if not isinstance(data.get("config"), dict):
        raise ConfigError(f'{what} ({provider}): "config" must be a mapping of the client\'s settings')
    try:
        ComponentModel.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{what} ({provider}): {_first_problem(exc)}") from None
    masked = _masked_key(data["config"])
    if masked is not None:
        raise ConfigError(
            f"{what} ({provider}): config.{masked} is {MASKED_SECRET!r}, the mask AutoGen's dump_component writes "
            "in place of a secret, not the secret itself; remove it (the client reads its key from the environment) "
            "or write the real value"
        )
    try:
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what} ({provider}) is not plain JSON data: {one_line(str(exc), 120)}") from None
    load_json(text, what, COMPONENT_BOUNDS)  # bounded: size and depth
    return text


_EXAMPLE = "autogen_ext.models.openai.OpenAIChatCompletionClient"


def _plain(value: object, what: str) -> dict[str, Any]:
    if isinstance(value, ComponentModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, str):
        value = load_json(value, what, COMPONENT_BOUNDS)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{what} must be a mapping, got {type(value).__name__}; form: {COMPONENT_FORM}")
    if not all(isinstance(key, str) for key in value):
        raise ConfigError(f"{what}: every key must be a string")
    return dict(value)


def _masked_key(config: Mapping[str, Any], prefix: str = "") -> str | None:
    """The dotted name of the first value that is AutoGen's secret mask, if any."""
    for key, value in config.items():
        if value == MASKED_SECRET:
            return prefix + key
        if isinstance(value, Mapping):
            found = _masked_key(value, f"{prefix}{key}.")
            if found is not None:
                return found
    return None


def _first_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "value"
    return f"{where}: {str(first['msg']).removeprefix('Value error, ')}"


def component_data(text: str) -> dict[str, Any]:
    """The config a spec holds (its canonical text, checked when the spec was made) as a mapping."""
    data: dict[str, Any] = json.loads(text)
    return data


def component_provider(text: str) -> str:
    """The class a spec's config names, as the config names it (a dotted path, or one of AutoGen's short names)."""
    return str(component_data(text)["provider"])


def component_label(text: str) -> str:
    """The config as a spec's text form names it: ``Class#digest``. The digest covers the whole config, so two
    configs never share a label (nor a cache store); the text holds no setting (no key, no URL)."""
    name = component_provider(text).rpartition(".")[2]
    return f"{name}#{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def file_alias(text: str) -> str | None:
    """``@client.json`` (optionally followed by ``@TEMP?query``) is short for ``component:client.json``: what follows
    ``component:``; None for anything else (``@0.9`` is a temperature: it names no .json or .yaml file)."""
    stripped = text.strip()
    if not stripped.startswith("@"):
        return None
    rest = stripped[1:]
    match = _TAIL.search(rest)
    path_text = rest[: match.start()] if match else rest
    return rest if path_text.lower().endswith(_SUFFIXES) else None


def split_component(spec_text: str, rest: str) -> tuple[str, str]:
    """``rest`` (what follows ``component:``) as the canonical config and the ``@TEMP?query`` tail after it.

    ``{...}`` is the config inline; anything else is a path to a ``.json`` or ``.yaml`` file (up to the first ``@``
    or ``?``), read relative to the working directory.
    """
    where = f"model spec {_short(spec_text)}"
    if rest.startswith("{"):
        return _inline(where, rest)
    match = _TAIL.search(rest)
    path_text, tail = (rest[: match.start()], rest[match.start() :]) if match else (rest, "")
    if not path_text:
        raise ConfigError(f"bad {where}: name the client's config after 'component:'; form: {COMPONENT_FORM}")
    if _LABELLED.match(path_text):
        raise ConfigError(
            f"bad {where}: component:{path_text} names a client component by its digest (as runs and results "
            f"record it), which cannot be loaded; give its config: {COMPONENT_FORM}"
        )
    path = Path(path_text).expanduser()
    if path.suffix.lower() not in _SUFFIXES:
        raise ConfigError(f"bad {where}: a client component file must end in {', '.join(_SUFFIXES)}, got {path_text!r}")
    what = f"client component file {path_text}"
    raw = read_bounded(path, "client component file", COMPONENT_BOUNDS.max_bytes)
    data = (
        load_json(raw, what, COMPONENT_BOUNDS)
        if path.suffix.lower() == ".json"
        else load_yaml(raw, what, COMPONENT_BOUNDS)
    )
    return canonical_component(data, what), tail


def _inline(where: str, rest: str) -> tuple[str, str]:
    if len(rest.encode()) > COMPONENT_BOUNDS.max_bytes or json_depth(rest) > COMPONENT_BOUNDS.max_depth:
        raise ConfigError(f"bad {where}: the inline client component is larger or deeper than a client config can be")
    try:
        data, end = json.JSONDecoder().raw_decode(rest)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(
            f"bad {where}: the inline client component is not valid JSON: {one_line(str(exc), 120)}"
        ) from None
    return canonical_component(data, "inline client component"), rest[end:]


def _short(text: str) -> str:
    """A spec as an error quotes it: an inline config is cut, so the line stays one short line."""
    return repr(text if len(text) <= 80 else text[:77] + "...")
