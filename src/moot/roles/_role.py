"""A role is a name, a system prompt, an optional persona and (optionally) the schema of its answer.

Built-in roles are looked up by name; users define their own with
:func:`custom_role` from a name and a persona prompt.

Roles of one kind share their system prompt and differ only in ``persona``
(the debate experts), which goes at the *end* of each request instead of the
start: a prompt is then the same for every expert up to the persona, and the
embedded model evaluates that shared text once for all of them.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

from pydantic import BaseModel

from moot.arbiters._verdict import Verdict
from moot.errors import ConfigError
from moot.roles._critique import Critique
from moot.roles._plan import Plan
from moot.roles._position import Position
from moot.roles._prompts import render

__all__ = ["Role", "custom_role", "expert", "known_roles", "register_role", "role"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Role:
    """What an agent is asked to be; the model it runs on is chosen separately (a ModelSpec)."""

    name: str
    description: str
    system_prompt: str
    output_type: type[BaseModel] | None = None
    persona: str = ""
    """Who this role is, placed after each request's material (empty: the system prompt says it all)."""

    @property
    def output_type_path(self) -> str | None:
        """Import path of the output schema, so a role round-trips through JSON config."""
        if self.output_type is None:
            return None
        return f"{self.output_type.__module__}:{self.output_type.__qualname__}"


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


_ROLES: dict[str, Role] = {}


def register_role(new: Role) -> Role:
    """Make a role available by name (``role(name)``, ``--model NAME=SPEC``)."""
    if not _NAME.match(new.name):
        raise ConfigError(f"bad role name {new.name!r}; use lowercase letters, digits and '_'")
    _ROLES[new.name] = new
    return new


def role(name: str) -> Role:
    """Look a role up by name, naming the known ones when it is not there."""
    try:
        return _ROLES[name]
    except KeyError:
        raise ConfigError(f"unknown role {name!r}; known roles: {', '.join(known_roles())}") from None


def known_roles() -> list[str]:
    return sorted(_ROLES)


def custom_role(name: str, persona: str, *, description: str = "", output_type: type[BaseModel] | None = None) -> Role:
    """A user-defined role from a name and a persona prompt, registered for lookup by name."""
    if not persona.strip():
        raise ConfigError(f"role {name!r} needs a non-empty persona prompt")
    return register_role(Role(name, description or f"{name} (custom role)", persona.strip(), output_type))


def expert(name: str, persona: str, *, description: str = "") -> Role:
    """A debate expert from a name and a persona: the shared debate rules, answering with a Position, and a persona."""
    if not persona.strip():
        raise ConfigError(f"expert {name!r} needs a non-empty persona prompt")
    rules = render("expert_rules")
    return register_role(Role(name, description or f"{name} (expert)", rules, Position, persona=persona.strip()))


GENERATOR = register_role(
    Role("generator", "Writes the work product and revises it from critique.", render("generator"))
)
ARCHITECT = expert("architect", render("experts/architect"), description="Technical soundness and evolvability.")
OPS = expert("ops", render("experts/ops"), description="Operability, cost to run, failure modes.")
BUSINESS = expert("business", render("experts/business"), description="Value, risk, time to market.")
ARBITER = register_role(Role("arbiter", "Weighs the experts' arguments and rules.", render("arbiter"), Verdict))
CRITIC = register_role(
    Role("critic", "Reviews a draft and answers with a structured Critique.", render("critic"), Critique)
)
PLANNER = register_role(
    Role("planner", "Breaks a task into steps, each one tool call with a success check.", render("planner"), Plan)
)
EXECUTOR = register_role(
    # No fixed schema: the team asks for a ToolCall narrowed to its tools, or a StepResult, turn by turn.
    Role("executor", "Performs one plan step with one tool call, or judges a step's outcome.", render("executor"))
)
