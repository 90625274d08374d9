"""Run every item x arm, resumably: the engine behind ``moot compare``.

Rows run item-major (all arms on item 1, then item 2, ...) so an interrupted
comparison still holds paired data; at most ``concurrency`` x endpoints rows
are in flight, and each endpoint takes at most ``concurrency`` calls at once.
Each row is written as it finishes; a re-run computes only rows that are
missing or failed. ``rerun`` recomputes every row through the cache (a
replay) and keeps each stored row the replay reproduced, so its billed
tokens and wall time stay those of the run that paid for it. With
``compute_matched``, self-consistency waits for the debate rows and takes
k = the debate arm's mean calls per item.

Faults are classified: bad configuration (ConfigError, an unavailable model)
aborts at once; anything else an arm raises fails that row only (recorded
with its error, retried next run); an interrupt stops the run, keeping every
finished row.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from moot.errors import ConfigError
from moot.harness._arm import Arm, build_arm
from moot.harness._calls import BaseClientFactory, CallCache, ClientFactory, EndpointLimits, Meter, endpoint_of
from moot.harness._context import MODEL_ROLES, RowContext
from moot.harness._items import Item, ScoreContext, Suite
from moot.harness._results import ResultRow, ResultStore, arm_key
from moot.harness._sampling import SelfConsistency
from moot.harness._stats import matched_k
from moot.harness._suites import load_suite
from moot.scenario import RoleModels, parse_model_options
from moot.tools import SandboxRunner, run_tests

__all__ = [
    "ArmRun",
    "CompareOptions",
    "Comparison",
    "ComparisonRun",
    "ProgressSink",
    "prepare_comparison",
    "run_comparison",
]

RESULTS_FILE = "results.sqlite3"


class CompareOptions(BaseModel):
    """Everything ``moot compare`` takes; the same command line always means the same rows."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    arms: list[str] = Field(min_length=1)
    models: list[str] = []
    """``SPEC`` for every role and/or ``ROLE=SPEC`` (roles: generator, critic, expert, expert_N, arbiter, judge)."""
    out: Path
    concurrency: int = Field(default=1, ge=1, le=64)
    """Calls in flight per model endpoint."""
    k: int | None = Field(default=None, ge=1, le=64)
    """Self-consistency samples (overrides the arm's own k)."""
    compute_matched: bool = False
    cache: Path | None = None
    """Cache directory; default ``OUT/cache``."""
    use_cache: bool = True
    rerun: bool = False
    """Recompute finished rows too (through the cache: a replay)."""
    report_only: bool = False
    """Compute nothing: report the rows already finished (e.g. while another process is still running)."""
    seed: int = 0


@dataclass
class ArmRun:
    label: str
    arm: Arm
    key: str = ""
    matched: bool = False


@dataclass
class Comparison:
    """What a comparison produced: its rows (this suite slice x these arms) and what this run did."""

    options: CompareOptions
    suite: Suite
    arms: list[ArmRun]
    models: dict[str, str]
    rows: list[ResultRow] = field(default_factory=list)
    computed: int = 0
    reused: int = 0
    replayed: int = 0
    """Of the computed rows: recomputed (``rerun``) entirely from the cache, matching the stored row."""
    failed: int = 0
    meter: Meter = field(default_factory=Meter)
    """Calls made by this run (arms and scoring): billed_calls == 0 on a replay."""
    matched_k: int | None = None

    @property
    def results_path(self) -> Path:
        return self.options.out / RESULTS_FILE


class ProgressSink(Protocol):
    def start(self, phase: str, total: int, done: int) -> None: ...

    def advance(self, row: ResultRow) -> None: ...


class _Quiet:
    def start(self, phase: str, total: int, done: int) -> None:
        pass

    def advance(self, row: ResultRow) -> None:
        pass


def _model_labels(models: RoleModels) -> dict[str, str]:
    labels = {"base": str(models.base.model_copy(update={"provider": models.base.effective_provider}))}
    labels.update({role: str(spec) for role, spec in sorted(models.overrides.items())})
    return labels


