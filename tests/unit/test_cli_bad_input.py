"""Every bad input to `moot run` / `resume` / `runs` / `show` is one line on stderr and exit 2, with nothing
written; a run's ending has its own exit code (0 finished, 1 failed, 3 partial)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import httpx
import openai
import pytest
from typer.testing import CliRunner

from moot.cli import app
from moot.store import RunStore
from moot.testing import ScriptedModel
from moot.tracing import default_trace_dir
from tests.conftest import make_critique
from tests.unprivileged import run_moot

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "scenarios" / "code_review.py")


def invoke(*args: str, columns: int = 140) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout, result.stderr


def one_line_refusal(code: int, out: str, err: str, start: str) -> None:
    assert code == 2, err
    assert err.startswith(start), err
    assert err.count("\n") == 1, err
    assert out == ""  # no banner, no transcript: refused before anything ran


def script_file(tmp_path: Path, generator: list[object], critic: list[object]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"generator": generator, "critic": critic}))
    return f"scripted:{path}"


@pytest.fixture
def finished_run(tmp_path: Path) -> str:
    """A finished code_review run on a scripted model; returns its id."""
    spec = script_file(tmp_path, ["def f(): ...", "def f() -> None: ..."], [
        make_critique(60, "add type hints").model_dump(), make_critique(92).model_dump()
    ])  # fmt: skip
    code, _, err = invoke("run", SCENARIO, "-m", spec)
    assert code == 0, err
    return RunStore.reader(None).list(1)[0].id


# ------------------------------------------------------------------ scenarios
@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "import no_such_module_here\n",
            "failed to import: ModuleNotFoundError: No module named 'no_such_module_here'",
        ),
        ("X = 1\nraise RuntimeError('half configured')\n", "failed to import: RuntimeError: half configured (line 2)"),
    ],
)
def test_a_scenario_that_raises_at_import_is_one_line(tmp_path, source, message):
    script = tmp_path / "broken.py"
    script.write_text(source)
    one_line_refusal(*invoke("run", str(script)), f"moot: error: scenario file {script} {message}")


def test_a_scenario_whose_build_raises_is_one_line(tmp_path):
    script = tmp_path / "bad_build.py"
    script.write_text(
        "from moot.scenario import Scenario\n\n"
        "def build(models):\n"
        "    raise ValueError('no experts configured')\n\n"
        "SCENARIO = Scenario('bad_build', 'd', 't', ('generator',), build)\n"
    )
    one_line_refusal(
        *invoke("run", str(script), "-m", "scripted:deterministic"),
        "moot: error: scenario bad_build: build() raised ValueError: no experts configured (line 4)",
    )


# ------------------------------------------------------------- usage errors
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run"], "moot: error: Missing argument 'scenario'; moot run --help shows the usage"),
        (["run", SCENARIO, "--bogus"], "moot: error: No such option: --bogus; moot run --help shows the usage"),
        (["run", SCENARIO, "--model"], "moot: error: Option '--model' requires an argument"),
        (["runs", "--limit", "abc"], "moot: error: Invalid value for '--limit' / '-n': Input should be a valid"),
        (["bogus"], "moot: error: No such command 'bogus'; moot --help shows the usage"),
        (["resum", "--last"], "moot: error: No such command 'resum'. Did you mean 'resume'"),
        (["show"], "moot: error: Missing argument 'run_id'; moot show --help shows the usage"),
        (["compare"], "moot: error: Missing argument 'suite'; moot compare --help shows the usage"),
        (["compare", "s.jsonl", "--concurrency", "two"], "moot: error: Invalid value for '--concurrency' / '-j'"),
        (["roles", "extra"], "moot: error: Got unexpected extra argument(s) (extra); moot roles --help shows"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(args, message):
    one_line_refusal(*invoke(*args), message)


def test_a_scenario_script_s_usage_error_is_one_line(capsys):
    from moot.cli import run_script
    from moot.scenario import load_scenario

    with pytest.raises(SystemExit) as ended:
        run_script(load_scenario(SCENARIO), ["--bogus"])
    assert ended.value.code == 2
    assert capsys.readouterr().err == "moot: error: No such option: --bogus; code_review.py --help shows the usage\n"


def test_help_and_no_arguments_still_show_the_help():
    code, out, _ = invoke()
    assert code == 2 and "Usage: moot [OPTIONS] COMMAND" in out
    code, out, _ = invoke("runs", "--help")
    assert code == 0 and "Usage: moot runs [OPTIONS]" in out


def test_the_usage_error_adapter_was_written_for_the_pinned_typer():
    import typer

    from moot._usage_errors import TESTED_TYPER

    pinned = (ROOT / "pyproject.toml").read_text()
    assert f'"typer=={TESTED_TYPER}"' in pinned and typer.__version__ == TESTED_TYPER


@pytest.mark.parametrize("args", [["resume", "--last"], ["resume", "nope"]])
def test_resume_on_a_fresh_machine_creates_no_store(tmp_path, args):
    store = tmp_path / "fresh" / "runs.sqlite3"
    code, out, err = invoke(*args, "--store", str(store))
    assert code == 2 and err.count("\n") == 1 and out == ""
    assert not store.parent.exists()


# ------------------------------------------------------------------- models
def test_a_base_url_that_is_no_url_is_refused_at_parse():
    one_line_refusal(
        *invoke("run", SCENARIO, "-m", "openai:m?base_url=notaurl"),
        "moot: error: bad model spec 'openai:m?base_url=notaurl': base_url: must be an http(s) URL with a host",
    )


def test_local_without_the_extra_is_refused_before_the_banner_or_the_store(tmp_path, without_local_extra):
    store = tmp_path / "runs.sqlite3"
    one_line_refusal(
        *invoke("run", SCENARIO, "-m", "local", "--store", str(store)),
        "moot: error: the embedded model needs the 'local' extra (llama_cpp not installed): pip install 'moot[local]'",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_key_the_provider_refuses_is_one_line_with_the_key_redacted():
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    body = {"error": {"message": "Incorrect API key provided: sk-proj-abcdefghijklmnop0123"}}
    response = httpx.Response(401, json=body, request=request)
    refused = openai.AuthenticationError(f"Error code: 401 - {body}", response=response, body=body["error"])
    with ScriptedModel({"generator": [refused], "critic": []}, name="refusing"):
        code, _, err = invoke("run", SCENARIO, "-m", "scripted:refusing")
    assert code == 2
    assert err.startswith("moot: error: the provider refused the API key (401 unauthorized): Error code: 401")
    assert "sk-proj-abcdefghijklmnop0123" not in err and "[redacted]" in err
    assert err.endswith("check the key in $OPENAI_API_KEY (or the spec's api_key_env)\n")
    assert err.count("\n") == 1


# ---------------------------------------------------------------- exit codes
def test_a_finished_run_exits_0_a_partial_one_3_a_failed_one_1(tmp_path):
    code, _, _ = invoke("run", SCENARIO, "-m", "scripted:deterministic")
    assert code == 0  # the built-in test model: max rounds end it, a normal finish
    malformed = script_file(tmp_path, ["def f(): ..."], ["not json"] * 10)
    code, out, err = invoke("run", SCENARIO, "-m", malformed)
    assert code == 3, err  # the critic stayed malformed: the best-so-far draft, marked partial
    assert "partial result" in out
    (tmp_path / "empty").mkdir()
    exhausted = script_file(tmp_path / "empty", ["def f(): ..."], [])
    code, _, err = invoke("run", SCENARIO, "-m", exhausted)
    assert code == 1
    assert err.startswith("moot: error: the run failed: ScriptError: unexpected call #1 to the scripted model")
    assert "moot resume " in err and err.count("\n") == 1


def test_help_documents_the_exit_codes_and_the_temperature():
    _, root_help, _ = invoke("--help")
    _, run_help, _ = invoke("run", "--help", columns=400)
    for text in (root_help, run_help):
        assert "Exit codes: 0 finished; 1 failed; 2 bad input" in " ".join(text.split())
    assert "[@TEMPERATURE]" in run_help and "scripted:deterministic" in run_help


# -------------------------------------------------------------------- stores
def damage(store: Path) -> None:
    """Overwrite the store's pages after the header: a file SQLite opens, then cannot read."""
    with store.open("r+b") as f:
        f.seek(4096)
        f.write(b"\xde\xad\xbe\xef" * 4096 * 4)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["runs"], "moot: error: cannot read run store {store}: database disk image is malformed; move it aside"),
        (["show", "abc"], "moot: error: cannot read run store {store}: database disk image is malformed"),
        (["resume", "--last"], "moot: error: run store {store} is damaged ("),
        (["run", SCENARIO, "-m", "scripted:deterministic"], "moot: error: cannot open run store {store}: database"),
    ],
)
def test_a_damaged_store_is_one_line_before_anything_runs(tmp_path, args, message):
    store = tmp_path / "runs.sqlite3"
    opened = RunStore(store)
    for n in range(200):
        opened.create_run(f"run{n:03d}", team="t", task="x" * 1000)
    opened.close()
    damage(store)
    one_line_refusal(*invoke(*args, "--store", str(store)), message.format(store=store))


