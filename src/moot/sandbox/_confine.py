"""Confinement the sandbox child applies to itself before any untrusted code runs.

Copied next to each sandbox process's main file (``_code_host.py``, ``_tester.py``) and loaded by it in
the child; moot's package code never imports it (stdlib only, no moot imports).

Layers, outermost first. The kernel-enforced ones hold even against code
written to defeat them. The audit hook is what produces the clear error
messages ("sandbox: network access is not allowed"), and the only
spawn/network guard where the kernel layers are unavailable (not Linux, an
old kernel) -- but it runs in the same interpreter as the code, so it is a
guardrail against careless code, not a boundary against code set on
defeating it (as PEP 578 itself warns):

- resource limits (kernel): address space, CPU time, file size, open files, no core files;
- a task limit (kernel, Linux): 64 threads, by a pids cgroup of its own where
  the cgroup hierarchy is writable (root), else RLIMIT_NPROC in the user namespace;
- as root, the uid and gid ``nobody`` (kernel, Linux): new network, mount and
  IPC namespaces, the work directory's quota, then ``setresuid``; the code holds
  no capability and reads only what any user may (see ``_as_nobody``);
- otherwise user, network, mount and IPC namespaces (kernel, Linux): ``unshare(CLONE_NEWUSER |
  CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC)``, or as root ``CLONE_NEWNET | CLONE_NEWIPC`` if user
  namespaces are disabled; the new network namespace has no usable interface, in the new
  user namespace even root has no capabilities over anything outside it, and the new IPC
  namespace (System V shared memory, message queues, semaphores; POSIX message queues)
  is destroyed with the process, with every object the code made in it;
- Landlock (kernel, Linux >= 5.13): writes only beneath the work directory
  (and to /dev/null); reads only beneath the work directory, the Python
  installation and the system's library and configuration directories (so
  not a home directory, the project tree or another run's files); no execve,
  no TCP bind/connect (ABI >= 4), no signals or abstract sockets outside the
  sandbox (ABI >= 6), no ptrace of outsiders;
- seccomp (kernel, Linux x86_64/aarch64): no exec, fork, non-Unix sockets,
  connect, ptrace, io_uring, namespace or BPF games, and nothing that can outlive
  the process in the kernel (System V IPC, POSIX message queues, keyrings), even
  where no IPC namespace could be made; threads stay allowed;
- a PEP 578 audit hook (interpreter): refuses process spawning, sockets other
  than Unix socket pairs (asyncio needs those), ctypes, raising rlimits,
  signalling other processes, writes outside the work directory, reads
  outside the readable directories above, and reads of other processes'
  /proc entries (their environment holds API keys).

Every kernel layer is best effort: a failure is skipped and the names of the
layers that did apply are reported, so a result says how it was contained.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal
import stat
import sys
from collections.abc import Callable
from typing import Any

MB = 1024 * 1024
OPEN_FILES = 64
"""Descriptors a sandbox process may hold at once (and, for Unix sockets, pass in flight); the interpreter and its
channel need a handful. Each pipe or socket pins a fixed amount of kernel memory (see ``_SOCKET_BUFFERS``)."""
TASKS = 64
"""Threads a sandbox process may run at once, itself included (new processes are refused outright)."""
CGROUP_ROOT = "/sys/fs/cgroup"

_SPAWN_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "subprocess.Popen",
        "pty.spawn",
    }
)
_OTHER_EVENTS = {
    "os.kill": "signalling other processes",
    "os.killpg": "signalling other processes",
    "signal.pthread_kill": "signalling threads",
    "resource.setrlimit": "changing resource limits",
    "resource.prlimit": "changing resource limits",
}
_PATH_EVENTS = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_SYSTEM_READABLE = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/ld.so.cache",
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/proc/self",
)
"""Read-only beyond the work directory: libraries, time zone data, the loader's cache, entropy, this
process's own /proc. Not the rest of /etc: it holds password hashes and host secrets."""


