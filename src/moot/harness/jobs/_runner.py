"""Run every item x arm, resumably: the job runner behind ``moot compare``.

Rows run item-major (all arms on item 1, then item 2, ...) so an interrupted
comparison still holds paired data; at most ``concurrency`` x endpoints rows
are in flight, and each endpoint takes at most ``concurrency`` calls at once.
Each row is written as it finishes; a re-run computes only rows that are
missing or failed. ``rerun`` recomputes every row through the cache (a
replay); a row the replay reproduced keeps the billed tokens, wall time and
origin of the computation that paid for it, and takes the metrics the current code
derives from the same answers; a recomputation that fails leaves the finished row
as it was. ``cache_only`` calls no model (a replay that cannot reach one). With
``compute_matched``, the sampling arms (self-consistency, best-of-k-tests) wait for the debate rows and take
k = the debate arm's mean calls per item.

Faults are classified: bad configuration (ConfigError, an unavailable model)
aborts at once; anything else an arm raises fails that row only (recorded
with its error, retried the next time); an interrupt stops the comparison,
keeping every finished row.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from moot._extras import require
from moot._renamed import former_keywords
from moot.boundary import one_line
from moot.errors import ConfigError
from moot.harness.arms._arm import Arm, canonical_spec, sized
from moot.harness.arms._context import RowContext
from moot.harness.arms._registry import build_arm, model_roles
from moot.harness.arms._sampling import matched_k
from moot.harness.jobs._calls import BaseClientFactory, CacheOnly, ClientFactory, EndpointLimits, endpoint_of
from moot.harness.jobs._compact import compact_folder
from moot.harness.jobs._executor import Executor, ExecutorName, LocalExecutor
from moot.harness.jobs._jobs import Job, RowOutcome
from moot.harness.jobs._provenance import code_version, model_identity
from moot.harness.jobs._results import Purpose, ResultRow, ResultStore, arm_key
from moot.harness.suites._items import Item, Suite
from moot.harness.suites._suites import load_suite
from moot.models import Meter, ModelSpec
from moot.roles import RoleModels, parse_model_options
from moot.sandbox import SandboxRunner, run_tests
from moot.tracing import TRACES_FILE, TraceArchive

__all__ = [
    "ArmProgressSink",
    "CompareRequest",
    "ComparedArm",
    "Comparison",
    "PreparedComparison",
    "ProgressSink",
    "check_tuned_on",
    "model_identities",
    "prepare_comparison",
    "run_comparison",
    "tuned_items",
]

RESULTS_FILE = "results.sqlite3"
_PAID = (
    "billed_prompt_tokens", "billed_completion_tokens", "billed_calls", "scoring_billed_calls", "cost_usd",
    "wall_seconds", "trace_ids", "finished_at", "code_version", "machine", "model_identity",
)  # fmt: skip
"""What a replayed row keeps from the computation that paid for it; the rest (metrics derived from the same answers
by the current code) is recomputed, and ``metrics["replayed_at"]`` names the commit that reproduced it."""


class CompareRequest(BaseModel):
    """One comparison asked for: everything ``moot compare`` takes; the same command line always means the same rows.
    (Formerly ``CompareOptions``; ``options`` now names only a topology's options.)"""

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
    compact: bool = False
    """First fold the per-run traces and per-spec cache sub-folders an earlier moot wrote into one file each
    (:mod:`moot.harness.jobs._compact`): storage only, the rows are the same with or without it."""
    rerun: bool = False
    """Recompute finished rows too (through the cache: a replay)."""
    cache_only: bool = False
    """Call no model: every call must come from the cache (no weights are loaded, no endpoint is contacted). A row
    that needs a call the cache lacks fails and is not recorded: a finished row stays as it was. With ``rerun``,
    the check that a report replays with zero billed calls."""
    report_only: bool = False
    """Compute nothing: report the rows already finished (e.g. while another process is still running)."""
    rescore: bool = False
    """With ``report_only``: score every finished row's stored answer again with the current scorer (no arm
    runs, no model call unless the scorer is an LLM judge), e.g. after a scorer was fixed."""
    seed: int = 0
    executor: ExecutorName = "local"
    """Where jobs run: ``local`` (asyncio tasks in this process) or ``ray`` (Ray tasks; the ``[ray]`` extra)."""
    ray_address: str | None = None
    """A running Ray cluster (``auto``, ``ray://host:10001``); default: start a local one."""
    ray_cpus_per_job: float = Field(default=1.0, gt=0, le=64)
    """CPUs Ray reserves per job: below 1 packs more jobs per core when the model is served elsewhere."""
    purpose: Purpose | None = None
    """What the folder's rows are for (``ResultStore.record_purpose``); None: evaluation for a new folder."""
    tuned_on: list[str] = []
    """Suite specs (``humaneval[:50]``) of the compared suite's source whose items decided a protocol choice made
    elsewhere: recorded in the folder (replacing its list; empty: the recorded list is kept), and every figure of the
    report is given again on the items outside them."""


@dataclass
class ComparedArm:
    """One arm of this comparison: its label (as given to ``--arms``), the arm, its key in the results store,
    and whether ``--compute-matched`` sizes its k."""

    label: str
    arm: Arm
    key: str = ""
    matched: bool = False

    @property
    def spec(self) -> str:
        """The arm's full, canonical spec (:func:`canonical_spec`): the name its rows are stored under, which a
        later change of a default never makes mean another arm."""
        return canonical_spec(self.arm)


@former_keywords(options="request")
@dataclass
class Comparison:
    """What a comparison produced: its rows (this suite slice x these arms) and what this invocation did."""

    request: CompareRequest
    suite: Suite
    arms: list[ComparedArm]
    models: dict[str, str]
    rows: list[ResultRow] = field(default_factory=list)
    computed: int = 0
    reused: int = 0
    replayed: int = 0
    """Of the computed rows: recomputed (``rerun``) entirely from the cache, matching the stored row."""
    failed: int = 0
    missed: int = 0
    """Rows a cache-only comparison could not compute: a call they needed was not in the cache (not recorded)."""
    changed_meanwhile: int = 0
    """Rows ``--rescore`` left alone because another process rewrote them after they were read (compare-and-set):
    the other process's row is kept."""
    meter: Meter = field(default_factory=Meter)
    """Calls made by this invocation (arms and scoring): billed_calls == 0 on a replay."""
    matched_k: int | None = None
    matched_to: str | None = None
    """The debate arm whose calls sized ``matched_k``: the first listed, when there are several."""
    role_models: RoleModels | None = None
    """The model specs behind ``models`` (for provenance: what identifies each model)."""

    @property
    def results_path(self) -> Path:
        return self.request.out / RESULTS_FILE


class ProgressSink(Protocol):
    """Told how many rows a phase holds (``start``) and of each row as it is recorded (``advance``). A sink that
    also has ``start_arms`` (:class:`ArmProgressSink`) is told the counts per arm as well."""

    def start(self, phase: str, total: int, done: int) -> None: ...

    def advance(self, row: ResultRow) -> None: ...


@runtime_checkable
class ArmProgressSink(ProgressSink, Protocol):
    def start_arms(self, phase: str, arms: Mapping[str, tuple[int, int]]) -> None:
        """Per arm label of the phase: (rows, rows already finished), called before the phase's first row."""
        ...


class _Quiet:
    def start(self, phase: str, total: int, done: int) -> None:
        pass

    def advance(self, row: ResultRow) -> None:
        pass


def _model_labels(models: RoleModels) -> dict[str, str]:
    labels = {"base": str(models.base.model_copy(update={"provider": models.base.effective_provider}))}
    labels.update({role: str(spec) for role, spec in sorted(models.overrides.items())})
    return labels


def _arms(request: CompareRequest, suite: Suite) -> list[ComparedArm]:
    arms: list[ComparedArm] = []
    for spec in request.arms:
        arm = build_arm(spec)
        if sized(arm) and request.k is not None:
            arm = arm.with_k(request.k)
        arm.check(suite)
        arms.append(ComparedArm(spec.strip(), arm))
    labels = [r.label for r in arms]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"each arm may appear once; got {', '.join(labels)}")
    _refuse_same_arm(arms)
    if request.k is not None and not any(sized(r.arm) for r in arms):
        raise ConfigError(
            f"--k sets self-consistency's samples, and the arms ({', '.join(labels)}) have no sampling arm "
            "(self-consistency, best-of-k-tests); add one to --arms or drop --k"
        )
    if request.compute_matched:
        if not any(_compute_reference(r.arm) for r in arms) or not any(sized(r.arm) for r in arms):
            raise ConfigError(
                "--compute-matched sizes the sampling arms' k (self-consistency, best-of-k-tests) to the debate "
                "arm's calls: list both kinds, e.g. --arms debate,self-consistency"
            )
        if request.k is not None:
            raise ConfigError("--k and --compute-matched both size the sampling arms' k; give one of them")
        for r in arms:
            r.matched = sized(r.arm)
    return arms


