"""Turn the harness's reports and the way the child ended into a SandboxResult.

Blame follows the bracketing protocol of the sandbox's processes
(``_code_host.py`` for loading, ``_tester.py`` for the tests): if a process
died between a step's ``begin`` and ``end`` it died inside the step (a
timeout, a memory bomb, a crash, ``os._exit``): a CONTENT fault. If it died
anywhere else (before it was ready, between steps, without ``done``) or its
reports do not make sense, the sandbox failed: a TOOL fault.
"""

from __future__ import annotations

import re
import reprlib
import signal
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from moot.sandbox._limits import SandboxLimits
from moot.sandbox._results import Outcome, SandboxResult, SandboxStatus, SandboxStep, TestResult

__all__ = ["MEMORY_EXIT_CODE", "ChildExit", "ProtocolBreach", "assemble", "killed_in_step", "load_report"]

MEMORY_EXIT_CODE = 86
"""The harness exits with this when it ran out of memory itself: the code's data holds it, so blame the code."""


@dataclass(frozen=True)
class ChildExit:
    returncode: int
    timed_out: bool


class CorruptReport(Exception):
    """The harness's reports are inconsistent: a tool fault."""


class ProtocolBreach(Exception):
    """The code's process sent what the protocol does not allow: the code's doing, a CONTENT fault.

    That process runs the code, which can rewrite its functions or write to its channel directly;
    so whatever it sends after the code started is the draft's, and a report of it that does not
    validate must never pass for a corrupt harness (a tool fault, retried and never blamed on the code).
    """


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def load_report(message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str | None]]:
    """The code's process's end-of-load report, validated: the step's record and the names the module defines.

    ProtocolBreach for anything else: another message, a step that is not a SandboxStep, or names that are
    not what ``_code_host.exports`` lists (identifiers, each with None or a dotted module name).
    """
    if message.get("event") != "end" or message.get("step") != "load" or message.get("index") is not None:
        raise ProtocolBreach(f"it sent {_brief(message)} where the end of loading was due")
    fields = {k: v for k, v in message.items() if k not in ("event", "step", "index", "exports")}
    try:
        step = SandboxStep.model_validate(fields)
    except ValidationError as exc:
        raise ProtocolBreach(f"its load report is not valid ({_first_line(str(exc))})") from None
    exports = message.get("exports")
    if step.outcome is not Outcome.PASSED:
        exports = {}
    elif not _valid_exports(exports):
        raise ProtocolBreach(f"the names it reported are not a mapping of names to module names: {_brief(exports)}")
    return {"event": "end", "step": "load", **step.model_dump()}, exports


def _valid_exports(exports: Any) -> bool:
    if not isinstance(exports, dict):
        return False
    return all(
        isinstance(name, str) and name.isidentifier() and not (name.startswith("__") and name.endswith("__"))
        and (module is None or (isinstance(module, str) and _MODULE_NAME.fullmatch(module) is not None))
        for name, module in exports.items()
    )  # fmt: skip


def _brief(value: Any) -> str:
    return reprlib.repr(value)


@dataclass
class _Progress:
    """What the reports say happened, in order."""

    ready: bool = False
    done: bool = False
    harness_error: str | None = None
    isolation: list[str] = field(default_factory=list)
    load: SandboxStep | None = None
    tests: dict[int, SandboxStep] = field(default_factory=dict)
    open_step: tuple[str, int | None] | None = None

    @classmethod
    def replay(cls, records: list[dict[str, Any]]) -> _Progress:
        progress = cls()
        for record in records:
            progress.apply(record)
        return progress

    def apply(self, record: dict[str, Any]) -> None:
        event = record.get("event")
        step = (record.get("step"), record.get("index"))
        if event == "ready":
            layers = record.get("isolation", [])
            if type(layers) is not list or not all(type(layer) is str for layer in layers):
                raise CorruptReport("a ready report whose isolation is not a list of layer names")
            self.ready, self.isolation = True, layers
        elif event == "begin":
            if step[0] not in ("load", "test") or not (step[1] is None or type(step[1]) is int):
                raise CorruptReport(f"a begin of an unknown step {_brief(step)}")
            self.open_step = step  # type: ignore[assignment]
        elif event == "end":
            if step != self.open_step:
                raise CorruptReport(f"end of step {step} that was not begun")
            fields = {k: v for k, v in record.items() if k not in ("event", "step", "index")}
            self.close(SandboxStep.model_validate(fields))
        elif event == "done":
            self.done = True
        elif event == "harness_error":
            error = record.get("error", "unknown error")
            self.harness_error = error if type(error) is str else _brief(error)

    def begin_next(self, total: int) -> None:
        """Open the step the harness was about to begin (it could not even report that)."""
        if self.load is None:
            self.open_step = ("load", None)
        elif self.load.outcome is Outcome.PASSED and len(self.tests) < total:
            self.open_step = ("test", max(self.tests, default=-1) + 1)
        else:
            self.done = True  # every step had ended; only the final report was lost

    def close(self, result: SandboxStep) -> None:
        assert self.open_step is not None
        step, index = self.open_step
        if step == "load":
            self.load = result
        elif isinstance(index, int):
            self.tests[index] = result
        else:
            raise CorruptReport(f"unknown step {self.open_step}")
        self.open_step = None


