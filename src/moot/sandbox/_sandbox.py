"""Run untrusted, model-written Python against tests: the code in one confined process, the tests in another.

The code may compute; it may not grade itself. The *code host* (``_code_host.py``)
runs the code and answers requests about it, and never sees a test; the
*tester* (``_tester.py``) runs the tests, and never runs the code: each call
into the code is a request this parent relays, with a deadline, and each
answer is plain data the tester builds afresh (``_wire.py``). So code that
patches its interpreter, reads its memory, exits early, prints fake reports
or returns an object whose ``__eq__`` is always true changes at most the
values it returns, never the verdict; and hidden tests never enter a
process the code controls.

Both processes get a throwaway work directory of their own (removed
afterwards), a clean environment (nothing inherited: no API keys; only PATH,
LANG and HOME/TMPDIR pointing into that directory), ``python -I -B`` in
their own process group, and confine themselves before anything runs (see
``_confine.py``: rlimits, namespaces, Landlock, seccomp, an audit hook).
When the code's process dies or overruns a call, it is killed and started
afresh for the next test. :mod:`moot.sandbox._records` turns the reports, and
how the tester ended, into a :class:`SandboxResult`.

The parent relays the code's answers without parsing them (``_wire.py``:
it reads a message's head and passes the raw line on), so what the code
sends costs this process its bytes, at most :data:`~moot.sandbox._wire.MAX_LINE`
of them at a time, and every read and write here is bounded by the run's
wall-clock deadline.

The call blocks for up to ``limits.wall_seconds``; from async code await
:func:`~moot.sandbox._cancel.run_in_thread`, whose cancellation kills the run's
processes at once.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import select
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from moot.boundary import compile_python
from moot.errors import ConfigError
from moot.sandbox._cancel import Cancellation, SandboxCancelled, current_cancellation
from moot.sandbox._confine import UNPRIVILEGED, remove_task_group, sweep_groups
from moot.sandbox._limits import SandboxLimits
from moot.sandbox._records import MEMORY_EXIT_CODE, ChildExit, ProtocolBreach, assemble, killed_in_step, load_report
from moot.sandbox._results import Outcome, SandboxResult, SandboxStatus
from moot.sandbox._wire import HEAD_LIMIT, Channel, ChannelClosed, Frame, WireError, frame

__all__ = ["run_tests", "validate_tests"]

_HERE = Path(__file__).resolve().parent
_SHARED = {"_moot_child.py": "_child.py", "_moot_confine.py": "_confine.py", "_moot_wire.py": "_wire.py"}
_PATH = "/usr/local/bin:/usr/bin:/bin"
_GRACE = 0.5
"""Seconds a process gets beyond its own limit to report it, before it is killed."""
_ANSWERS = ({"id", "ok"}, {"id", "raised"})
"""The fields of a reply from the code's process: its value, or what it raised."""
SAFE_FLOOR = ("landlock", "seccomp")
"""The kernel layers without which untrusted code is refused (unless ``weak_isolation`` accepts it); when moot
runs as root, the switch to an unprivileged uid as well (see ``floor``)."""


_AS_ROOT = (
    "run moot as a user other than root, or as root with mount namespaces allowed and a Python installation "
    "that other users may read"
)


def isolation_floor() -> tuple[str, ...]:
    """The layers a sandbox process must report before it gets any code: :data:`SAFE_FLOOR`, and as root the
    unprivileged uid (root's own uid reads every root-owned file that Landlock alone stands in front of)."""
    return (*SAFE_FLOOR, UNPRIVILEGED) if os.geteuid() == 0 else SAFE_FLOOR


def validate_tests(tests: Sequence[str]) -> list[str]:
    """The tests as a list, or ConfigError naming the first one that is not valid Python."""
    if isinstance(tests, str) or not tests:
        raise ConfigError(
            "tests must be a non-empty list of Python snippets, one per test, e.g. ['assert add(1, 2) == 3']"
        )
    for number, test in enumerate(tests, 1):
        try:
            compile_python(test, f"test_{number}.py")
        except SyntaxError as exc:
            raise ConfigError(
                f"test {number} is not valid Python ({exc.msg}, line {exc.lineno}): {test!r}; "
                "a test is one or more statements, usually an assert, e.g. 'assert add(1, 2) == 3'"
            ) from None
    return list(tests)


