"""Write a report into the output directory: Markdown, HTML, the plot and a JSON summary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from moot.harness.reports._render import PLOT_FILE, markdown, page
from moot.harness.reports._report import Report

__all__ = ["ReportFiles", "write_report"]

_PLOT_DPI = 120
"""The report's plot resolution, as every committed report's ``cost_accuracy.png`` was drawn."""


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    html: Path
    plot: Path
    summary: Path


def write_report(report: Report, out: Path) -> ReportFiles:
    out.mkdir(parents=True, exist_ok=True)
    files = ReportFiles(out / "report.md", out / "report.html", out / PLOT_FILE, out / "summary.json")
    _write_plot(report, files.plot)
    files.markdown.write_text(markdown(report), encoding="utf-8")
    files.html.write_text(page(report), encoding="utf-8")
    files.summary.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return files


def _write_plot(report: Report, path: Path) -> None:
    """The cost-accuracy plot, drawn by moot's one plotting module; matplotlib is imported only here, when a
    report is written (a missing extra is one line)."""
    from moot.display.plots import plot_cost_accuracy, save_figure

    figure = plot_cost_accuracy(report.arms, suite=report.suite, exact_first=report.exact_first)
    save_figure(figure, path, dpi=_PLOT_DPI)