def readable_roots(workdir: str) -> list[str]:
    """Where the code may read: the work directory, the Python installation (stdlib, site-packages), the system."""
    prefixes = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    roots = [workdir, *sorted(os.path.realpath(p) for p in prefixes), *_SYSTEM_READABLE]
    return [r for r in dict.fromkeys(roots) if os.path.exists(r)]


def confine(limits: dict[str, Any], workdir: str, observer: Callable[[str], None] | None = None) -> list[str]:
    """Apply every layer (see the module docstring); return the names of those that took effect.

    ``observer``, if given, is told each refusal's message as the audit hook raises it, so a caller can learn that
    its untrusted input tried something forbidden even when third-party code swallowed the PermissionError.
    """
    applied = set_limits(limits)
    if sys.platform.startswith("linux"):
        applied += _linux_layers(workdir, limits)
    _disarm_posixsubprocess()
    sys.addaudithook(make_audit_hook(workdir, os.getpid(), observer))
    return [*applied, "audit-hook"]


def set_limits(limits: dict[str, Any]) -> list[str]:
    """Memory, CPU and file-size limits; lowering is always allowed, raising is refused by the hook."""
    cpu = int(limits["cpu_seconds"])
    wanted = {
        resource.RLIMIT_AS: (limits["memory_mb"] * MB,) * 2,
        resource.RLIMIT_CPU: (cpu, cpu + 1),
        resource.RLIMIT_FSIZE: (limits["file_size_mb"] * MB,) * 2,
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_NOFILE: (OPEN_FILES, OPEN_FILES),
    }
    for which, (soft, hard) in wanted.items():
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        resource.setrlimit(which, (soft, hard))
    # A write past the file-size limit then fails with EFBIG (an error the code sees) instead of killing us.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return ["rlimits"]


# --------------------------------------------------------------------------- Linux kernel layers
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
IPC_NAMESPACE = "ipcns"
"""The layer's name when the process has an IPC namespace of its own."""
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_REC, MS_PRIVATE = 0x1, 0x2, 0x4, 0x20, 0x4000, 0x40000
_OPEN_TREE, _MOVE_MOUNT = 428, 429  # the same number on every architecture
_OPEN_TREE_CLONE, _AT_RECURSIVE, _MOVE_MOUNT_F_EMPTY_PATH = 0x1, 0x8000, 0x4
NOBODY = 65534
"""The uid and gid untrusted code runs as when moot runs as root: the kernel's overflow id (nobody, nogroup)."""
UNPRIVILEGED = "uid-nobody"
"""The layer's name when the code runs as :data:`NOBODY`."""
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def _linux_layers(workdir: str, limits: dict[str, Any]) -> list[str]:
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getppid()
    applied = [f"tasks-{TASKS}"] if _join_task_group() else []
    if _join_memory_group(memory_ceiling(limits)):
        applied.append(MEMORY_GROUP)
    disk_mb = int(limits["disk_mb"])
    uid, gid = os.getuid(), os.getgid()
    if os.geteuid() == 0:
        applied += _as_nobody(libc, workdir, disk_mb)
    if UNPRIVILEGED not in applied:  # root that kept its uid still sheds its capabilities in a user namespace
        quota = any(layer.startswith("disk-quota") for layer in applied)
        fallback = _in_user_namespace(libc, workdir, disk_mb, uid, gid, counts_tasks=not applied[:1], quota=not quota)
        applied += [layer for layer in fallback if layer not in applied]
    # Die with the parent: a runner that crashes must not leave a sleeping candidate behind. (Set after the uid
    # changes: a change of credentials clears it.)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
        applied.append("pdeathsig")
    if os.getppid() != parent:  # moot died before the signal was set: nothing would ever end this process
        os._exit(1)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        if _landlock(libc, workdir):
            applied.append("landlock")
        if _seccomp(libc):
            applied.append("seccomp")
    return applied


