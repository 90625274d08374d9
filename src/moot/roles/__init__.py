"""Roles (generator, critic, experts, ...) and the agent that plays a role on a model."""

from moot.roles._agent import RoleAgent, RoleAgentConfig
from moot.roles._critique import Critique
from moot.roles._role import CRITIC, GENERATOR, Role, custom_role, known_roles, register_role, role

__all__ = [
    "CRITIC",
    "GENERATOR",
    "Critique",
    "Role",
    "RoleAgent",
    "RoleAgentConfig",
    "custom_role",
    "known_roles",
    "register_role",
    "role",
]
