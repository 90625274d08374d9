"""One job = one item x arm: what it needs, what it returns, and how it is computed.

A job is a plain, picklable value (the item, the arm, the models, the seed)
and its outcome is one result row plus the calls it made, so the same
function computes a row in the driver's event loop (local executor) or on a
Ray worker (ray executor). Jobs never touch the results file: whoever runs
them hands outcomes back to the runner, which alone writes rows.
"""

from __future__ import annotations

import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot._redact import redact
from moot.errors import ConfigError
from moot.harness.arms._context import RowContext
from moot.harness.jobs._calls import CacheMissError, ClientFactory
from moot.harness.jobs._provenance import code_version, machine
from moot.harness.jobs._results import ResultRow
from moot.harness.suites._items import Item, ScoreContext
from moot.models import Meter
from moot.roles import RoleModels
from moot.sandbox import SandboxRunner

if TYPE_CHECKING:
    from moot.harness.arms._arm import Arm, Attempt

__all__ = ["Job", "RowOutcome", "compute_row", "compute_traced"]


@dataclass
class Job:
    """Everything needed to compute one row, and nothing tied to a process (no clients, no open files)."""

    suite: str
    item: Item
    arm: Arm
    label: str
    key: str
    role_models: RoleModels
    model_labels: dict[str, str]
    """Each model role's spec as the rows name it (``ResultRow.models``); ``label`` is the arm's."""
    seed: int = 0

    @property
    def name(self) -> str:
        return f"{self.item.id} × {self.label}"

    def blank_row(self, **fields: Any) -> ResultRow:
        """This job's row with its identity filled in (suite, item, arm, settings, models) and ``fields`` set."""
        return ResultRow(
            suite=self.suite, item=self.item.id, arm_key=self.key, arm=self.label, settings=dict(self.arm.settings),
            models=self.model_labels, **fields,
        )  # fmt: skip


@dataclass
class RowOutcome:
    """A computed row and the calls behind it; ``fatal`` is a configuration error that must stop the comparison."""

    row: ResultRow
    meter: Meter = field(default_factory=Meter)
    """The arm's and the scorer's calls together (the comparison's running total)."""
    fatal: str | None = None
    missed: bool = False
    """A cache-only row stopped by a call the cache lacked (:class:`CacheMissError`): not recorded."""


async def compute_row(job: Job, clients: ClientFactory, sandbox: SandboxRunner, trace_dir: Path | None) -> RowOutcome:
    """Solve and score one item with one arm; a failure of this row becomes an error row, never an exception."""
    meter, scoring = Meter(), Meter()
    ctx = RowContext(job.role_models, clients, meter, seed=job.seed, sandbox=sandbox, trace_dir=trace_dir)
    row = job.blank_row()
    fatal, missed = None, False
    start, seconds = time.perf_counter(), 0.0
    try:
        attempt = await job.arm.solve(job.item, ctx)
        seconds = time.perf_counter() - start  # the arm's time: scoring is not part of its cost
        score_ctx = RowContext(job.role_models, clients, scoring, seed=job.seed, sandbox=sandbox)
        score = await job.item.scorer.score(job.item, attempt.answer, score_ctx)
        metrics = dict(attempt.metrics)
        if job.item.scorer.cheap:
            metrics |= await _counterfactuals(job.item, attempt, score.value, score_ctx)
        row = row.model_copy(update={
            "answer": attempt.answer, "score": score.value, "score_detail": score.detail, "rounds": attempt.rounds,
            "stop_reason": attempt.stop_reason, "parse_failures": attempt.parse_failures,
            "partial": attempt.partial, "metrics": metrics,
        })  # fmt: skip
    except ConfigError as exc:
        fatal = str(exc)
    except CacheMissError as exc:
        missed = True
        row = row.model_copy(update={"status": "error", "error": str(exc)})
    except Exception as exc:  # one row's failure must not sink the comparison; it is retried next run
        detail = "".join(traceback.format_exception_only(exc)).strip()
        row = row.model_copy(update={"status": "error", "error": (redact(detail) or "")[:2000]})
    seconds = seconds or time.perf_counter() - start
    row = row.model_copy(update=_usage(meter, scoring, seconds, ctx.trace_ids))
    return RowOutcome(row, meter + scoring, fatal, missed)


async def compute_traced(job: Job, clients: ClientFactory, sandbox: SandboxRunner) -> tuple[RowOutcome, dict[str, str]]:
    """:func:`compute_row` with its runs traced to a scratch folder, returned as text (file name -> JSONL): the
    driver appends a row's traces to the comparison's one trace file in one piece, once the row is done."""
    with tempfile.TemporaryDirectory(prefix="moot-traces-") as scratch:
        outcome = await compute_row(job, clients, sandbox, Path(scratch))
        traces = {path.name: path.read_text(encoding="utf-8") for path in Path(scratch).glob("*.jsonl")}
    return outcome, traces


def _usage(meter: Meter, scoring: Meter, seconds: float, traces: list[str]) -> dict[str, Any]:
    return {
        "prompt_tokens": meter.prompt_tokens,
        "completion_tokens": meter.completion_tokens,
        "billed_prompt_tokens": meter.billed_prompt_tokens,
        "billed_completion_tokens": meter.billed_completion_tokens,
        "model_calls": meter.calls,
        "billed_calls": meter.billed_calls,
        "scoring_calls": scoring.calls,
        "scoring_billed_calls": scoring.billed_calls,
        "cost_usd": meter.cost,
        "wall_seconds": round(seconds, 3),
        "trace_ids": traces,
        "code_version": code_version(),
        "machine": machine(),
    }


class _Scores:
    """Scores of answers to one item, each distinct answer scored once (code answers cost a sandbox run)."""

    def __init__(self, item: Item, ctx: ScoreContext, known: dict[str, float]) -> None:
        self.item, self.ctx, self.known = item, ctx, known

    async def __call__(self, answer: str) -> float:
        if answer not in self.known:
            self.known[answer] = (await self.item.scorer.score(self.item, answer, self.ctx)).value
        return self.known[answer]


async def _counterfactuals(item: Item, attempt: Attempt, final: float, ctx: ScoreContext) -> dict[str, Any]:
    """What the row's other answers would have scored, with no model call (cheap scorers only).

    ``oracle``: was a better answer proposed along the way and then lost? ``first_round_score``: the answer
    the arm held after round 1 (a debate's first-round vote, a reflection's first draft). ``position_scores``:
    every position per round. ``overturned_majority``: did the ruling lose a right final majority?
    """
    score = _Scores(item, ctx, {attempt.answer: final})
    found: dict[str, Any] = {}
    if attempt.candidates:
        distinct = list(dict.fromkeys(c for c in attempt.candidates if c))
        best = max([await score(c) for c in distinct], default=0.0)
        found["oracle"] = {"candidates": len(distinct), "best": best, "gap": best > final}
    if attempt.first_round is not None:
        found["first_round_score"] = await score(attempt.first_round)
    if attempt.round_answers:
        found["position_scores"] = [[await score(a) for a in answers] for answers in attempt.round_answers]
    if attempt.metrics.get("final_majority"):
        found["overturned_majority"] = await score(attempt.metrics["final_majority"]) > final
    return found
