"""The statistics of a comparison, from scipy and numpy rather than by hand.

* Accuracy: mean score with a bootstrap 95% CI (BCa; percentile when BCa is
  undefined, e.g. for a degenerate sample).
* Pairs of arms on the same items: the paired mean difference with a paired
  bootstrap CI, and a test: McNemar's exact test for binary scores (a
  two-sided binomial test on the discordant pairs), a paired permutation
  test (sign flips of the differences) for graded scores.
* Holm's step-down adjustment, since several pairs are tested at once.
* The compute-matched k for self-consistency.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Interval",
    "PairedTest",
    "bootstrap_mean",
    "holm",
    "is_binary",
    "matched_k",
    "mcnemar_exact",
    "paired_difference",
    "paired_permutation",
]

CONFIDENCE = 0.95
RESAMPLES = 9999


def _scipy() -> Any:
    """scipy.stats, imported on first use: it costs a second or more, and ``moot --help`` should not pay it."""
    from scipy import stats

    return stats


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class PairedTest:
    test: str
    p_value: float
    a_only: int = 0
    """Binary scores: items only the first arm got right (discordant)."""
    b_only: int = 0


def _bootstrap(
    data: tuple[np.ndarray, ...], statistic: object, paired: bool, seed: int, resamples: int
) -> tuple[float, float]:
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # degenerate samples warn; we fall back below
            result = _scipy().bootstrap(
                data, statistic, paired=paired, vectorized=True, n_resamples=resamples,
                confidence_level=CONFIDENCE, method=method, rng=np.random.default_rng(seed),
            )  # fmt: skip
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high
    return math.nan, math.nan


def bootstrap_mean(scores: Sequence[float], seed: int = 0, resamples: int = RESAMPLES) -> Interval:
    """Mean with a bootstrap 95% CI; a constant sample's CI is the point itself."""
    data = np.asarray(scores, dtype=float)
    if data.size == 0:
        return Interval(math.nan, math.nan, math.nan)
    mean = float(data.mean())
    if data.size < 2 or np.ptp(data) == 0:
        return Interval(mean, mean, mean)
    low, high = _bootstrap((data,), lambda x, axis: np.mean(x, axis=axis), False, seed, resamples)
    return Interval(mean, low, high)


def paired_difference(a: Sequence[float], b: Sequence[float], seed: int = 0, resamples: int = RESAMPLES) -> Interval:
    """Mean of a - b over the same items, with a paired bootstrap 95% CI."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples must have the same length, got {x.size} and {y.size}")
    if x.size == 0:
        return Interval(math.nan, math.nan, math.nan)
    diff = x - y
    mean = float(diff.mean())
    if x.size < 2 or np.ptp(diff) == 0:
        return Interval(mean, mean, mean)
    low, high = _bootstrap((x, y), lambda p, q, axis: np.mean(p - q, axis=axis), True, seed, resamples)
    return Interval(mean, low, high)


def is_binary(*samples: Sequence[float]) -> bool:
    return all(v in (0.0, 1.0) for sample in samples for v in sample)


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """McNemar's exact test: two-sided binomial test of the discordant pairs against p = 1/2."""
    a_only = sum(1 for x, y in zip(a, b, strict=True) if x == 1.0 and y == 0.0)
    b_only = sum(1 for x, y in zip(a, b, strict=True) if x == 0.0 and y == 1.0)
    discordant = a_only + b_only
    p = 1.0 if discordant == 0 else float(_scipy().binomtest(a_only, discordant, 0.5).pvalue)
    return PairedTest("McNemar exact", min(1.0, p), a_only, b_only)


def paired_permutation(a: Sequence[float], b: Sequence[float], seed: int = 0) -> PairedTest:
    """Paired permutation test of the mean difference (exact when 2^n <= resamples)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or np.all(x == y):
        return PairedTest("paired permutation", 1.0)
    result = _scipy().permutation_test(
        (x, y), lambda p, q, axis: np.mean(p - q, axis=axis), permutation_type="samples", vectorized=True,
        n_resamples=RESAMPLES, alternative="two-sided", rng=np.random.default_rng(seed),
    )  # fmt: skip
    return PairedTest("paired permutation", min(1.0, float(result.pvalue)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error), in the input order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def matched_k(calls_per_item: Sequence[int]) -> int:
    """Self-consistency's k at equal compute: the debate arm's mean calls per item, rounded half up, at least 1."""
    if not calls_per_item:
        raise ValueError("no debate rows to match")
    return max(1, math.floor(float(np.mean(calls_per_item)) + 0.5))
