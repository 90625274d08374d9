"""Ctrl-C or SIGTERM stops `moot compare` at once, with one line: what is saved, and the command that goes on.

The comparison runs in a child process on a deliberately slow test model (``tests/fixtures/slow_compare.py``);
the signal comes once some rows are in the results file, while others are in flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[1] / "fixtures" / "slow_compare.py"


def _hear_ctrl_c() -> None:
    """The child hears SIGINT as a terminal's Ctrl-C, even when the suite was started in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def compare(delay: float, *args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(LAUNCHER), str(delay), "compare", *args], cwd=cwd, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"}, preexec_fn=_hear_ctrl_c,
    )  # fmt: skip


def finished_rows(results: Path) -> int:
    if not results.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(results, timeout=5)) as db:  # (not mode=ro: it would leave -wal)
            db.execute("PRAGMA query_only=ON")
            return int(db.execute("SELECT COUNT(*) FROM rows WHERE status = 'done'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def wait_for_rows(results: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if finished_rows(results) >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"the comparison did not finish {count} rows")


def write_suite(folder: Path, n: int) -> Path:
    path = folder / "sums.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "input": f"What is {i} + {i}?", "answer": 2 * i}) + "\n"
                            for i in range(n)))  # fmt: skip
    return path


@pytest.mark.parametrize(
    ("sent", "code", "how", "model"),
    [
        (signal.SIGINT, 130, "Ctrl-C", "scripted:slow"),
        (signal.SIGTERM, 143, "SIGTERM", "scripted:slow"),
        (signal.SIGINT, 130, "Ctrl-C", "scripted:blocking"),  # a call blocked in a thread is not waited for
        (signal.SIGTERM, 143, "SIGTERM", "scripted:blocking"),
    ],
)
def test_a_signal_stops_compare_at_once_says_what_is_saved_and_the_same_command_goes_on(
    tmp_path, sent, code, how, model
):
    write_suite(tmp_path, 4)
    args = ("sums.jsonl", "--arms", "single,reflection", "--model", model, "--out", "out")
    proc = compare(1.0, *args, cwd=tmp_path)
    wait_for_rows(tmp_path / "out" / "results.sqlite3", 1, proc)
    time.sleep(0.3)  # a call is in flight (every call takes a second)
    sent_at = time.monotonic()
    os.kill(proc.pid, sent)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent_at
    assert proc.returncode == code, err
    assert took < 2.0, f"took {took:.1f} s to stop"
    saved = finished_rows(tmp_path / "out" / "results.sqlite3")
    assert 1 <= saved < 8
    command = "moot compare sums.jsonl --arms single,reflection --model " + model + " --out out"
    assert err == (
        f"moot compare stopped ({how}); {saved} finished rows are saved in out/results.sqlite3 ({saved} by this "
        f"run); to go on, run the same command again: {command}\n"
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.name.startswith("results.sqlite3-")) == []
    # the line's command, run again, computes only the rows still missing
    again = compare(0.0, *shlex.split(command)[2:], cwd=tmp_path)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert f"This run computed {8 - saved} rows, reused {saved} finished ones" in " ".join(out.split())
    assert finished_rows(tmp_path / "out" / "results.sqlite3") == 8


def test_compare_help_says_the_same_command_goes_on_not_moot_resume():
    proc = subprocess.run([sys.executable, "-m", "moot", "compare", "--help"], capture_output=True, text=True,
                          check=True, env={**os.environ, "COLUMNS": "400"})  # fmt: skip
    text = " ".join(proc.stdout.split())
    assert "130 interrupted (Ctrl-C), 143 terminated (SIGTERM): finished rows are kept" in text
    assert "run the same command again with the same --out" in text and "moot resume" not in text