def _compute_reference(arm: Arm) -> bool:
    """Whether ``--compute-matched`` sizes the sampling arms to this arm's calls (its ``compute_reference``)."""
    return bool(getattr(arm, "compute_reference", False))


def _refuse_same_arm(arms: Sequence[ComparedArm]) -> None:
    """Two labels that spell one configuration (``debate`` and ``debate?rounds=3`` where 3 is the default) would
    share their rows: refuse, naming both and the arm they are."""
    seen: dict[str, str] = {}
    for compared in arms:
        spec = compared.spec
        if spec in seen:
            raise ConfigError(
                f"arms {seen[spec]!r} and {compared.label!r} are the same arm ({spec}) on this suite; give one of them"
            )
        seen[spec] = compared.label


def model_identities(models: RoleModels) -> dict[str, str]:
    """Per model role of ``models`` (``base``, then each role given its own model): what identifies the model that
    answers (:func:`model_identity`), stored in every row this comparison computes."""
    roles = {"base": models.base, **dict(sorted(models.overrides.items()))}
    return {role: model_identity(spec) for role, spec in roles.items()}


class PreparedComparison:
    """A validated comparison, ready to run: every bad input has been refused before this exists."""

    def __init__(
        self, request: CompareRequest, *, progress: ProgressSink, base: BaseClientFactory | None, sandbox: SandboxRunner
    ) -> None:
        self.request = request
        _check_flags(request)
        self.suite = load_suite(request.suite)
        check_tuned_on(request.tuned_on, self.suite)
        self.roles = model_roles(request.arms)
        self.role_models = parse_model_options(request.models, self.roles)
        self.model_labels = _model_labels(self.role_models)
        self.identities = model_identities(self.role_models)
        self.arms = _arms(request, self.suite)
        self.progress = progress
        base = CacheOnly() if request.cache_only else base  # (no model is built, so none need be installed)
        specs = list(dict.fromkeys(self.role_models.spec(name) for name in self.roles))
        if base is None and request.executor == "local" and not request.report_only:
            for spec in specs:  # (Ray workers may hold extras and keys the driver lacks; a report calls nothing)
                spec.check()
        check_out_dir(request.out)
        check_cache_dir(request)
        if request.compact:
            compact_folder(request.out, request.cache or request.out / "cache")
        # the folders this invocation creates: removed again if it stops on bad input before recording a row
        self.created = [p for p in (request.out, request.cache) if p is not None and not p.exists()]
        self.closed = False
        self.base, self.sandbox = base, sandbox
        self.executor = make_executor(request, specs, base, sandbox)
        try:
            # (a report only reads: nothing can be written, even by a file whose schema would try; a rescore and
            # a statement of the items tuned on write)
            writes = request.rescore or bool(request.tuned_on) or request.purpose is not None
            self.store = ResultStore(request.out / RESULTS_FILE, read_only=request.report_only and not writes)
        except ConfigError:
            self.executor.close()
            raise
        try:
            if not request.tuned_on:  # a recorded list the report would refuse is refused before any row runs
                tuned_items(self.store.tuned_on(), self.suite, f"results file {self.store.path}: meta key tuned_on")
            if not request.report_only:
                self.store.record_purpose(request.purpose)
        except ConfigError:
            self.close()
            raise
        self.result = Comparison(request, self.suite, self.arms, self.model_labels, role_models=self.role_models)
        if request.cache_only:
            self._check_cached_models()
        if request.report_only and not self._anything_to_report():
            self.close()
            raise ConfigError(
                f"--report-only: {request.out} holds no finished row of {request.suite} with these arms; "
                "run the comparison first (the same command without --report-only)"
            )
        if request.report_only and request.purpose is not None:  # a statement about the folder, not a row
            self.store.record_purpose(request.purpose)  # (refused before writing if the folder states another)
        if request.tuned_on:  # (last: input refused above leaves the recorded list as it was)
            self.store.record_tuned_on(request.tuned_on)

    def _check_cached_models(self) -> None:
        """A cache-only run whose ``--model`` matches none of the rows it would replay, while the file holds rows of
        the same suite and arms under other models, could only miss the cache on every row: say up front which
        models the rows used and how to name them (one line), instead of one failure per row."""
        keys = [self._key(r) for r in self.arms if not r.matched]
        if self.store.rows(self.suite.key, keys, [i.id for i in self.suite.items]):
            return
        named = [r.label for r in self.arms] + [r.spec for r in self.arms]  # (rows from before specs were stored)
        used = [m for m in self.store.models_used(self.suite.key, named) if m != self.model_labels]
        if used:
            self.close()
            raise ConfigError(
                f"--cache-only: the rows of {self.request.suite} in {self.request.out} were computed with "
                f"{describe_models(used[0])}, not {describe_models(self.model_labels)}; to replay them, give "
                f"{model_flags(used[0])}"
            )

    def _anything_to_report(self) -> bool:
        keys = [self._key(r) for r in self.arms if not r.matched]
        return bool(self.store.rows(self.suite.key, keys, [i.id for i in self.suite.items]))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.store.close()
        self.executor.close()

    def _discard(self) -> None:
        """Bad input found only once rows ran (a model that refuses its key, a fault a check could not see): when
        no row was recorded, remove the folders this invocation created, so it leaves no half-written results file
        or cache behind, as bad input found up front does not."""
        if self.result.computed or self.result.failed or not self.created:
            return
        self.close()
        for folder in self.created:
            shutil.rmtree(folder, ignore_errors=True)

    def _key(self, compared: ComparedArm) -> str:
        return arm_key(compared.arm.name, compared.arm.settings, self.model_labels)

    async def run(self) -> Comparison:
        try:
            return await self._run()
        except ConfigError:
            self._discard()
            raise

    async def _run(self) -> Comparison:
        first = [r for r in self.arms if not r.matched]
        await self._phase("arms" if len(first) == len(self.arms) else "phase 1", first)
        matched = [r for r in self.arms if r.matched]
        if matched and not (self.request.report_only and not self._debate_calls()):
            k = self._matched_k()
            self.result.matched_k = k
            self.result.matched_to = self._matched_debate().label
            for r in matched:
                assert sized(r.arm)
                r.arm = r.arm.with_k(k)
            await self._phase(f"{', '.join(r.label for r in matched)}, k={k} (matched)", matched)
        self.result.rows = self._rows()
        if self.request.rescore:
            await self._rescore()
        return self.result

    async def _rescore(self) -> None:
        """Score every finished row's stored answer again; the row records when, and its old score if it changed.

        Scoring takes time (a sandbox run per code answer) while another process may be rerunning the same rows,
        so each row is written back only if it is still as it was read (:meth:`ResultStore.replace`)."""
        items = {i.id: i for i in self.suite.items}
        meter = Meter()
        clients = ClientFactory(EndpointLimits(self.request.concurrency), None, self.base)  # an LLM judge's calls
        ctx = RowContext(self.role_models, clients, meter, seed=self.request.seed, sandbox=self.sandbox)
        for number, row in enumerate(self.result.rows):
            if row.status != "done" or row.score is None:
                continue
            score = await items[row.item].scorer.score(items[row.item], row.answer, ctx)
            metrics = {**row.metrics, "rescored_at": code_version()}
            if score.value != row.score:
                metrics["score_before_rescore"] = row.score
            updated = row.model_copy(update={"score": score.value, "score_detail": score.detail, "metrics": metrics})
            if self.store.replace(row, self._as_stored(updated)):
                self.result.rows[number] = updated
                continue
            # Another process (a --rerun) rewrote the row since it was read: its row is newer than this rescore's
            # copy, so it stays, and is what this report shows.
            self.result.changed_meanwhile += 1
            current = self.store.get(row.suite, row.item, row.arm_key)
            if current is not None:
                current.arm = row.arm
                self.result.rows[number] = current
        self.result.meter += meter

    def _matched_debate(self) -> ComparedArm:
        """The arm ``--compute-matched`` matches: the first debate arm listed (the others are compared to it)."""
        return next(r for r in self.arms if _compute_reference(r.arm))

    def _debate_calls(self) -> list[int]:
        debate = self._matched_debate()
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

    async def _phase(self, phase: str, arms: Sequence[ComparedArm]) -> None:
        todo: list[Job] = []
        for compared in arms:
            compared.key = self._key(compared)
        done = {compared.key: self.store.finished(self.suite.key, compared.key) for compared in arms}
        for item in self.suite.items:
            for compared in arms:
                if not self.request.report_only and (self.request.rerun or item.id not in done[compared.key]):
                    todo.append(self._job(item, compared))
        total = len(self.suite.items) * len(arms)
        finished = sum(item.id in done[compared.key] for item in self.suite.items for compared in arms)
        self.result.reused += finished - sum(job.item.id in done[job.key] for job in todo)
        if isinstance(self.progress, ArmProgressSink):
            left = {r.label: sum(job.label == r.label for job in todo) for r in arms}
            self.progress.start_arms(phase, {r.label: (len(self.suite.items), len(self.suite.items) - left[r.label])
                                             for r in arms})  # fmt: skip
        self.progress.start(phase, total, total - len(todo))
        if todo:
            await self.executor.run(todo, self._finish)

    def _job(self, item: Item, compared: ComparedArm) -> Job:
        return Job(
            suite=self.suite.key, item=item, arm=compared.arm, label=compared.label, key=compared.key,
            role_models=self.role_models, model_labels=self.model_labels, seed=self.request.seed,
        )  # fmt: skip

    def _finish(self, outcome: RowOutcome) -> None:
        """Record one outcome: the only place rows are written, whichever executor computed them."""
        if outcome.fatal is not None:
            raise ConfigError(outcome.fatal)
        self.result.meter += outcome.meter
        if outcome.missed:  # cache-only: a row the cache could not compute is not recorded
            self.result.missed += 1
            self.progress.advance(outcome.row)
            return
        row = outcome.row.model_copy(update={"model_identity": self.identities})
        old = self._replayed(row)
        if old is not None:
            self.result.replayed += 1  # the row keeps what its paid computation measured (tokens, time, origin)
            paid = {k: getattr(old, k) for k in _PAID}
            row = row.model_copy(update={**paid, "metrics": {**row.metrics, "replayed_at": code_version()}})
        if not self._keeps_finished(row):
            self.store.put(self._as_stored(row))
        self.result.computed += row.status == "done"
        self.result.failed += row.status == "error"
        self.progress.advance(row)

    def _as_stored(self, row: ResultRow) -> ResultRow:
        """``row`` as the results file keeps it: under its arm's canonical spec, not this comparison's label (which
        names another arm once a default changes); :meth:`_rows` gives rows read back their labels again."""
        specs = {r.label: r.spec for r in self.arms}
        return row.model_copy(update={"arm": specs.get(row.arm, row.arm)})

    def _keeps_finished(self, row: ResultRow) -> bool:
        """A rerun whose recomputation failed (a fault, not an answer) keeps the finished row it would replace:
        recomputed later from the cache, that row would have lost what its paid computation measured."""
        if row.status != "error" or not self.request.rerun:
            return False
        stored = self.store.get(row.suite, row.item, row.arm_key)
        return stored is not None and stored.status == "done"

    def _replayed(self, row: ResultRow) -> ResultRow | None:
        """The stored row a rerun row replays: it came wholly from the cache and agrees with it."""
        if not self.request.rerun or row.status != "done" or row.billed_calls or row.scoring_billed_calls:
            return None
        old = self.store.get(row.suite, row.item, row.arm_key)
        if old is None or old.status != "done" or (old.answer, old.score) != (row.answer, row.score):
            return None
        return old


