"""Behaviour probes: run example calls on a program and capture their outputs as one marked stdout line.

Programs rarely agree as text, so the behaviour vote (self-consistency) and
the code debate group candidates by what they *do* on the same calls
(execution-based agreement, as in MBR-exec and CodeT). The probe is an
ordinary sandbox test that never fails, so it runs beside the visible tests
in the same sandbox run.
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.sandbox._results import SandboxResult

__all__ = ["probe_signature", "probe_test"]

_MARK = "<<moot-probe>>"


def probe_test(calls: Sequence[str]) -> str:
    """A sandbox 'test' that prints every call's repr (or the exception it raised) on one marked line."""
    return (
        "import json as __json\n"
        "__out = []\n"
        f"for __call in {list(calls)!r}:\n"
        "    try:\n"
        "        __out.append(repr(eval(__call)))\n"
        "    except BaseException as __exc:\n"
        "        __out.append('raised ' + type(__exc).__name__)\n"
        f"print({_MARK!r} + __json.dumps(__out))\n"
    )


def probe_signature(result: SandboxResult) -> str | None:
    """The probe's outputs from what a sandbox run's tests printed (the last marked line), or None if it never printed.

    The tests' output, not the code's: the code runs in another process and cannot print a forged signature there.
    """
    for line in reversed(result.test_stdout.splitlines()):
        if line.startswith(_MARK):
            return line[len(_MARK) :]
    return None