def _arms(options: CompareOptions, suite: Suite) -> list[ArmRun]:
    runs: list[ArmRun] = []
    for spec in options.arms:
        arm = build_arm(spec)
        if isinstance(arm, SelfConsistency) and options.k is not None:
            arm = SelfConsistency(None, **{**arm.settings, "k": options.k})
        arm.check(suite)
        runs.append(ArmRun(spec.strip(), arm))
    labels = [r.label for r in runs]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"each arm may appear once; got {', '.join(labels)}")
    if options.compute_matched:
        if not any(r.arm.name == "debate" for r in runs) or not any(isinstance(r.arm, SelfConsistency) for r in runs):
            raise ConfigError(
                "--compute-matched sizes self-consistency's k to the debate arm's calls: "
                "list both arms, e.g. --arms debate,self-consistency"
            )
        if sum(r.arm.name == "debate" for r in runs) > 1:
            raise ConfigError("--compute-matched needs exactly one debate arm to match")
        for r in runs:
            r.matched = isinstance(r.arm, SelfConsistency)
    return runs


class ComparisonRun:
    """A validated comparison, ready to run: every bad input has been refused before this exists."""

    def __init__(
        self, options: CompareOptions, *, progress: ProgressSink, base: BaseClientFactory | None, sandbox: SandboxRunner
    ) -> None:
        self.options = options
        self.suite = load_suite(options.suite)
        self.models = parse_model_options(options.models, MODEL_ROLES)
        self.labels = _model_labels(self.models)
        self.arms = _arms(options, self.suite)
        self.progress = progress
        self.sandbox = sandbox
        self.store = ResultStore(options.out / RESULTS_FILE)
        self.cache = CallCache(options.cache or options.out / "cache") if options.use_cache else None
        self.clients = ClientFactory(EndpointLimits(options.concurrency), self.cache, base)
        self.result = Comparison(options, self.suite, self.arms, self.labels)
        specs = [self.models.base, *(self.models.base.resolve(s) for s in self.models.overrides.values())]
        self.workers = options.concurrency * len({endpoint_of(s) for s in specs})

    def close(self) -> None:
        self.store.close()
        if self.cache is not None:
            self.cache.close()

    def _key(self, run: ArmRun) -> str:
        return arm_key(run.arm.name, run.arm.settings, self.labels)

    async def run(self) -> Comparison:
        first = [r for r in self.arms if not r.matched]
        await self._phase("arms" if len(first) == len(self.arms) else "phase 1", first)
        matched = [r for r in self.arms if r.matched]
        if matched and not (self.options.report_only and not self._debate_calls()):
            k = self._matched_k()
            self.result.matched_k = k
            for r in matched:
                r.arm = SelfConsistency(None, **{**r.arm.settings, "k": k})
            await self._phase(f"self-consistency, k={k} (matched)", matched)
        self.result.rows = self._rows()
        return self.result

    def _debate_calls(self) -> list[int]:
        debate = next(r for r in self.arms if r.arm.name == "debate")
        ids = [i.id for i in self.suite.items]
        return [row.model_calls for row in self.store.rows(self.suite.key, [debate.key], ids) if row.status == "done"]

    def _matched_k(self) -> int:
        calls = self._debate_calls()
        if not calls:
            raise ConfigError("--compute-matched: the debate arm finished no item, so there is no call count to match")
        return matched_k(calls)

    def _rows(self) -> list[ResultRow]:
        labels = {r.key: r.label for r in self.arms}
        rows = self.store.rows(self.suite.key, labels, [i.id for i in self.suite.items])
        for row in rows:
            row.arm = labels[row.arm_key]
        return rows

    async def _phase(self, phase: str, runs: Sequence[ArmRun]) -> None:
        todo: list[tuple[Item, ArmRun]] = []
        for run in runs:
            run.key = self._key(run)
        done = {run.key: self.store.finished(self.suite.key, run.key) for run in runs}
        for item in self.suite.items:
            for run in runs:
                if not self.options.report_only and (self.options.rerun or item.id not in done[run.key]):
                    todo.append((item, run))
        total = len(self.suite.items) * len(runs)
        finished = sum(item.id in done[run.key] for item in self.suite.items for run in runs)
        self.result.reused += finished - sum(item.id in done[run.key] for item, run in todo)
        self.progress.start(phase, total, total - len(todo))
        queue: asyncio.Queue[tuple[Item, ArmRun]] = asyncio.Queue()
        for job in todo:
            queue.put_nowait(job)
        workers = [asyncio.create_task(self._worker(queue)) for _ in range(min(self.workers, len(todo)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()

    async def _worker(self, queue: asyncio.Queue[tuple[Item, ArmRun]]) -> None:
        while not queue.empty():
            item, run = queue.get_nowait()
            row = await self._row(item, run)
            if self._replays(row):
                self.result.replayed += 1  # the stored row keeps what the paid run measured (billed tokens, time)
            else:
                self.store.put(row)
            self.result.computed += row.status == "done"
            self.result.failed += row.status == "error"
            self.progress.advance(row)

    def _replays(self, row: ResultRow) -> bool:
        """A rerun row that came wholly from the cache and agrees with the stored one."""
        if not self.options.rerun or row.status != "done" or row.billed_calls or row.scoring_billed_calls:
            return False
        old = self.store.get(row.suite, row.item, row.arm_key)
        return old is not None and old.status == "done" and (old.answer, old.score) == (row.answer, row.score)

    async def _row(self, item: Item, run: ArmRun) -> ResultRow:
        meter, scoring = Meter(), Meter()
        trace_dir = self.options.out / "traces"
        ctx = RowContext(
            self.models, self.clients, meter, seed=self.options.seed, sandbox=self.sandbox, trace_dir=trace_dir
        )
        row = ResultRow(
            suite=self.suite.key,
            item=item.id,
            arm_key=run.key,
            arm=run.label,
            settings=dict(run.arm.settings),
            models=self.labels,
        )
        start, seconds = time.perf_counter(), 0.0
        try:
            attempt = await run.arm.solve(item, ctx)
            seconds = time.perf_counter() - start  # the arm's time: scoring is not part of its cost
            score_ctx = RowContext(self.models, self.clients, scoring, seed=self.options.seed, sandbox=self.sandbox)
            score = await item.scorer.score(item, attempt.answer, score_ctx)
            metrics = dict(attempt.metrics)
            if attempt.candidates and item.scorer.cheap:
                metrics["oracle"] = await _oracle(item, attempt.candidates, score.value, score_ctx)
            row = row.model_copy(update={
                "answer": attempt.answer, "score": score.value, "score_detail": score.detail, "rounds": attempt.rounds,
                "stop_reason": attempt.stop_reason, "parse_failures": attempt.parse_failures,
                "partial": attempt.partial, "metrics": metrics,
            })  # fmt: skip
        except ConfigError:
            raise
        except Exception as exc:  # one row's failure must not sink the comparison; it is retried next run
            detail = "".join(traceback.format_exception_only(exc)).strip()
            row = row.model_copy(update={"status": "error", "error": detail[:2000]})
            seconds = seconds or time.perf_counter() - start
        row = row.model_copy(update=_usage(meter, scoring, seconds, ctx.trace_ids))
        _accumulate(self.result.meter, meter)
        _accumulate(self.result.meter, scoring)
        return row


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
        "wall_seconds": round(seconds, 3),
        "trace_ids": traces,
    }


def _accumulate(total: Meter, part: Meter) -> None:
    for name in (
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "billed_calls",
        "billed_prompt_tokens",
        "billed_completion_tokens",
    ):
        setattr(total, name, getattr(total, name) + getattr(part, name))


async def _oracle(item: Item, candidates: list[str], final: float, ctx: ScoreContext) -> dict[str, Any]:
    """Was a better answer proposed along the way (and then voted out)? Cheap scorers only."""
    distinct = list(dict.fromkeys(c for c in candidates if c))
    scores = [(await item.scorer.score(item, c, ctx)).value for c in distinct]
    best = max(scores, default=0.0)
    return {"candidates": len(distinct), "best": best, "gap": best > final}


def prepare_comparison(
    options: CompareOptions,
    *,
    progress: ProgressSink | None = None,
    clients: BaseClientFactory | None = None,
    sandbox: SandboxRunner = run_tests,
) -> ComparisonRun:
    """Validate everything (suite, arms, models, files) and open the results file; ConfigError on bad input."""
    return ComparisonRun(options, progress=progress or _Quiet(), base=clients, sandbox=sandbox)


async def run_comparison(
    options: CompareOptions,
    *,
    progress: ProgressSink | None = None,
    clients: BaseClientFactory | None = None,
    sandbox: SandboxRunner = run_tests,
) -> Comparison:
    """Run (or resume, or replay) a comparison; see the module docstring. ``clients`` replaces ``spec.client``."""
    runner = prepare_comparison(options, progress=progress, clients=clients, sandbox=sandbox)
    try:
        return await runner.run()
    finally:
        runner.close()