def describe_models(labels: dict[str, str]) -> str:
    """Model labels as a reader names them: ``scripted:deterministic``, or ``local (judge: openai:gpt-4o-mini)``."""
    roles = ", ".join(f"{role}: {spec}" for role, spec in labels.items() if role != "base")
    return f"{labels.get('base', '?')}{f' ({roles})' if roles else ''}"


def model_flags(labels: dict[str, str]) -> str:
    """The ``--model`` strings that give a comparison these model labels (the inverse of ``_model_labels``)."""
    flags = [f"--model {shlex.quote(labels['base'])}"] if "base" in labels else []
    flags += [f"--model {shlex.quote(f'{role}={spec}')}" for role, spec in labels.items() if role != "base"]
    return " ".join(flags)


def _check_flags(request: CompareRequest) -> None:
    """Refuse flags that contradict each other (each alone is valid), before anything is read or written."""
    if request.cache is not None and not request.use_cache:
        raise ConfigError(f"give --cache {request.cache} or --no-cache, not both")
    if request.rescore and not request.report_only:
        raise ConfigError("--rescore scores the stored answers again and runs nothing: give it with --report-only")
    if request.report_only and request.rerun:
        raise ConfigError("--report-only runs nothing and --rerun recomputes every row; give one of them")
    if request.cache_only and not request.use_cache:
        raise ConfigError("--cache-only answers every call from the cache and --no-cache uses none; give one of them")
    if request.cache_only and request.report_only:
        raise ConfigError("--report-only runs nothing, so --cache-only has no call to answer; give one of them")
    if request.report_only and not (request.out / RESULTS_FILE).is_file():
        raise ConfigError(
            f"--report-only: {request.out} holds no results yet ({RESULTS_FILE} is missing); run the comparison "
            "first (the same command without --report-only), or give its --out"
        )


