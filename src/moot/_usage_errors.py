"""Typer's usage errors as one ``moot: error:`` line and exit 2, like every other bad input.

Typer prints a usage error (no such option or command, a missing argument or value, a value of the wrong
type) as a box of three to five lines. Typer offers no option for that, so this module, and only this one,
reaches below its public API: it runs a command with ``standalone_mode=False`` (a Click option Typer keeps)
and catches Click's exceptions, which Typer 0.29 vendors as ``typer._click``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from moot._exit_codes import FAILED, FINISHED, say_error

try:  # Typer vendors Click from 0.2x on; earlier releases use the click package
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - not the pinned Typer
    from click import exceptions as click_exceptions  # type: ignore[no-redef]

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
        except click_exceptions.NoArgsIsHelpError:  # ``moot`` alone: the help, as Typer shows it
            return standalone(args, prog_name, complete_var, True, **extra)
        except click_exceptions.ClickException as exc:
            _usage_error(exc)
        except typer.Abort:
            say_error("aborted")
            sys.exit(FAILED)
        sys.exit(ended if isinstance(ended, int) else FINISHED)  # an int is the code of a typer.Exit


def _usage_error(exc: click_exceptions.ClickException) -> NoReturn:
    context = getattr(exc, "ctx", None)
    hint = f"; {context.command_path} --help shows the usage" if context is not None else ""
    say_error(f"{exc.format_message().rstrip('.')}{hint}")
    sys.exit(exc.exit_code)


class OneLineGroup(_OneLineUsageErrors, TyperGroup):
    """The ``moot`` command group, with one-line usage errors."""


class OneLineCommand(_OneLineUsageErrors, TyperCommand):
    """A single command (a scenario script run as a program), with one-line usage errors."""
