"""The child process that runs reasoning-gym's ``score_answer`` on a model's answer, confined like model-written code.

Some of reasoning-gym's scorers evaluate the answer text (countdown and puzzle24 through sympy's ``parse_expr``,
n_queens and the matrix tasks through ``eval``), so an answer is code that runs wherever it is scored. Started by
``_gym.py`` and fed one request at a time on stdin (a 4-byte length, then the JSON of a :class:`Request`: plain
data, which names the generated entry rather than carrying it, so nothing is unpickled on either side), this process
is a fork server: it imports reasoning-gym once, builds each dataset a request names once (its generators are
seeded, so entry ``i`` is the entry moot's process scored against), then scores each answer in
a process forked for that answer alone, which confines itself with the sandbox's own layers
(:func:`moot.sandbox._confine.confine`: rlimits, namespaces, ``nobody``, Landlock, seccomp, the audit hook) in a
throwaway work directory before the answer is touched. So the answer cannot reach the network, start a process,
write outside that directory, read outside it and the Python installation, or exceed its memory and CPU; and since
the process ends with the answer, nothing one answer does (patching the scorer, writing to a descriptor) reaches
the next answer's score. The forked process answers on a pipe of its own; this process reads that reply bounded,
keeps only plain fields, and writes one JSON line on stdout per request: ``{"score": x}``, ``{"error": "..."}``,
``{"refused": "..."}`` (the answer tried something the confinement forbids, or ran out of memory, even if the
scorer swallowed the error) or ``{"unconfined": [...]}`` (a required layer could not be applied, so the answer
was never scored), each with ``"isolation"``: the layers that took effect.

What still holds for an answer that runs code inside the parser: it can lie about its own score (it runs in the
process that computes it), never about another answer's.
"""

from __future__ import annotations

import fcntl
import functools
import json
import math
import os
import resource
import select
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Any, NoReturn

SCORE_SECONDS = 10
"""CPU seconds one answer's scoring may use (RLIMIT_CPU of its process)."""
SCORE_MEMORY_BYTES = 512 * 1024 * 1024
"""Memory one answer's scoring may allocate beyond what the imported scorers already hold (RLIMIT_AS)."""
SCORE_DISK_MB = 16
"""What one answer's scoring may write, all files together (a tmpfs over its work directory, where allowed)."""
REPLY_BYTES = 4096
"""The longest reply read from a scoring process, and the longest this process writes."""
WALL_GRACE_SECONDS = 5
"""Wall-clock time a scoring process gets beyond its CPU seconds (it may sleep) before it is killed."""
MESSAGE_CHARS = 300
_MB = 1024 * 1024


@dataclass(frozen=True)
class GymEntry:
    """One generated entry, named as plain data: the task, the generator's settings, and the entry's index."""

    task: str
    size: int
    seed: int
    config: tuple[tuple[str, Any], ...]
    """The generator's config, from the suite spec's parameters (``?min_terms=3``): ints, floats, booleans and
    strings."""
    index: int


@dataclass(frozen=True)
class Request:
    """One answer to score, written by moot's own process: the entry, the answer, the bounds, and the confinement
    layers without which the answer must not be scored (empty where weak isolation is accepted)."""

    entry: GymEntry
    answer: str
    seconds: int = SCORE_SECONDS
    memory_bytes: int = SCORE_MEMORY_BYTES
    required: tuple[str, ...] = ()

    def to_json(self) -> bytes:
        return json.dumps(asdict(self)).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Request:
        """The request moot's process wrote (trusted: the answer inside is only ever a string here)."""
        fields = json.loads(data)
        entry = fields.pop("entry")
        config = tuple((str(key), value) for key, value in entry.pop("config"))
        return cls(GymEntry(**entry, config=config), **{**fields, "required": tuple(fields["required"])})


@functools.cache
def _dataset(task: str, size: int, seed: int, config: tuple[tuple[str, Any], ...]) -> Any:
    """The dataset an entry belongs to, built once per server (before any fork, so every answer shares it)."""
    import reasoning_gym

    return reasoning_gym.create_dataset(task, size=size, seed=seed, **dict(config))


def dataset_entry(entry: GymEntry) -> tuple[Any, Any]:
    """The dataset and the generated entry that ``entry`` names."""
    dataset = _dataset(entry.task, entry.size, entry.seed, entry.config)
    return dataset, dataset[entry.index]