def check_tuned_on(specs: Sequence[str], suite: Suite) -> None:
    """Each ``--tuned-on`` spec names items of the compared suite's source (its ``key``): a statement about which
    of these items decided a choice must be about these items. One that selects none of the compared items (another
    slice) is fine: it decided nothing here, and the report says so."""
    for spec in specs:
        try:
            tuned = load_suite(spec)
        except ConfigError as exc:
            raise ConfigError(f"--tuned-on {spec!r}: {exc}") from None
        if tuned.key != suite.key:
            raise ConfigError(
                f"--tuned-on {spec!r} selects items of {tuned.key}, not of the compared suite {suite.key}; give a "
                "slice of the compared suite"
            )


def tuned_items(specs: Sequence[str], suite: Suite, where: str) -> tuple[list[str], list[str]]:
    """Of ``suite``'s items, those some spec of ``specs`` selects (they decided a choice made elsewhere), in suite
    order; and the specs that select none of them: another slice, or another source (a folder may hold several
    seeds of one task, and a recorded list speaks of one of them). A spec that no longer reads as a suite is refused
    in one line naming ``where`` it is stored."""
    ids = [item.id for item in suite.items]
    decided: set[str] = set()
    idle: list[str] = []
    for spec in specs:
        try:
            tuned = load_suite(spec)
        except ConfigError as exc:
            raise ConfigError(f"{where} holds {one_line(repr(spec), 80)}, not a readable suite spec: {exc}") from None
        chosen = {item.id for item in tuned.items} & set(ids) if tuned.key == suite.key else set()
        decided |= chosen
        if not chosen:
            idle.append(spec)
    return [i for i in ids if i in decided], idle


