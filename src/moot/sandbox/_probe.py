"""Behaviour probes: run example calls on a program and capture their outputs as one marked stdout line.

Programs rarely agree as text, so the behaviour vote (self-consistency) and
the code debate group candidates by what they *do* on the same calls
(execution-based agreement, as in MBR-exec and CodeT). The probe is an
ordinary sandbox test that never fails, so it runs beside the visible tests
in the same sandbox run.

A behaviour is compared only when it was observed whole, as plain data: every call's output is the repr
of a value built in the tester from plain data (or the name of what it raised); a value that is one of
the code's objects is shown by a repr the code wrote, so it is recorded as ``null``, and a probe line
that is missing, cut, malformed or of the wrong length is no signature at all (``None``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from moot.sandbox._results import SandboxResult

__all__ = ["probe_signature", "probe_test"]

_MARK = "<<moot-probe>>"
_PLAIN = "(type(None), bool, int, float, complex, str, bytes, bytearray)"


def probe_test(calls: Sequence[str]) -> str:
    """A sandbox 'test' that prints every call's repr (or the exception it raised) on one marked line.

    The first line records how many calls there are, so :func:`probe_signature` can tell a whole line from
    one that only looks like it.
    """
    return (
        f"# moot probe of {len(calls)} calls\n"
        "import json as __json\n"
        "def __plain(v, depth=0):\n"
        f"    if type(v) in {_PLAIN}:\n"
        "        return True\n"
        "    if depth > 100 or type(v) not in (list, tuple, set, frozenset, dict):\n"
        "        return False\n"
        "    items = [x for kv in v.items() for x in kv] if type(v) is dict else v\n"
        "    return all(__plain(x, depth + 1) for x in items)\n"
        "__out = []\n"
        f"for __call in {list(calls)!r}:\n"
        "    try:\n"
        "        __value = eval(__call)\n"
        "        __out.append(repr(__value) if __plain(__value) else None)\n"
        "    except BaseException as __exc:\n"
        "        __out.append('raised ' + type(__exc).__name__)\n"
        f"print({_MARK!r} + __json.dumps(__out))\n"
    )


def probe_signature(result: SandboxResult) -> str | None:
    """The probe's outputs from what a sandbox run's tests printed, or None unless they were observed whole.

    The tests' output, not the code's: the code runs in another process and cannot print a forged signature
    there. None when the probe never printed, its line was cut (a flood of output pushed it out of the kept
    tail) or malformed, or any call's output is not plain data: a candidate whose behaviour was not observed
    is equal to no other (see ``moot.arbiters.same_behaviour``), never one group with every other such one.
    """
    calls = _calls(result)
    for line in reversed(result.test_stdout.splitlines()):
        if line.startswith(_MARK):
            body = line[len(_MARK) :]
            return body if _whole(body, calls) else None
    return None


def _calls(result: SandboxResult) -> int | None:
    """How many calls the run's probe made, from its first line; None if the run has no probe."""
    for test in reversed(result.tests):
        first = test.test.split("\n", 1)[0]
        if first.startswith("# moot probe of ") and first.endswith(" calls"):
            count = first.removeprefix("# moot probe of ").removesuffix(" calls")
            return int(count) if count.isdigit() else None
    return None


def _whole(body: str, calls: int | None) -> bool:
    try:
        outputs = json.loads(body)
    except (ValueError, RecursionError):
        return False
    if type(outputs) is not list or (calls is not None and len(outputs) != calls):
        return False
    return all(type(output) is str for output in outputs)
