"""Kill -9 a real `moot run` at a random turn, resume it, and get the uninterrupted transcript.

The model is deterministic in the prompt (not in call order), so a resumed
process that sends the same prompts gets the same replies: any difference in
the final transcript is a turn lost, repeated or skipped by moot.
"""

from __future__ import annotations

import contextlib
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


def moot(store: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "MOOT_STORE": str(store), "MOOT_TEST_DELAY": "0.1", "COLUMNS": "120"}
    return subprocess.Popen(
        [sys.executable, "-m", "moot", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


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
    assert killed.status == "running"  # nobody could mark it: it was killed
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
