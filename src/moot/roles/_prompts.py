"""Prompt templates are package data, rendered with Jinja and StrictUndefined.

StrictUndefined turns a misspelt variable into an error instead of an empty
string silently sent to the model.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel

__all__ = ["render_prompt", "schema_hint"]


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("moot.roles", "prompts"),
        undefined=StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render_prompt(template: str, **variables: Any) -> str:
    """Render ``prompts/<template>.j2``."""
    return _environment().get_template(f"{template}.j2").render(**variables).strip()


_LONG_ENUM = 40
LISTED_FIELDS = "moot_listed_fields"
"""Class attribute of a schema: the fields whose choices the request lists (see ``with_choices``)."""


@cache
def schema_hint(output_type: type[BaseModel]) -> str:
    """A compact description of the JSON reply the model must give, field by field, in order."""
    schema = output_type.model_json_schema()
    listed = getattr(output_type, LISTED_FIELDS, frozenset())
    lines = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or "/".join(str(v) for v in prop.get("enum", [])) or "object"
        choices = prop.get("enum", [prop["const"]] if "const" in prop else [])
        if choices and (name in listed or any(len(str(v)) > _LONG_ENUM for v in choices)):
            # Choices the request lists (quoted claims, long choices): repeating them here would make the
            # hint differ per expert and lose the prompt state the experts share.
            kind = "string, copied from the request"
        elif "enum" in prop:
            kind = " | ".join(json.dumps(v) for v in prop["enum"])
        elif "const" in prop:
            kind = json.dumps(prop["const"])
        # Descriptions are left out on purpose: small models copy them verbatim
        # into the answer. The role's system prompt explains the fields instead.
        lines.append(f'  "{name}": {kind}')
    return "Reply with one JSON object and nothing else, with these fields in this order:\n" + "\n".join(lines)
