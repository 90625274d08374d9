"""The sandbox: runs model-written code against tests, and lets the code compute but never grade itself.

Two processes per run: the code host (``_code_host.py``) loads the code, the tester (``_tester.py``) runs the
tests and calls into the code over a channel of plain data (``_wire.py``); both are confined
(``_confine.py``). ``run_tests`` is the entry point; the result separates the code's faults from the
sandbox's own. From async code, ``run_in_thread`` runs it so that cancelling the caller ends the run's
processes at once (``_cancel.py``). Agent tools that use it live in :mod:`moot.tools`.
Which program a model reply stands for (its code, assembled onto the task's stub) is decided once, in
``_programs.py``, for every caller that runs or scores a reply.
"""

from moot.sandbox._cancel import SandboxCancelled, run_in_thread
from moot.sandbox._limits import SandboxLimits
from moot.sandbox._probe import probe_signature, probe_test
from moot.sandbox._programs import (
    AmbiguousDraft,
    assemble_program,
    draft_of,
    extract_code,
    program_of,
    task_helpers,
    without_scaffolding,
)
from moot.sandbox._results import Outcome, SandboxResult, SandboxStatus, SandboxStep, TestResult, label_for
from moot.sandbox._runner import SandboxRunner
from moot.sandbox._sandbox import isolation_floor, run_tests, validate_tests

__all__ = [
    "AmbiguousDraft",
    "Outcome",
    "SandboxCancelled",
    "SandboxLimits",
    "SandboxResult",
    "SandboxRunner",
    "SandboxStatus",
    "SandboxStep",
    "TestResult",
    "assemble_program",
    "draft_of",
    "extract_code",
    "isolation_floor",
    "label_for",
    "probe_signature",
    "probe_test",
    "program_of",
    "run_in_thread",
    "run_tests",
    "task_helpers",
    "validate_tests",
    "without_scaffolding",
]
