"""The report's numbers: per arm, per pair of arms, what the rounds bought, what the run cost, and where
every row came from."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

from pydantic import BaseModel

from moot.harness.arms._registry import arm_trait
from moot.harness.jobs._provenance import code_version, models_answering, moot_version
from moot.harness.jobs._results import ResultRow
from moot.harness.jobs._runner import Comparison, model_identities
from moot.harness.reports._evidence import KindEvidence, evidence_for
from moot.harness.reports._row_metrics import RowMetrics, TeamMetrics
from moot.harness.reports._selection import FolderFacts, Selection, folder_facts
from moot.harness.reports._stats import accuracy_interval, compare_paired, exact_match, holm, is_binary
from moot.teams import CodeDebateMetrics, DebateMetrics

__all__ = [
    "ArmSummary",
    "Graded",
    "HeldOut",
    "PairSummary",
    "Provenance",
    "Report",
    "build_report",
    "exact_scores",
    "first_round_name",
    "partial_credit",
    "runs_rounds",
]


def first_round_name(arm: str) -> str:
    """What an arm's answer after round 1 is called: a debate's first-round vote, a reflection's first draft (the
    arm's ``first_round_name``); "first round" for an arm that does not say."""
    return str(arm_trait(arm, "first_round_name", None) or "first round")


def runs_rounds(arm: str) -> bool:
    """Whether an arm runs rounds (it names its first round), so a report measures it against its own round 1."""
    return arm_trait(arm, "first_round_name", None) is not None


class Graded(BaseModel):
    """A figure on the graded scores (partial credit counted), shown beside the exact-match figure it follows."""

    estimate: float
    ci_low: float
    ci_high: float
    test: str = ""
    p_value: float = math.nan
    p_holm: float = math.nan


class PairSummary(BaseModel):
    a: str
    b: str
    n: int
    difference: float
    """Mean of a - b over items both arms finished."""
    ci_low: float
    ci_high: float
    test: str
    p_value: float
    p_holm: float = math.nan
    a_only: int = 0
    b_only: int = 0
    interval: str = ""
    """How the interval was made: it inverts the test, so the two agree on whether the difference is 0."""
    agrees: bool = True
    """The interval excludes 0 exactly when the test's p < 0.05 (False only where the inversion could not
    guarantee it; the report then says so)."""
    graded: Graded | None = None
    """On a partial-credit suite: the same difference on the graded scores (the figures above are exact)."""


class ArmSummary(BaseModel):
    label: str
    name: str
    settings: dict[str, Any]
    n: int
    errors: int
    accuracy: float
    ci_low: float
    ci_high: float
    mean_tokens: float
    """Logical tokens per item: every call, cache hits included (the compute the arm used)."""
    mean_billed_tokens: float
    mean_calls: float
    mean_billed_calls: float
    mean_cost_usd: float | None = None
    """What an item cost the arm in USD (billed calls only); None unless every model of the arm has a price."""
    mean_wall_seconds: float
    total_wall_seconds: float
    accuracy_per_1k_tokens: float
    mean_rounds: float
    parse_failures: int
    partial: int
    oracle_gaps: int | None = None
    """Items where a better answer was proposed along the way and then lost (samples or debaters)."""
    mean_flips: float | None = None
    mean_first_round_diversity: float | None = None
    signals: dict[str, float] = {}
    """How a debate arm got its answers (conformity, evidence, cost per round); see ``debate_signals``."""
    first_round_vote: float | None = None
    """Accuracy of the answer the arm held after round 1 (a debate's first-round vote, a reflection's first
    draft) on the same items, found with no extra call; None for arms without rounds."""
    rounds_changed: dict[str, int] | None = None
    """Items whose score the later rounds raised (``better``) or lowered (``worse``) from round 1's."""
    rounds_bought: PairSummary | None = None
    """Final minus round 1, paired on the same items, with its test and interval."""
    correct_share_per_round: list[float] = []
    """Mean score of every position held after each round (every expert's answer; a reflection's draft), over
    all items: an item that settled early keeps its last positions."""
    positions_per_round: list[int] = []
    """How many positions each round's share is taken over."""
    graded: Graded | None = None
    """On a partial-credit suite: accuracy on the graded scores (``accuracy`` counts exact matches, score = 1)."""
    graded_first_round_vote: float | None = None


