"""moot's one plotting module: charts of a run (score, agreement and tokens per round) and the compare
report's cost-accuracy plot.

Drawn on matplotlib's Agg canvas directly, never through pyplot, so no GUI
backend or global figure state is touched (safe in a CLI, a test or a
kernel). A run's chart works from a stored run (``RunView``) or a live result;
the cost-accuracy plot from any arms that carry the figures it draws
(``CostAccuracyArm``), as the compare report's do.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from moot._extras import require

require("plot", "moot.display.plots (charts)")  # one line naming the extra, before matplotlib is imported

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from moot.display._run_view import RunView  # noqa: E402
from moot.teams import DebateResult, ReflectionResult  # noqa: E402

__all__ = [
    "CostAccuracyArm",
    "RoundSeries",
    "figure_png",
    "plot_cost_accuracy",
    "plot_result",
    "plot_run",
    "plot_series",
    "save_figure",
    "series_from_result",
    "series_from_view",
]


@dataclass
class RoundSeries:
    """What a chart shows, per round: the metric(s) and each agent's tokens."""

    title: str
    rounds: list[int]
    score: list[float | None] = field(default_factory=list)
    critic_scores: dict[str, list[float | None]] = field(default_factory=dict)
    agreement: list[float | None] = field(default_factory=list)
    tokens: dict[str, list[int]] = field(default_factory=dict)
    closing_tokens: dict[str, int] = field(default_factory=dict)
    """Tokens after the rounds (a debate's ruling), drawn as one extra bar."""

    @property
    def has_score(self) -> bool:
        return any(s is not None for s in self.score)

    @property
    def has_agreement(self) -> bool:
        return any(a is not None for a in self.agreement)


def series_from_view(view: RunView) -> RoundSeries:
    run = view.run
    title = f"{run.team} · run {run.id[:12]} · {run.status}\nstop: {run.stop_reason or run.error or '-'}"
    critics = sorted({c for r in view.rounds for c in r.scores})
    agents = list(dict.fromkeys(a for r in view.rounds for a in r.tokens))
    return RoundSeries(
        title=title,
        rounds=[r.round for r in view.rounds],
        score=[r.score for r in view.rounds],
        critic_scores={c: [r.scores.get(c) for r in view.rounds] for c in critics} if len(critics) > 1 else {},
        agreement=[r.agreement if r.complete else None for r in view.rounds],
        tokens={a: [r.tokens[a].total_tokens if a in r.tokens else 0 for r in view.rounds] for a in agents},
        closing_tokens={a: t.total_tokens for a, t in view.closing_tokens.items()},
    )


def series_from_result(result: ReflectionResult | DebateResult, title: str = "") -> RoundSeries:
    """A ReflectionResult's scores or a DebateResult's agreement, with tokens per agent per round."""
    usage = [r.usage for r in result.rounds]
    agents = list(dict.fromkeys(a for u in usage for a in u))
    kind = "reflection" if isinstance(result, ReflectionResult) else "debate"
    series = RoundSeries(
        title=title or f"{kind} · {len(result.rounds)} round(s)\nstop: {result.stop_reason}",
        rounds=[r.round for r in result.rounds],
        tokens={a: [u[a].prompt_tokens + u[a].completion_tokens if a in u else 0 for u in usage] for a in agents},
    )
    if isinstance(result, ReflectionResult):
        series.score = [r.score for r in result.rounds]
    else:
        experts = max((len(r.positions) for r in result.rounds), default=0)
        series.agreement = [r.agreement if len(r.positions) == experts else None for r in result.rounds]
        extra = {a: u for a, u in result.usage.items() if a not in agents}  # the arbiter's ruling
        series.closing_tokens = {a: u.prompt_tokens + u.completion_tokens for a, u in extra.items()}
    return series


def plot_series(series: RoundSeries) -> Figure:
    """Metric panel(s) on top (score 0-100, agreement 0-1), tokens per agent per round below."""
    metrics = [m for m, present in (("score", series.has_score), ("agreement", series.has_agreement)) if present]
    figure = Figure(figsize=(8, 2.6 * (len(metrics) + 1) + 0.6), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(metrics) + 1, 1, squeeze=False)[:, 0]
    figure.suptitle("\n".join(textwrap.shorten(line, 100) for line in series.title.splitlines()), fontsize=10)
    for ax, metric in zip(axes, metrics, strict=False):
        _score_panel(ax, series) if metric == "score" else _agreement_panel(ax, series)
    _token_panel(axes[-1], series)
    last = max(series.rounds, default=1) + (1 if series.closing_tokens else 0)
    for ax in axes:  # the same x range everywhere, so a round's point sits above its bar
        ax.set_xlim(min(series.rounds, default=1) - 0.5, last + 0.5)
    return figure


