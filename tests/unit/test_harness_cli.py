"""``moot compare`` on the command line: a report and a table on success, one line and exit 2 on bad input."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from moot.harness._cli import arms_help, compare, default_out
from moot.harness.suites._files import MAX_ITEM_BYTES
from tests.unit.test_harness_support import PromptModel, arithmetic, write_sums
from tests.unprivileged import run_moot


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
    rows = [line for line in replay.output.splitlines() if re.match(r"q\d+ · [a-z-]+ · score [0-9.]+ · ", line)]
    assert len(rows) == 9 and all("replayed from the cache; as paid:" in line for line in rows), replay.output
    assert not any("replayed" in line for line in first.output.splitlines() if re.match(r"q\d+ · ", line))


def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path):
    result = invoke("humanevl[:2]", "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("moot: error: unknown suite 'humanevl[:2]'; valid forms:")
    assert result.stderr.strip().count("\n") == 0 and result.stdout == ""
    model = invoke(str(write_sums(tmp_path / "s.jsonl", 1)), "--model", "gpt4", "--out", str(tmp_path / "o"))
    assert model.exit_code == 2 and "unknown provider 'gpt4'" in model.stderr
    no_arms = invoke(str(tmp_path / "s.jsonl"), "--arms", ",", "--out", str(tmp_path / "o"))
    assert no_arms.exit_code == 2 and no_arms.stderr.startswith("moot: error: bad option arms: List should have")


def test_failed_rows_exit_3_with_the_report_written(tmp_path):
    suite = write_sums(tmp_path / "sums.jsonl", 2)
    model = PromptModel("cli-flaky", arithmetic(), fail_after=1).register()
    try:
        result = invoke(str(suite), "--arms", "single", "--model", model.spec, "--out", str(tmp_path / "out"))
    finally:
        model.unregister()
    assert result.exit_code == 3  # partial: the report is written, the same command retries the failed rows
    assert "1 rows failed; run the same command again to retry them" in result.stderr
    assert (tmp_path / "out" / "report.md").is_file()


def test_default_output_directory_is_per_suite_source():
    assert str(default_out("humaneval[:20]")) == "moot-compare/humaneval"
    assert str(default_out("reasoning-gym:gsm_symbolic?n=50&seed=1")) == "moot-compare/reasoning-gym-gsm_symbolic"
    assert str(default_out("data/qa.jsonl[:5]")) == "moot-compare/qa"


def refused(result, start: str) -> None:
    """One line on stderr, exit 2, nothing on stdout."""
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(start), result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


NOT_UTF8 = b'{"input": "2+2", "answer": "4"}\n{"input": "caf\xe9", "answer": "x"}\n'
TOO_BIG = b'{"input": "' + b"x" * MAX_ITEM_BYTES + b'"}\n'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (NOT_UTF8, "line 2 is not UTF-8 text (byte 0xe9 at offset 14); save it as UTF-8"),
        (TOO_BIG, "line 1 is over the size limit of one item (1,000,000 bytes)"),
    ],
)
def test_an_unreadable_items_file_is_one_line_and_writes_nothing(tmp_path, content, message):
    suite = tmp_path / "items.jsonl"
    suite.write_bytes(content)
    refused(invoke(str(suite), "--out", str(tmp_path / "out")), f"moot: error: {suite} {message}")
    assert not (tmp_path / "out").exists()


def test_a_yaml_items_file_that_is_not_utf8_is_one_line(tmp_path):
    suite = tmp_path / "items.yaml"
    suite.write_bytes(b"- input: caf\xe9\n  answer: x\n")
    refused(invoke(str(suite), "--out", str(tmp_path / "out")), f"moot: error: {suite} is not UTF-8 text (byte 0xe9")


def test_an_out_that_is_a_file_is_one_line(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 1)
    a_file = tmp_path / "taken"
    a_file.write_text("mine")
    model = ("--model", "scripted:deterministic")
    refused(
        invoke(str(suite), *model, "--out", str(a_file)), f"moot: error: --out {a_file} is a file; give a directory"
    )
    below = a_file / "out"
    refused(invoke(str(suite), *model, "--out", str(below)), f"moot: error: --out {below} is under {a_file}, a file;")
    assert a_file.read_text() == "mine"


def test_an_out_in_an_unwritable_directory_is_one_line(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 1)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    done = run_moot("compare", str(suite), "--model", "scripted:deterministic", "--out", str(locked / "out"))
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == f"moot: error: --out {locked / 'out'}: {locked} is not writable; give a directory you can write\n"
    )
    assert list(locked.iterdir()) == []


def test_a_concurrency_of_0_is_one_line(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 1)
    refused(
        invoke(str(suite), "--concurrency", "0", "--out", str(tmp_path / "out")),
        "moot: error: bad option concurrency: Input should be greater than or equal to 1 (got 0)",
    )


def test_local_without_the_extra_is_refused_before_the_header_and_the_results_file(tmp_path, without_local_extra):
    suite = write_sums(tmp_path / "s.jsonl", 1)
    out = tmp_path / "out"
    refused(invoke(str(suite), "--model", "local", "--out", str(out)), "moot: error: the embedded model needs")
    assert not out.exists()


def test_a_suite_dry_runs_on_the_built_in_test_model(tmp_path):
    suite = tmp_path / "mixed.jsonl"
    suite.write_text(
        '{"input": "What is 2+3?", "answer": "5", "scoring": "numeric"}\n'
        '{"question": "Is 7 prime?", "answer": "Yes", "choices": ["Yes", "No"]}\n'
    )
    out = tmp_path / "out"
    result = invoke(str(suite), "--model", "scripted:deterministic", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "computed 8 rows" in result.output and (out / "report.md").is_file()


def test_help_names_the_ray_extra_and_the_exit_codes():
    from moot.cli import app

    text = " ".join(CliRunner().invoke(app, ["compare", "--help"], env={"COLUMNS": "400"}).stdout.split())
    assert "needs the [ray] extra" in text and "self-consistency[?k=N]" in text and "humaneval[:N]" in text
    assert "Exit codes: 0 finished; 1 failed; 2 bad input (nothing run or written); 3 partial" in text
    # compare goes on by running the same command again, not by moot resume (which takes a run id)
    assert "run the same command again with the same --out" in text and "moot resume" not in text


def test_arms_help_lists_every_registered_arm_and_every_debate_arbiter(monkeypatch):
    from moot.cli import app
    from moot.harness.arms import _registry
    from moot.harness.arms._sampling import Single
    from moot.harness.arms._team_arms import DebateSettings

    text = " ".join(CliRunner().invoke(app, ["compare", "--help"], env={"COLUMNS": "400"}).stdout.split())
    for name in _registry.known_arms():  # best-of-k-tests and reflection-tests too
        assert f" {name}," in text
    assert "arbiter=auto|rounds|vote|llm" in text
    assert DebateSettings().arbiter == "auto"  # the default the help explains
    _registry.register_arm("my-arm", Single)  # an arm registered from code shows with no edit here
    try:
        assert " debate, my-arm, reflection," in arms_help()
    finally:
        _registry.unregister_arm("my-arm")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--no-cache", "--cache", "{tmp}/c"], "moot: error: give --cache {tmp}/c or --no-cache, not both"),
        (["--arms", "single,reflection", "--k", "3"], "moot: error: --k sets self-consistency's samples, and the arms"),
        (["--arms", "debate,self-consistency", "--compute-matched", "--k", "3"], "moot: error: --k and --compute-ma"),
        (["--report-only", "--rerun"], "moot: error: --report-only runs nothing and --rerun recomputes every row"),
        (["--report-only"], "moot: error: --report-only: {tmp}/out holds no results yet (results.sqlite3 is missing)"),
        (["--purpose", "publishing"], "moot: error: bad option purpose: Input should be 'tuning' or 'evaluation'"),
    ],
)
def test_options_that_contradict_each_other_are_one_line_and_write_nothing(tmp_path, flags, message):
    suite = write_sums(tmp_path / "s.jsonl", 1)
    given = [f.format(tmp=tmp_path) for f in flags]
    refused(invoke(str(suite), "-m", "scripted:deterministic", "--out", str(tmp_path / "out"), *given),
            message.format(tmp=tmp_path))  # fmt: skip
    assert not (tmp_path / "out").exists() and not (tmp_path / "c").exists()


def test_report_only_with_no_finished_row_of_these_arms_is_one_line(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 1)
    out = tmp_path / "out"
    first = invoke(str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(out))
    assert first.exit_code == 0, first.output
    files = sorted(p.name for p in out.iterdir())
    refused(
        invoke(str(suite), "-m", "scripted:deterministic", "--arms", "reflection", "--out", str(out), "--report-only"),
        f"moot: error: --report-only: {out} holds no finished row of {suite} with these arms",
    )
    assert sorted(p.name for p in out.iterdir()) == files
    again = invoke(str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(out), "--report-only")
    assert again.exit_code == 0 and "single" in again.output


def test_a_cache_only_rerun_says_what_it_reproduced_and_a_miss_exits_3(tmp_path):
    suite = write_sums(tmp_path / "sums.jsonl", 2)
    model = PromptModel("cli-cache-only", arithmetic()).register()
    out = tmp_path / "out"
    try:
        first = invoke(str(suite), "--arms", "single", "--model", model.spec, "--out", str(out))
        assert first.exit_code == 0, first.output
        model.calls = 0
        replay = invoke(str(suite), "--arms", "single", "--model", model.spec, "--out", str(out), "--rerun",
                        "--cache-only")  # fmt: skip
        more = invoke(str(suite), "--arms", "single,debate", "--model", model.spec, "--out", str(out),
                      "--cache-only")  # fmt: skip
    finally:
        model.unregister()
    assert model.calls == 0
    assert replay.exit_code == 0, replay.output
    assert (
        "replay: 2 rows reproduced from the cache exactly, 0 recomputed with a different result or with new "
        "calls, 0 missed the cache; 0 billed model calls" in replay.stdout.replace("\n", " ")
    )
    assert more.exit_code == 3, more.output  # debate was never run, so the cache cannot answer it
    assert (
        "2 rows needed a call the cache does not hold and were left as they were; run without --cache-only"
        in more.stderr.replace("\n", " ")
    )


# ------------------------------------------------------------------- issue 41: the last rough edges
def test_a_cache_that_is_a_file_is_refused_up_front_and_writes_nothing(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 2)
    a_file = tmp_path / "cache"
    a_file.write_text("mine")
    out = tmp_path / "out"
    for cache, message in ((a_file, f"--cache {a_file} is a file;"), (a_file / "sub", f"is under {a_file}, a file;")):
        result = invoke(str(suite), "-m", "scripted:deterministic", "--out", str(out), "--cache", str(cache))
        refused(result, f"moot: error: --cache {cache} " if cache == a_file / "sub" else f"moot: error: {message}")
        assert message in result.stderr
    assert not out.exists() and a_file.read_text() == "mine"


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"tests": ["assert f(1) == 2 +"]}, "item 1: tests: test 1 is not valid Python"),
        ({"tests": ["assert f(1) == 2", "def (:"]}, "item 1: tests: test 2 is not valid Python"),
        ({"tests": ["assert f(1) == 2"], "visible_tests": ["assert f(1) =="]}, "item 1: visible_tests: test 1 is not"),
    ],
)
def test_a_suite_whose_tests_do_not_compile_is_refused_before_anything_is_written(tmp_path, fields, where):
    suite = tmp_path / "code.jsonl"
    suite.write_text(json.dumps({"id": "c1", "input": "write f", "entry_point": "f", **fields}) + "\n")
    out, cache = tmp_path / "out", tmp_path / "cache"
    flags = ("-m", "scripted:deterministic", "--arms", "single", "--out", str(out), "--cache", str(cache))
    refused(invoke(str(suite), *flags), f"moot: error: {suite} {where}")
    assert not out.exists() and not cache.exists()


@pytest.mark.parametrize("name", ["items", "items.jsonl", "items.yaml"])
def test_a_directory_given_as_a_suite_says_it_is_a_directory(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    write_sums(folder / "sums.jsonl", 1)
    result = invoke(str(folder), "-m", "scripted:deterministic", "--out", str(tmp_path / "out"))
    refused(result, f"moot: error: suite {str(folder)!r} is a directory; give a suite file (PATH.jsonl or PATH.yaml")
    assert str(folder / "sums.jsonl") in result.stderr  # what in it would be valid
    assert not (tmp_path / "out").exists()


def test_a_cache_only_replay_without_the_rows_model_names_it_in_one_line(tmp_path):
    suite = write_sums(tmp_path / "sums.jsonl", 3)
    out = tmp_path / "out"
    arms = ("--arms", "single,debate")
    first = invoke(str(suite), *arms, "-m", "scripted:deterministic", "-m", "judge=scripted:deterministic",
                   "--out", str(out))  # fmt: skip
    assert first.exit_code == 0, first.output
    before = (out / "results.sqlite3").read_bytes()
    for flags in (["--rerun", "--cache-only"], ["--cache-only"]):
        result = invoke(str(suite), *arms, "--out", str(out), *flags)
        refused(
            result,
            f"moot: error: --cache-only: the rows of {suite} in {out} were computed with scripted:deterministic "
            f"(judge: scripted:deterministic), not local; to replay them, give --model scripted:deterministic "
            f"--model judge=scripted:deterministic",
        )
        assert "row failed" not in result.output
    assert (out / "results.sqlite3").read_bytes() == before
    named = invoke(str(suite), *arms, "--out", str(out), "--rerun", "--cache-only", "-m", "scripted:deterministic",
                   "-m", "judge=scripted:deterministic")  # fmt: skip
    assert named.exit_code == 0, named.output
    assert "6 rows reproduced from the cache exactly" in named.stdout.replace("\n", " ")


def test_the_resume_command_is_the_same_command_with_its_out():
    from moot.harness._cli import compare_command
    from moot.harness.jobs._runner import CompareRequest

    compared = CompareRequest(
        suite="my suite.jsonl[:5]", arms=["single", "debate?experts=3"], models=["local", "judge=openai:gpt-4o"],
        out=Path("o u t"), concurrency=4, k=None, cache=Path("c"), rerun=True, seed=7,
    )  # fmt: skip
    command = compare_command(compared)
    assert command == (
        "moot compare 'my suite.jsonl[:5]' --arms 'single,debate?experts=3' --model local --model "
        "judge=openai:gpt-4o --out 'o u t' --concurrency 4 --cache c --rerun --seed 7"
    )
    assert compare_command(CompareRequest(suite="s.jsonl", arms=["single"], out=Path("o"), use_cache=False)) == (
        "moot compare s.jsonl --arms single --out o --no-cache"
    )


def test_progress_at_a_terminal_has_a_bar_per_arm_with_count_rate_and_eta(tmp_path):
    import io

    from rich.progress import Progress

    from moot.boundary import TerminalConsole
    from moot.harness._cli import PROGRESS_COLUMNS, _Bar
    from moot.harness.jobs._runner import CompareRequest, run_comparison

    suite = write_sums(tmp_path / "sums.jsonl", 3)
    screen = io.StringIO()
    console = TerminalConsole(file=screen, force_terminal=True, width=100, color_system=None)
    compared = CompareRequest(suite=str(suite), arms=["single", "reflection"], models=["scripted:deterministic"],
                             out=tmp_path / "out")  # fmt: skip
    with Progress(*PROGRESS_COLUMNS, console=console, auto_refresh=False) as progress:
        bar = _Bar(progress)
        asyncio.run(run_comparison(compared, progress=bar))
        counts = {task.description.replace(" ", ""): (task.completed, task.total) for task in progress.tasks}
        progress.refresh()
    assert counts == {"single": (3, 3), "reflection": (3, 3), "[bold]allarms[/]": (6, 6)}
    shown = screen.getvalue()
    for text in ("single", "reflection", "all arms", "3/3", "6/6", "rows/min", "done"):
        assert text in shown, shown
    # a second invocation finds every row finished: its bars start full, and no rate is made up
    with Progress(*PROGRESS_COLUMNS, console=console, auto_refresh=False) as progress:
        asyncio.run(run_comparison(compared, progress=_Bar(progress)))
        assert [(t.completed, t.total, t.fields["before"]) for t in progress.tasks] == [(3, 3, 3)] * 2 + [(6, 6, 6)]


def test_bad_input_found_only_at_the_first_row_leaves_no_results_file_or_cache(tmp_path):
    from moot.errors import ConfigError
    from moot.testing import ScriptedModel

    suite = write_sums(tmp_path / "s.jsonl", 1)
    out, cache = tmp_path / "out", tmp_path / "cache"
    refusing = ConfigError("the provider refused the API key (401 unauthorized); check the key")
    with ScriptedModel({"solver": [refusing]}, name="refusing-key"):
        result = invoke(str(suite), "--arms", "single", "-m", "scripted:refusing-key", "--out", str(out),
                        "--cache", str(cache))  # fmt: skip
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output  # (after the header: found late)
    assert result.stderr.startswith("moot: error: the provider refused the API key (401 unauthorized)")
    assert not out.exists() and not cache.exists()
    # a folder that was there before is the user's: it stays, with what it held
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with ScriptedModel({"solver": [refusing]}, name="refusing-key"):
        again = invoke(str(suite), "--arms", "single", "-m", "scripted:refusing-key", "--out", str(out))
    assert again.exit_code == 2 and (out / "notes.txt").read_text() == "mine"


def test_ctrl_c_while_the_report_is_written_says_every_row_is_saved(tmp_path, monkeypatch):
    suite = write_sums(tmp_path / "s.jsonl", 2)
    out = tmp_path / "out"

    def interrupted(report, folder):
        raise KeyboardInterrupt

    monkeypatch.setattr("moot.harness._cli.write_report", interrupted)
    result = invoke(str(suite), "--arms", "single", "-m", "scripted:deterministic", "--out", str(out))
    assert result.exit_code == 130, result.output
    assert result.stderr == (
        f"moot compare stopped (Ctrl-C); 2 finished rows are saved in {out / 'results.sqlite3'} (2 by this run); "
        f"to go on, run the same command again: moot compare {suite} --arms single --model scripted:deterministic "
        f"--out {out}\n"
    )


def test_a_folder_states_its_purpose_and_refuses_rows_of_the_other_one(tmp_path):
    suite = write_sums(tmp_path / "s.jsonl", 2)
    out = tmp_path / "out"
    tuning = invoke(str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(out),
                    "--purpose", "tuning")  # fmt: skip
    assert tuning.exit_code == 0, tuning.output
    assert "Tuning run: its figures are for choosing a protocol, not for publishing" in tuning.output
    text = (out / "report.md").read_text()
    assert text.index("**Tuning run:**") < text.index("## Arms")
    assert json.loads((out / "summary.json").read_text())["purpose"] == "tuning"
    files = sorted(p.name for p in out.iterdir())
    refused(
        invoke(
            str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(out), "--purpose", "evaluation"
        ),
        f"moot: error: {out} holds a tuning run, so --purpose evaluation cannot add to it",
    )
    assert sorted(p.name for p in out.iterdir()) == files
    again = invoke(str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(out))
    assert again.exit_code == 0 and "Tuning run" in again.output  # no --purpose: the folder's own
    fresh = invoke(str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(tmp_path / "eval"))
    assert fresh.exit_code == 0 and "Tuning run" not in fresh.output and "Purpose unstated" not in fresh.output
    assert json.loads((tmp_path / "eval" / "summary.json").read_text())["purpose"] == "evaluation"


def test_report_only_states_the_purpose_of_a_folder_from_before_purposes_and_no_other(tmp_path):
    import sqlite3

    suite = write_sums(tmp_path / "s.jsonl", 2)
    out = tmp_path / "out"
    assert invoke(str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(out)).exit_code == 0
    with sqlite3.connect(out / "results.sqlite3") as db:  # as written before purposes were recorded
        db.execute("DELETE FROM meta WHERE key = 'purpose'")
    stated = invoke(str(suite), "-m", "scripted:deterministic", "--arms", "single", "--out", str(out),
                    "--report-only", "--purpose", "tuning")  # fmt: skip
    assert stated.exit_code == 0, stated.output
    assert json.loads((out / "summary.json").read_text())["purpose"] == "tuning"
    with sqlite3.connect(out / "results.sqlite3") as db:
        rows = db.execute("SELECT item, score FROM rows ORDER BY item").fetchall()
    other = ["--arms", "single", "--out", str(out), "--report-only", "--purpose", "evaluation"]
    refused(
        invoke(str(suite), "-m", "scripted:deterministic", *other),
        f"moot: error: {out} holds a tuning run, so --purpose evaluation cannot add to it",
    )
    with sqlite3.connect(out / "results.sqlite3") as db:
        assert db.execute("SELECT item, score FROM rows ORDER BY item").fetchall() == rows
        assert db.execute("SELECT value FROM meta WHERE key = 'purpose'").fetchall() == [("tuning",)]


def test_report_only_rebuilds_the_report_from_the_stored_rows_alone(tmp_path):
    """The rows are all a report needs: scores edited in results.sqlite3 (partial credit on two items) come out in the
    rebuilt report, exact first, with no model call (a model that fails on any call is given)."""
    suite = write_sums(tmp_path / "s.jsonl", 4)
    out = tmp_path / "out"
    model = PromptModel("cli-rebuild", arithmetic()).register()
    try:
        first = invoke(str(suite), "-m", model.spec, "--arms", "single,reflection", "--out", str(out))
    finally:
        model.unregister()
    assert first.exit_code == 0, first.output
    db = sqlite3.connect(out / "results.sqlite3")
    db.execute("UPDATE rows SET score = 0.667 WHERE arm LIKE 'reflection%' AND item IN ('q0', 'q1')")
    db.commit()
    db.close()
    for name in ("report.md", "report.html", "summary.json", "cost_accuracy.png"):
        (out / name).unlink()
    broken = PromptModel("cli-rebuild", arithmetic(), fail_after=0).register()
    try:
        rebuilt = invoke(str(suite), "-m", broken.spec, "--arms", "single,reflection", "--out", str(out),
                         "--report-only")  # fmt: skip
    finally:
        broken.unregister()
    assert rebuilt.exit_code == 0, rebuilt.output
    assert broken.calls == 0 and "computed 0 rows, reused 8 finished ones" in rebuilt.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exact_first"] is True
    assert [a["accuracy"] for a in summary["arms"]] == [1.0, 0.5]
    assert summary["arms"][1]["graded"]["estimate"] == pytest.approx((2 + 2 * 0.667) / 4)
    assert "| reflection |" in (out / "report.md").read_text() and (out / "cost_accuracy.png").is_file()
