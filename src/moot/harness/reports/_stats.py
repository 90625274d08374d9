"""The statistics of a comparison, from scipy and numpy rather than by hand.

Every paired interval is built by inverting the test printed beside it, so the
two cannot disagree about whether a difference is distinguishable from zero
(bootstrap intervals on a handful of discordant items excluded 0 where the
exact test gave p = 0.125):

* Binary scores: McNemar's exact test (a two-sided binomial test of the
  discordant pairs against 1/2) and an interval built on the exact interval
  conditional on the discordant pairs: the Clopper-Pearson interval for the
  share of discordant items the first arm won decides its sign (under 1/2 the
  binomial is symmetric, so the test's p-value is twice its smaller tail, and
  the interval excludes 0 exactly when p < 0.05), and its width also carries
  the uncertainty of how many items are discordant (see ``_mcnemar_interval``).
* Graded scores: a paired permutation test (sign flips of the differences,
  exact when 2^n fits the resample budget) and the interval of every shift
  the same test does not reject at 5% (the same resamples for every shift),
  and 0 whenever the test does not reject it (ties between differences make
  the p-value jump at shifts that zero one of them). Where the search for the
  ends meets a non-monotone p-value, the result says the interval and the
  test disagree instead of hiding it.
* Accuracy per arm: Clopper-Pearson for binary scores, a bootstrap (BCa)
  interval for graded ones.
* Holm's step-down adjustment, since several pairs are tested at once.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from moot._extras import require

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CONFIDENCE",
    "Interval",
    "PairedComparison",
    "PairedTest",
    "accuracy_interval",
    "bonferroni",
    "bootstrap_mean",
    "compare_paired",
    "exact_match",
    "holm",
    "is_binary",
    "mcnemar_exact",
    "paired_permutation",
]

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
RESAMPLES = 9999


def _scipy() -> Any:
    """scipy.stats, imported on first use: it costs a second or more, and ``moot --help`` should not pay it."""
    require("compare", "moot compare's statistics")
    from scipy import stats

    return stats


def _numpy() -> ModuleType:
    """numpy, imported on first use: it comes with the 'compare' extra, and the core install has no numpy."""
    require("compare", "moot compare's statistics")
    import numpy

    return numpy


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class PairedTest:
    test: str
    p_value: float
    a_only: int = 0
    """Binary scores: items only the first arm got right (discordant)."""
    b_only: int = 0


@dataclass(frozen=True)
class PairedComparison:
    """A paired difference (mean of a - b), its 95% interval, and the test the interval inverts."""

    difference: Interval
    test: PairedTest
    interval: str
    """How the interval was made (named in reports)."""

    @property
    def agrees(self) -> bool:
        """The interval excludes 0 exactly when the test rejects at 5%."""
        if not math.isfinite(self.difference.low):
            return True
        return self.difference.excludes_zero == (self.test.p_value < ALPHA)


def _bootstrap(data: tuple[np.ndarray, ...], statistic: object, seed: int, resamples: int) -> tuple[float, float]:
    np = _numpy()
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # degenerate samples warn; we fall back below
            result = _scipy().bootstrap(
                data, statistic, vectorized=True, n_resamples=resamples, confidence_level=CONFIDENCE,
                method=method, rng=np.random.default_rng(seed),
            )  # fmt: skip
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high
    return math.nan, math.nan


def bootstrap_mean(scores: Sequence[float], seed: int = 0, resamples: int = RESAMPLES) -> Interval:
    """Mean with a bootstrap 95% CI; a constant sample's CI is the point itself."""
    np = _numpy()
    data = np.asarray(scores, dtype=float)
    if data.size == 0:
        return Interval(math.nan, math.nan, math.nan)
    mean = float(data.mean())
    if data.size < 2 or np.ptp(data) == 0:
        return Interval(mean, mean, mean)
    low, high = _bootstrap((data,), lambda x, axis: np.mean(x, axis=axis), seed, resamples)
    return Interval(mean, low, high)


def accuracy_interval(scores: Sequence[float], seed: int = 0, binary: bool | None = None) -> Interval:
    """Mean score with a 95% CI: exact (Clopper-Pearson) for binary scores, bootstrap for graded ones
    (``binary``: as for :func:`compare_paired`)."""
    if not scores or not (is_binary(scores) if binary is None else binary):
        return bootstrap_mean(scores, seed)
    right = int(sum(scores))
    ci = _scipy().binomtest(right, len(scores)).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return Interval(right / len(scores), float(ci.low), float(ci.high))


def exact_match(score: float | None) -> float:
    """A graded score as right or wrong: 1 only for full credit (reasoning-gym's "110" for 11 scores 0.667: wrong)."""
    return 1.0 if score == 1.0 else 0.0


def is_binary(*samples: Sequence[float]) -> bool:
    return all(v in (0.0, 1.0) for sample in samples for v in sample)


