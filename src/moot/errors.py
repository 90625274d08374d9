"""moot's error hierarchy.

Small on purpose: callers branch on *what kind* of failure happened (bad input
vs. a model fault vs. malformed output), never on message text. Every message
says what was wrong and what is valid, because the CLI prints it as one line.
"""

from __future__ import annotations

from moot._meter import Meter

__all__ = [
    "ConfigError",
    "MalformedOutputError",
    "ModelUnavailableError",
    "MootError",
    "ScriptError",
    "ToolFaultError",
    "TransientModelError",
]


class MootError(Exception):
    """Base class for every error moot raises on purpose."""


class ConfigError(MootError, ValueError):
    """Bad input from the user: a model spec, a role name, a scenario, an argument.

    The CLI turns it into one line on stderr and exit code 2.
    """


class ModelUnavailableError(ConfigError):
    """The requested model cannot be used here (extra not installed, weights corrupt, key missing)."""


class MalformedOutputError(MootError):
    """A model kept answering with output that does not fit the required schema.

    Raised only after moot fed the validation error back and the bounded retries ran out.
    """

    def __init__(self, agent: str, attempts: int, last_error: str, spent: Meter | None = None) -> None:
        self.agent = agent
        self.attempts = attempts
        self.last_error = last_error
        self.spent = spent
        """What the failed attempts' calls used (tokens, billed, cost): spent, though nothing came of them."""
        super().__init__(f"{agent} gave malformed output {attempts} times; last error: {last_error}")


class ScriptError(MootError, AssertionError):
    """A scripted test model was called when its script was empty, or ended with script left over."""


class ToolFaultError(MootError):
    """A tool (e.g. the test sandbox) kept failing on its own side, not because of the content it was given.

    Raised only after the bounded retries ran out. It is never turned into a
    critique: the draft is not at fault, so the generator must not be told to fix it.
    """

    def __init__(self, tool: str, attempts: int, last_error: str) -> None:
        self.tool = tool
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(
            f"{tool} failed on its own side {attempts} times (a tool fault, not a fault of the draft); "
            f"last error: {last_error}"
        )


class TransientModelError(MootError):
    """A model call kept failing on transient faults (timeout, connection, 429, 5xx) until the retries ran out.

    Raised by the one retry layer (``RetryingClient``) after its bounded
    backoff, with the last fault chained as ``__cause__``. The content is not
    at fault: the same request may well succeed later.
    """

    def __init__(self, model: str, attempts: int, kind: str, last_error: str) -> None:
        self.model = model
        self.attempts = attempts
        self.kind = kind
        self.last_error = last_error
        super().__init__(
            f"model {model} kept failing on transient faults: {attempts} attempts, the last a {kind} fault; "
            f"last error: {last_error}; try again later or allow more attempts (RetryPolicy.max_attempts)"
        )


class RunBusyError(ConfigError):
    """Another live process drives this run (it holds the run's lease)."""


class LeaseLostError(MootError):
    """This process no longer holds the run's lease (another process took over a run it thought dead)."""