def run_tests(
    code: str, tests: Sequence[str], limits: SandboxLimits | None = None, *, entry_points: Sequence[str] = ()
) -> SandboxResult:
    """Run ``code`` as a module, then each test against it, in the sandbox; never raises for anything the code does.

    ``entry_points``: the names the tests are about (a task's function). Where they are given, only those of the
    code's names take the place of a builtin of the same name in the checks (``def pow`` is what ``check(pow)``
    tests), and every other builtin a check calls stays Python's own, so an answer that also defines ``abs``
    cannot change what ``abs(candidate(x) - y) < 1e-6`` computes. Where none are given, the code's names all come
    before the builtins, as in one module.

    Raises :class:`~moot.sandbox._cancel.SandboxCancelled` if the run's cancellation (see ``_cancel.py``) fired.
    """
    limits = limits or SandboxLimits()
    tests = validate_tests(tests)
    cancellation = current_cancellation()
    started = time.monotonic()
    sweep_leftovers()
    root = tempfile.mkdtemp(prefix=ROOT_PREFIX)
    held = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(held, fcntl.LOCK_EX)  # held while the run lasts: see sweep_leftovers
    # Enterable (not listable) by others, so a process that became ``nobody`` reaches its own work directory
    # even where no mount namespace can cover this one; each work directory stays closed to everyone else.
    os.chmod(root, 0o711)
    try:
        place = _Place(os.path.realpath(root), cancellation)
        result = _run(code, _Checks(tests, tuple(entry_points)), limits, place, started)
    except OSError as exc:
        result = SandboxResult(
            status=SandboxStatus.TOOL_FAULT,
            tool_error=f"could not run the sandbox processes: {exc}",
            seconds=time.monotonic() - started,
        )
    finally:
        remove_tree(root)
        os.close(held)
    if cancellation.cancelled:  # its processes were killed under it: whatever it concluded is not a result
        raise SandboxCancelled("the sandbox run was cancelled")
    return result


ROOT_PREFIX = "moot-sandbox-"
_SWEEP_AGE = 60.0
"""Seconds a run's root must exist before a sweep may look at it: its lock is taken microseconds after it is made."""