class Provenance(BaseModel):
    """Where the report's rows came from, so a reader can tell one run's numbers from another's."""

    moot_version: str
    commit: str
    """The commit (or version) that built this report."""
    row_commits: dict[str, int]
    """Rows per commit they were computed at ("unknown": rows from before commits were recorded)."""
    replayed_commits: dict[str, int]
    """Rows per commit that reproduced them from the cache (``--rerun``: same answers, same scores)."""
    commits: dict[str, int]
    """Rows per commit whose code last produced them: the replaying commit if any, else the computing one."""
    machines: dict[str, int]
    """Rows per machine they were computed on."""
    models: dict[str, str]
    """Per model role, what identifies the model the comparison names now: the weights' hash, or the endpoint and
    model name (what new rows would be computed with)."""
    answered_by: dict[str, int] = {}
    """Rows per model that answered them, read from each row's own ``model_identity`` (rows from before it was
    recorded count as unknown): what the figures came from, whatever the report's code would load today."""
    first_row: str | None
    last_row: str | None
    """When the earliest and latest rows finished (UTC)."""

    @property
    def mixed(self) -> bool:
        return len(self.commits) > 1


class HeldOut(BaseModel):
    """Every figure again on the items that decided nothing: the compared items outside every selection the folder
    records as having decided a choice made elsewhere (``--tuned-on``), where no figure is optimistic for it."""

    tuned_on: list[str]
    items: int
    """Compared items outside every tuned-on selection (0: every figure of the report is from selected items)."""
    arms: list[ArmSummary] = []
    pairs: list[PairSummary] = []
    """Holm-adjusted among themselves."""
    idle: list[str] = []
    """The specs that select none of the compared items: they decided nothing here."""


class Report(BaseModel):
    suite: str
    description: str
    items: int
    models: dict[str, str]
    arms: list[ArmSummary]
    pairs: list[PairSummary]
    binary: bool
    """Every score is 0 or 1."""
    exact_first: bool = False
    """Some score is strictly between 0 and 1 (partial credit): every figure counts exact matches (score = 1) and
    tests right/wrong exactly; the graded figures are in each summary's ``graded``."""
    answer_kind: str = "text"
    """What every item asks for (``moot.harness.AnswerKind``): code, multiple_choice, choices, number or text."""
    evidence: KindEvidence | None = None
    """What moot's own measurements on items that decided nothing found for this kind of answer, and the arm they
    support (``evidence.yaml``)."""
    purpose: str = "unstated"
    """What the results folder is for: ``tuning`` (figures for choosing), ``evaluation``, or ``unstated``."""
    selections: list[Selection] = []
    """Arms chosen among several variants of their family run on these items, with the correction."""
    held_out: HeldOut | None = None
    """The figures on the items that decided nothing; None when the folder records no ``--tuned-on``."""
    matched_k: int | None
    matched_to: str | None = None
    computed: int
    reused: int
    replayed: int = 0
    failed: int
    run_calls: int
    run_billed_calls: int
    run_tokens: int
    run_billed_tokens: int
    generated_at: str
    provenance: Provenance | None = None
    rescored: dict[str, int] = {}
    """Rows whose stored answer was scored again (``--rescore``), per code version that did it."""
    rescore_changed: list[str] = []
    """Those whose score changed, as ``item × arm: old -> new``."""
    shared_samples: list[str] = []
    """Arms that draw some of the same samples (same seeds, same prompt), so they differ only in what follows."""


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else math.nan


def _priced(rows: Sequence[ResultRow]) -> bool:
    """Whether every row knows its cost (a row from before prices, or with an unpriced model, does not)."""
    return bool(rows) and all(r.cost_usd is not None for r in rows)


