"""Presentation: how moot shows runs and results, in the terminal (rich), in Jupyter and as charts.

The results and teams never import this package: a result is plain data, and what it shows is
decided here, on its type (``result_blocks``). Imported inside a running IPython shell (a
notebook kernel), the package teaches the shell to show results as tables (``_notebook.py``);
``%load_ext moot.display`` does the same in a shell started later; and ``rich.print(result)``
prints a result as ``moot run`` shows it (``install_rich_views``). ``moot.display.plots``
(matplotlib, the ``plot`` extra) draws the charts: imported on first use, so the package loads
without the extra and a missing extra is one line; ``moot.display.blocks`` is the document model
that results and the compare report are both written in. ``TerminalHuman`` asks a person at a terminal
(the terminal side of ``moot.human``'s one protocol; ``ConsoleFeedback`` and ``ConsoleApprover`` are it behind
a team's feedback points and a tool policy's approvals).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from moot.display._console import render_message, render_result
from moot.display._model_calls import (
    PROMPTS_SCHEMA,
    ModelCall,
    TurnCalls,
    calls_by_turn,
    model_calls,
    prompts_document,
    read_trace,
)
from moot.display._notebook import load_ipython_extension, register_with_running_shell
from moot.display._result_blocks import result_blocks
from moot.display._result_forms import install_rich_views, result_html, result_markdown, result_renderable
from moot.display._run_view import SHOW_SCHEMA, RoundView, RunView, TurnView, completed_rounds, run_view
from moot.display._show import render_calls, render_run
from moot.display._tables import catalog_table, fitted_table, runs_table
from moot.display._terminal_human import ConsoleApprover, ConsoleFeedback, TerminalHuman

register_with_running_shell()  # in a notebook, results render as tables once moot.display is imported
install_rich_views()  # rich.print(result) prints moot's view of it, not the dataclass


def __getattr__(name: str) -> ModuleType:
    """``moot.display.plots`` after ``import moot.display``: the submodule, imported on first use (it needs the
    ``plot`` extra, whose absence it reports in one line)."""
    if name == "plots":
        return importlib.import_module("moot.display.plots")
    raise AttributeError(f"module 'moot.display' has no attribute {name!r}")


__all__ = [
    "PROMPTS_SCHEMA",
    "SHOW_SCHEMA",
    "ConsoleApprover",
    "ConsoleFeedback",
    "ModelCall",
    "RoundView",
    "RunView",
    "TerminalHuman",
    "TurnCalls",
    "TurnView",
    "calls_by_turn",
    "catalog_table",
    "completed_rounds",
    "fitted_table",
    "install_rich_views",
    "load_ipython_extension",
    "model_calls",
    "prompts_document",
    "read_trace",
    "render_calls",
    "render_message",
    "render_result",
    "render_run",
    "result_blocks",
    "result_html",
    "result_markdown",
    "result_renderable",
    "run_view",
    "runs_table",
]
