"""Results in Jupyter: IPython's HTML and Markdown formatters for moot's results.

The results are plain data and never import ``moot.display``, so they carry no ``_repr_html_``.
Instead this module hands IPython the two writers of ``_result_forms.py`` for ``MootResult``
and every subclass, through IPython's public formatter API (``for_type``): ``moot.display``
does it when it is imported inside a running shell (a notebook kernel), and
``%load_ext moot.display`` does it for a shell started after the import.
"""

from __future__ import annotations

import sys
from typing import Any

from moot.display._result_forms import result_html, result_markdown
from moot.teams import MootResult

__all__ = ["load_ipython_extension", "register_with_running_shell"]


def load_ipython_extension(ipython: Any) -> None:
    """Teach ``ipython`` to show moot's results as the HTML and Markdown of their blocks."""
    formatters = ipython.display_formatter.formatters
    formatters["text/html"].for_type(MootResult, result_html)
    formatters["text/markdown"].for_type(MootResult, result_markdown)


def register_with_running_shell() -> None:
    """Do it for the IPython shell this process runs in, if any; never imports IPython itself.

    Outside a shell IPython is not loaded (or has no shell), and nothing is registered.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        load_ipython_extension(shell)
