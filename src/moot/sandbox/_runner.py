"""SandboxRunner: what runs code against tests, the real sandbox or one a test injects.

Its own module, below both the sandbox (``_sandbox.py``, the real runner) and
the cancellation (``_cancel.py``, which runs any runner in a thread), so each
of those names the contract without importing the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from moot.sandbox._limits import SandboxLimits
from moot.sandbox._results import SandboxResult

__all__ = ["SandboxRunner"]


class SandboxRunner(Protocol):
    """Runs code against tests; :func:`~moot.sandbox.run_tests` is the real one. Inject another (e.g. in tests)
    where accepted.

    Contract: the sandbox's own failures are *returned* as status TOOL_FAULT
    (an ``OSError`` raised is treated the same way); the code's failures as
    CONTENT_FAULT.
    """

    def __call__(
        self, code: str, tests: Sequence[str], limits: SandboxLimits, *, entry_points: Sequence[str] = ()
    ) -> SandboxResult:
        """``entry_points``: the names the tests are about, where the caller knows them (see ``run_tests``)."""
        ...
