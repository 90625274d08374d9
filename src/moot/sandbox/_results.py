"""What the sandbox reports: per-step outcomes and an overall status (its limits are in ``_limits.py``).

The status separates the two faults a loop must treat differently: a
CONTENT fault is the code's doing (syntax error, exception, failed assertion,
timeout, memory exhaustion) and goes back to the generator as feedback; a
TOOL fault is the sandbox's own failure (could not start, result missing or
corrupt, harness crash) and must be retried, never blamed on the code.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from moot.boundary import text_of

__all__ = ["Outcome", "SandboxResult", "SandboxStatus", "SandboxStep", "TestResult", "label_for"]


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    """An assertion in the test failed."""
    ERROR = "error"
    """The code (or the test) raised, crashed the interpreter or exhausted memory."""
    TIMEOUT = "timeout"
    NOT_RUN = "not_run"
    """Never started: the code failed to load, or the sandbox stopped at an earlier step."""


class SandboxStatus(StrEnum):
    PASSED = "passed"
    """The code loaded and every test passed."""
    CONTENT_FAULT = "content_fault"
    """The code is wrong: feed the failures back to whoever wrote it."""
    TOOL_FAULT = "tool_fault"
    """The sandbox failed on its own side: retry; the code is not to blame."""


class SandboxStep(BaseModel):
    """How one step (loading the code, or one test) ended."""

    model_config = ConfigDict(extra="forbid")

    outcome: Outcome
    message: str = ""
    """For a failed assert: ``got ..., expected ...``; for an error: the exception message."""
    error_type: str | None = None
    where: str | None = None
    """Innermost frame of the code or test, e.g. ``candidate.py line 4, in slugify``."""
    traceback: str = ""
    seconds: float = 0.0

    @field_validator("message", "error_type", "where", "traceback", mode="after")
    @classmethod
    def _outside_text(cls, value: str | None, info: ValidationInfo) -> str | None:
        """What the sandbox's processes reported, made valid and bounded where it enters moot's process."""
        return None if value is None else text_of(value, STEP_CHARS[info.field_name or "message"])


STEP_CHARS = {"message": 2_000, "error_type": 200, "where": 500, "traceback": 5_000}
"""The most of each step field kept. The sandbox's processes clip theirs shorter (400 and 1,200 characters), but
what a step reports was written by processes the code ran in or spoke to, so it is bounded again here."""


class TestResult(SandboxStep):
    """One test's outcome, with the test's source."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    test: str

    @property
    def label(self) -> str:
        return label_for(self.test)


class SandboxResult(BaseModel):
    """Everything one sandbox run established."""

    model_config = ConfigDict(extra="forbid")

    status: SandboxStatus
    load: SandboxStep | None = None
    """Loading the code (running it as a module). None when a tool fault struck before it ended."""
    tests: list[TestResult] = []
    tool_error: str | None = None
    """What went wrong with the sandbox itself (status TOOL_FAULT only)."""
    isolation: list[str] = []
    """The confinement layers that took effect, e.g. rlimits, netns, landlock, seccomp, audit-hook."""
    exit_code: int | None = None
    """The child's exit status; negative: killed by that signal."""
    stdout: str = ""
    """The end of what the code printed (and its process wrote to stderr, in ``stderr``)."""
    stderr: str = ""
    test_stdout: str = ""
    """The end of what the tests printed; they run apart from the code, so the code cannot write here."""
    seconds: float = 0.0

    @field_validator("tool_error", "stdout", "stderr", "test_stdout", mode="after")
    @classmethod
    def _outside_text(cls, value: str | None) -> str | None:
        """Output and errors of the sandbox's processes, made valid (a lone surrogate escaped) as they enter moot:
        every JSON or SQLite write of a result then succeeds, whatever the code printed or raised.
        """
        return None if value is None else text_of(value)

    @field_validator("isolation", mode="after")
    @classmethod
    def _layers(cls, value: list[str]) -> list[str]:
        return [text_of(layer, 80) for layer in value]

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def passed(self) -> int:
        return sum(t.outcome is Outcome.PASSED for t in self.tests)

    @property
    def failures(self) -> list[TestResult]:
        """Tests that ran and did not pass (not-run tests excluded)."""
        return [t for t in self.tests if t.outcome not in (Outcome.PASSED, Outcome.NOT_RUN)]

    @property
    def not_run(self) -> list[TestResult]:
        return [t for t in self.tests if t.outcome is Outcome.NOT_RUN]


def label_for(source: str, limit: int = 100) -> str:
    """A test as a reader wants to see it: ``slugify('a b') == 'a-b'`` for ``assert slugify('a b') == 'a-b'``."""
    lines = [line.strip() for line in source.strip().splitlines() if line.strip()]
    text = lines[0] if lines else ""
    text = text.removeprefix("assert ") + (" …" if len(lines) > 1 else "")
    return text if len(text) <= limit else text[: limit - 1] + "…"
