"""Tools that ground a review in facts: a sandbox that runs model-written code against tests.

Nothing here imports AutoGen; agents that use these tools live in :mod:`moot.roles`.
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
from moot.tools._sandbox import SandboxRunner, run_tests, validate_tests

__all__ = [
    "Outcome",
    "SandboxLimits",
    "SandboxResult",
    "SandboxRunner",
    "SandboxStatus",
    "StepResult",
    "TestResult",
    "label_for",
    "run_tests",
    "validate_tests",
]
