"""``moot compare`` on the command line: a report and a table on success, one line and exit 2 on bad input."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from moot.harness._cli import compare, default_out
from tests.unit.test_harness_support import PromptModel, arithmetic, write_sums


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.callback()
    def root() -> None:
        """moot"""

    app.command()(compare)  # the line moot.cli registers it with
    return app


def invoke(*args: str):
    return CliRunner().invoke(_app(), ["compare", *args], env={"COLUMNS": "200"})


def test_compare_runs_writes_the_report_and_replays_from_the_cache(tmp_path):
    suite = write_sums(tmp_path / "sums.jsonl", 3)
    model = PromptModel("cli-sums", arithmetic({1})).register()
    out = tmp_path / "out"
    try:
        first = invoke(str(suite), "--arms", "single,self-consistency,debate", "--model", model.spec, "--out", str(out),
                       "--compute-matched")  # fmt: skip
        assert first.exit_code == 0, first.output
        calls = model.calls
        replay = invoke(str(suite), "--arms", "single,self-consistency,debate", "--model", model.spec, "--out",
                        str(out), "--compute-matched", "--rerun")  # fmt: skip
    finally:
        model.unregister()
    assert replay.exit_code == 0, replay.output
    assert model.calls == calls  # the replay made no model call
    for name in ("report.md", "report.html", "cost_accuracy.png", "results.sqlite3", "summary.json"):
        assert (out / name).is_file(), name
    assert "moot compare" in first.output and "single" in first.output and "McNemar exact" in first.output
    assert "computed 9 rows" in first.output
    assert "Model calls this run: 0 billed of" in replay.output


def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path):
    result = invoke("humanevl[:2]", "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("moot: error: unknown suite 'humanevl[:2]'; valid forms:")
    assert result.stderr.strip().count("\n") == 0 and result.stdout == ""
    model = invoke(str(write_sums(tmp_path / "s.jsonl", 1)), "--model", "gpt4", "--out", str(tmp_path / "o"))
    assert model.exit_code == 2 and "unknown provider 'gpt4'" in model.stderr
    no_arms = invoke(str(tmp_path / "s.jsonl"), "--arms", ",", "--out", str(tmp_path / "o"))
    assert no_arms.exit_code == 2 and no_arms.stderr.startswith("moot: error: bad option arms: List should have")


def test_failed_rows_exit_1_with_the_report_written(tmp_path):
    suite = write_sums(tmp_path / "sums.jsonl", 2)
    model = PromptModel("cli-flaky", arithmetic(), fail_after=1).register()
    try:
        result = invoke(str(suite), "--arms", "single", "--model", model.spec, "--out", str(tmp_path / "out"))
    finally:
        model.unregister()
    assert result.exit_code == 1
    assert "1 rows failed; run the same command again to retry them" in result.stderr
    assert (tmp_path / "out" / "report.md").is_file()


def test_default_output_directory_is_per_suite_source():
    assert str(default_out("humaneval[:20]")) == "moot-compare/humaneval"
    assert str(default_out("reasoning-gym:gsm_symbolic?n=50&seed=1")) == "moot-compare/reasoning-gym-gsm_symbolic"
    assert str(default_out("data/qa.jsonl[:5]")) == "moot-compare/qa"
