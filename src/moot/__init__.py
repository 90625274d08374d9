"""moot: multi-agent debate and review loops on AutoGen's agentchat API.

Controllable (layered termination), observable (structured results),
stoppable and resumable (state save/load), cheap (bounded context, an
embedded offline model). The public API is what ``__all__`` lists.
"""

from moot.errors import (
    ConfigError,
    MalformedOutputError,
    ModelUnavailableError,
    MootError,
    ToolFaultError,
    TransientModelError,
)
from moot.models import ModelSpec
from moot.roles import Critique, Position, Role, RoleAgent, TestCritic, custom_role, expert, role
from moot.teams import Debate, DebateResult, Reflection, ReflectionResult

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "Critique",
    "Debate",
    "DebateResult",
    "MalformedOutputError",
    "ModelSpec",
    "ModelUnavailableError",
    "MootError",
    "Position",
    "Reflection",
    "ReflectionResult",
    "Role",
    "RoleAgent",
    "TestCritic",
    "ToolFaultError",
    "TransientModelError",
    "__version__",
    "custom_role",
    "expert",
    "role",
]
