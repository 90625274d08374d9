"""Kill -9 a real `moot run` at a random turn, resume it, and get the uninterrupted transcript.

The model is deterministic in the prompt (not in call order), so a resumed
process that sends the same prompts gets the same replies: any difference in
the final transcript is a turn lost, repeated or skipped by moot.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moot.store import RunStore

SCENARIO = Path(__file__).resolve().parents[1] / "fixtures" / "slow_reflection.py"
TOTAL_TURNS = 1 + 4 * 3  # the task, then per round: draft, critique, round event


def moot(store: Path, *args: str, delay: float = 0.1, rounds: int = 4) -> subprocess.Popen[str]:
    env = {
        **os.environ, "MOOT_STORE": str(store), "MOOT_TEST_DELAY": str(delay), "MOOT_TEST_ROUNDS": str(rounds),
        "COLUMNS": "120",
    }  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-m", "moot", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_hear_ctrl_c,
    )  # fmt: skip


def _hear_ctrl_c() -> None:
    """The child hears SIGINT as a terminal's Ctrl-C, even when the suite was started in the background: a shell
    starts background jobs with SIGINT ignored, Python keeps an ignored SIGINT, and moot then (rightly) runs on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def transcript(store: Path, run_id: str) -> list[tuple[str, str, str]]:
    return [(t.source, t.kind, t.content) for t in RunStore(store).turns(run_id)]


def only_run(store: Path) -> str:
    (record,) = RunStore(store).list()
    return record.id


def recorded_turns(store: Path) -> int:
    """Peek read-only, so the watcher never takes a write lock the run under test needs."""
    if not store.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            return int(db.execute("SELECT COUNT(*) FROM turns").fetchone()[0])
    except sqlite3.OperationalError:  # the run has not created its tables yet
        return 0


def wait_for_turns(store: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if recorded_turns(store) >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError(f"the run did not reach {count} turns")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> list[tuple[str, str, str]]:
    store = tmp_path_factory.mktemp("straight") / "runs.sqlite3"
    proc = moot(store, "run", str(SCENARIO), "-m", "scripted:slow")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    turns = transcript(store, only_run(store))
    assert len(turns) == TOTAL_TURNS
    return turns


@pytest.mark.parametrize("kill_after", sorted(random.Random(7).sample(range(1, TOTAL_TURNS - 1), 4)))
def test_a_run_killed_at_a_turn_resumes_to_the_uninterrupted_transcript(tmp_path, uninterrupted, kill_after):
    store = tmp_path / "runs.sqlite3"
    proc = moot(store, "run", str(SCENARIO), "-m", "scripted:slow")
    wait_for_turns(store, kill_after, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    run_id = only_run(store)
    killed = RunStore(store).get(run_id)
    assert killed.status == "interrupted"  # nobody could mark it (it was killed), but its lease died with it
    assert 0 < killed.turns < TOTAL_TURNS

    resumed = moot(store, "resume", "--last")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert f"resuming run {run_id}" in out
    assert transcript(store, run_id) == uninterrupted
    assert RunStore(store).get(run_id).status == "finished"


def test_resuming_a_finished_run_is_refused(tmp_path):
    store = tmp_path / "runs.sqlite3"
    proc = moot(store, "run", str(SCENARIO), "-m", "scripted:slow")
    proc.communicate(timeout=120)
    run_id = only_run(store)
    again = moot(store, "resume", run_id)
    out, err = again.communicate(timeout=60)
    assert again.returncode == 2
    assert err.startswith(f"moot: error: run {run_id} already finished (finished: max rounds: 4 of 4 rounds done)")
    assert out == ""


def test_one_writer_per_run_a_live_run_cannot_be_resumed_and_a_killed_one_shows_interrupted(tmp_path):
    store = tmp_path / "runs.sqlite3"
    # still running while we try, however slowly the two other moot processes start on a loaded machine
    proc = moot(store, "run", str(SCENARIO), "-m", "scripted:slow", delay=1.5, rounds=12)  # 24 turns: 36 s
    wait_for_turns(store, 2, proc)
    run_id = only_run(store)
    assert RunStore(store).get(run_id).status == "running"
    second = moot(store, "resume", run_id)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2
    assert err.startswith(f"moot: error: run {run_id} is being driven by process {proc.pid} on ")
    nothing = moot(store, "resume", "--last")  # --last never picks a live run
    _, err = nothing.communicate(timeout=60)
    assert (nothing.returncode, err.strip()) == (2, "moot: error: no unfinished run to resume; moot runs lists runs")
    os.kill(proc.pid, signal.SIGTERM)  # no chance to mark the run: its lease dies with it
    proc.wait(timeout=30)
    assert RunStore(store).get(run_id).status == "interrupted"
    listing = moot(store, "runs", "--json")
    out, _ = listing.communicate(timeout=60)
    assert [run["status"] for run in json.loads(out)] == ["interrupted"]
    resumed = moot(store, "resume", run_id, rounds=12)  # the configuration it was started with
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert RunStore(store).get(run_id).status == "finished"


def test_a_process_that_lost_the_lease_writes_nothing_more(tmp_path):
    from moot.errors import LeaseLostError

    path = tmp_path / "runs.sqlite3"
    first = RunStore(path)
    first.create_run("r1", team="t", task="x")
    first.record("r1", 0, [{"type": "TextMessage", "source": "user", "content": "x"}], {})
    with sqlite3.connect(path) as db:  # another process took over the run after it looked dead
        db.execute("UPDATE runs SET owner = '1@elsewhere', heartbeat_at = 0 WHERE id = 'r1'")
    with pytest.raises(LeaseLostError, match="now driven by another process"):
        first.record("r1", 1, [{"type": "TextMessage", "source": "x", "content": "late"}], {})
    assert len(first.turns("r1")) == 1
    first.finish("r1", "finished", "done", None)
    assert first.get("r1").status != "finished"  # the ending of a process without the lease is not recorded


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_says_how_to_resume_and_exits_130_or_143(tmp_path, uninterrupted, sent, code):
    store = tmp_path / "runs.sqlite3"
    proc = moot(store, "run", str(SCENARIO), "-m", "scripted:slow", delay=2.0)  # 10 s left after 3 turns,
    wait_for_turns(store, 3, proc)  # so the signal finds it running on a loaded machine too
    run_id = only_run(store)
    os.kill(proc.pid, sent)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert err == f"moot: interrupted; resume with moot resume {run_id}\n"
    with contextlib.closing(sqlite3.connect(store)) as db:  # marked by the run itself, not read from a dead lease
        assert db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone() == ("interrupted",)
    resumed = moot(store, "resume", run_id)
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert transcript(store, run_id) == uninterrupted


def test_help_documents_the_interrupt_codes():
    proc = subprocess.run([sys.executable, "-m", "moot", "--help"], capture_output=True, text=True, check=True,
                          env={**os.environ, "COLUMNS": "400"})  # fmt: skip
    assert "130 interrupted (Ctrl-C), 143 terminated (SIGTERM): moot resume ID goes on" in " ".join(proc.stdout.split())
