"""Tables fit a terminal of 80 or 60 columns and never cut a number: `moot runs` and `moot compare`'s tables.

At 80 columns `moot runs` showed 3125 tokens as "31" (or left the column out) and compare's intervals were cut
("[-52…"). Each table is rendered at 200, 80 and 60 columns, and every number it holds must appear whole.
"""

from __future__ import annotations

import asyncio
import io
import re

import pytest

from moot._meter import Meter
from moot.boundary import TerminalConsole
from moot.display import fitted_table, runs_table
from moot.harness.jobs._runner import CompareRequest, run_comparison
from moot.harness.reports._render import pairs_table, rounds_table, tables, terminal_table
from moot.harness.reports._report import build_report
from moot.store import RunRecord, RunStatus
from tests.unit.test_harness_support import write_sums

WIDTHS = (200, 80, 60)
LEFT_TO_THE_REPORT = ("settings", "billed calls/item", "cost/item", "rounds", "parse fails")
"""The arm columns the terminal leaves to the written report (``_LEFT_OUT_OF_TERMINAL``)."""


def rendered(renderable: object, width: int) -> str:
    console = TerminalConsole(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert all(len(line) <= width for line in text.splitlines()), text
    return text


def record(run_id: str, tokens: int, cost: float = 0.0, reason: str = "max rounds: 3 of 3 rounds done") -> RunRecord:
    return RunRecord(
        id=run_id, scenario="scenarios/architecture_review.yaml", team="Debate", task="t", models={}, options={},
        status=RunStatus.INTERRUPTED, stop_reason=reason, result=None, error=None, created_at="2026-12-04T22:00:00",
        updated_at="2026-12-04T22:00:00", turns=17,
        tokens=Meter(calls=9, prompt_tokens=tokens - 125, completion_tokens=125, cost_usd=cost),
    )  # fmt: skip


@pytest.mark.parametrize("width", WIDTHS)
def test_moot_runs_shows_every_id_and_number_whole(width):
    records = [record("0" * 31 + "a", 3125), record("f" * 32, 1_234_567, cost=0.0421), record("b" * 32, 7)]
    text = rendered(runs_table(records, {r.id: 12 for r in records}, width=width), width)
    for r in records:
        assert r.id in text  # copied into moot show / moot resume: never folded
        assert re.search(rf"(?<![\d,]){r.tokens.total_tokens}(?![\d,])", text), text
    assert "$0.0421" in text and " 12 " in text
    assert "interrupted" in text  # the status is shown at every width (beside the id or under it)


def test_a_table_too_wide_for_the_terminal_is_split_and_then_stacked_never_cut():
    head = ["arm", "n", "accuracy", "95% CI", "tokens/item", "billed tokens/item", "calls/item", "acc. per 1k tokens"]
    rows = [
        ["self-consistency?k=16", "164", "100.0%", "[-52.2%, +52.2%]", "1,234,567", "1,385,000", "15.4", "0.081"],
        ["single", "164", "61.0%", "[53.4%, 68.3%]", "412", "412", "1.0", "1.481"],
    ]
    for width in (200, 80, 60, 40):
        text = rendered(fitted_table("arms", head, rows, {"arm"}, width), width)
        for cell in (c for row in rows for c in row[1:]):
            assert cell in text, (width, cell, text)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("fit")
    suite = write_sums(out / "sums.jsonl", 4)
    compared = CompareRequest(suite=str(suite), arms=["single", "self-consistency", "reflection", "debate"],
                             models=["scripted:deterministic"], out=out / "out")  # fmt: skip
    return build_report(asyncio.run(run_comparison(compared)))


@pytest.mark.parametrize("width", WIDTHS)
def test_compares_tables_show_every_number_and_interval_whole(report, width):
    found = tables(report)
    shown = {
        "arms": rendered(terminal_table(report, width), width),
        "pairs": rendered(pairs_table(report, width), width),
        "rounds": rendered(rounds_table(report, width), width),
    }
    number = re.compile(r"[-+\[\]\d.,%]+")
    for name, (head, rows) in (("arms", found.arms), ("pairs", found.pairs), ("rounds", found.rounds)):
        assert rows, name
        for row in rows:
            for column, cell in zip(head, row, strict=True):
                if not number.fullmatch(cell.replace(" ", "")) or (name == "arms" and column in LEFT_TO_THE_REPORT):
                    continue
                assert cell in shown[name], (name, width, column, cell, shown[name])
    assert "[" in shown["arms"] and "%]" in shown["arms"]  # the intervals are there, whole


def test_rich_print_of_a_report_or_a_comparison_is_what_moot_compare_prints(report, tmp_path):
    from rich.console import Group

    from moot.harness.reports._render import report_renderables

    expected = rendered(Group(*report_renderables(report, 80)), 80)
    assert rendered(report, 80) == expected  # not a dump of the model's fields
    assert "ArmSummary(" not in expected and "moot compare:" in expected
    suite = write_sums(tmp_path / "sums.jsonl", 2)
    compared = CompareRequest(suite=str(suite), arms=["single"], models=["scripted:deterministic"], out=tmp_path / "o")
    comparison = asyncio.run(run_comparison(compared))
    shown = rendered(comparison, 60)
    assert "ResultRow(" not in shown and "single" in shown and "[0.0%, 84.2%]" in shown
