"""The report's numbers: per arm, per pair of arms, and what the run cost (billed vs logical)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

from pydantic import BaseModel

from moot.harness.engine._results import ResultRow
from moot.harness.engine._runner import Comparison
from moot.harness.reports._stats import (
    bootstrap_mean,
    holm,
    is_binary,
    mcnemar_exact,
    paired_difference,
    paired_permutation,
)

__all__ = ["ArmSummary", "PairSummary", "Report", "build_report"]


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


def _priced(rows: Sequence[ResultRow]) -> bool:
    """Whether every row knows its cost (a row from before prices, or with an unpriced model, does not)."""
    return bool(rows) and all(r.cost_usd is not None for r in rows)


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


class Report(BaseModel):
    suite: str
    description: str
    items: int
    models: dict[str, str]
    arms: list[ArmSummary]
    pairs: list[PairSummary]
    binary: bool
    matched_k: int | None
    computed: int
    reused: int
    replayed: int = 0
    failed: int
    run_calls: int
    run_billed_calls: int
    run_tokens: int
    run_billed_tokens: int
    generated_at: str


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else math.nan


def _arm_summary(label: str, name: str, settings: dict[str, Any], rows: list[ResultRow], seed: int) -> ArmSummary:
    done = [r for r in rows if r.status == "done" and r.score is not None]
    scores = [float(r.score) for r in done if r.score is not None]
    accuracy = bootstrap_mean(scores, seed)
    tokens = _mean([r.tokens for r in done])
    oracle = [r.metrics["oracle"] for r in done if isinstance(r.metrics.get("oracle"), dict)]
    debate = [r.metrics for r in done if "flips" in r.metrics]
    return ArmSummary(
        label=label,
        name=name,
        settings=settings,
        n=len(done),
        errors=sum(r.status == "error" for r in rows),
        accuracy=accuracy.estimate,
        ci_low=accuracy.low,
        ci_high=accuracy.high,
        mean_tokens=tokens,
        mean_billed_tokens=_mean([r.billed_tokens for r in done]),
        mean_calls=_mean([r.model_calls for r in done]),
        mean_billed_calls=_mean([r.billed_calls for r in done]),
        mean_cost_usd=_mean([r.cost_usd for r in done if r.cost_usd is not None]) if _priced(done) else None,
        mean_wall_seconds=_mean([r.wall_seconds for r in done]),
        total_wall_seconds=sum(r.wall_seconds for r in rows),
        accuracy_per_1k_tokens=accuracy.estimate / (tokens / 1000) if tokens and tokens > 0 else math.nan,
        mean_rounds=_mean([r.rounds for r in done]),
        parse_failures=sum(r.parse_failures for r in done),
        partial=sum(r.partial for r in done),
        oracle_gaps=sum(bool(o.get("gap")) for o in oracle) if oracle else None,
        mean_flips=_mean([sum(len(v) for v in m["flips"].values()) for m in debate]) if debate else None,
        mean_first_round_diversity=_mean([m["first_round_diversity"] for m in debate]) if debate else None,
        signals=debate_signals([r.metrics for r in done]),
    )


def debate_signals(metrics: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Totals over items of a debate arm's honesty signals (empty for other arms).

    Short answers: flips with an argument met vs without (conformity), verdicts
    that were a first-round answer, rulings that overturned a correct final
    majority. Code: fixes (and how many improved), adoptions (and how many of a
    candidate with less evidence), items settled in round 1. Both: mean tokens
    per round.
    """
    short = [m for m in metrics if "argued_flips" in m]
    code = [m for m in metrics if "fixes_improved" in m]
    signals: dict[str, float] = {}
    if short:
        signals |= {
            "argued flips": sum(m["argued_flips"] for m in short),
            "unargued flips": sum(m["unargued_flips"] for m in short),
            "verdict among first-round answers": sum(bool(m.get("final_in_first_round")) for m in short),
            "ruling overturned a correct majority": sum(bool(m.get("overturned_majority")) for m in short),
        }
    if code:
        signals |= {
            "settled in round 1": sum(len(m["tokens_per_round"]) == 1 for m in code),
            "fixes": sum(m["fixes"] for m in code),
            "fixes that pass more visible tests": sum(m["fixes_improved"] for m in code),
            "adoptions": sum(m["adoptions"] for m in code),
            "adoptions of a candidate with less evidence": sum(m["adopted_worse"] for m in code),
        }
    per_round = [m["tokens_per_round"] for m in [*short, *code] if m.get("tokens_per_round")]
    for number in range(max((len(t) for t in per_round), default=0)):
        reached = [t[number] for t in per_round if len(t) > number]
        signals[f"tokens in round {number + 1} (mean of {len(reached)} items)"] = round(_mean(reached))
    return signals


def _pair(a: str, b: str, by_arm: dict[str, dict[str, float]], binary: bool, seed: int) -> PairSummary:
    shared = [item for item in by_arm[a] if item in by_arm[b]]
    xs, ys = [by_arm[a][i] for i in shared], [by_arm[b][i] for i in shared]
    diff = paired_difference(xs, ys, seed)
    test = mcnemar_exact(xs, ys) if binary else paired_permutation(xs, ys, seed)
    return PairSummary(
        a=a,
        b=b,
        n=len(shared),
        difference=diff.estimate,
        ci_low=diff.low,
        ci_high=diff.high,
        test=test.test,
        p_value=test.p_value,
        a_only=test.a_only,
        b_only=test.b_only,
    )


def build_report(comparison: Comparison, seed: int = 0) -> Report:
    """Summaries per arm and per pair; p-values Holm-adjusted across the pairs."""
    rows_by_arm: dict[str, list[ResultRow]] = {r.label: [] for r in comparison.arms}
    for row in comparison.rows:
        rows_by_arm.setdefault(row.arm, []).append(row)
    scores = {
        label: {r.item: float(r.score) for r in rows if r.status == "done" and r.score is not None}
        for label, rows in rows_by_arm.items()
    }
    binary = is_binary(*(list(s.values()) for s in scores.values()))
    arms = [
        _arm_summary(run.label, run.arm.name, dict(run.arm.settings), rows_by_arm[run.label], seed)
        for run in comparison.arms
    ]
    pairs = [_pair(a.label, b.label, scores, binary, seed) for a, b in combinations(comparison.arms, 2)]
    for pair, adjusted in zip(pairs, holm([p.p_value for p in pairs]), strict=True):
        pair.p_holm = adjusted
    meter = comparison.meter
    return Report(
        suite=comparison.suite.label,
        description=comparison.suite.description,
        items=len(comparison.suite.items),
        models=comparison.models,
        arms=arms,
        pairs=pairs,
        binary=binary,
        matched_k=comparison.matched_k,
        computed=comparison.computed,
        reused=comparison.reused,
        replayed=comparison.replayed,
        failed=comparison.failed,
        run_calls=meter.calls,
        run_billed_calls=meter.billed_calls,
        run_tokens=meter.tokens,
        run_billed_tokens=meter.billed_tokens,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
