"""The cost-accuracy plot: accuracy (with its 95% CI) against logical tokens per item, one point per arm.

Drawn on a standalone matplotlib ``Figure`` (no display, no pyplot state); logical tokens, so a
replayed comparison plots the same picture as the run that paid for it.
"""

from __future__ import annotations

import math
from pathlib import Path

from moot.harness.reports._report import Report

__all__ = ["plot_cost_accuracy"]


def plot_cost_accuracy(report: Report, path: Path) -> Path:
    from matplotlib.figure import Figure

    # A Figure of its own, not pyplot's: no global backend switched, no figure registry to leak into,
    # safe beside a notebook's or an application's own plots.
    fig = Figure(figsize=(7, 4.5), dpi=120)
    ax = fig.subplots()
    for arm in report.arms:
        if not (math.isfinite(arm.mean_tokens) and math.isfinite(arm.accuracy)):
            continue
        low = max(0.0, arm.accuracy - arm.ci_low) if math.isfinite(arm.ci_low) else 0.0
        high = max(0.0, arm.ci_high - arm.accuracy) if math.isfinite(arm.ci_high) else 0.0
        ax.errorbar(
            [arm.mean_tokens],
            [100 * arm.accuracy],
            yerr=[[100 * low], [100 * high]],
            fmt="o",
            capsize=4,
            label=f"{arm.label} (n={arm.n})",
        )
        ax.annotate(
            arm.label, (arm.mean_tokens, 100 * arm.accuracy), textcoords="offset points", xytext=(6, 6), fontsize=8
        )
    ax.set_xlabel("mean tokens per item (logical: cache hits included)")
    ax.set_ylabel(("exact-match accuracy" if report.exact_first else "accuracy") + ", % (95% CI)")
    ax.set_ylim(-5, 105)
    ax.margins(x=0.15)
    ax.set_title(f"{report.suite}: cost vs accuracy", fontsize=10)
    ax.grid(True, alpha=0.3)
    if report.arms:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path