def test_listing_reads_the_store_only(finished_run):
    store = RunStore.default_path()
    files = {p: p.read_bytes() for p in store.parent.iterdir() if p.is_file()}
    code, out, _ = invoke("runs")
    assert code == 0 and finished_run in out
    assert {p: p.read_bytes() for p in store.parent.iterdir() if p.is_file()} == files


def test_a_read_only_store_can_be_listed_and_shown(tmp_path):
    """A store on a read-only filesystem (file and directory without write permission; as root too): SQLite in
    WAL mode cannot create its shared-memory file there, and a reader must still list and show."""
    store = tmp_path / "ro" / "runs.sqlite3"
    env = {"MOOT_STORE": str(store)}
    assert run_moot("run", SCENARIO, "-m", "scripted:deterministic", env=env).returncode == 0
    run_id = json.loads(run_moot("runs", "--json", env=env).stdout)[0]["id"]
    with contextlib.closing(sqlite3.connect(store)) as db:  # the last connection: its WAL files go with it
        db.execute("PRAGMA quick_check")
    files = sorted(p.name for p in store.parent.iterdir())
    for path in (store, store.parent):
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        listed = run_moot("runs", env=env)
        shown = run_moot("show", run_id, env=env)
    finally:
        store.parent.chmod(0o755)
    assert (listed.returncode, listed.stderr) == (0, "")
    assert run_id in listed.stdout
    assert (shown.returncode, shown.stderr) == (0, "")
    assert run_id in shown.stdout and "stop reason: " in shown.stdout
    assert sorted(p.name for p in store.parent.iterdir()) == files == ["runs.sqlite3", "traces"]


