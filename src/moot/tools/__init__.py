"""Tools that ground a review in facts (a sandbox that runs model-written code against tests), and
tools an agent may call (run_python, read_file, write_file) behind a permission policy with an audit trail.

Nothing here imports AutoGen; agents that use these tools live in :mod:`moot.roles` and :mod:`moot.teams`.
"""

from moot.tools._models import (
    Outcome,
    SandboxLimits,
    SandboxResult,
    SandboxStatus,
    StepResult,
    TestResult,
    label_for,
)
from moot.tools._permissions import (
    Approval,
    ApprovalRequest,
    Approver,
    ArgCheck,
    AuditRecord,
    AuditTrail,
    CallbackApprover,
    ConsoleApprover,
    PermissionPolicy,
    Rule,
    ToolBox,
    command_allowed,
    paths_under,
)
from moot.tools._probe import probe_signature, probe_test
from moot.tools._sandbox import SandboxRunner, run_tests, validate_tests
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
    "ConsoleApprover",
    "Outcome",
    "PermissionPolicy",
    "ReadFileArgs",
    "Rule",
    "RunPythonArgs",
    "SandboxLimits",
    "SandboxResult",
    "SandboxRunner",
    "SandboxStatus",
    "StepResult",
    "TestResult",
    "Tool",
    "ToolBox",
    "ToolError",
    "ToolSource",
    "WriteFileArgs",
    "builtin_tools",
    "command_allowed",
    "label_for",
    "paths_under",
    "probe_signature",
    "probe_test",
    "read_file_tool",
    "run_python_tool",
    "run_tests",
    "validate_tests",
    "write_file_tool",
]
