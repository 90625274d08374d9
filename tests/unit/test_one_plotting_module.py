"""One plotting module: moot.display.plots draws every chart (a run's and the compare report's), and is the only
moot module that imports matplotlib (read from the source, so nothing has to be imported)."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "moot"


def _imports_matplotlib(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "matplotlib":
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "matplotlib" for a in node.names):
            return True
    return False


def test_only_the_plotting_module_imports_matplotlib():
    plotting = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if _imports_matplotlib(p))
    assert plotting == ["display/plots.py"]


@dataclass
class Arm:
    label: str
    n: int
    accuracy: float
    ci_low: float
    ci_high: float
    mean_tokens: float


def test_the_cost_accuracy_plot_draws_any_arms_that_carry_its_figures(tmp_path):
    pytest.importorskip("matplotlib")
    from moot.display.plots import plot_cost_accuracy, save_figure

    arms = [
        Arm("single", 10, 0.5, 0.2, 0.8, 120.0),
        Arm("debate", 10, 0.7, math.nan, 0.9, 900.0),  # an unknown bound: no error bar below
        Arm("idle", 0, math.nan, math.nan, math.nan, math.nan),  # nothing measured: no point
    ]
    figure = plot_cost_accuracy(arms, suite="sums", exact_first=True)
    [ax] = figure.axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["single (n=10)", "debate (n=10)"]
    assert ax.get_ylabel() == "exact-match accuracy, % (95% CI)" and ax.get_title() == "sums: cost vs accuracy"
    path = save_figure(figure, tmp_path / "plots" / "cost.png", dpi=120)
    assert path.read_bytes().startswith(b"\x89PNG")