def test_listing_a_missing_store_creates_nothing(tmp_path):
    store = tmp_path / "missing_dir" / "x.sqlite3"
    code, out, _ = invoke("runs", "--store", str(store))
    assert code == 0 and "runs (newest first)" in out
    assert not store.parent.exists()
    code, _, err = invoke("show", "abc", "--store", str(store))
    assert (code, err) == (2, "moot: error: unknown run 'abc'; recent runs: none yet\n")
    assert not store.parent.exists()


def test_a_limit_below_one_is_one_line():
    one_line_refusal(*invoke("runs", "--limit", "0"), "moot: error: --limit must be at least 1, got 0")


# ------------------------------------------------------------------- viewing
def test_runs_at_80_columns_keeps_every_column_readable(finished_run):
    code, out, _ = invoke("runs", columns=80)
    assert code == 0
    assert all(len(line) <= 80 for line in out.splitlines())
    assert finished_run in out  # the id whole, on one line
    header = next(line for line in out.splitlines() if "scenario" in line)
    assert header.replace("┃", " ").split() == ["id", "scenario", "status", "rounds", "tokens"]
    assert "quality threshold: score 92" in " ".join(out.split())  # the stop reason, under the id


def test_show_says_which_draft_was_returned(finished_run):
    code, out, _ = invoke("show", finished_run)
    assert code == 0
    assert "returned: the best draft (round 2, score 92)" in out


