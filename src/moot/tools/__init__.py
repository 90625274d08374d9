"""Tools an agent may call (run_python, read_file, write_file) behind a permission policy with an audit trail.

``run_python`` runs code in the sandbox (:mod:`moot.sandbox`).

Nothing here imports AutoGen; agents that use these tools live in :mod:`moot.roles` and :mod:`moot.teams`.
"""

from moot.tools._permissions import (
    Approval,
    ApprovalRequest,
    Approver,
    ArgCheck,
    AuditRecord,
    AuditTrail,
    CallbackApprover,
    HumanApprover,
    PermissionPolicy,
    Rule,
    ToolBox,
    command_allowed,
    paths_under,
)
from moot.tools._tool import (
    ReadFileArgs,
    RunPythonArgs,
    Tool,
    ToolError,
    ToolSource,
    WriteFileArgs,
    builtin_tools,
    read_file_tool,
    run_python_tool,
    write_file_tool,
)

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Approver",
    "ArgCheck",
    "AuditRecord",
    "AuditTrail",
    "CallbackApprover",
    "HumanApprover",
    "PermissionPolicy",
    "ReadFileArgs",
    "Rule",
    "RunPythonArgs",
    "Tool",
    "ToolBox",
    "ToolError",
    "ToolSource",
    "WriteFileArgs",
    "builtin_tools",
    "command_allowed",
    "paths_under",
    "read_file_tool",
    "run_python_tool",
    "write_file_tool",
]
