"""The ``reasoning-gym:<task>`` suites: seeded procedural generators, scored by the package's own scorers.

Items are stable across sizes (item i of seed s is the same whatever n is),
so the suite key leaves ``n`` out and a larger run reuses a smaller one's rows.
Extra parameters are passed to the generator's config (``?min_terms=3``), except ``choices=Yes,No``: a closed answer
set every arm is held to (as a JSONL item's ``choices``), for tasks whose answers come from one (syllogism's Yes/No,
ransom_note's True/False); every generated answer must be one of them. Its former spelling ``options=`` still
loads, warning; the suite's key keeps that spelling (rows are stored under it).

A model's answer is outside input, and reasoning-gym's scorers parse it with third-party parsers that evaluate it
(sympy's ``parse_expr`` in countdown, ``eval`` in n_queens; ``"-" * 100000 + "1"`` exhausts memory there). So an
answer longer than ``MAX_ANSWER_CHARS`` is refused before any scorer sees it, and ``score_answer`` runs in a process
of its own per answer, confined exactly as model-written code is (``_score_worker.py``: the sandbox's layers, its
memory and CPU bounded by ``SCORE_MEMORY_BYTES`` and ``SCORE_SECONDS``): whatever the answer does to the parser,
moot's own process gets a number or a refusal, and a refused answer scores 0 with a detail that says why. Where this
machine cannot apply the sandbox's floor of layers (see ``moot.sandbox.isolation_floor``), scoring is refused in one
line unless ``GymScore(weak_isolation=True)`` accepts the weaker confinement, as ``SandboxLimits`` does for code.
"""

from __future__ import annotations

import asyncio
import re
import select
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot._extras import require
from moot.boundary import DataBounds, load_json, one_line
from moot.errors import ConfigError
from moot.harness.suites._items import Item, Score, ScoreContext, Suite
from moot.harness.suites._score_worker import (
    REPLY_BYTES,
    SCORE_MEMORY_BYTES,
    SCORE_SECONDS,
    GymEntry,
    Request,
)
from moot.harness.suites._scorers import ChoiceMatch
from moot.harness.suites._selectors import SpecParts, int_param, key_query, renamed_choices
from moot.roles import NUMBER
from moot.sandbox import isolation_floor

__all__ = [
    "MAX_ANSWER_CHARS",
    "SCORE_MEMORY_BYTES",
    "SCORE_SECONDS",
    "GymEntry",
    "GymScore",
    "bounded_score",
    "gym_suite",
]

MAX_ANSWER_CHARS = 10_000
"""The longest answer a reasoning-gym scorer is shown; a short-answer task's answer is a line, not a page."""
"""What the ``choices`` parameter was called, and is still called in the suite keys rows are stored under."""
WORKER_START_SECONDS = 30
"""Wall time the scoring child may take to start (it imports reasoning-gym) on top of a call's own bound."""
MAX_REPLY_BYTES = REPLY_BYTES
"""The longest reply line read from the scoring child."""
_MOOT_ROOT = str(Path(__file__).resolve().parents[3])
"""The directory moot is imported from, the scoring child's only import path beyond the Python installation."""
_WORKER_CODE = "import sys; sys.path.insert(0, sys.argv[1]); from moot.harness.suites._score_worker import main; main()"
_WORKER_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1"}
"""The scoring child's whole environment: none of moot's (API keys), one BLAS thread (it forks for each answer)."""


@dataclass(frozen=True)
class GymScore:
    """reasoning-gym's ``score_answer`` for one entry (some tasks give partial credit, e.g. knights_knaves)."""

    entry: GymEntry
    expected: Any
    """The entry's answer as generated, for the detail of a score below 1 (moot's process never parses it)."""
    cheap: bool = True
    weak_isolation: bool = False
    """Score even where this machine cannot confine the scorer to the sandbox's floor of layers (see the module)."""

    async def score(self, item: Item, answer: str, ctx: ScoreContext) -> Score:
        value, refused = await asyncio.to_thread(bounded_score, self.entry, answer, weak_isolation=self.weak_isolation)
        if refused:
            return Score(0.0, refused)
        value = min(1.0, max(0.0, value)) if value == value else 0.0  # NaN scores 0
        return Score(value, "" if value == 1.0 else f"expected {self.expected!r}")


def bounded_score(entry: GymEntry, answer: str, *, weak_isolation: bool = False) -> tuple[float, str]:
    """reasoning-gym's ``score_answer`` for the entry ``entry`` names, confined, with bounded input, time and
    memory: (score, "") or (0, why not). Raises ConfigError, before the answer is scored, where the confinement
    falls short of the sandbox's floor and ``weak_isolation`` does not accept that."""
    if len(answer) > MAX_ANSWER_CHARS:
        return 0.0, f"answer refused: {len(answer):,} characters; at most {MAX_ANSWER_CHARS:,} are scored"
    request = Request(entry, answer, SCORE_SECONDS, SCORE_MEMORY_BYTES, () if weak_isolation else isolation_floor())
    with _WORKER_LOCK:
        reply = _ask_worker(request.to_json())
    if "unconfined" in reply:
        raise ConfigError(_unconfined(reply))
    if "refused" in reply:
        return 0.0, f"answer refused: {one_line(str(reply['refused']), 300)}"
    if "error" in reply:
        return 0.0, f"answer refused by the scorer: {one_line(str(reply['error']), 300)}"
    value = reply.get("score")
    return (float(value), "") if isinstance(value, int | float) else (0.0, "the scorer gave no number")