def sweep_leftovers() -> None:
    """Remove what runs of a moot process that was killed (``kill -9``) left: their work directories and cgroups.

    Their processes died with moot (``pdeathsig``), but nobody removed their files. A live run holds a lock on its
    root directory (in any process, any pid namespace), so a root whose lock can be taken, older than a minute and
    ours, is a dead run's; a cgroup is removed once the process it is named after no longer exists.
    """
    sweep_groups()
    base = tempfile.gettempdir()
    try:
        names = [name for name in os.listdir(base) if name.startswith(ROOT_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(base, name)
        try:
            found = os.stat(path, follow_symlinks=False)
            if found.st_uid != os.geteuid() or not stat.S_ISDIR(found.st_mode):
                continue
            if time.time() - found.st_mtime < _SWEEP_AGE:
                continue
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live run's
        else:
            remove_tree(path)
        finally:
            os.close(fd)


@dataclass(frozen=True)
class _Checks:
    """The tests of a run, and the names they are about (see :func:`run_tests`)."""

    tests: list[str]
    entry_points: tuple[str, ...]


class _Place:
    """Where a run's processes live: its root directory, and the cancellation every start goes through."""

    def __init__(self, root: str, cancellation: Cancellation) -> None:
        self.root, self.cancellation = root, cancellation


def _run(code: str, checks: _Checks, limits: SandboxLimits, place: _Place, started: float) -> SandboxResult:
    tests = checks.tests
    deadline = started + limits.wall_seconds
    host = CodeHost(code, limits, place, deadline)
    try:
        records = host.start()
        if host.exports is None:
            return host.result(records, tests, time.monotonic() - started)
        tester = _Process(
            "tester",
            place,
            _setup(limits, tests=tests, exports=host.exports, entry_points=[*checks.entry_points]),
            limits,
        )
        try:
            records += _relay(tester, host, deadline, _OwnTime(limits, len(tests)))
            ended = tester.end(deadline)
            out, err = host.output()
            return assemble(
                records,
                ended,
                tests,
                limits,
                out,
                err + tester.tail("stderr"),
                time.monotonic() - started,
                test_stdout=tester.tail("stdout"),
            )
        finally:
            tester.kill()
    finally:
        host.stop()


CODE_LIMITS = ("cpu_seconds", "memory_mb", "file_size_mb", "disk_mb", "test_seconds")
"""The limits the code's process applies to itself (rlimits, its tmpfs, the load step's alarm), which the kernel shows
the code anyway. Never the run's wall clock: code that knows the deadline could aim its own slowness at the moment
between two tests."""


def _setup(limits: SandboxLimits, **fields: Any) -> dict[str, Any]:
    """What a sandbox process reads on its stdin at start: the limits, and the code or the tests to run.

    The code's process (``code`` in ``fields``) gets only :data:`CODE_LIMITS`: its memory is the code's to read.
    """
    shown = limits.model_dump()
    if "code" in fields:
        shown = {name: shown[name] for name in CODE_LIMITS}
    return {"limits": shown, "memory_exit_code": MEMORY_EXIT_CODE, **fields}


class _OwnTime:
    """The tester's own time: from its start to its first step, and between its steps.

    No request to the code can be outstanding then, and the tester works only on what the sandbox gave it, so
    this is the only time of a run the code cannot stretch. A wall-clock overrun is the sandbox's fault only when
    this time alone took more than :meth:`budget`; otherwise the code's steps used the wall clock up.
    """

    def __init__(self, limits: SandboxLimits, tests: int) -> None:
        self.spent, self.since, self.tests = 0.0, time.monotonic(), tests
        self.budget = min(_OWN_SECONDS, _OWN_SHARE * limits.wall_seconds)

    def note(self, event: Any) -> None:
        now = time.monotonic()
        if event == "begin" and self.since is not None:
            self.spent, self.since = self.spent + now - self.since, None
        elif event == "end":
            self.since = now

    def overran(self) -> bool:
        """Whether the tester's own time, so far, took more than its budget."""
        current = time.monotonic() - self.since if self.since is not None else 0.0
        return self.spent + current > self.budget


_OWN_SECONDS, _OWN_SHARE = 2.0, 0.25
"""The tester's own time (see ``_OwnTime``) is at most this many seconds or this share of the wall clock; starting
the interpreter and moving between steps take a fraction of a second, even on a busy machine."""


def _at_wall(records: list[dict[str, Any]], own: _OwnTime) -> list[dict[str, Any]]:
    """The tester's reports once the wall clock ran out on it: the step it was about to begin is opened (and ends
    as a wall-clock timeout, the code's) unless its own time overran, which alone is the sandbox's fault.

    Once every test has ended, every verdict is in: only the final report was lost.
    """
    inside = bool(records) and records[-1].get("event") == "begin"
    if inside or own.overran():
        return records
    ended = sum(1 for r in records if r.get("event") == "end" and r.get("step") == "test")
    if ended >= own.tests:
        return [*records, {"event": "done"}]
    return [*records, {"event": "begin", "step": "test", "index": ended}]


def _relay(tester: _Process, host: CodeHost, deadline: float, own: _OwnTime) -> list[dict[str, Any]]:
    """Pass the tester's requests to the code's process and the answers back; return the tester's reports.

    A request is relayed as the tester wrote it, read no further than its head.
    """
    records: list[dict[str, Any]] = []
    while True:
        try:
            line = tester.receive(deadline)
            if line is None:
                tester.timed_out = True
                return _at_wall(records, own)
            if "op" in line.fields():
                head = line.head()
                seconds = min(float(head.get("seconds") or 0), deadline - time.monotonic())
                if not tester.send(host.relay(line, head.get("id"), seconds), deadline):
                    tester.timed_out = True
                    return _at_wall(records, own)
                continue
            message = line.message(HEAD_LIMIT)
        except (WireError, TypeError, ValueError):
            return records  # it ended or spoke out of turn: how it ended decides the blame
        if message.get("event") in ("begin", "end", "done", "harness_error"):
            own.note(message["event"])
            records.append(message)
            if message["event"] in ("done", "harness_error"):
                return records


# ------------------------------------------------------------------ the two processes
class _Process:
    """One sandbox process: its own work directory, output files and channel to this parent."""

    def __init__(self, name: str, place: _Place, setup: dict[str, Any], limits: SandboxLimits) -> None:
        self.cancellation = place.cancellation
        self.workdir = os.path.join(place.root, name)
        os.mkdir(self.workdir, 0o700)
        main = {"tester": "_tester.py", "code": "_code_host.py"}[name]
        for target, source in {**_SHARED, f"_moot_{name}.py": main}.items():
            shutil.copyfile(_HERE / source, os.path.join(self.workdir, target))
        self.limits, self.timed_out = limits, False
        self.files: dict[str, IO[bytes]] = {name: tempfile.TemporaryFile() for name in ("stdin", "stdout", "stderr")}
        ours, theirs = socket.socketpair()
        with ours, theirs:
            self._socket = ours.dup()
            setup = {**setup, "workdir": self.workdir, "channel_fd": theirs.fileno()}
            self.files["stdin"].write(json.dumps(setup).encode())
            self.files["stdin"].seek(0)
            self.proc = self.cancellation.spawn(lambda: self._spawn(name, theirs.fileno()))
        self._socket.setblocking(False)  # every read and write here waits at most until a deadline
        self.channel = Channel(self._socket.fileno())

    def _spawn(self, name: str, fd: int) -> subprocess.Popen[bytes]:
        env = {"PATH": _PATH, "LANG": "C.UTF-8", "HOME": self.workdir, "TMPDIR": self.workdir}
        return subprocess.Popen(
            [sys.executable, "-I", "-B", os.path.join(self.workdir, f"_moot_{name}.py")],
            cwd=self.workdir,
            env=env,
            stdin=self.files["stdin"],
            stdout=self.files["stdout"],
            stderr=self.files["stderr"],
            pass_fds=(fd,),
            start_new_session=True,  # its own process group, so a kill reaches everything it started
        )

    def receive(self, until: float) -> Frame | None:
        """The next line, or None at ``until``; WireError once the process closed its end or sent too long a line."""
        while True:
            line = self.channel.take()
            if line is not None:
                return line
            remaining = until - time.monotonic()
            if remaining <= 0 or not select.select([self._socket], [], [], remaining)[0]:
                return None
            self.channel.fill()

    def send(self, line: bytes | bytearray, until: float) -> bool:
        """Write one line by ``until``; False if the process did not take it by then (it is then out of step)."""
        try:
            return self.channel.write(line, until)
        except OSError:  # it died meanwhile: its exit status tells how
            return True

    def end(self, until: float) -> ChildExit:
        """Wait for it to exit on its own (it has reported), at most until ``until`` plus a grace; then kill it."""
        try:
            code = self.proc.wait(max(0.0, until - time.monotonic()) + _GRACE)
        except subprocess.TimeoutExpired:
            self.kill()
            return ChildExit(returncode=self.proc.wait(), timed_out=True)
        remove_task_group(self.proc.pid)
        return ChildExit(returncode=code, timed_out=self.timed_out)

    def close(self) -> None:
        """Hang up: a process waiting for a request then exits on its own."""
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def kill(self) -> ChildExit:
        if self.proc.returncode is None:
            try:  # not reaped yet, so its process group id cannot have been reused
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
        returncode = self.proc.wait()
        self.cancellation.release(self.proc)
        self._socket.close()
        remove_task_group(self.proc.pid)
        return ChildExit(returncode=returncode, timed_out=self.timed_out)

    def tail(self, name: str) -> str:
        chars = self.limits.output_chars
        if chars == 0:
            return ""
        file = self.files[name]
        size = file.seek(0, os.SEEK_END)
        file.seek(max(0, size - 4 * chars))
        return file.read().decode("utf-8", "replace")[-chars:]


class CodeHost:
    """The code's process: started, loaded, asked, and started afresh after it dies or overruns a call."""

    def __init__(self, code: str, limits: SandboxLimits, place: _Place, deadline: float) -> None:
        self.code, self.limits, self.place, self.deadline = code, limits, place, deadline
        self.exports: dict[str, Any] | None = None
        self.process: _Process | None = None
        self._ended: ChildExit | None = None
        self._generation = 0
        self._outputs: list[tuple[str, str]] = []

    def start(self) -> list[dict[str, Any]]:
        """Start the process and load the code; the reports so far (``exports`` is set once the code loaded)."""
        self._generation += 1
        root = os.path.join(self.place.root, f"run{self._generation}")
        os.mkdir(root)
        setup = _setup(self.limits, code=self.code)
        self.process = _Process("code", _Place(root, self.place.cancellation), setup, self.limits)
        records: list[dict[str, Any]] = []
        until = min(self.deadline, time.monotonic() + self.limits.test_seconds + 2 * _GRACE + 1)
        for expected in ("ready", "begin", "end"):
            try:
                message = self._next_report(until, expected)
            except WireError as exc:  # the code wrote to the channel while it loaded
                message = {"event": "end", "step": "load", "outcome": "error", "message": _broke(exc)}
            else:
                if message and expected == "end":  # the code ran before this was sent, and may have written it
                    message = self._loaded(message)
            if not message:
                at_wall = message is None and time.monotonic() >= self.deadline
                if message is None and not at_wall and records and records[-1].get("event") == "begin":
                    seconds = self.limits.test_seconds  # it ignored its own alarm: the step's limit still holds
                    records.append({"event": "end", "step": "load", "outcome": "timeout", "message": _over(seconds)})
                self._ended = self._stop_process(timed_out=at_wall)
                return records
            if message.get("event") == "ready":
                self._check_floor([str(layer) for layer in message.get("isolation", [])])
            records.append(message)
            if message["event"] == "end" and expected != "end":  # the channel broke while the code loaded
                self._ended = self._stop_process(timed_out=False)
                return records
        return records

    def _loaded(self, message: dict[str, Any]) -> dict[str, Any]:
        """The end-of-load record, and ``exports`` once the code loaded; the process is stopped if the report does
        not validate: the code ran before it was sent and may have written it, so that is the code's doing (a load
        error), never the sandbox's."""
        try:
            record, exports = load_report(message)
        except ProtocolBreach as breach:
            self._ended = self._stop_process(timed_out=False)
            return {"event": "end", "step": "load", "outcome": "error", "message": _broke(breach)}
        if record["outcome"] == Outcome.PASSED:
            self.exports = exports
        return record

    def _next_report(self, until: float, event: str) -> dict[str, Any] | None:
        """The next report ``event`` of the load step; None at ``until``, {} once the process ended.

        Once the code runs it can write to the channel too: a line that is not the report due is skipped, never
        kept (so a flood of them costs time, which the deadline bounds, not memory); WireError for a line too
        long for the channel, or a report due that is too long to parse here.
        """
        assert self.process is not None
        while True:
            try:
                line = self.process.receive(until)
            except ChannelClosed:
                return {}
            if line is None:
                return None
            try:
                head = line.head()
            except WireError:
                continue
            if head.get("event") == event and (event == "ready" or head.get("step") == "load"):
                return line.message(HEAD_LIMIT)

    def _check_floor(self, isolation: list[str]) -> None:
        missing = [layer for layer in isolation_floor() if layer not in isolation]
        if missing and not self.limits.weak_isolation:
            self.stop()
            remedy = "run on Linux 5.13 or later" if set(missing) & set(SAFE_FLOOR) else _AS_ROOT
            raise ConfigError(
                f"this machine cannot confine untrusted code: no {' and no '.join(missing)} (layers in force: "
                f"{', '.join(isolation)}); {remedy}, or accept the weaker sandbox with "
                "SandboxLimits(weak_isolation=True)"
            )

    def relay(self, request: Frame, request_id: Any, seconds: float) -> bytes | bytearray:
        """The code's answer to one request (its line, unread beyond the head), or how it failed to answer in time."""
        reply_to = {"id": request_id}
        if self.process is None and not self._restart():
            return frame({**reply_to, "died": "the code's process could not be started again after a fault"})
        assert self.process is not None
        until = time.monotonic() + max(seconds, 0.0) + _GRACE
        try:
            reply = self.process.receive(until) if self.process.send(request.raw, until) else None
            if reply is not None and (reply.head().get("id") != request_id or reply.fields() not in _ANSWERS):
                raise WireError("an answer out of turn")  # nothing else it writes reaches the tester ("timeout", ...)
        except ChannelClosed:
            stderr = self.process.tail("stderr")
            death = killed_in_step(self._stop_process(timed_out=False), self.limits, stderr)
            return frame({**reply_to, ("timeout" if death.outcome is Outcome.TIMEOUT else "died"): death.message})
        except WireError as exc:
            self._stop_process(timed_out=False)
            return frame({**reply_to, "died": _broke(exc)})
        if reply is None:
            self._stop_process(timed_out=True)
            at_wall = time.monotonic() >= self.deadline
            limit = f"exceeded the wall-clock limit of {self.limits.wall_seconds:g} s"
            return frame({**reply_to, "timeout": limit if at_wall else _over(self.limits.test_seconds)})
        return reply.raw

    def _restart(self) -> bool:
        records = self.start()
        return bool(records) and self.exports is not None and records[-1].get("outcome") == "passed"

    def result(self, records: list[dict[str, Any]], tests: list[str], seconds: float) -> SandboxResult:
        """The result of a run that ended at loading: the code failed to load, or its process died doing it."""
        ended = self._ended or self._stop_process(timed_out=False)
        if records and records[-1].get("event") == "end":
            records.append({"event": "done"})  # loading ended (and failed): nothing else was to run
        out, err = self.output()
        return assemble(records, ended, tests, self.limits, out, err, seconds)

    def output(self) -> tuple[str, str]:
        """The end of what every generation of the code's process printed, in order."""
        outputs = list(self._outputs)
        if self.process is not None:
            outputs.append((self.process.tail("stdout"), self.process.tail("stderr")))
        chars = self.limits.output_chars
        if chars == 0:
            return "", ""
        return "".join(o for o, _ in outputs)[-chars:], "".join(e for _, e in outputs)[-chars:]

    def _stop_process(self, timed_out: bool) -> ChildExit:
        assert self.process is not None
        self.process.timed_out = timed_out
        ended = self.process.kill()
        self._outputs.append((self.process.tail("stdout"), self.process.tail("stderr")))
        self.process = None
        return ended

    def stop(self) -> None:
        """End the process: it exits once its channel closes; killed if it does not within the grace."""
        if self.process is not None:
            self.process.close()
            self.process.end(time.monotonic())
            self.process.kill()


def _over(seconds: float) -> str:
    return f"took longer than {seconds:g} s"


def _broke(exc: WireError | ProtocolBreach) -> str:
    sent = f"it sent {exc}" if isinstance(exc, WireError) else str(exc)
    return f"the code's process broke the sandbox's channel protocol: {sent}"


def remove_tree(path: str) -> None:
    """Remove a work directory whatever the code left in it; never raises.

    Recursive removal (``shutil.rmtree``) fails on a tree nested deeper than
    the recursion limit or than PATH_MAX: here every directory is emptied
    by moving its subdirectories up to the top, so no path is ever longer
    than two names and no more than two directories are open at once.
    Read-only directories are made writable first.
    """
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    moved = itertools.count()
    try:
        os.fchmod(top, 0o700)
        while names := os.listdir(top):
            if not any([_remove_entry(top, name, moved) for name in names]):
                break  # nothing could be removed this pass: give up rather than spin
    except OSError:
        pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _remove_entry(top: int, name: str, moved: itertools.count[int]) -> bool:
    """Remove a file, or empty a directory into ``top`` and remove it; whether anything was removed."""
    try:
        os.unlink(name, dir_fd=top)
        return True
    except IsADirectoryError:
        pass
    except OSError:
        return False
    try:
        os.chmod(name, 0o700, dir_fd=top)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
    except OSError:
        return False
    try:
        for child in os.listdir(inner):
            try:
                os.unlink(child, dir_fd=inner)
            except IsADirectoryError:
                os.rename(child, f".moot-removing-{next(moved)}", src_dir_fd=inner, dst_dir_fd=top)
            except OSError:
                pass
    except OSError:
        return False
    finally:
        os.close(inner)
    try:
        os.rmdir(name, dir_fd=top)
    except OSError:
        return False
    return True
