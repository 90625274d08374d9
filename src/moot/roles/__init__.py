"""Roles (generator, critic, experts, ...) and the agent that plays a role on a model."""

from moot.roles._agent import RoleAgent, RoleAgentConfig, parse_structured
from moot.roles._critique import Critique
from moot.roles._plan import Plan, Step, StepResult, ToolCall, plan_type, tool_call_type
from moot.roles._position import (
    NUMBER,
    Opening,
    Position,
    Rebuttal,
    claims_of,
    with_options,
    with_pattern,
    without_answer,
)
from moot.roles._prompts import render_prompt
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
from moot.roles._role_models import ModelsFor, RoleModels, parse_model_options, role_models
from moot.roles._test_critic import TestCritic, TestCriticConfig, failure_lines, run_sandbox
from moot.roles._verdict import ExpertAssessment, Verdict

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
    "Critique",
    "ExpertAssessment",
    "ModelsFor",
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
    "Verdict",
    "built_in_role",
    "claims_of",
    "custom_role",
    "expert",
    "failure_lines",
    "known_roles",
    "parse_model_options",
    "parse_structured",
    "plan_type",
    "register_role",
    "render_prompt",
    "role",
    "role_models",
    "role_origin",
    "run_sandbox",
    "tool_call_type",
    "with_options",
    "with_pattern",
    "without_answer",
]