def check_out_dir(out: Path) -> None:
    """Refuse an output directory that is a file or cannot be written, before anything is created in it."""
    _check_writable_dir(out, "--out", "it holds results.sqlite3, the cache, traces and reports")


def check_cache_dir(request: CompareRequest) -> None:
    """Refuse a ``--cache`` that is a file or cannot be written, before anything is created: every row would fail
    on it, and running the same command again could not help."""
    if request.cache is not None and request.use_cache:
        _check_writable_dir(request.cache, "--cache", "it holds one call cache per model")


def _check_writable_dir(path: Path, flag: str, holds: str) -> None:
    """``path`` is (or can be made) a directory this process may write: else one ConfigError naming ``flag``."""
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        where = "is a file" if existing == path else f"is under {existing}, a file"
        raise ConfigError(f"{flag} {path} {where}; give a directory ({holds})")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{flag} {path}: {existing} is not writable; give a directory you can write")


def make_executor(
    request: CompareRequest, specs: Sequence[ModelSpec], base: BaseClientFactory | None, sandbox: SandboxRunner
) -> Executor:
    """The executor ``request`` names, sized so each endpoint can be kept busy: ``concurrency`` jobs per endpoint."""
    slots = request.concurrency * len({endpoint_of(s) for s in specs})
    cache_dir = (request.cache or request.out / "cache") if request.use_cache else None
    traces = TraceArchive(request.out / TRACES_FILE)
    if request.executor != "ray" and request.ray_address is not None:
        raise ConfigError("--ray-address applies only with --executor ray")
    if request.executor == "ray" and not request.report_only:  # a report runs nothing: no cluster to start
        from moot.harness.jobs._ray_executor import RayExecutor

        return RayExecutor(
            address=request.ray_address, slots=slots, per_endpoint=request.concurrency, cache_dir=cache_dir,
            base=base, specs=specs, sandbox=sandbox, traces=traces, cpus_per_job=request.ray_cpus_per_job,
        )  # fmt: skip
    return LocalExecutor(
        slots=slots, per_endpoint=request.concurrency, cache_dir=cache_dir, base=base, sandbox=sandbox,
        traces=traces,
    )  # fmt: skip


@former_keywords(options="request")
def prepare_comparison(
    request: CompareRequest,
    *,
    progress: ProgressSink | None = None,
    clients: BaseClientFactory | None = None,
    sandbox: SandboxRunner = run_tests,
) -> PreparedComparison:
    """Validate everything (suite, arms, models, files) and open the results file; ConfigError on bad input."""
    require("compare", "moot compare")
    return PreparedComparison(request, progress=progress or _Quiet(), base=clients, sandbox=sandbox)


@former_keywords(options="request")
async def run_comparison(
    request: CompareRequest,
    *,
    progress: ProgressSink | None = None,
    clients: BaseClientFactory | None = None,
    sandbox: SandboxRunner = run_tests,
) -> Comparison:
    """Run (or resume, or replay) a comparison; see the module docstring. ``clients`` replaces ``spec.client``."""
    runner = prepare_comparison(request, progress=progress, clients=clients, sandbox=sandbox)
    try:
        return await runner.run()
    finally:
        runner.close()
