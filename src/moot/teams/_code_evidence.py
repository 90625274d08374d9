"""The evidence on one program: its visible tests and its behaviour on the probe calls, in one sandbox run.

One owner for what a code debate, best-of-k selection and a code vote know about a
candidate, so every arm that selects programs selects on the same evidence.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Sequence

from moot.arbiters import UNOBSERVED, Evidence
from moot.boundary import parse_python
from moot.roles import failure_lines, run_sandbox
from moot.sandbox import Outcome, SandboxLimits, SandboxResult, SandboxRunner, probe_signature, probe_test, program_of

__all__ = ["NO_OUTPUT", "program_evidence"]

NO_OUTPUT = UNOBSERVED
"""The behaviour of a program that printed no probe outputs (it did not load, died before the probe, or flooded
its line out): not observed, so the program vote counts it as like no other program."""


async def program_evidence(
    reply: str,
    tests: Sequence[str],
    *,
    runner: SandboxRunner,
    limits: SandboxLimits,
    stub: str = "",
    entry_point: str | None = None,
    probe_calls: Sequence[str] = (),
    tool: str = "sandbox",
) -> Evidence:
    """Visible tests and probe calls in one sandbox run (a fault of the sandbox itself is retried, then raised)."""
    program = program_of(reply, stub, entry_point)
    run = [*tests, probe_test(probe_calls)] if probe_calls else list(tests)
    result, _ = await run_sandbox(
        runner, program, run, limits, tool=tool, entry_points=[entry_point] if entry_point else ()
    )
    visible = result.model_copy(update={"tests": result.tests[: len(tests)]})
    passed = sum(t.outcome is Outcome.PASSED for t in visible.tests)
    return Evidence(
        passed=passed,
        total=len(tests),
        failures=failure_lines(visible) if passed < len(tests) else [],
        behaviour=_behaviour(program, result, bool(probe_calls)),
    )


def _behaviour(program: str, result: SandboxResult, probed: bool) -> str:
    """Probe outputs when there are probe calls; else which visible tests pass plus the syntax tree."""
    if probed:
        return probe_signature(result) or NO_OUTPUT
    outcomes = ",".join(t.outcome.value for t in result.tests)
    try:
        tree = ast.dump(parse_python(program))
    except (SyntaxError, RecursionError):  # a tree too deep for ``ast.dump`` is compared as text
        tree = program
    return f"{outcomes}:{hashlib.sha256(tree.encode()).hexdigest()[:16]}"