def _score_panel(ax: Axes, series: RoundSeries) -> None:
    _line(ax, series.rounds, series.score, "round score (lowest critic)", "o-", "tab:green", "{:g}")
    for critic, scores in series.critic_scores.items():
        _line(ax, series.rounds, scores, critic, "x--", None, "{:g}")
    ax.set_ylim(0, 112)
    ax.set_ylabel("score (0-100)")
    ax.set_title("score per round", fontsize=10, loc="left")
    _round_axis(ax, series.rounds)


def _agreement_panel(ax: Axes, series: RoundSeries) -> None:
    _line(ax, series.rounds, series.agreement, "agreement", "o-", "tab:blue", "{:.2f}")
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("share holding the top answer")
    ax.set_title("agreement per round", fontsize=10, loc="left")
    _round_axis(ax, series.rounds)


def _line(
    ax: Axes, rounds: list[int], values: list[float | None], label: str, style: str, color: str | None, fmt: str
) -> None:
    points = [(r, v) for r, v in zip(rounds, values, strict=True) if v is not None]
    if not points:
        return
    xs, ys = zip(*points, strict=True)
    ax.plot(xs, ys, style, label=label, color=color)
    for x, y in points:
        ax.annotate(fmt.format(y), (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    ax.legend(loc="lower right", fontsize=8)


def _round_axis(ax: Axes, rounds: list[int]) -> None:
    ax.set_xticks(rounds, [str(r) for r in rounds])
    ax.set_xlabel("round")
    ax.grid(alpha=0.3)


def _token_panel(ax: Axes, series: RoundSeries) -> None:
    positions = [float(r) for r in series.rounds]
    labels = [str(r) for r in series.rounds]
    bottom = [0.0] * len(positions)
    for agent, counts in series.tokens.items():
        ax.bar(positions, counts, bottom=bottom, label=agent, width=0.6)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    if series.closing_tokens:
        x = (positions[-1] if positions else 0.0) + 1
        base = 0.0
        for agent, count in series.closing_tokens.items():
            ax.bar([x], [count], bottom=[base], label=agent, width=0.6, hatch="//")
            base += count
        positions, labels = [*positions, x], [*labels, "ruling"]
    ax.set_xticks(positions, labels)
    ax.set_xlabel("round")
    ax.set_ylabel("tokens (prompt + completion)")
    ax.set_title("tokens per round, per agent", fontsize=10, loc="left")
    ax.grid(axis="y", alpha=0.3)
    if series.tokens or series.closing_tokens:
        top = max([*bottom, sum(series.closing_tokens.values())], default=0)
        ax.set_ylim(0, max(top, 1) * 1.3)  # headroom for the legend above the bars
        ax.legend(fontsize=8, loc="upper left", ncol=min(5, len(series.tokens) + len(series.closing_tokens)))


def plot_run(view: RunView) -> Figure:
    return plot_series(series_from_view(view))


def plot_result(result: ReflectionResult | DebateResult, title: str = "") -> Figure:
    """A chart of a live result, e.g. in a notebook: ``Image(figure_png(plot_result(result)))``."""
    return plot_series(series_from_result(result, title))


class CostAccuracyArm(Protocol):
    """What the cost-accuracy plot reads of one compared arm (the compare report's arm summaries carry it)."""

    label: str
    n: int
    accuracy: float
    ci_low: float
    ci_high: float
    mean_tokens: float


def plot_cost_accuracy(arms: Sequence[CostAccuracyArm], *, suite: str, exact_first: bool = False) -> Figure:
    """Accuracy (with its 95% CI) against logical tokens per item, one point per arm: logical tokens, so a
    replayed comparison plots the same picture as the run that paid for it. ``exact_first``: the suite gives
    partial credit, so the accuracy drawn counts exact matches and the axis says so."""
    figure = Figure(figsize=(7, 4.5), dpi=120)
    ax = figure.subplots()
    for arm in arms:
        if math.isfinite(arm.mean_tokens) and math.isfinite(arm.accuracy):
            _cost_point(ax, arm)
    ax.set_xlabel("mean tokens per item (logical: cache hits included)")
    ax.set_ylabel(("exact-match accuracy" if exact_first else "accuracy") + ", % (95% CI)")
    ax.set_ylim(-5, 105)
    ax.margins(x=0.15)
    ax.set_title(f"{suite}: cost vs accuracy", fontsize=10)
    ax.grid(True, alpha=0.3)
    if arms:
        ax.legend(fontsize=8, loc="best")
    figure.tight_layout()
    return figure


def _cost_point(ax: Axes, arm: CostAccuracyArm) -> None:
    """One arm: its accuracy with the interval as error bars (an unknown bound draws none), labelled."""
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
    ax.annotate(arm.label, (arm.mean_tokens, 100 * arm.accuracy), textcoords="offset points", xytext=(6, 6), fontsize=8)


def save_figure(figure: Figure, path: str | Path, *, dpi: float = 110) -> Path:
    """``figure`` as a PNG file at ``path`` (its folder made if missing)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, format="png", dpi=dpi)
    return target


def figure_png(figure: Figure) -> bytes:
    """PNG bytes, e.g. for ``IPython.display.Image(figure_png(fig))``."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()
