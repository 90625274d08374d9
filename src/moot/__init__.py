"""moot: multi-agent debate and review loops on AutoGen's agentchat API.

Controllable (layered termination), observable (structured results),
stoppable and resumable (state save/load), cheap (bounded context, an
embedded offline model). The public API is what ``__all__`` lists.
"""

from moot.errors import ConfigError, MalformedOutputError, ModelUnavailableError, MootError
from moot.models import ModelSpec
from moot.roles import Critique, Role, RoleAgent, custom_role, role
from moot.teams import Reflection, ReflectionResult

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "Critique",
    "MalformedOutputError",
    "ModelSpec",
    "ModelUnavailableError",
    "MootError",
    "Reflection",
    "ReflectionResult",
    "Role",
    "RoleAgent",
    "__version__",
    "custom_role",
    "role",
]
