"""moot's error hierarchy.

Small on purpose: callers branch on *what kind* of failure happened (bad input
vs. a model fault vs. malformed output), never on message text. Every message
says what was wrong and what is valid, because the CLI prints it as one line.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "MalformedOutputError",
    "ModelUnavailableError",
    "MootError",
    "ScriptError",
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

    def __init__(self, agent: str, attempts: int, last_error: str) -> None:
        self.agent = agent
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(f"{agent} gave malformed output {attempts} times; last error: {last_error}")


class ScriptError(MootError, AssertionError):
    """A scripted test model was called when its script was empty, or ended with script left over."""
