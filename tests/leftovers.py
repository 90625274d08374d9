"""What a sandbox run could leave behind on the host, and the check (after every test) that nothing was left.

A run must leave no process, no work directory and no kernel object that
outlives it: System V shared memory, message queues and semaphores
(``/proc/sysvipc``, what ``ipcs`` lists), POSIX shared memory and
semaphores (files in ``/dev/shm``) or keys (``/proc/key-users`` counts them
per user). Each test gets a temporary directory of
its own for the sandbox roots (``tempfile.tempdir``), so a process or
directory found there is this test's, whatever else runs on the machine;
kernel objects are this test's when they are new since it started and
belong to the user sandboxed code runs as.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from moot.sandbox._confine import NOBODY
from moot.sandbox._sandbox import remove_tree

SYSVIPC = Path("/proc/sysvipc")
DEV_SHM = Path("/dev/shm")
IPC_RMID = 0
_REMOVE = {"shm": "shmctl", "msg": "msgctl", "sem": "semctl"}


def sandbox_uid() -> int:
    """The uid sandboxed code runs as: ``nobody`` when moot runs as root, else moot's own (in a user namespace)."""
    return NOBODY if os.geteuid() == 0 else os.getuid()


def ipc_objects(uid: int) -> set[tuple[str, int]]:
    """The System V IPC objects ``uid`` created, as (kind, id): what ``ipcs`` lists, read from /proc/sysvipc."""
    found = set()
    for kind in _REMOVE:
        try:
            header, *rows = (SYSVIPC / kind).read_text().splitlines()
        except OSError:
            continue
        names = header.split()
        for row in rows:
            values = dict(zip(names, row.split(), strict=False))
            if values.get("cuid") == str(uid):
                found.add((kind, int(row.split()[1])))
    return found


def shm_files(uid: int) -> set[str]:
    """Files ``uid`` owns in /dev/shm: POSIX shared memory and named semaphores."""
    try:
        return {entry.name for entry in os.scandir(DEV_SHM) if entry.stat(follow_symlinks=False).st_uid == uid}
    except OSError:
        return set()


def key_count(uid: int) -> int:
    """How many keys ``uid`` owns (``/proc/key-users``: ``uid: usage keys/instantiated ...``)."""
    try:
        lines = Path("/proc/key-users").read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        owner, _, rest = line.partition(":")
        if owner.strip() == str(uid):
            return int(rest.split()[1].split("/")[0])
    return 0


def processes_under(directory: str) -> list[tuple[int, str]]:
    """Live processes whose command line names a path in ``directory`` (a sandbox process runs its script there)."""
    marker = directory.encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue
        if marker in cmdline:
            found.append((int(entry.name), cmdline.replace(b"\0", b" ").decode(errors="replace").strip()))
    return found


@dataclass
class LeftoverWatch:
    """One test's watch: started before it, asked after it what the sandbox left."""

    scratch: str
    uid: int = field(default_factory=sandbox_uid)
    ipc_before: set[tuple[str, int]] = field(default_factory=set)
    shm_before: set[str] = field(default_factory=set)
    keys_before: int = 0
    untouched: int = 0
    """The scratch directory's mtime when the watch began: unchanged, no sandbox root was ever made there."""

    @classmethod
    def start(cls) -> LeftoverWatch:
        scratch = tempfile.mkdtemp(prefix="moot-tests-", dir=tempfile.gettempdir())
        os.chmod(scratch, 0o711)  # as the real temporary directory: a sandbox run as nobody must reach its root
        watch = cls(scratch)
        watch.ipc_before, watch.shm_before = ipc_objects(watch.uid), shm_files(watch.uid)
        watch.keys_before = key_count(watch.uid)
        watch.untouched = os.stat(scratch).st_mtime_ns
        return watch

    def leftovers(self, grace: float = 2.0) -> list[str]:
        """What the sandbox left: new IPC objects and /dev/shm files of its uid, live processes, work directories.

        Processes and directories get ``grace`` seconds to go (a cancelled run unwinds in its own thread).
        """
        until = time.monotonic() + grace
        while (self._processes() or self._directories()) and time.monotonic() < until:
            time.sleep(0.05)
        found = [f"process {pid}: {cmd}" for pid, cmd in self._processes()]
        found += [f"directory {name}" for name in self._directories()]
        found += [f"System V IPC {kind} id {ident}" for kind, ident in sorted(self.new_ipc())]
        found += [f"/dev/shm/{name}" for name in sorted(shm_files(self.uid) - self.shm_before)]
        if (keys := key_count(self.uid)) > self.keys_before:
            found.append(f"{keys - self.keys_before} new keys of uid {self.uid}")
        return found

    def new_ipc(self) -> set[tuple[str, int]]:
        return ipc_objects(self.uid) - self.ipc_before

    def clean(self) -> None:
        """Remove whatever was left, so one failure does not spill into the next test."""
        for pid, _ in self._processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        libc = ctypes.CDLL(None, use_errno=True)
        for kind, ident in self.new_ipc():
            if kind == "sem":
                libc.semctl(ident, 0, IPC_RMID)
            else:
                getattr(libc, _REMOVE[kind])(ident, IPC_RMID, None)
        for name in shm_files(self.uid) - self.shm_before:
            (DEV_SHM / name).unlink(missing_ok=True)
        remove_tree(self.scratch)

    def _processes(self) -> list[tuple[int, str]]:
        if os.stat(self.scratch).st_mtime_ns == self.untouched and not os.listdir(self.scratch):
            return []  # no run ever started here, so no process of one can be running
        return processes_under(self.scratch)

    def _directories(self) -> list[str]:
        try:
            return sorted(name for name in os.listdir(self.scratch) if name.startswith("moot-sandbox-"))
        except FileNotFoundError:
            return []


async def assert_ends_within_a_second_and_starts_nothing(scratch: str, cancelled: float) -> None:
    """Every sandbox process is gone within 1 s of the cancel, and for 1.5 s more none starts."""
    while alive := processes_under(scratch):
        assert time.monotonic() - cancelled < 1.0, f"still running 1 s after the cancel: {alive}"
        await asyncio.sleep(0.01)
    quiet_until = time.monotonic() + 1.5
    while time.monotonic() < quiet_until:
        assert processes_under(scratch) == [], "a sandbox process started after the cancel"
        await asyncio.sleep(0.02)