def _checked(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    np = _numpy()
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples must have the same length, got {x.size} and {y.size}")
    return x, y


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """McNemar's exact test: two-sided binomial test of the discordant pairs against p = 1/2."""
    np = _numpy()
    x, y = _checked(a, b)
    a_only, b_only = int(np.sum((x == 1) & (y == 0))), int(np.sum((x == 0) & (y == 1)))
    discordant = a_only + b_only
    p = 1.0 if discordant == 0 else float(_scipy().binomtest(a_only, discordant, 0.5).pvalue)
    return PairedTest("McNemar exact", min(1.0, p), a_only, b_only)


def _mcnemar_interval(test: PairedTest, items: int) -> Interval:
    """The exact interval for the direction, widened by how uncertain the share of discordant items is.

    The difference is d = s * (2 * w - 1), with s the share of items the arms disagree on and w the share
    of those the first arm wins. w gets the Clopper-Pearson interval of the discordant split (the inversion
    of McNemar's exact test: its sign decides whether the interval excludes 0), s the Clopper-Pearson
    interval of the discordant count, and the interval holds every d the two allow. So one discordant item
    of 50 is not read as "the difference is at most two points", and no discordant item still leaves room.
    """
    discordant = test.a_only + test.b_only
    estimate = (test.a_only - test.b_only) / items
    stats = _scipy()
    share = stats.binomtest(discordant, items).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    if discordant == 0:
        return Interval(0.0, -float(share.high), float(share.high))
    split = stats.binomtest(test.a_only, discordant).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    low, high = 2 * float(split.low) - 1, 2 * float(split.high) - 1
    s_low, s_high = float(share.low), float(share.high)
    return Interval(estimate, low * (s_high if low < 0 else s_low), high * (s_high if high > 0 else s_low))


def _sign_flip_p(diff: np.ndarray, seed: int) -> float:
    np = _numpy()
    if diff.size == 0 or np.all(diff == 0):
        return 1.0
    result = _scipy().permutation_test(
        (diff,), lambda d, axis: np.mean(d, axis=axis), permutation_type="samples", vectorized=True,
        n_resamples=RESAMPLES, alternative="two-sided", rng=np.random.default_rng(seed),
    )  # fmt: skip
    return min(1.0, float(result.pvalue))


def paired_permutation(a: Sequence[float], b: Sequence[float], seed: int = 0) -> PairedTest:
    """Paired permutation test of the mean difference: sign flips of a - b (exact when 2^n <= resamples)."""
    x, y = _checked(a, b)
    return PairedTest("paired permutation", _sign_flip_p(x - y, seed))


def _edge(rejects: Callable[[float], bool], inside: float, outside: float, steps: int = 24) -> float:
    """The last shift from ``inside`` towards ``outside`` the test does not reject (bisection)."""
    if not rejects(outside):
        return outside
    for _ in range(steps):
        middle = (inside + outside) / 2
        inside, outside = (inside, middle) if rejects(middle) else (middle, outside)
    return inside


def _permutation_interval(diff: np.ndarray, seed: int, bound: float) -> Interval:
    """Every shift d0 whose sign-flip test of (a - b - d0) is not rejected at 5% (see module docstring)."""
    np = _numpy()
    estimate = float(diff.mean())
    if diff.size < 2 or np.ptp(diff) == 0:
        return Interval(estimate, estimate, estimate)

    def rejects(shift: float) -> bool:
        return _sign_flip_p(diff - shift, seed) < ALPHA

    low, high = _edge(rejects, estimate, -bound), _edge(rejects, estimate, bound)
    if not rejects(0.0):  # ties make p jump at a shift that zeroes a difference: the test's own 0 decides
        low, high = min(low, 0.0), max(high, 0.0)
    return Interval(estimate, low, high)


def compare_paired(
    a: Sequence[float], b: Sequence[float], seed: int = 0, binary: bool | None = None
) -> PairedComparison:
    """Mean of a - b over the same items, the test for it and the interval that inverts that test. ``binary``:
    whether the scores are 0/1 (default: read from these scores; a report passes what holds for all its arms,
    so every pair of it uses the same test)."""
    np = _numpy()
    x, y = _checked(a, b)
    if x.size == 0:
        return PairedComparison(Interval(math.nan, math.nan, math.nan), PairedTest("none", math.nan), "none")
    if is_binary(x, y) if binary is None else binary:
        test = mcnemar_exact(x, y)
        return PairedComparison(_mcnemar_interval(test, x.size), test, "exact split of the discordant items")
    test = paired_permutation(x, y, seed)
    bound = float(max(1.0, np.max(np.abs(x - y))))
    return PairedComparison(
        _permutation_interval(x - y, seed, bound), test, "inverted paired permutation test (same resamples)"
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error), in the input order. A NaN (a pair with no test,
    such as an arm with no rows yet) is not in the family and stays NaN: ordered among the others, it made
    every larger p-value 1."""
    tested = [i for i, p in enumerate(p_values) if not math.isnan(p)]
    order = sorted(tested, key=lambda i: p_values[i])
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(tested) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def bonferroni(p_value: float, tries: int) -> float:
    """One p-value corrected for being the chosen one of ``tries`` tests (family-wise error): ``tries * p``, at
    most 1. For the smallest p-value of a family it equals Holm's; NaN stays NaN (no test)."""
    if tries < 1:
        raise ValueError(f"a p-value is one of at least 1 test, got {tries}")
    return p_value if math.isnan(p_value) else min(1.0, tries * p_value)
