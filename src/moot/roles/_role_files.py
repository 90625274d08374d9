"""Role files: one YAML file per role in a catalog ``roles/`` folder, turned into a :class:`Role`.

A file names the role, describes it, gives its persona (a Jinja template
rendered with ``name``, ``description`` and the file's own ``vars``), the
structured answer it gives and, optionally, a default model spec layer::

    name: security
    description: Threats, attack surface, secrets and data exposure.
    output: position
    model: "@0.9"
    persona: |
      You are the security engineer on a review panel. ...

``output: position`` makes a debate expert (the shared debate rules become
its system prompt, the persona closes each request); any other output makes
the persona the whole system prompt.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot.catalog import CatalogFile, read_document
from moot.models import ModelSpec
from moot.roles._critique import Critique
from moot.roles._plan import Plan
from moot.roles._position import Position
from moot.roles._role import Role, expert_role, persona_role
from moot.roles._verdict import Verdict

__all__ = ["OUTPUTS", "RoleFile", "load_role_file"]

OUTPUTS: dict[str, type[BaseModel] | None] = {
    "critique": Critique,
    "position": Position,
    "verdict": Verdict,
    "plan": Plan,
    "text": None,
}
"""What a role answers with, by the name a role file uses."""


class RoleFile(CatalogFile):
    """The fields of a role file."""

    persona: str = Field(min_length=1)
    """A Jinja template (StrictUndefined): ``{{ name }}``, ``{{ description }}`` and ``vars`` are defined."""
    output: Literal["critique", "position", "verdict", "plan", "text"] = "text"
    model: str | dict[str, Any] | None = None
    """A default model spec layer, e.g. ``@0.9``, or an AutoGen client's component config inline (a mapping with
    ``provider`` and ``config``); scenarios and ``--model`` override it."""
    vars: dict[str, str] = {}


def load_role_file(path: Path) -> Role:
    """The role a file describes; any problem is a CatalogError naming the file and line."""
    return _load(path.resolve(), path.stat().st_mtime_ns)


@cache
def _load(path: Path, mtime_ns: int) -> Role:  # the mtime is part of the key: an edited file is read again
    document = read_document(path)
    spec = document.validate_named(RoleFile)
    model = None
    if spec.model is not None:
        try:
            model = ModelSpec.parse(spec.model)
        except ValueError as exc:
            raise document.error(f"model: {exc}", ["model"]) from None
    persona = document.render("persona", {**spec.vars, "name": spec.name, "description": spec.description})
    if spec.output == "position":
        return expert_role(spec.name, spec.description, persona, model)
    return persona_role(spec.name, spec.description, persona, OUTPUTS[spec.output], model)