# ------------------------------------------------------------------ the forked, confined process
def _mapped() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _only_descriptor(keep: int) -> int:
    """Leave the process only stdin/stdout/stderr on /dev/null and ``keep`` (moved to 3); return 3.

    The fork inherited the server's stdin (the next requests) and its reply pipe to moot: the answer must see
    neither, or it could read another request or write another answer's score.
    """
    os.dup2(keep, 3)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(4, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    return 3


class _Watch:
    """What the answer tried that its confinement refused, noted as it happens (the scorer may swallow the error)."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    def note(self, message: str) -> None:
        self.refused.append(message)

    def trace(self, frame: Any, event: str, arg: Any) -> Any:
        """A trace function that reports only exceptions: a MemoryError anywhere means the answer hit its limit."""
        frame.f_trace_lines = False
        if event == "exception" and isinstance(arg, tuple) and issubclass(arg[0], MemoryError) and not self.refused:
            self.refused.append("the answer exhausted the scorer's memory limit (MemoryError)")
        return self.trace


def _confine_self(request: Request, workdir: str, watch: _Watch) -> dict[str, Any]:
    """Confine this (forked) process; the header: the layers in force, and those required that are missing."""
    from moot.sandbox._confine import MB, confine

    os.environ.clear()  # the server's environment is already minimal; the answer gets none of it
    limits = {
        "cpu_seconds": request.seconds,
        "memory_mb": (_mapped() + request.memory_bytes) // MB,
        "file_size_mb": 1,
        "disk_mb": SCORE_DISK_MB,
    }
    isolation = confine(limits, workdir, watch.note)
    return {"isolation": isolation, "unconfined": [layer for layer in request.required if layer not in isolation]}


def _score_answer(request: Request, watch: _Watch) -> dict[str, Any]:
    """Run the scorer on the answer: the result line (everything the answer can forge)."""
    reply: dict[str, Any] = {}
    sys.settrace(watch.trace)
    try:
        dataset, entry = dataset_entry(request.entry)
        value = float(dataset.score_answer(request.answer, entry) or 0.0)
        reply["score"] = value if math.isfinite(value) else 0.0
    except MemoryError:
        watch.refused.append("the answer exhausted the scorer's memory limit (MemoryError)")
    except BaseException as exc:  # whatever the parser raised is this answer's refusal, not the worker's end
        reply["error"] = f"{type(exc).__name__}: {_message(exc)}"
    finally:
        sys.settrace(None)
    return {"refused": watch.refused[0][:MESSAGE_CHARS]} if watch.refused else reply


def _message(exc: BaseException) -> str:
    try:
        return str(exc)[:MESSAGE_CHARS]
    except Exception:  # an exception's own __str__ may raise
        return "<unprintable>"


def _send(fd: int, reply: dict[str, Any]) -> None:
    data = (json.dumps(reply, ensure_ascii=True) + "\n").encode()[:REPLY_BYTES]
    while data:
        data = data[os.write(fd, data) :]


def _scorer_process(request: Request, workdir: str, reply_fd: int) -> NoReturn:
    """The forked process's whole life: isolate and confine itself, and send the header line (before the answer
    has run, so what it says of the confinement is the truth); then, if confined enough, score the answer and
    send the result line. Exits without cleanup."""
    try:
        os.setsid()  # a session of its own, so one kill reaches anything it managed to start
        reply_fd = _only_descriptor(reply_fd)
        os.chdir(workdir)
        watch = _Watch()
        header = _confine_self(request, workdir, watch)
    except BaseException as exc:
        header = {"error": f"the scorer could not be confined: {type(exc).__name__}: {_message(exc)}"}
    try:
        _send(reply_fd, header)
        if not header.get("error") and not header.get("unconfined"):
            _send(reply_fd, _score_answer(request, watch))
    finally:
        os._exit(0)


# ------------------------------------------------------------------ the server (moot's own code, not confined)
def score(request: Request, root: str) -> dict[str, Any]:
    """Score one request in a process of its own under ``root``; its reply, reduced to plain fields."""
    from moot.sandbox._confine import remove_task_group
    from moot.sandbox._sandbox import remove_tree

    workdir = tempfile.mkdtemp(dir=root)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _scorer_process(request, workdir, write_fd)
    os.close(write_fd)
    try:
        raw = _read_reply(read_fd, time.monotonic() + request.seconds + WALL_GRACE_SECONDS)
    finally:
        os.close(read_fd)
        _end(pid)
        remove_task_group(pid)
        remove_tree(workdir)
    return _clean(raw, request)


def _read_reply(fd: int, deadline: float) -> bytes:
    """What the scoring process wrote before it closed its end, at most :data:`REPLY_BYTES`, by ``deadline``."""
    data = b""
    while len(data) <= REPLY_BYTES:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            break
        chunk = os.read(fd, REPLY_BYTES + 1 - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _end(pid: int) -> None:
    """Kill the scoring process's session (whatever it has become) and reap it."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass
    os.waitpid(pid, 0)


