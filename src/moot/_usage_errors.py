"""Typer's usage errors as one ``moot: error:`` line and exit 2, like every other bad input.

Typer prints a usage error (no such option or command, a missing argument or value, a value of the wrong
type) as a box of three to five lines. Typer offers no option for that, so this module runs a command with
``standalone_mode=False`` (a Click option Typer keeps) and catches the usage errors itself, through Typer's
public names only: every one of them is a ``typer.TyperException`` with ``format_message()`` and
``exit_code`` (Typer 0.29 vendors Click, so Click's own classes are private to it).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from moot._exit_codes import FAILED, FINISHED, say_error

__all__ = ["TESTED_TYPER", "OneLineCommand", "OneLineGroup"]

TESTED_TYPER = "0.29.2"
"""The Typer this adapter was written against (pyproject pins it; a unit test checks the two agree)."""


class _OneLineUsageErrors:
    """A Typer command or group whose usage errors are one line on stderr and exit 2."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        standalone = super().main  # type: ignore[misc]
        if not standalone_mode:
            return standalone(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            ended = standalone(args, prog_name, complete_var, False, **extra)
        except typer.Abort:
            say_error("aborted")
            sys.exit(FAILED)
        except typer.TyperException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # ``moot`` alone: the help, as Typer shows it
                return standalone(args, prog_name, complete_var, True, **extra)
            _usage_error(exc)
        sys.exit(ended if isinstance(ended, int) else FINISHED)  # an int is the code of a typer.Exit


def _usage_error(exc: typer.TyperException) -> NoReturn:
    """One line: Click's message (every usage error Typer raises has ``format_message`` and ``exit_code``)."""
    context = getattr(exc, "ctx", None)
    hint = f"; {context.command_path} --help shows the usage" if context is not None else ""
    say_error(f"{exc.format_message().rstrip('.')}{hint}")  # type: ignore[attr-defined]
    sys.exit(exc.exit_code)  # type: ignore[attr-defined]


class OneLineGroup(_OneLineUsageErrors, TyperGroup):
    """The ``moot`` command group, with one-line usage errors."""


class OneLineCommand(_OneLineUsageErrors, TyperCommand):
    """A single command (a scenario script run as a program), with one-line usage errors."""
