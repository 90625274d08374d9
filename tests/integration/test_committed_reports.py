"""Every committed compare report replays: its rows come back identical from its own cache, with no model call.

The folders under docs/compare are the evidence the README and docs/compare.md cite. A change to how moot turns
model replies into a row (a tie rule, a program vote, a scorer, a prompt) would silently make them figures the
code no longer computes; this replays the first items of every folder, every arm, cache-only (no weights are
loaded), and fails naming the folder, item and arm whose row moved or whose call the cache no longer answers.
A whole-folder replay is the same command without the slice (docs/compare.md, *Replaying*).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from moot.harness import CompareRequest, run_comparison
from moot.harness.reports._selection import _sliced
from moot.harness.suites._selectors import parse_spec
from moot.harness.suites._suites import SUITE_FORMS

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(path.parent for path in (ROOT / "docs" / "compare").rglob("results.sqlite3"))
ITEMS = 4
"""Items replayed per folder: enough to cross every arm's code path, few enough for CI."""
COMPARED = ("answer", "score", "status", "prompt_tokens", "completion_tokens", "model_calls", "rounds", "stop_reason")


def _first_items(spec: str, n: int) -> str:
    """``spec`` cut to its first ``n`` items (inside its own slice, if it has one), placed as the report's own
    confirm commands place a slice (``_sliced``)."""
    parts = parse_spec(spec, what="suite spec", forms=SUITE_FORMS)
    start = (parts.slice.start or 0) if parts.slice is not None else 0
    name, mark, query = spec.partition("?")
    return _sliced(name.split("[", 1)[0] + mark + query, start, start + n)


def _rows(db: Path, items: set[str]) -> dict[tuple[str, str], tuple[object, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        found = connection.execute(f"SELECT item, arm_key, {', '.join(COMPARED)} FROM rows").fetchall()
    return {(item, key): tuple(rest) for item, key, *rest in found if item in items}


def _arms(db: Path) -> list[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return [arm for (arm,) in connection.execute("SELECT arm FROM rows GROUP BY arm ORDER BY min(rowid)")]


def test_there_are_committed_reports_to_replay():
    assert len(FOLDERS) >= 10 and all((folder / "cache" / "calls.sqlite3").is_file() for folder in FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda path: path.relative_to(ROOT / "docs" / "compare").as_posix())
def test_a_committed_report_replays_its_rows_from_its_cache(folder, tmp_path):
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    suite = _first_items(json.loads((folder / "summary.json").read_text())["suite"], ITEMS)
    request = CompareRequest(suite=suite, arms=_arms(folder / "results.sqlite3"), out=copy, rerun=True, cache_only=True)
    comparison = asyncio.run(run_comparison(request))
    items = {row.item for row in comparison.rows}
    assert comparison.missed == 0, f"{comparison.missed} rows need a call {folder.name}'s cache does not hold"
    assert comparison.meter.billed_calls == 0
    before, after = _rows(folder / "results.sqlite3", items), _rows(copy / "results.sqlite3", items)
    moved = {key: (before[key], after.get(key)) for key in before if before[key] != after.get(key)}
    assert not moved, f"{len(moved)} of {len(before)} rows replay differently, e.g. {next(iter(moved.items()))}"
    assert len(before) == len(comparison.rows) > 0
