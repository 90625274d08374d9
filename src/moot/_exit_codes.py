"""How every ``moot`` command ends: its exit codes and its one-line refusal.

Scripts and CI branch on the code, never on the text:

- 0: the run (or every row of a comparison) finished;
- 1: the run failed with no result (an unexpected error; its one line says which);
- 2: bad input (spec, scenario, suite, store, option, key): nothing was run or written;
- 3: the run stopped early with its best-so-far result (``partial``), is suspended
  waiting for feedback, or a comparison left rows failed; the same command (or
  ``moot resume``) goes on;
- 130 (Ctrl-C) and 143 (SIGTERM): the run was interrupted; it is stored as
  ``interrupted`` and ``moot resume ID`` goes on (the shell's 128 + signal number).
"""

from __future__ import annotations

import typer

from moot._redact import redact
from moot.boundary import TerminalConsole
from moot.store import RunStatus

__all__ = [
    "BAD_INPUT",
    "EXIT_CODES_HELP",
    "FAILED",
    "FINISHED",
    "INTERRUPTED",
    "PARTIAL",
    "TERMINATED",
    "exit_code",
    "refuse",
    "say_error",
]

FINISHED, FAILED, BAD_INPUT, PARTIAL = 0, 1, 2, 3
INTERRUPTED, TERMINATED = 130, 143
EXIT_CODES_HELP = (
    "Exit codes: 0 finished; 1 failed; 2 bad input (nothing run); 3 partial, suspended, or rows failed "
    "(re-run or resume to go on); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM): moot resume ID goes on."
)

_err = TerminalConsole(stderr=True)


def say_error(message: str) -> None:
    """``moot: error: ...`` as exactly one line on stderr, secrets redacted, however long or multi-line the text."""
    line = " ".join((redact(message) or "").split())
    _err.print(f"moot: error: {line}", markup=False, highlight=False, soft_wrap=True)


def refuse(message: str) -> typer.Exit:
    """Bad input: print its one line and return the exit to raise (``raise refuse(...) from None``)."""
    say_error(message)
    return typer.Exit(BAD_INPUT)


def exit_code(status: RunStatus) -> int:
    """The exit code of a run that ended with ``status`` (as the run store records it)."""
    if status is RunStatus.FINISHED:
        return FINISHED
    return PARTIAL if status in (RunStatus.PARTIAL, RunStatus.SUSPENDED) else FAILED