def _arm_summary(
    label: str, name: str, settings: dict[str, Any], rows: list[ResultRow], seed: int, binary: bool
) -> ArmSummary:
    """One arm's figures over its rows, each concern in its own helper: accuracy here, then cost, rounds, the
    debate's signals, and what the later rounds did against round 1."""
    done = [r for r in rows if r.status == "done" and r.score is not None]
    scores = [float(r.score) for r in done if r.score is not None]
    accuracy = accuracy_interval(scores, seed, binary)
    metrics = [RowMetrics.of(r.metrics) for r in done]
    return ArmSummary(
        label=label,
        name=name,
        settings=settings,
        n=len(done),
        errors=sum(r.status == "error" for r in rows),
        accuracy=accuracy.estimate,
        ci_low=accuracy.low,
        ci_high=accuracy.high,
        **_cost_figures(rows, done, accuracy.estimate),
        **_round_figures(done),
        **_debate_figures(metrics),
        **_rounds_summary(label, done, metrics, seed, binary),
    )


def _cost_figures(rows: list[ResultRow], done: list[ResultRow], accuracy: float) -> dict[str, Any]:
    """What an item cost the arm (tokens, calls, USD, time: means over ``done``), the time all ``rows`` took,
    and accuracy per thousand logical tokens."""
    tokens = _mean([r.tokens for r in done])
    return {
        "mean_tokens": tokens,
        "mean_billed_tokens": _mean([r.billed_tokens for r in done]),
        "mean_calls": _mean([r.model_calls for r in done]),
        "mean_billed_calls": _mean([r.billed_calls for r in done]),
        "mean_cost_usd": _mean([r.cost_usd for r in done if r.cost_usd is not None]) if _priced(done) else None,
        "mean_wall_seconds": _mean([r.wall_seconds for r in done]),
        "total_wall_seconds": sum(r.wall_seconds for r in rows),
        "accuracy_per_1k_tokens": accuracy / (tokens / 1000) if tokens and tokens > 0 else math.nan,
    }


def _round_figures(done: list[ResultRow]) -> dict[str, Any]:
    """How the arm's finished rows ran: rounds per item, replies that failed to parse, answers left partial."""
    return {
        "mean_rounds": _mean([r.rounds for r in done]),
        "parse_failures": sum(r.parse_failures for r in done),
        "partial": sum(r.partial for r in done),
    }


def _debate_figures(metrics: list[RowMetrics]) -> dict[str, Any]:
    """What the arm proposed and lost (oracle gaps), and a debate's flips, first-round diversity and signals; None
    (or no signals) for an arm that records none."""
    oracle = [m.oracle for m in metrics if m.oracle is not None]
    debate = [m.team for m in metrics if isinstance(m.team, DebateMetrics)]
    return {
        "oracle_gaps": sum(o.gap for o in oracle) if oracle else None,
        "mean_flips": _mean([sum(len(v) for v in m.flips.values()) for m in debate]) if debate else None,
        "mean_first_round_diversity": _mean([m.first_round_diversity for m in debate]) if debate else None,
        "signals": debate_signals(metrics),
    }


def _rounds_summary(
    label: str, done: list[ResultRow], metrics: list[RowMetrics], seed: int, binary: bool
) -> dict[str, Any]:
    """What the later rounds did against round 1, on the items where both answers were scored (``metrics``:
    each of ``done``'s, in order)."""
    paired = [
        (float(r.score), m.first_round_score)
        for r, m in zip(done, metrics, strict=True)
        if r.score is not None and m.first_round_score is not None
    ]
    if not paired:
        return {}
    finals, firsts = [p[0] for p in paired], [p[1] for p in paired]
    per_round = _positions_per_round([m.position_scores for m in metrics if m.position_scores])
    return {
        "first_round_vote": _mean(firsts),
        "rounds_changed": {
            "better": sum(f > b for f, b in paired),
            "worse": sum(f < b for f, b in paired),
        },
        "rounds_bought": _paired_summary(label, "round 1", finals, firsts, seed, binary),
        "correct_share_per_round": [_mean(scores) for scores in per_round],
        "positions_per_round": [len(scores) for scores in per_round],
    }


def _positions_per_round(items: list[list[list[float]]]) -> list[list[float]]:
    """Every position's score, pooled over items, per round: the positions held after that round, so an item
    that settled early carries its last positions forward (else later rounds would be measured only on the
    items hard enough to reach them)."""
    depth = max((len(rounds) for rounds in items), default=0)
    pooled: list[list[float]] = [[] for _ in range(depth)]
    for rounds in items:
        for number in range(depth):
            pooled[number].extend(float(s) for s in rounds[min(number, len(rounds) - 1)])
    return pooled