def _in_user_namespace(
    libc: ctypes.CDLL, workdir: str, disk_mb: int, uid: int, gid: int, counts_tasks: bool, quota: bool = True
) -> list[str]:
    """Network, mount and user namespaces for a process that is not root (or root that could not drop its uid).

    A new user namespace also strips the process of its capabilities outside it (no CAP_SYS_PTRACE on the
    parent, whose /proc environ holds API keys; no CAP_DAC_OVERRIDE), while files keep their real owners.
    """
    applied: list[str] = []
    ipc = _unshare(libc, CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS)
    if ipc is not None:
        applied += ["userns", "netns", *ipc]
        if _map_self(libc, uid, gid) and quota and _quota_workdir(libc, workdir, uid, gid, disk_mb):
            applied.append(f"disk-quota-{disk_mb}mb")
        if counts_tasks and uid != 0:
            # Counted per user namespace once inside one, so only this process's own threads count against it
            # (root is exempt from this limit: it gets the task group instead).
            resource.setrlimit(resource.RLIMIT_NPROC, (TASKS, TASKS))
            applied.insert(0, f"tasks-{TASKS}")
    elif os.geteuid() == 0 and (ipc := _unshare(libc, CLONE_NEWNET)) is not None:
        applied += ["netns", *ipc]
    return applied


def _unshare(libc: ctypes.CDLL, flags: int) -> list[str] | None:
    """``unshare(flags)``, with a new IPC namespace as well where the kernel allows one.

    None if ``flags`` themselves failed; else ``[IPC_NAMESPACE]`` or ``[]``. Without
    an IPC namespace the seccomp filter still refuses every IPC call (see ``_SECCOMP_ARCHES``).
    """
    if libc.unshare(flags | CLONE_NEWIPC) == 0:
        return [IPC_NAMESPACE]
    return [] if libc.unshare(flags) == 0 else None


def _as_nobody(libc: ctypes.CDLL, workdir: str, disk_mb: int) -> list[str]:
    """As root: new network, mount and IPC namespaces, the work directory's quota, then the uid and gid ``nobody``.

    The code then holds no capability and reads only what any user may read, whatever Landlock does. The
    directories it must read (the Python installation, the system's) stay where they are: where one lies under
    a directory ``nobody`` cannot enter (Python under ``/root``), an empty read-only tmpfs covers that directory
    in this process's mount namespace and the needed trees are mounted back into it at their own paths, so
    the rest of it (a home directory's keys and history) is not even there to be denied. Nothing changes when
    a needed directory is itself closed to other users: the process then keeps root's uid (in a user
    namespace, without capabilities), and the sandbox's floor check refuses it unless weaker isolation is
    accepted.
    """
    applied: list[str] = []
    ipc = _unshare(libc, CLONE_NEWNET | CLONE_NEWNS)
    namespaces = ipc is not None
    if ipc is not None:
        applied += ["netns", *ipc]
        namespaces = libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0  # nothing propagates back
    quota = namespaces and _quota_workdir(libc, workdir, NOBODY, NOBODY, disk_mb)
    if quota:
        applied.append(f"disk-quota-{disk_mb}mb")
    try:  # root without CAP_CHOWN, CAP_SETUID or CAP_SETGID (a trimmed container) keeps its uid: refused later
        if not quota:
            os.chown(workdir, NOBODY, NOBODY)
        if not _reachable_by_nobody(libc, [workdir, *readable_roots(workdir)[1:]], namespaces):
            return applied
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    except OSError:
        return applied
    os.chdir(workdir)
    return [*applied, UNPRIVILEGED]


def _reachable_by_nobody(libc: ctypes.CDLL, roots: list[str], can_mount: bool) -> bool:
    """Make each of ``roots`` reachable by any user (see ``_as_nobody``); False where that cannot be done."""
    if not all(_open_to_others(root) for root in roots):
        return False
    covers: dict[str, list[str]] = {}
    for root in roots:
        closed = _closed_ancestor(root)
        if closed is not None:
            covers.setdefault(closed, []).append(root)
    if covers and not can_mount:
        return False
    return all(_cover(libc, closed, kept) for closed, kept in covers.items())


def _open_to_others(path: str) -> bool:
    found = os.stat(path)
    wanted = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(found.st_mode) else 0)
    return found.st_mode & wanted == wanted or found.st_uid == NOBODY


