"""The machine-wide lock: embedded-model calls of two processes take turns, and the waiter is told who holds it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from moot.embedded._machine_lock import MachineLock

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from moot.embedded._machine_lock import MachineLock
    lock_path, marker = Path(sys.argv[1]), Path(sys.argv[2])
    with MachineLock(lock_path):
        print("held", flush=True)
        time.sleep(1.0)
        marker.write_text("released")
    """
)


def test_a_second_process_waits_for_the_call_in_progress_and_names_its_holder(tmp_path, capsys):
    lock_path, marker = tmp_path / "embedded-model.lock", tmp_path / "released"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_path), str(marker)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        lock = MachineLock(lock_path)
        with lock:
            assert marker.exists()  # entered only after the other process let go
    finally:
        holder.wait(timeout=30)
    warning = capsys.readouterr().err
    assert f"another process (pid {holder.pid}) is running the embedded model" in warning
    assert warning.count("\n") == 1


def test_the_lock_is_reentrant_across_calls_and_quiet_when_free(tmp_path, capsys):
    lock = MachineLock(tmp_path / "sub" / "embedded-model.lock")
    for _ in range(3):
        with lock:
            pass
    assert capsys.readouterr().err == ""
    assert (tmp_path / "sub" / "embedded-model.lock").read_text().strip().isdigit()  # the last holder's pid
