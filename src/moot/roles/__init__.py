"""Roles (generator, critic, experts, ...) and the agent that plays a role on a model."""

from moot.roles._agent import RoleAgent, RoleAgentConfig
from moot.roles._candidate import CandidateChoice
from moot.roles._critique import Critique
from moot.roles._plan import Plan, Step, StepResult, ToolCall
from moot.roles._position import NUMBER, Opening, Position, Rebuttal
from moot.roles._registry import (
    ARBITER,
    ARCHITECT,
    BUSINESS,
    CRITIC,
    EXECUTOR,
    GENERATOR,
    OPS,
    PLANNER,
    built_in_role,
    custom_role,
    expert,
    known_roles,
    register_role,
    role,
    role_origin,
)
from moot.roles._role import Role
from moot.roles._role_models import RoleModels, parse_model_options
from moot.roles._test_critic import TestCritic, TestCriticConfig

__all__ = [
    "ARBITER",
    "ARCHITECT",
    "BUSINESS",
    "CRITIC",
    "EXECUTOR",
    "GENERATOR",
    "NUMBER",
    "OPS",
    "PLANNER",
    "CandidateChoice",
    "Critique",
    "Opening",
    "Plan",
    "Position",
    "Rebuttal",
    "Role",
    "RoleAgent",
    "RoleAgentConfig",
    "RoleModels",
    "Step",
    "StepResult",
    "TestCritic",
    "TestCriticConfig",
    "ToolCall",
    "built_in_role",
    "custom_role",
    "expert",
    "known_roles",
    "parse_model_options",
    "register_role",
    "role",
    "role_origin",
]