def _closed_ancestor(path: str) -> str | None:
    """The outermost directory above ``path`` that other users may not enter, if any."""
    parts = path.split(os.sep)
    for end in range(2, len(parts)):
        ancestor = os.sep.join(parts[:end])
        if not os.stat(ancestor).st_mode & stat.S_IXOTH:
            return ancestor
    return None


def _cover(libc: ctypes.CDLL, closed: str, kept: list[str]) -> bool:
    """Cover ``closed`` with an empty read-only tmpfs and mount each ``kept`` tree back at its own path.

    The trees are detached copies of their mounts (open_tree, Linux 5.2), taken before the cover hides them.
    """
    kept = [path for path in kept if not any(_beneath(path, other) and path != other for other in kept)]
    trees = [int(libc.syscall(_OPEN_TREE, -100, path.encode(), _OPEN_TREE_CLONE | _AT_RECURSIVE)) for path in kept]
    try:
        if min(trees) < 0:
            return False
        cover = b"size=1m,mode=0755,uid=0,gid=0"
        if libc.mount(b"moot-cover", closed.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, cover) != 0:
            return False
        for path, tree in zip(kept, trees, strict=True):
            _make_open_dirs(closed, path)
            if libc.syscall(_MOVE_MOUNT, tree, b"", -100, path.encode(), _MOVE_MOUNT_F_EMPTY_PATH) != 0:
                return False
        return libc.mount(None, closed.encode(), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None) == 0
    finally:
        for tree in trees:
            if tree >= 0:
                os.close(tree)


def _make_open_dirs(base: str, path: str) -> None:
    """Create ``path`` and the directories between ``base`` and it, each enterable by anyone (umask aside)."""
    current = base
    for part in os.path.relpath(path, base).split(os.sep):
        current = os.path.join(current, part)
        if not os.path.isdir(current):
            os.mkdir(current)
            os.chmod(current, 0o755)


def _map_self(libc: ctypes.CDLL, uid: int, gid: int) -> bool:
    """Map this process's own uid and gid into its new user namespace (the only mapping it may write)."""
    try:
        with open("/proc/self/setgroups", "w") as file:
            file.write("deny")
        for name, ident in (("uid_map", uid), ("gid_map", gid)):
            with open(f"/proc/self/{name}", "w") as file:
                file.write(f"{ident} {ident} 1")
    except OSError:
        return False
    return libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0  # nothing propagates back to the host


def task_group(pid: int) -> str:
    """The pids cgroup (v1 hierarchy) a sandbox process with this pid joins; the parent removes it afterwards."""
    return f"{CGROUP_ROOT}/pids/moot-sandbox-{pid}"


def _join_task_group() -> bool:
    """Join a pids cgroup of this process's own capped at :data:`TASKS` (threads count as tasks).

    Needs a writable cgroup v1 ``pids`` hierarchy, as root has on most Linux hosts; elsewhere the
    task limit is RLIMIT_NPROC, set once inside the user namespace (see ``_linux_layers``).
    """
    return _join_group(task_group(os.getpid()), "pids.max", str(TASKS))


def _join_group(group: str, limit: str, value: str) -> bool:
    """Make the cgroup ``group``, set its ``limit`` file to ``value`` and move this process into it; on any
    failure leave no group behind (``remove_task_group`` removes this pid's groups in every hierarchy)."""
    try:
        os.mkdir(group)
    except OSError:
        return False
    try:
        for name, setting in ((limit, value), ("cgroup.procs", "0")):
            with open(os.path.join(group, name), "w") as file:
                file.write(setting)
    except OSError:
        remove_task_group(os.getpid())
        return False
    return True


def remove_task_group(pid: int) -> None:
    """Remove the cgroups of a sandbox process that has exited (an empty cgroup is removed with rmdir)."""
    for group in (task_group(pid), memory_group(pid)):
        if group is not None:
            try:
                os.rmdir(group)
            except OSError:
                pass


