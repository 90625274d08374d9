"""Run untrusted, model-written Python against tests in a separate, confined process.

The parent side: a throwaway work directory (removed afterwards), a clean
environment (nothing inherited: no API keys; only PATH, LANG and HOME/TMPDIR
pointing into the work directory), ``python -I -B`` in its own process group,
a wall-clock deadline after which the whole group is killed. The child
confines itself before the code runs (see ``_confine.py``: rlimits, network
namespace, Landlock, seccomp, an audit hook) and reports through an unnamed
inherited file (see ``_harness.py``); :mod:`moot.tools._records` turns what it
reported, and how it ended, into a :class:`SandboxResult`.

The call blocks for up to ``limits.wall_seconds``; from async code run it in a
thread (``asyncio.to_thread``).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Protocol

from moot.errors import ConfigError
from moot.tools._models import SandboxLimits, SandboxResult, SandboxStatus
from moot.tools._records import MEMORY_EXIT_CODE, ChildExit, assemble, read_records

__all__ = ["SandboxRunner", "run_tests", "validate_tests"]

_HERE = Path(__file__).resolve().parent
_HARNESS = "_moot_harness.py"
_FILES = {_HARNESS: _HERE / "_harness.py", "_moot_confine.py": _HERE / "_confine.py"}
_PATH = "/usr/local/bin:/usr/bin:/bin"


class SandboxRunner(Protocol):
    """Runs code against tests; :func:`run_tests` is the real one. Inject another (e.g. in tests) where accepted.

    Contract: the sandbox's own failures are *returned* as status TOOL_FAULT
    (an ``OSError`` raised is treated the same way); the code's failures as
    CONTENT_FAULT.
    """

    def __call__(self, code: str, tests: Sequence[str], limits: SandboxLimits) -> SandboxResult: ...


def validate_tests(tests: Sequence[str]) -> list[str]:
    """The tests as a list, or ConfigError naming the first one that is not valid Python."""
    if isinstance(tests, str) or not tests:
        raise ConfigError(
            "tests must be a non-empty list of Python snippets, one per test, e.g. ['assert add(1, 2) == 3']"
        )
    for number, test in enumerate(tests, 1):
        try:
            compile(test, f"test_{number}.py", "exec")
        except SyntaxError as exc:
            raise ConfigError(
                f"test {number} is not valid Python ({exc.msg}, line {exc.lineno}): {test!r}; "
                "a test is one or more statements, usually an assert, e.g. 'assert add(1, 2) == 3'"
            ) from None
    return list(tests)


def run_tests(code: str, tests: Sequence[str], limits: SandboxLimits | None = None) -> SandboxResult:
    """Run ``code`` as a module, then each test, in the sandbox; never raises for anything the code does."""
    limits = limits or SandboxLimits()
    tests = validate_tests(tests)
    started = time.monotonic()
    nonce = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="moot-sandbox-") as tmp, ExitStack() as files:
        workdir = os.path.realpath(tmp)
        stdin, stdout, stderr, channel = (files.enter_context(tempfile.TemporaryFile()) for _ in range(4))
        job = {
            "code": code,
            "tests": tests,
            "limits": limits.model_dump(),
            "workdir": workdir,
            "result_fd": channel.fileno(),
            "nonce": nonce,
            "memory_exit_code": MEMORY_EXIT_CODE,
        }
        stdin.write(json.dumps(job).encode())
        stdin.seek(0)
        try:
            ended = _execute(workdir, stdin, stdout, stderr, channel, limits.wall_seconds)
        except OSError as exc:
            return SandboxResult(
                status=SandboxStatus.TOOL_FAULT,
                tool_error=f"could not start the sandbox process: {exc}",
                seconds=time.monotonic() - started,
            )
        records = read_records(_read_all(channel), nonce)
        out, err = _tail(stdout, limits.output_chars), _tail(stderr, limits.output_chars)
    return assemble(records, ended, tests, limits, out, err, time.monotonic() - started)


def _execute(
    workdir: str, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes], channel: IO[bytes], wall: float
) -> ChildExit:
    """Start the harness in its own session with a clean environment; wait at most ``wall`` seconds."""
    for name, source in _FILES.items():
        Path(workdir, name).write_text(source.read_text())
    env = {"PATH": _PATH, "LANG": "C.UTF-8", "HOME": workdir, "TMPDIR": workdir}
    proc = subprocess.Popen(
        [sys.executable, "-I", "-B", str(Path(workdir, _HARNESS))],
        cwd=workdir,
        env=env,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        pass_fds=(channel.fileno(),),
        start_new_session=True,  # its own process group, so a timeout kills everything it started
    )
    exited = False
    try:
        exited = _wait(proc, wall)
    finally:  # also when the wait is interrupted: never leave the code running
        if proc.returncode is None:
            # Not reaped yet, so its process group id cannot have been reused: kill the group, stragglers included.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return ChildExit(returncode=proc.wait(), timed_out=not exited)


def _wait(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """Wait up to ``seconds`` for the child to exit, leaving it unreaped where possible; True if it exited."""
    if not hasattr(os, "waitid"):  # macOS before Python 3.13: reaps; stragglers are unlikely as spawning is refused
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + seconds
    delay = 0.001
    while True:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.02)


def _read_all(file: IO[bytes]) -> bytes:
    file.seek(0)
    return file.read()


def _tail(file: IO[bytes], chars: int) -> str:
    if chars == 0:
        return ""
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - 4 * chars))
    return file.read().decode("utf-8", "replace")[-chars:]