def _clean(raw: bytes, request: Request) -> dict[str, Any]:
    """The scoring process's two lines reduced to the fields moot reads, each of its type.

    The header (the confinement) is believed: it was written before the answer ran. The result line is the
    answer's to forge, so only a score, an error or a refusal is taken from it, never a word on the confinement.
    """
    head, _, rest = raw.partition(b"\n")
    header = _line(head, "the scoring process's header")
    if "error" in header:
        return {"error": str(header["error"])[:MESSAGE_CHARS]}
    kept: dict[str, Any] = {"isolation": _names(header.get("isolation"))}
    if _names(header.get("unconfined")):
        return {**kept, "unconfined": _names(header["unconfined"])}
    if not rest.endswith(b"\n"):
        bounds = f"{request.seconds} s of CPU and {request.memory_bytes >> 20} MB of memory"
        return {**kept, "error": f"no score within {bounds}"}
    result = _line(rest[:-1], "the scoring process's result")
    if isinstance(result.get("refused"), str):
        kept["refused"] = result["refused"][:MESSAGE_CHARS]
    elif isinstance(result.get("score"), int | float) and not isinstance(result["score"], bool):
        kept["score"] = float(result["score"])
    else:
        kept["error"] = str(result.get("error", "the scorer gave no number"))[:MESSAGE_CHARS]
    return kept


def _line(data: bytes, what: str) -> dict[str, Any]:
    """One JSON mapping, read bounded; ``{"error": why not}`` otherwise (a second line inside is not JSON)."""
    from moot.boundary import DataBounds, load_json
    from moot.errors import ConfigError

    try:
        value = load_json(data, what, DataBounds(max_bytes=REPLY_BYTES, max_depth=2))
    except ConfigError as exc:
        return {"error": str(exc)}
    return value if isinstance(value, dict) else {"error": f"{what} is not a mapping"}


def _names(value: object) -> list[str]:
    return [str(name)[:40] for name in value[:20] if isinstance(name, str)] if isinstance(value, list) else []


def _root() -> tuple[str, int]:
    """This server's directory for its scoring processes' work directories, locked while it lives.

    Named and locked like a sandbox run's root, so a server killed with moot is swept by the next sandbox run
    (see ``moot.sandbox._sandbox.sweep_leftovers``); enterable, not listable, by others (``nobody`` needs in).
    """
    from moot.sandbox._sandbox import ROOT_PREFIX

    root = os.path.realpath(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}score-"))
    held = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(held, fcntl.LOCK_EX)
    os.chmod(root, 0o711)
    return root, held


def main() -> None:
    """Serve requests until stdin closes."""
    import reasoning_gym  # noqa: F401 - imported before any confinement: its data files, sympy, numpy

    from moot.sandbox._sandbox import remove_tree

    sink = os.fdopen(os.dup(1), "w")  # replies go out on a private copy of stdout; what the scorer prints does not
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    source = sys.stdin.buffer
    root, held = _root()
    try:
        while header := source.read(4):
            request = Request.from_json(source.read(int.from_bytes(header, "big")))
            dataset_entry(request.entry)  # built here, unconfined and once, never inside an answer's process
            reply = score(request, root)
            sink.write(json.dumps(reply, ensure_ascii=True, allow_nan=False) + "\n")  # every field is clipped
            sink.flush()
    finally:
        remove_tree(root)
        os.close(held)


if __name__ == "__main__":
    main()
