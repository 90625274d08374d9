"""Write a report into the output directory: Markdown, HTML, the plot and a JSON summary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from moot.harness.reports._plot import plot_cost_accuracy
from moot.harness.reports._render import PLOT_FILE, markdown, page
from moot.harness.reports._report import Report

__all__ = ["ReportFiles", "write_report"]


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    html: Path
    plot: Path
    summary: Path


def write_report(report: Report, out: Path) -> ReportFiles:
    out.mkdir(parents=True, exist_ok=True)
    files = ReportFiles(out / "report.md", out / "report.html", out / PLOT_FILE, out / "summary.json")
    plot_cost_accuracy(report, files.plot)
    files.markdown.write_text(markdown(report), encoding="utf-8")
    files.html.write_text(page(report), encoding="utf-8")
    files.summary.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return files