MEMORY_GROUP = "memory-cgroup"
"""The layer's name when the process is in a memory cgroup of its own (see ``_join_memory_group``)."""
_GROUP_SLACK_MB = 64
"""Beyond the address space and the work directory's tmpfs: the interpreter's page tables, its share of file
pages, and what the kernel holds for it (pipe and socket buffers)."""


def memory_ceiling(limits: dict[str, Any]) -> int:
    """Bytes a sandbox process may hold in all, the kernel's share included: its address space, its tmpfs (whose
    pages are charged to it too) and :data:`_GROUP_SLACK_MB`; RLIMIT_AS alone counts none of the kernel's memory."""
    return (int(limits["memory_mb"]) + int(limits["disk_mb"]) + _GROUP_SLACK_MB) * MB


def _memory_parent() -> tuple[str, str] | None:
    """Where this process's memory cgroup lives, and the file that caps a child group: the cgroup v1 ``memory``
    hierarchy (``memory.limit_in_bytes``), or cgroup v2 (``memory.max``) where the memory controller is delegated
    to this process's group; None if neither. A sandbox's group is made beneath moot's own, so the limits the
    machine puts on moot still hold."""
    try:
        with open("/proc/self/cgroup") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return f"{CGROUP_ROOT}/memory{path.rstrip('/')}", "memory.limit_in_bytes"
    for line in lines:
        if line.startswith("0::"):
            parent = f"{CGROUP_ROOT}{line[3:].rstrip('/')}"
            try:
                with open(f"{parent}/cgroup.subtree_control") as file:
                    delegated = "memory" in file.read().split()
            except OSError:
                return None
            return (parent, "memory.max") if delegated else None
    return None


def memory_group(pid: int) -> str | None:
    """The memory cgroup a sandbox process with this pid joins (beneath moot's own); None where none can be made."""
    found = _memory_parent()
    return None if found is None else f"{found[0]}/moot-sandbox-{pid}"


def _join_memory_group(ceiling: int) -> bool:
    """Join a memory cgroup of this process's own, capped at ``ceiling`` bytes, kernel memory included.

    Pipe pages and socket buffers count there, where no rlimit counts them: filling every buffer it can open ends
    in a refused write or this process killed by the kernel, never the host's memory. Needs a writable memory
    hierarchy (root with cgroup v1, or cgroup v2 with the memory controller delegated).
    """
    found = _memory_parent()
    if found is None:
        return False
    return _join_group(f"{found[0]}/moot-sandbox-{os.getpid()}", found[1], str(ceiling))


def sweep_groups() -> None:
    """Remove the cgroups of sandbox processes that no longer exist (left when moot itself was killed).

    A group is named after its process, so one whose process is alive is never touched; rmdir removes only an
    empty group.
    """
    parents = [f"{CGROUP_ROOT}/pids", *([found[0]] if (found := _memory_parent()) else [])]
    for parent in parents:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            pid = name.removeprefix("moot-sandbox-")
            if pid != name and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                try:
                    os.rmdir(os.path.join(parent, name))
                except OSError:
                    pass


