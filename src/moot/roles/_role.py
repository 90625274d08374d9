"""A role is a name, a system prompt, an optional persona and (optionally) the schema of its answer.

Roles are data: the built-ins are files in the catalog's ``roles/`` folder
(see :mod:`moot.roles._role_files`), looked up by name through
:mod:`moot.roles._registry`. Code can still make one with :func:`custom_role`
or :func:`expert`.

Roles of one kind share their system prompt and differ only in ``persona``
(the debate experts), which goes at the *end* of each request instead of the
start: a prompt is then the same for every expert up to the persona, and the
embedded model evaluates that shared text once for all of them. The reply's
schema closes the request too, just before the persona, so the system prompt
is the same on every turn of a role (see ``RoleAgent.prompt``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from pydantic import BaseModel

from moot.boundary import argument_error, checked_text
from moot.errors import ConfigError
from moot.models import ModelSpec
from moot.roles._position import Position
from moot.roles._prompts import render_prompt

__all__ = ["Role", "checked_output_type", "expert_role", "import_output_type", "persona_role"]


@dataclass(frozen=True)
class Role:
    """What an agent is asked to be; the model it runs on is chosen separately (a ModelSpec)."""

    name: str
    description: str
    system_prompt: str
    output_type: type[BaseModel] | None = None
    persona: str = ""
    """Who this role is, placed after each request's material (empty: the system prompt says it all)."""
    model: ModelSpec | None = None
    """The role's own default model layer (``@0.9`` for a contrarian); a scenario's and the user's win over it."""

    def __post_init__(self) -> None:
        """Refuse a field of the wrong kind here, not in the first turn that reads it."""
        checked_text(self.name, "Role", "name")
        checked_text(self.description, "Role", "description", empty=True)
        checked_text(self.system_prompt, "Role", "system_prompt")
        checked_text(self.persona, "Role", "persona", empty=True)
        checked_output_type(self.output_type, "Role")
        if self.model is not None and not isinstance(self.model, ModelSpec):
            raise argument_error("Role", "model", "None or a ModelSpec, e.g. ModelSpec.parse('@0.9')", self.model)

    @property
    def output_type_path(self) -> str | None:
        """Import path of the output schema, so a role round-trips through JSON config."""
        if self.output_type is None:
            return None
        return f"{self.output_type.__module__}:{self.output_type.__qualname__}"


def checked_output_type(output_type: object, where: str) -> type[BaseModel] | None:
    """None (the role answers in text) or a pydantic model class (the schema of its answer)."""
    if output_type is not None and not (isinstance(output_type, type) and issubclass(output_type, BaseModel)):
        raise argument_error(where, "output_type", "None or a pydantic model class, e.g. moot.Critique", output_type)
    return output_type


def persona_role(
    name: str,
    description: str,
    persona: str,
    output_type: type[BaseModel] | None = None,
    model: ModelSpec | None = None,
) -> Role:
    """A role whose persona is its whole system prompt (generator, critic, arbiter, ...)."""
    _check_making(name, description, persona, "custom_role")
    if not persona.strip():
        raise ConfigError(f"role {name!r} needs a non-empty persona prompt")
    return Role(name, description or f"{name} (custom role)", persona.strip(), output_type, model=model)


def expert_role(name: str, description: str, persona: str, model: ModelSpec | None = None) -> Role:
    """A debate expert: the shared debate rules as system prompt, answering with a Position, and its persona."""
    _check_making(name, description, persona, "expert")
    if not persona.strip():
        raise ConfigError(f"expert {name!r} needs a non-empty persona prompt")
    rules = render_prompt("expert_rules")
    return Role(name, description or f"{name} (expert)", rules, Position, persona=persona.strip(), model=model)


def _check_making(name: object, description: object, persona: object, where: str) -> None:
    """The arguments a role is made from, before any of them is read as text."""
    checked_text(name, where, "name")
    checked_text(persona, where, "persona")
    checked_text(description, where, "description", empty=True)


def import_output_type(path: str) -> type[BaseModel]:
    module, _, qualname = path.partition(":")
    try:
        obj: object = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise ConfigError(f"cannot import output type {path!r}; expected 'package.module:ClassName'") from None
    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
        raise ConfigError(f"output type {path!r} is not a pydantic model")
    return obj