def debate_signals(metrics: Sequence[RowMetrics]) -> dict[str, float]:
    """Totals over items of a debate arm's honesty signals (empty for other arms).

    Short answers: answer changes by kind (argued: the expert answered a claim
    of an expert holding the new answer; unargued: another expert held it, but
    none of its claims was answered; to an answer no expert held), verdicts
    that were a first-round answer, rulings that overturned a correct final
    majority. Code: fixes (and how many passed more visible tests, so were
    adopted), items settled in round 1. Both: mean tokens per round.
    """
    # A debate stored before flips were told apart by argument (no argued_flips) counts its flips only.
    short = [m for m in metrics if isinstance(m.team, DebateMetrics) and "argued_flips" in m.team.model_fields_set]
    code = [m.team for m in metrics if isinstance(m.team, CodeDebateMetrics)]
    signals: dict[str, float] = {}
    if short:
        signals |= _short_signals(short)
    if code:
        signals |= {
            "settled in round 1": sum(len(m.tokens_per_round) == 1 for m in code),
            "fixes": sum(m.fixes for m in code),
            "fixes adopted (passed more visible tests)": sum(m.fixes_adopted for m in code),
        }
    teams: list[TeamMetrics] = [*(m.team for m in short if m.team is not None), *code]
    per_round = [t.tokens_per_round for t in teams if t.tokens_per_round]
    for number in range(max((len(t) for t in per_round), default=0)):
        reached = [t[number] for t in per_round if len(t) > number]
        signals[f"tokens in round {number + 1} (mean of {len(reached)} items)"] = round(_mean(reached))
    return signals


def _short_signals(rows: Sequence[RowMetrics]) -> dict[str, float]:
    """The short-answer debate's signals over ``rows``, each a row with DebateMetrics that count argued flips."""
    debates = [m.team for m in rows if isinstance(m.team, DebateMetrics)]
    split = all("flips_to_unheld_answer" in d.model_fields_set for d in debates)  # rows from before the split
    unargued = sum(d.unargued_flips for d in debates)
    return {
        "argued flips": sum(d.argued_flips for d in debates),
        "unargued flips (recorded, not adopted)" if split else "unargued flips": unargued,
        **({"flips to an answer no expert held": sum(d.flips_to_unheld_answer for d in debates)} if split else {}),
        "verdict among first-round answers": sum(bool(d.final_in_first_round) for d in debates),
        "ruling overturned a correct majority": sum(m.overturned_majority for m in rows),
    }


def _paired_summary(a: str, b: str, xs: list[float], ys: list[float], seed: int, binary: bool) -> PairSummary:
    compared = compare_paired(xs, ys, seed, binary)
    diff, test = compared.difference, compared.test
    return PairSummary(
        a=a,
        b=b,
        n=len(xs),
        difference=diff.estimate,
        ci_low=diff.low,
        ci_high=diff.high,
        test=test.test,
        p_value=test.p_value,
        a_only=test.a_only,
        b_only=test.b_only,
        interval=compared.interval,
        agrees=compared.agrees,
    )


def _pair(a: str, b: str, by_arm: dict[str, dict[str, float]], seed: int, binary: bool) -> PairSummary:
    shared = [item for item in by_arm[a] if item in by_arm[b]]
    return _paired_summary(a, b, [by_arm[a][i] for i in shared], [by_arm[b][i] for i in shared], seed, binary)


def _count(values: Sequence[str | None]) -> dict[str, int]:
    counted: dict[str, int] = {}
    for value in values:
        counted[value or "unknown"] = counted.get(value or "unknown", 0) + 1
    return counted


def provenance(comparison: Comparison) -> Provenance:
    rows = [r for r in comparison.rows if r.status == "done"]
    finished = sorted(r.finished_at for r in rows)
    used = comparison.role_models
    return Provenance(
        moot_version=moot_version(),
        commit=code_version(),
        row_commits=_count([r.code_version for r in rows]),
        replayed_commits=_count([r.metrics["replayed_at"] for r in rows if r.metrics.get("replayed_at")]),
        commits=_count([r.metrics.get("replayed_at") or r.code_version for r in rows]),
        machines=_count([r.machine for r in rows]),
        models=model_identities(used) if used is not None else {},
        answered_by=models_answering(r.model_identity for r in rows),
        first_row=finished[0] if finished else None,
        last_row=finished[-1] if finished else None,
    )