def _unconfined(reply: dict[str, Any]) -> str:
    missing = " and no ".join(map(str, reply.get("unconfined") or []))
    isolation = ", ".join(map(str, reply.get("isolation") or [])) or "none"
    return one_line(
        f"this machine cannot confine reasoning-gym's scorer, which evaluates model answers: no {missing} (layers "
        f"in force: {isolation}); run on Linux 5.13 or later (as root: with mount namespaces allowed and a Python "
        "installation other users may read), or accept the weaker confinement with GymScore(weak_isolation=True)",
        600,
    )


_WORKER_LOCK = threading.Lock()
_worker: subprocess.Popen[bytes] | None = None


def _ask_worker(request: bytes) -> dict[str, Any]:
    """One request to the scoring child (started on first use, restarted after it died or was killed)."""
    global _worker
    if _worker is None or _worker.poll() is not None:
        command = [sys.executable, "-I", "-B", "-c", _WORKER_CODE, _MOOT_ROOT]
        _worker = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_WORKER_ENV,
            cwd="/",
        )
    worker, stdout = _worker, _worker.stdout
    assert worker.stdin is not None and stdout is not None
    try:
        worker.stdin.write(len(request).to_bytes(4, "big") + request)
        worker.stdin.flush()
        ready, _, _ = select.select([stdout], [], [], SCORE_SECONDS * 2 + WORKER_START_SECONDS)
        line = stdout.readline(MAX_REPLY_BYTES) if ready else b""
    except OSError:
        line = b""
    if not line.endswith(b"\n"):
        worker.kill()
        worker.wait()
        return {"error": f"no score within {SCORE_SECONDS} s of CPU and {SCORE_MEMORY_BYTES >> 20} MB of memory"}
    try:
        reply = load_json(line, "the scorer's reply", DataBounds(max_bytes=MAX_REPLY_BYTES, max_depth=2))
    except ConfigError as exc:  # out of step with the child: start a fresh one next time
        worker.kill()
        worker.wait()
        return {"error": str(exc)}
    return reply if isinstance(reply, dict) else {"error": "the scorer's reply is not a mapping"}


def _import() -> Any:
    require("suites", "a reasoning-gym suite")
    import reasoning_gym

    return reasoning_gym


def _config_value(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


def _is_number(answer: object) -> bool:
    """Whether a generated answer is a plain number. A task whose every answer is one (basic_arithmetic,
    gsm_symbolic) is a numeric task: its answers are held to ``NUMBER``, the format its scorer compares."""
    return isinstance(answer, str) and re.fullmatch(NUMBER, answer.strip()) is not None


def _closed_set(given: str | None, label: str) -> tuple[str, ...]:
    """``choices=Yes,No``: the closed answer set, at least two distinct choices."""
    if given is None:
        return ()
    closed = tuple(dict.fromkeys(o.strip() for o in given.split(",") if o.strip()))
    if len(closed) < 2:
        raise ConfigError(
            f"suite {label!r}: choices needs at least two answers separated by commas, e.g. choices=Yes,No"
        )
    return closed


def _check_closed(dataset: Any, closed: tuple[str, ...], label: str) -> None:
    """Every generated answer must name one of ``closed``, or no arm could ever be right on that item."""
    for i, entry in enumerate(dataset):
        if ChoiceMatch(str(entry["answer"]), closed).named(str(entry["answer"])) is None:
            raise ConfigError(
                f"suite {label!r}: item {i}'s answer {str(entry['answer'])[:60]!r} is not one of the choices "
                f"{', '.join(closed)}; give the task's own answer set"
            )


def gym_suite(task: str, parts: SpecParts, label: str) -> Suite:
    gym = _import()
    n = int_param(parts, "n", 50, what=f"suite {label!r}", minimum=1)
    seed = int_param(parts, "seed", 1, what=f"suite {label!r}")
    params = renamed_choices(parts.params, label)
    closed = _closed_set(params.get("choices"), label)
    config = {k: _config_value(v) for k, v in sorted(params.items()) if k != "choices"}
    known = sorted(gym.factory.DATASETS)
    if task not in known:
        raise ConfigError(
            f"unknown reasoning-gym task {task!r}; e.g. gsm_symbolic, basic_arithmetic, knights_knaves "
            f"({len(known)} tasks: {', '.join(known)})"
        )
    try:
        dataset = gym.create_dataset(task, size=n, seed=seed, **config)
    except (TypeError, ValueError, AssertionError) as exc:
        raise ConfigError(f"suite {label!r}: reasoning-gym rejected the parameters: {exc}") from None
    query = key_query(params)
    key = f"reasoning-gym:{task}?seed={seed}" + (f"&{query}" if query else "")
    if closed:
        _check_closed(dataset, closed, label)
    pattern = NUMBER if not closed and all(_is_number(entry["answer"]) for entry in dataset) else None
    settings = tuple(config.items())
    items = [
        Item(
            id=f"{task}/{seed}/{i}",
            task=entry["question"],
            scorer=GymScore(GymEntry(task, n, seed, settings, i), entry["answer"]),
            reference=entry["answer"],
            choices=closed,
            answer_pattern=pattern,
        )
        for i, entry in enumerate(dataset)
    ]
    chosen = items[parts.slice] if parts.slice is not None else items
    if not chosen:
        raise ConfigError(f"suite {label!r} selects no items")
    return Suite(
        key=key,
        label=label,
        items=tuple(chosen),
        answer_format="short",
        description=f"reasoning-gym {task} (seed {seed}, {len(chosen)} items), scored by reasoning-gym",
    )