def _quota_workdir(libc: ctypes.CDLL, workdir: str, uid: int, gid: int, megabytes: int) -> bool:
    """Mount a tmpfs of ``megabytes`` owned by ``uid`` over the work directory, in this process's mount namespace.

    Every file the code writes then lives in memory the size cap bounds (a
    disk quota no file-size limit gives), is invisible to any other process,
    and vanishes with this process: nothing is left on disk to clean up.
    """
    options = f"size={megabytes}m,mode=0700,uid={uid},gid={gid}".encode()
    if libc.mount(b"moot-sandbox", workdir.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        return False
    os.chdir(workdir)  # the old directory is underneath now
    return True


# Landlock (include/uapi/linux/landlock.h). Syscall numbers are the same on x86_64 and aarch64.
_LANDLOCK_CREATE, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT = 444, 445, 446
_FS_EXECUTE, _FS_WRITE_FILE, _FS_TRUNCATE, _FS_REFER = 1 << 0, 1 << 1, 1 << 14, 1 << 13
_FS_READ = (1 << 2) | (1 << 3)  # read file, read dir
_FS_WRITE_TREE = sum(1 << bit for bit in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
_NET_TCP = (1 << 0) | (1 << 1)  # bind, connect
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets, signals


def _landlock(libc: ctypes.CDLL, workdir: str) -> bool:
    abi = int(libc.syscall(_LANDLOCK_CREATE, None, 0, 1))  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        return False
    file_rights = _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0)
    handled_fs = _FS_EXECUTE | _FS_READ | file_rights | _FS_WRITE_TREE | (_FS_REFER if abi >= 2 else 0)
    attr = (ctypes.c_uint64 * 3)(handled_fs, _NET_TCP if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = 8 * (3 if abi >= 6 else 2 if abi >= 4 else 1)
    ruleset = int(libc.syscall(_LANDLOCK_CREATE, ctypes.byref(attr), size, 0))
    if ruleset < 0:
        return False
    try:
        allowed = [(workdir, handled_fs & ~_FS_EXECUTE), (os.devnull, file_rights)]
        allowed += [(root, _FS_READ if os.path.isdir(root) else 1 << 2) for root in readable_roots(workdir)[1:]]
        ok = all(_landlock_allow(libc, ruleset, path, rights) for path, rights in allowed)
        return ok and int(libc.syscall(_LANDLOCK_RESTRICT, ruleset, 0)) == 0
    finally:
        os.close(ruleset)


class _PathBeneath(ctypes.Structure):
    """struct landlock_path_beneath_attr (packed)."""

    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _landlock_allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> bool:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneath(rights, fd)
        return int(libc.syscall(_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0)) == 0  # RULE_PATH_BENEATH
    finally:
        os.close(fd)


# seccomp: syscall numbers from the kernel's uapi headers (x86_64: asm/unistd_64.h; aarch64: asm-generic).
_IPC_X86_64 = (29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71, 240, 241, 242, 243, 244, 245, 248, 249)
_IPC_AARCH64 = (194, 196, 195, 197, 190, 193, 191, 192, 186, 189, 188, 187, 180, 181, 182, 183, 184, 185, 217, 218)
"""What can outlive a process in the kernel (see below), in the same order on both architectures."""
_SECCOMP_ARCHES = {
    "x86_64": (
        0xC000003E,
        {"clone": 56, "clone3": 435, "prctl": 157, "setsockopt": 54, "fcntl": 72},
        (59, 322, 57, 58, 42, 101, 310, 311, 438, 272, 308, 165, 321, 323, 298, 250, 425, 41, 319, 447, *_IPC_X86_64),
    ),
    "aarch64": (
        0xC00000B7,
        {"clone": 220, "clone3": 435, "prctl": 167, "setsockopt": 208, "fcntl": 25},
        (221, 281, 203, 117, 270, 271, 438, 97, 268, 40, 280, 282, 241, 219, 425, 198, 279, 447, *_IPC_AARCH64),
    ),
}
"""arch -> (AUDIT_ARCH, special syscalls, denied syscalls: exec, execveat, [fork, vfork], connect, ptrace,
process_vm_readv/writev, pidfd_getfd, unshare, setns, mount, bpf, userfaultfd, perf_event_open, keyctl,
io_uring_setup, socket (every family: the only sockets are the socket pairs socketpair() makes, and the
channel the sandbox inherited, so no datagram reaches a host's Unix socket), memfd_create and memfd_secret
(memory in an anonymous file escapes the address-space limit); then what outlives the process in the kernel,
owned by its uid: System V shared memory (shmget, shmat, shmctl, shmdt), semaphores (semget, semop, semctl,
semtimedop) and message queues (msgget, msgsnd, msgrcv, msgctl), POSIX message queues (mq_open ...
mq_getsetattr) and keys (add_key, request_key))."""
_PRCTL_ALLOWED = (
    *(2, 3, 5, 7, 9, 11, 13, 16, 19, 21, 23, 25, 27, 30, 34, 37, 39, 40, 42, 46, 51, 52, 56, 58, 66, 68, 74),
    15,  # PR_SET_NAME: a thread's name
    0x53564D41,  # PR_SET_VMA: the C library names its anonymous mappings
)
"""The prctl options a sandbox process may use: every PR_GET_* (and PR_CAPBSET_READ, PR_MCE_KILL_GET), and naming
threads and mappings. Everything else is refused: PR_SET_PDEATHSIG (clearing it outlives moot), PR_SET_DUMPABLE,
PR_SET_PTRACER, PR_SET_CHILD_SUBREAPER, PR_SET_MM, PR_SET_SECCOMP, PR_SET_KEEPCAPS, PR_CAP_AMBIENT, PR_SET_TSC ..."""
_SOL_SOCKET, _F_SETPIPE_SZ = 1, 1031
_SOCKET_BUFFERS = (7, 8, 32, 33)
"""SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE: a socket keeps the system's default buffers, as a pipe keeps
its default size (F_SETPIPE_SZ is refused): kernel memory that RLIMIT_AS does not count stays a fixed amount per
descriptor, and descriptors are capped by :data:`OPEN_FILES`."""
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_CLONE_THREAD, _AF_UNIX, _X32_BIT = 0x00010000, 1, 0x40000000

Insn = tuple[int, "int | str", "int | str", int]


def seccomp_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The BPF filter for ``machine`` as (code, jt, jf, k) rows, or None for an unsupported architecture."""
    if machine not in _SECCOMP_ARCHES:
        return None
    arch, special, denied = _SECCOMP_ARCHES[machine]
    program: list[Insn | str] = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 0, "deny", arch), (_LD_W_ABS, 0, 0, 0)]
    if machine == "x86_64":
        program.append((_JGE, "deny", 0, _X32_BIT))  # the x32 ABI would bypass every number below
    program += [(_JEQ, "deny", 0, nr) for nr in denied]
    program += [
        (_JEQ, "enosys", 0, special["clone3"]),  # glibc then falls back to clone(), whose flags we can read
        (_JEQ, "clone", 0, special["clone"]),
        (_JEQ, "prctl", 0, special["prctl"]),
        (_JEQ, "setsockopt", 0, special["setsockopt"]),
        (_JEQ, "fcntl", 0, special["fcntl"]),
        (_RET, 0, 0, _RET_ALLOW),
        "clone",
        (_LD_W_ABS, 0, 0, 16),
        (_JSET, "allow", "deny", _CLONE_THREAD),  # a new thread is fine, a new process is not
        "prctl",
        (_LD_W_ABS, 0, 0, 16),  # the option (an int: the low word of the first argument)
        *[(_JEQ, "allow", 0, option) for option in _PRCTL_ALLOWED],
        (_RET, 0, 0, _RET_ERRNO | errno.EPERM),
        "setsockopt",
        (_LD_W_ABS, 0, 0, 24),  # the level
        (_JEQ, 0, "allow", _SOL_SOCKET),
        (_LD_W_ABS, 0, 0, 32),  # the option
        *[(_JEQ, "deny", 0, option) for option in _SOCKET_BUFFERS],
        (_RET, 0, 0, _RET_ALLOW),
        "fcntl",
        (_LD_W_ABS, 0, 0, 24),  # the command
        (_JEQ, "deny", "allow", _F_SETPIPE_SZ),
        "deny",
        (_RET, 0, 0, _RET_ERRNO | errno.EPERM),
        "enosys",
        (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS),
        "allow",
        (_RET, 0, 0, _RET_ALLOW),
    ]
    return _assemble(program)


def _assemble(program: list[Insn | str]) -> list[tuple[int, int, int, int]]:
    """Resolve label jumps into BPF's relative offsets."""
    labels: dict[str, int] = {}
    rows: list[Insn] = []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(rows)
        else:
            rows.append(item)

    def offset(target: int | str, index: int) -> int:
        jump = target if isinstance(target, int) else labels[target] - index - 1
        if not 0 <= jump <= 255:
            raise ValueError(f"a seccomp jump of {jump} rows does not fit BPF's 8-bit offset (0-255)")
        return jump

    return [(code, offset(jt, i), offset(jf, i), k) for i, (code, jt, jf, k) in enumerate(rows)]


class _SockFilter(ctypes.Structure):
    """struct sock_filter: one BPF instruction."""

    _fields_ = (("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint))


class _SockFprog(ctypes.Structure):
    """struct sock_fprog: the program handed to the kernel."""

    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


def _seccomp(libc: ctypes.CDLL) -> bool:
    rows = seccomp_program(platform.machine())
    if rows is None:
        return False
    filters = (_SockFilter * len(rows))(*(_SockFilter(*row) for row in rows))
    program = _SockFprog(len(rows), filters)
    return int(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0)) == 0


# --------------------------------------------------------------------------- audit hook
def _disarm_posixsubprocess() -> None:
    """``_posixsubprocess.fork_exec`` raises no audit event, so replace it before any code can reach it.

    Importing it afresh is then refused by the hook ("import" event), so the original cannot come back.
    """
    import _posixsubprocess

    def fork_exec(*args: object) -> None:
        raise PermissionError("sandbox: starting processes is not allowed (_posixsubprocess.fork_exec)")

    _posixsubprocess.fork_exec = fork_exec  # type: ignore[assignment]


def make_audit_hook(
    workdir: str, pid: int, observer: Callable[[str], None] | None = None
) -> Callable[[str, tuple[Any, ...]], None]:
    """The PEP 578 hook: raise PermissionError, with a message saying what is not allowed, on a forbidden event
    (first telling ``observer`` that message, if one is given)."""
    readable = readable_roots(workdir)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        reason = _refusal(event, args, workdir, pid, readable)
        if reason:
            message = f"sandbox: {reason} is not allowed ({event})"
            if observer is not None:
                observer(message)
            raise PermissionError(message)

    return hook


def _refusal(event: str, args: tuple[Any, ...], workdir: str, pid: int, readable: list[str]) -> str | None:
    if event in _SPAWN_EVENTS:
        return "starting processes"
    if event in _OTHER_EVENTS:
        return _OTHER_EVENTS[event]
    if event.startswith("socket."):
        unix = event == "socket.__new__" and len(args) > 1 and args[1] == _AF_UNIX
        return None if unix else "network access"
    if event.startswith("ctypes."):
        return "ctypes (foreign function calls)"
    if event == "import" and args and args[0] == "_posixsubprocess":
        return "starting processes"
    if event == "open" and args:
        return _open_refusal(args, workdir, pid, readable)
    if event in _PATH_EVENTS:
        paths = [args[i] for i in _PATH_EVENTS[event] if i < len(args)]
        return None if all(_inside(p, workdir) for p in paths) else "changing files outside the work directory"
    return None


def _open_refusal(args: tuple[Any, ...], workdir: str, pid: int, readable: list[str]) -> str | None:
    path, flags = args[0], args[2] if len(args) > 2 else 0
    if isinstance(path, int):
        return None
    real = os.path.realpath(os.fsdecode(path))
    parts = real.split(os.sep)
    if len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and int(parts[2]) != pid:
        return "reading other processes' /proc entries"
    if isinstance(flags, int) and flags & _WRITE_FLAGS and not _beneath(real, workdir) and real != os.devnull:
        return "writing files outside the work directory"
    if not any(_beneath(real, root) for root in readable) and not _beneath(real, f"/proc/{pid}"):
        return "reading files outside the work directory and the Python installation"
    return None


def _inside(path: object, workdir: str) -> bool:
    if isinstance(path, int):
        return True  # an already-open descriptor
    return _beneath(os.path.realpath(os.fsdecode(path)), workdir)  # type: ignore[arg-type]


def _beneath(real: str, root: str) -> bool:
    """``real`` (a resolved path) is ``root`` or inside it; every open runs this, so no further syscalls."""
    return real == root or real.startswith(root + os.sep)
