"""``moot compare`` end to end on the real embedded model, offline: a report, then a replay with zero calls.

Two HumanEval problems, two arms (one generator call; a generator revised
against the docstring's tests), scored by the hidden tests in the sandbox.
Asserts what holds for any output of a 0.5B model: rows, files, counts, and
that the replay reaches no model, never accuracy.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
import typer
from typer.testing import CliRunner

from moot.harness import ResultRow, ResultStore

pytestmark = pytest.mark.embedded


def _app() -> typer.Typer:
    """The real ``moot`` app once it registers compare; until then, an app with the same command."""
    from moot import cli
    from moot.harness._cli import compare

    if any((c.name or getattr(c.callback, "__name__", "")) == "compare" for c in cli.app.registered_commands):
        return cli.app
    app = typer.Typer(add_completion=False)
    app.callback()(lambda: None)
    app.command()(compare)
    return app


def test_compare_humaneval_on_the_embedded_model_then_replay_it_from_the_cache(tmp_path):
    out = tmp_path / "compare"
    args = ["compare", "humaneval[:2]", "--arms", "single,reflection-tests", "--model", "local", "--out", str(out)]
    runner = CliRunner()
    first = runner.invoke(_app(), args, env={"COLUMNS": "160"})
    assert first.exit_code == 0, first.output + (first.stderr or "")
    for name in ("report.md", "report.html", "cost_accuracy.png", "summary.json", "results.sqlite3"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert [a["n"] for a in summary["arms"]] == [2, 2]
    assert summary["run_billed_calls"] >= 2 and summary["run_tokens"] > 0
    rows = _rows(out)
    assert len(rows) == 4 and all(r.status == "done" and r.score in (0.0, 1.0) for r in rows)
    assert all(r.completion_tokens > 0 for r in rows)
    single = {r.item: r for r in rows if r.arm == "single"}
    reflection = {r.item: r for r in rows if r.arm == "reflection-tests"}
    assert all(r.billed_calls == 1 for r in single.values())
    # A reflection's first draft is the single call itself (the same request: a cache hit), so its rounds are
    # measured against single; only its revisions reach the model.
    for item, row in reflection.items():
        assert row.metrics["first_round_score"] == single[item].score
        assert row.billed_calls <= row.model_calls - 1

    replay = runner.invoke(_app(), [*args, "--rerun"], env={"COLUMNS": "160"})
    assert replay.exit_code == 0, replay.output + (replay.stderr or "")
    again = json.loads((out / "summary.json").read_text())
    assert again["run_billed_calls"] == 0 and again["run_calls"] == summary["run_calls"]
    assert [a["accuracy"] for a in again["arms"]] == [a["accuracy"] for a in summary["arms"]]
    assert "Model calls this run: 0 billed of" in replay.output


def _rows(out) -> list[ResultRow]:
    with sqlite3.connect(out / "results.sqlite3") as db:
        keys = [k for (k,) in db.execute("SELECT DISTINCT arm_key FROM rows")]
    store = ResultStore(out / "results.sqlite3")
    try:
        return store.rows("humaneval", keys)
    finally:
        store.close()
