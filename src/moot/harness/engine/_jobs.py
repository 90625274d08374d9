"""One job = one item x arm: what it needs, what it returns, and how it is computed.

A job is a plain, picklable value (the item, the arm, the models, the seed)
and its outcome is one result row plus the calls it made, so the same
function computes a row in the driver's event loop (local executor) or on a
Ray worker (ray executor). Jobs never touch the results file: whoever runs
them hands outcomes back to the runner, which alone writes rows.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot._redact import redact
from moot.errors import ConfigError
from moot.harness.engine._calls import ClientFactory
from moot.harness.engine._context import RowContext
from moot.harness.engine._results import ResultRow
from moot.harness.suites._items import Item, ScoreContext
from moot.models import Meter
from moot.roles import RoleModels
from moot.sandbox import SandboxRunner

if TYPE_CHECKING:
    from moot.harness.arms._arm import Arm

__all__ = ["Job", "RowOutcome", "compute_row"]


@dataclass
class Job:
    """Everything needed to compute one row, and nothing tied to a process (no clients, no open files)."""

    suite: str
    item: Item
    arm: Arm
    label: str
    key: str
    models: RoleModels
    labels: dict[str, str]
    seed: int = 0

    @property
    def name(self) -> str:
        return f"{self.item.id} × {self.label}"

    def blank_row(self, **fields: Any) -> ResultRow:
        """This job's row with its identity filled in (suite, item, arm, settings, models) and ``fields`` set."""
        return ResultRow(
            suite=self.suite, item=self.item.id, arm_key=self.key, arm=self.label, settings=dict(self.arm.settings),
            models=self.labels, **fields,
        )  # fmt: skip


@dataclass
class RowOutcome:
    """A computed row and the calls behind it; ``fatal`` is a configuration error that must stop the comparison."""

    row: ResultRow
    meter: Meter = field(default_factory=Meter)
    """The arm's and the scorer's calls together (the comparison's running total)."""
    fatal: str | None = None


async def compute_row(job: Job, clients: ClientFactory, sandbox: SandboxRunner, trace_dir: Path | None) -> RowOutcome:
    """Solve and score one item with one arm; a failure of this row becomes an error row, never an exception."""
    meter, scoring = Meter(), Meter()
    ctx = RowContext(job.models, clients, meter, seed=job.seed, sandbox=sandbox, trace_dir=trace_dir)
    row = job.blank_row()
    fatal = None
    start, seconds = time.perf_counter(), 0.0
    try:
        attempt = await job.arm.solve(job.item, ctx)
        seconds = time.perf_counter() - start  # the arm's time: scoring is not part of its cost
        score_ctx = RowContext(job.models, clients, scoring, seed=job.seed, sandbox=sandbox)
        score = await job.item.scorer.score(job.item, attempt.answer, score_ctx)
        metrics = dict(attempt.metrics)
        if attempt.candidates and job.item.scorer.cheap:
            metrics["oracle"] = await _oracle(job.item, attempt.candidates, score.value, score_ctx)
        if metrics.get("final_majority") and job.item.scorer.cheap:  # did the ruling overturn a right majority?
            majority = await job.item.scorer.score(job.item, metrics["final_majority"], score_ctx)
            metrics["overturned_majority"] = majority.value > score.value
        row = row.model_copy(update={
            "answer": attempt.answer, "score": score.value, "score_detail": score.detail, "rounds": attempt.rounds,
            "stop_reason": attempt.stop_reason, "parse_failures": attempt.parse_failures,
            "partial": attempt.partial, "metrics": metrics,
        })  # fmt: skip
    except ConfigError as exc:
        fatal = str(exc)
    except Exception as exc:  # one row's failure must not sink the comparison; it is retried next run
        detail = "".join(traceback.format_exception_only(exc)).strip()
        row = row.model_copy(update={"status": "error", "error": (redact(detail) or "")[:2000]})
    seconds = seconds or time.perf_counter() - start
    row = row.model_copy(update=_usage(meter, scoring, seconds, ctx.trace_ids))
    return RowOutcome(row, meter + scoring, fatal)


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
    }


async def _oracle(item: Item, candidates: list[str], final: float, ctx: ScoreContext) -> dict[str, Any]:
    """Was a better answer proposed along the way (and then voted out)? Cheap scorers only."""
    distinct = list(dict.fromkeys(c for c in candidates if c))
    scores = [(await item.scorer.score(item, c, ctx)).value for c in distinct]
    best = max(scores, default=0.0)
    return {"candidates": len(distinct), "best": best, "gap": best > final}