def partial_credit(rows: Sequence[ResultRow]) -> bool:
    """Whether any finished row scored strictly between 0 and 1 (its final answer, its round 1, or a position)."""
    for row in rows:
        if row.status != "done" or row.score is None:
            continue
        found = RowMetrics.of(row.metrics)
        scores = [row.score, *([found.first_round_score] if found.first_round_score is not None else []),
                  *(s for held in found.position_scores for s in held)]  # fmt: skip
        if not is_binary(scores):
            return True
    return False


def exact_scores(row: ResultRow) -> ResultRow:
    """The row scored right/wrong: 1 for an exact match (score = 1), else 0; its round-1 and position scores too."""
    if row.score is None:
        return row
    metrics = dict(row.metrics)
    if isinstance(metrics.get("first_round_score"), int | float):
        metrics["first_round_score"] = exact_match(metrics["first_round_score"])
    if isinstance(metrics.get("position_scores"), list):
        metrics["position_scores"] = [[exact_match(s) for s in held] for held in metrics["position_scores"]]
    return row.model_copy(update={"score": exact_match(row.score), "metrics": metrics})


def _summaries(
    comparison: Comparison, rows: Sequence[ResultRow], seed: int, binary: bool
) -> tuple[list[ArmSummary], list[PairSummary]]:
    """Per arm and per pair (p-values Holm-adjusted across the pairs), on ``rows`` scored as they are."""
    rows_by_arm: dict[str, list[ResultRow]] = {r.label: [] for r in comparison.arms}
    for row in rows:
        rows_by_arm.setdefault(row.arm, []).append(row)
    scores = {
        label: {r.item: float(r.score) for r in held if r.status == "done" and r.score is not None}
        for label, held in rows_by_arm.items()
    }
    arms = [
        _arm_summary(run.label, run.arm.name, dict(run.arm.settings), rows_by_arm[run.label], seed, binary)
        for run in comparison.arms
    ]
    pairs = [_pair(a.label, b.label, scores, seed, binary) for a, b in combinations(comparison.arms, 2)]
    for pair, adjusted in zip(pairs, holm([p.p_value for p in pairs]), strict=True):
        pair.p_holm = adjusted
    return arms, pairs


def _graded(pair: PairSummary) -> Graded:
    return Graded(estimate=pair.difference, ci_low=pair.ci_low, ci_high=pair.ci_high, test=pair.test,
                  p_value=pair.p_value, p_holm=pair.p_holm)  # fmt: skip


def _figures(comparison: Comparison, rows: Sequence[ResultRow], seed: int, binary: bool, exact_first: bool
             ) -> tuple[list[ArmSummary], list[PairSummary]]:  # fmt: skip
    """Arms and pairs on ``rows``: on a partial-credit suite exact first (right/wrong), the graded figures beside;
    the main figures and the held-out ones are read the same way."""
    lead = [exact_scores(r) for r in rows] if exact_first else rows
    arms, pairs = _summaries(comparison, lead, seed, binary)
    if exact_first:
        _add_graded(arms, pairs, _summaries(comparison, rows, seed, False))
    return arms, pairs


def _add_graded(arms: list[ArmSummary], pairs: list[PairSummary], graded: tuple[list[ArmSummary], list[PairSummary]]
                ) -> None:  # fmt: skip
    """Put the graded figures beside the exact ones they follow (same arms, same pairs, same order)."""
    for arm, other in zip(arms, graded[0], strict=True):
        arm.graded = Graded(estimate=other.accuracy, ci_low=other.ci_low, ci_high=other.ci_high)
        arm.graded_first_round_vote = other.first_round_vote
        if arm.rounds_bought is not None and other.rounds_bought is not None:
            arm.rounds_bought.graded = _graded(other.rounds_bought)
    for pair, other in zip(pairs, graded[1], strict=True):
        pair.graded = _graded(other)


