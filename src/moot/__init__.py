"""moot: multi-agent debate and review loops on AutoGen's agentchat API.

Controllable (layered termination), observable (structured results),
stoppable and resumable (state save/load), cheap (bounded context, an
embedded offline model). The public API is what ``__all__`` lists.
"""

import moot.display  # noqa: F401  (results print as moot shows them: rich.print(result), Jupyter)
from moot.errors import (
    ConfigError,
    MalformedOutputError,
    ModelUnavailableError,
    MootError,
    ToolFaultError,
    TransientModelError,
)
from moot.messages import MESSAGE_TYPES
from moot.models import ModelSpec
from moot.roles import Critique, Position, Role, RoleAgent, TestCritic, custom_role, expert, role
from moot.teams import (
    CodeDebate,
    CodeDebateResult,
    Debate,
    DebateResult,
    Feedback,
    HumanInTheLoop,
    PlannerExecutor,
    PlannerExecutorResult,
    Reflection,
    ReflectionResult,
)
from moot.tools import PermissionPolicy, Rule, Tool, builtin_tools

__version__ = "0.1.0"

__all__ = [
    "MESSAGE_TYPES",
    "CodeDebate",
    "CodeDebateResult",
    "ConfigError",
    "Critique",
    "Debate",
    "DebateResult",
    "Feedback",
    "HumanInTheLoop",
    "MalformedOutputError",
    "ModelSpec",
    "ModelUnavailableError",
    "MootError",
    "PermissionPolicy",
    "PlannerExecutor",
    "PlannerExecutorResult",
    "Position",
    "Reflection",
    "ReflectionResult",
    "Role",
    "RoleAgent",
    "Rule",
    "TestCritic",
    "Tool",
    "ToolFaultError",
    "TransientModelError",
    "__version__",
    "builtin_tools",
    "custom_role",
    "expert",
    "role",
]