def test_show_prompts_skips_torn_and_non_utf8_trace_lines(finished_run):
    trace = default_trace_dir() / f"{finished_run}.jsonl"
    lines = trace.read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"kind": "model_call", "name": "caf\xe9"}\n')
    trace.write_bytes(b"".join(lines) + b'{"trace_id": "' + finished_run.encode() + b'", "kind": "mod')
    code, out, err = invoke("show", finished_run, "--prompts")
    assert code == 0, err
    assert err.startswith(f"moot: warning: skipped 2 unreadable line(s) of the trace of run {finished_run}: ")
    assert "line 3: not UTF-8 (byte 0xe9 at column" in err
    assert f"line {len(lines) + 1}: torn or not a trace event" in err
    assert "add type hints" in out  # the readable calls still show


# ------------------------------------------------------------------- issue 41: the last rough edges
@pytest.mark.parametrize("command", [["run", SCENARIO, "-m", "scripted:deterministic"], ["resume", "--last"]])
@pytest.mark.parametrize("depth", [("missing",), ("missing", "deeper")])
def test_a_store_in_a_folder_that_does_not_exist_is_refused_and_creates_nothing(tmp_path, command, depth):
    store = tmp_path.joinpath(*depth, "runs.sqlite3")
    one_line_refusal(
        *invoke(*command, "--store", str(store)),
        f"moot: error: Invalid value for '--store': the folder {store.parent} does not exist; create it first",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_is_a_directory_or_under_a_file_is_refused(tmp_path):
    one_line_refusal(
        *invoke("run", SCENARIO, "-m", "scripted:deterministic", "--store", str(tmp_path)),
        f"moot: error: Invalid value for '--store': {tmp_path} is a directory; give a file in it, e.g. "
        f"{tmp_path / 'runs.sqlite3'}",
    )
    (tmp_path / "file").write_text("x")
    one_line_refusal(
        *invoke("run", SCENARIO, "-m", "scripted:deterministic", "--store", str(tmp_path / "file" / "r.sqlite3")),
        f"moot: error: Invalid value for '--store': the folder {tmp_path / 'file'} is not a directory",
    )


@pytest.mark.parametrize("task", ["", "   ", "\n\t"])
def test_an_empty_or_blank_task_is_refused_not_replaced_by_the_scenarios_own(tmp_path, task):
    store = tmp_path / "runs.sqlite3"
    one_line_refusal(
        *invoke("run", SCENARIO, "-m", "scripted:deterministic", "--task", task, "--store", str(store)),
        "moot: error: --task is empty; give the task text, or leave --task out to run the scenario's own task",
    )
    (tmp_path / "task.txt").write_text(task)
    one_line_refusal(
        *invoke(
            "run",
            SCENARIO,
            "-m",
            "scripted:deterministic",
            "--task-file",
            str(tmp_path / "task.txt"),
            "--store",
            str(store),
        ),
        f"moot: error: --task-file {tmp_path / 'task.txt'} is empty; write the task in it",
    )
    assert not store.exists()


def test_a_scenario_script_refuses_an_empty_task_too(tmp_path):
    import subprocess
    import sys

    store = tmp_path / "runs.sqlite3"
    proc = subprocess.run(
        [sys.executable, SCENARIO, "-m", "scripted:deterministic", "--task", " ", "--store", str(store)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    one_line_refusal(proc.returncode, proc.stdout, proc.stderr, "moot: error: --task is empty")
    assert not store.exists()


def _sidecars(store: Path) -> list[str]:
    return sorted(p.name for p in store.parent.iterdir() if p.name.startswith(store.name + "-"))


@pytest.fixture(scope="module")
def finished_store(tmp_path_factory) -> tuple[Path, str]:
    store = tmp_path_factory.mktemp("finished") / "runs.sqlite3"
    proc = run_moot("run", SCENARIO, "-m", "scripted:deterministic", "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    with contextlib.closing(RunStore.reader(store)) as reader:
        (record,) = reader.list()
    assert _sidecars(store) == []
    return store, record.id


@pytest.mark.parametrize(
    "args",
    [
        ["show", "nope"],
        ["show", "../../etc/passwd"],
        ["show", ""],
        ["show", "nope", "--prompts"],
        ["show", "nope", "--json"],
        ["show", "{run}", "extra"],
        ["resume", "nope"],
        ["resume", "--last"],
        ["resume"],
        ["resume", "{run}"],
        ["resume", "{run}", "--approve"],
        ["resume", "nope", "--feedback", "x"],
        ["runs", "--limit", "0"],
        ["show", "{run}"],
        ["runs"],
        ["show", "{run}", "--prompts"],
    ],
)
def test_no_resume_or_show_path_leaves_wal_files_beside_the_store(finished_store, args):
    store, run_id = finished_store
    code, _, err = invoke(*[a.format(run=run_id) for a in args], "--store", str(store))
    assert code in (0, 2), err
    assert _sidecars(store) == [], (args, err)


def test_resuming_a_run_another_process_drives_leaves_no_wal_files(tmp_path, finished_store):
    import shutil
    import time

    store, run_id = tmp_path / "runs.sqlite3", finished_store[1]
    shutil.copy(finished_store[0], store)
    with contextlib.closing(sqlite3.connect(store)) as db:  # a live owner elsewhere, heartbeat now
        db.execute(
            "UPDATE runs SET status = 'interrupted', owner = '1@elsewhere', heartbeat_at = ? WHERE id = ?",
            (time.time(), run_id),
        )
        db.commit()
    proc = run_moot("resume", run_id, "--store", str(store))
    assert proc.returncode == 2 and proc.stderr.startswith("moot: error:") and proc.stderr.count("\n") == 1, proc
    assert _sidecars(store) == []


@pytest.mark.parametrize("content", [b"", b"not a database at all", None])
def test_a_file_that_is_no_moot_store_leaves_no_wal_files(tmp_path, content):
    store = tmp_path / "other.sqlite3"
    if content is None:  # another program's SQLite file, in WAL mode
        with contextlib.closing(sqlite3.connect(store)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE t (x)")
            db.commit()
    else:
        store.write_bytes(content)
    for args in (["show", "x"], ["runs"], ["resume", "x"], ["resume", "--last"]):
        proc = run_moot(*args, "--store", str(store))
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert _sidecars(store) == [], (args, proc.stderr)


@pytest.mark.parametrize(
    ("flags", "names"),
    [
        (["--roles", "architect,critic"], "critic"),  # a critic answers with a Critique, not a Position
        (["--roles", "architect,generator"], "generator"),
    ],
)
def test_a_team_preset_composed_of_the_wrong_roles_is_refused_before_a_run_is_written(tmp_path, flags, names):
    store = tmp_path / "runs.sqlite3"
    code, out, err = invoke("run", "expert_panel", *flags, "--task", "Design a cache", "-m",
                            "scripted:deterministic", "--store", str(store))  # fmt: skip
    one_line_refusal(code, out, err, "moot: error:")
    assert names in err and len(err) < 400, err  # one short line naming the role, not a validation dump
    assert not store.exists()  # refused before the run was written