def build_report(comparison: Comparison, seed: int = 0) -> Report:
    """Summaries per arm and per pair; p-values Holm-adjusted across the pairs. On a suite with partial credit every
    figure counts exact matches and the graded ones are put beside them; the results folder adds its purpose and
    the selections behind the arms (``_selection``)."""
    exact_first = partial_credit(comparison.rows)
    scored = ([float(r.score)] for r in comparison.rows if r.status == "done" and r.score is not None)
    binary = exact_first or is_binary(*scored)  # exact-first figures are right/wrong
    arms, pairs = _figures(comparison, comparison.rows, seed, binary, exact_first)
    facts = folder_facts(comparison)
    held_out = _held_out(comparison, facts, seed, binary, exact_first)
    if held_out is not None and held_out.items:
        for chosen in facts.selections:
            _held_out_selection(chosen, held_out)
    meter = comparison.meter
    return Report(
        suite=comparison.suite.label,
        description=comparison.suite.description,
        items=len(comparison.suite.items),
        models=comparison.models,
        arms=arms,
        pairs=pairs,
        binary=binary and not exact_first,
        exact_first=exact_first,
        answer_kind=comparison.suite.answer_kind,
        evidence=evidence_for(comparison.suite.answer_kind),
        purpose=facts.purpose,
        selections=facts.selections,
        held_out=held_out,
        matched_k=comparison.matched_k,
        matched_to=comparison.matched_to,
        computed=comparison.computed,
        reused=comparison.reused,
        replayed=comparison.replayed,
        failed=comparison.failed,
        run_calls=meter.calls,
        run_billed_calls=meter.billed_calls,
        run_tokens=meter.tokens,
        run_billed_tokens=meter.billed_tokens,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        provenance=provenance(comparison),
        shared_samples=shared_samples(comparison, seed),
        rescored=_count([r.metrics["rescored_at"] for r in comparison.rows if r.metrics.get("rescored_at")]),
        rescore_changed=[
            f"{r.item} × {r.arm}: {r.metrics['score_before_rescore']:g} -> {r.score:g}"
            for r in comparison.rows
            if "score_before_rescore" in r.metrics and r.score is not None
        ],
    )


def _held_out(comparison: Comparison, facts: FolderFacts, seed: int, binary: bool, exact_first: bool
              ) -> HeldOut | None:  # fmt: skip
    """The report's figures on the items no recorded ``--tuned-on`` selection holds, read exactly as the main ones
    (exact first on a partial-credit suite, the graded figures beside); None when the folder records none."""
    if not facts.tuned_on:
        return None
    decided = set(facts.decided)
    held = HeldOut(tuned_on=facts.tuned_on, items=sum(i.id not in decided for i in comparison.suite.items),
                   idle=facts.idle)  # fmt: skip
    if not held.items:
        return held
    rows = [r for r in comparison.rows if r.item not in decided]
    held.arms, held.pairs = _figures(comparison, rows, seed, binary, exact_first)
    return held


def _held_out_selection(chosen: Selection, held: HeldOut) -> None:
    """Put beside a selection warning what the chosen arm (and the baseline) scored on the items that decided
    nothing: the figure its optimism is measured against."""
    accuracy = {arm.label: arm.accuracy for arm in held.arms}
    chosen.held_out_items = held.items
    chosen.held_out_accuracy = accuracy.get(chosen.arm)
    chosen.held_out_baseline = accuracy.get(chosen.baseline) if chosen.baseline is not None else None


def _draws(arm: object, base: int) -> set[tuple[int, float]]:
    draws = getattr(arm, "sample_draws", None)
    return set(draws(base)) if callable(draws) else set()


def shared_samples(comparison: Comparison, base: int) -> list[str]:
    """Pairs of arms that draw the same samples of the single call: the same seed at the same temperature (a
    sampling arm's samples, a code debate's programs, a short-answer debate's ``opening=solver`` openings). A
    temperature pinned by a model spec applies to both arms alike and is not seen here."""
    found = []
    for a, b in combinations(comparison.arms, 2):
        same = sorted(seed for seed, _ in _draws(a.arm, base) & _draws(b.arm, base))
        if same:
            found.append(f"{a.label} and {b.label} share {len(same)} samples (seeds {same[0]}-{same[-1]})")
    return found