def assemble(
    records: list[dict[str, Any]],
    ended: ChildExit,
    tests: list[str],
    limits: SandboxLimits,
    stdout: str,
    stderr: str,
    seconds: float,
    test_stdout: str = "",
) -> SandboxResult:
    common: dict[str, Any] = {
        "exit_code": ended.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "test_stdout": test_stdout,
        "seconds": seconds,
    }
    try:
        progress = _Progress.replay(records)
    except (CorruptReport, ValidationError) as exc:
        return _tool_fault(f"the harness's report is corrupt ({_first_line(str(exc))})", tests, common)
    if progress.harness_error is not None:
        why = f"the harness itself failed: {_last_line(progress.harness_error).removeprefix(': ')}"
        return _tool_fault(why, tests, common, progress.isolation)
    if not progress.ready:
        why = f"the sandbox harness did not start ({_how_it_ended(ended)}){_last_line(stderr)}"
        return _tool_fault(why, tests, common)
    if not progress.done and progress.open_step is None and ended.returncode == MEMORY_EXIT_CODE:
        progress.begin_next(len(tests))
    if not progress.done:
        if progress.open_step is None:
            why = f"the harness stopped between steps without reporting ({_how_it_ended(ended)}){_last_line(stderr)}"
            return _tool_fault(why, tests, common, progress.isolation)
        progress.close(killed_in_step(ended, limits, stderr))
    if progress.load is None:
        return _tool_fault("the harness finished without loading the code", tests, common, progress.isolation)
    results = _test_results(progress, tests)
    if results is None:
        return _tool_fault("the harness finished without reporting every test", tests, common, progress.isolation)
    passed = progress.load.outcome is Outcome.PASSED and all(t.outcome is Outcome.PASSED for t in results)
    status = SandboxStatus.PASSED if passed else SandboxStatus.CONTENT_FAULT
    return SandboxResult(status=status, load=progress.load, tests=results, isolation=progress.isolation, **common)


def _test_results(progress: _Progress, tests: list[str]) -> list[TestResult] | None:
    """Every test's result; the ones never started are NOT_RUN, with the reason. None if a report is missing."""
    assert progress.load is not None
    if progress.load.outcome is not Outcome.PASSED:
        reason = "not run: the code failed to load"
    else:
        stopped = max(progress.tests, default=-1) + 1
        reason = f"not run: the sandbox was stopped during test {stopped}"
        if progress.done and len(progress.tests) < len(tests):
            return None
    results = []
    for index, test in enumerate(tests):
        step = progress.tests.get(index) or SandboxStep(outcome=Outcome.NOT_RUN, message=reason)
        results.append(TestResult(test=test, **step.model_dump()))
    return results


def killed_in_step(ended: ChildExit, limits: SandboxLimits, stderr: str) -> SandboxStep:
    """The outcome of the step the child died in: the code's doing, so say what limit it hit."""
    code = ended.returncode
    if ended.timed_out:
        return SandboxStep(
            outcome=Outcome.TIMEOUT, message=f"exceeded the wall-clock limit of {limits.wall_seconds:g} s"
        )
    if code == -signal.SIGXCPU:
        return SandboxStep(outcome=Outcome.TIMEOUT, message=f"exceeded the CPU-time limit of {limits.cpu_seconds} s")
    if code == MEMORY_EXIT_CODE or "MemoryError" in stderr:
        message = f"memory limit of {limits.memory_mb} MB exceeded (MemoryError)"
        return SandboxStep(outcome=Outcome.ERROR, error_type="MemoryError", message=message)
    if code == -signal.SIGKILL:
        message = "the process was killed (SIGKILL): CPU-time or memory limit exceeded"
        return SandboxStep(outcome=Outcome.ERROR, message=message)
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
        message = f"the interpreter crashed with {name} (e.g. unbounded recursion or a fault in C code)"
        return SandboxStep(outcome=Outcome.ERROR, message=message)
    message = f"the process exited with code {code} in the middle of the step (e.g. the code called os._exit)"
    return SandboxStep(outcome=Outcome.ERROR, message=message)


def _tool_fault(
    why: str, tests: list[str], common: dict[str, Any], isolation: list[str] | None = None
) -> SandboxResult:
    not_run = [TestResult(test=t, outcome=Outcome.NOT_RUN, message="not run: the sandbox failed") for t in tests]
    return SandboxResult(
        status=SandboxStatus.TOOL_FAULT, tool_error=why, tests=not_run, isolation=isolation or [], **common
    )


def _how_it_ended(ended: ChildExit) -> str:
    if ended.timed_out:
        return "killed at the wall-clock limit"
    if ended.returncode < 0:
        return f"killed by signal {-ended.returncode}"
    return f"exit code {ended.returncode}"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _last_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    return f": {lines[-1][:300]}" if lines else ""
