"""Roles by name: the ones registered from code, then the catalog's role files (project first, then built-in).

A role registered from code under a built-in's name, like a user's role file
with that name, replaces the built-in and says so once on stderr.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from moot.boundary import argument_error, checked_text
from moot.catalog import BUILT_IN, NAME_PATTERN, entries, notice_override
from moot.errors import ConfigError
from moot.roles._role import Role, checked_output_type, expert_role, persona_role
from moot.roles._role_files import load_role_file

__all__ = ["built_in_role", "custom_role", "expert", "known_roles", "register_role", "role", "role_origin"]

_NAME = re.compile(NAME_PATTERN)
_ROLES: dict[str, Role] = {}


def register_role(new: Role) -> Role:
    """Make a role available by name (``role(name)``, ``--model NAME=SPEC``); it wins over role files."""
    if not isinstance(new, Role):
        raise argument_error("register_role", "the role", "a moot Role, e.g. custom_role('name', 'persona')", new)
    if not _NAME.match(new.name):
        raise ConfigError(f"bad role name {new.name!r}; use lowercase letters, digits and '_'")
    if (BUILT_IN / "roles" / f"{new.name}.yaml").is_file():
        notice_override("roles", new.name, "code")
    _ROLES[new.name] = new
    return new


def role(name: str) -> Role:
    """Look a role up by name, naming the known ones when it is not there."""
    checked_text(name, "role", "the role's name")
    if name in _ROLES:
        return _ROLES[name]
    found = entries("roles").get(name)
    if found is None:
        raise ConfigError(f"unknown role {name!r}; known roles: {', '.join(known_roles())}")
    return load_role_file(found.path)


def known_roles() -> list[str]:
    return sorted({*_ROLES, *entries("roles")})


def role_origin(name: str) -> str:
    """Where ``role(name)`` comes from: ``code``, ``built-in`` or the path of the project's file."""
    if name in _ROLES:
        return "code"
    found = entries("roles").get(name)
    if found is None:
        raise ConfigError(f"unknown role {name!r}; known roles: {', '.join(known_roles())}")
    return found.origin


def built_in_role(name: str) -> Role:
    """A role as moot ships it, whatever the project's files or code say."""
    return load_role_file(BUILT_IN / "roles" / f"{name}.yaml")


def custom_role(name: str, persona: str, *, description: str = "", output_type: type[BaseModel] | None = None) -> Role:
    """A user-defined role from a name and a persona prompt, registered for lookup by name."""
    checked_output_type(output_type, "custom_role")
    return register_role(persona_role(name, description, persona, output_type))


def expert(name: str, persona: str, *, description: str = "") -> Role:
    """A debate expert from a name and a persona: the shared debate rules, answering with a Position, and a persona."""
    return register_role(expert_role(name, description, persona))


GENERATOR = built_in_role("generator")
ARCHITECT = built_in_role("architect")
OPS = built_in_role("ops")
BUSINESS = built_in_role("business")
ARBITER = built_in_role("arbiter")
CRITIC = built_in_role("critic")
PLANNER = built_in_role("planner")
EXECUTOR = built_in_role("executor")
