"""Run ``moot`` in a child process that file permissions bind, even when the tests run as root (as CI does).

Root passes every permission check through one capability, CAP_DAC_OVERRIDE. The child drops it from its
bounding set and then starts Python again, so the program that runs never holds it: root then reads and
writes only what a file's mode lets its owner, as any user would, and a read-only store is read-only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_CAP_SETPCAP = 8  # capability.h
_LAUNCHER = """
import ctypes, os, sys
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE = 24, 1  # prctl(2), capability.h
if ctypes.CDLL(None, use_errno=True).prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0:
    sys.exit(f"prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE) refused: {os.strerror(ctypes.get_errno())}")
os.execv(sys.executable, [sys.executable, "-m", "moot", *sys.argv[1:]])
"""


def can_drop_root_override() -> bool:
    """Whether this process may shrink a child's capability bounding set (root with CAP_SETPCAP, on Linux)."""
    status = Path("/proc/self/status")
    if not status.exists():
        return False
    effective = next(line for line in status.read_text().splitlines() if line.startswith("CapEff:"))
    return bool(int(effective.split()[1], 16) >> _CAP_SETPCAP & 1)


def run_moot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m moot ARGS`` bound by file permissions; as root, without root's override."""
    command = [sys.executable, "-m", "moot"]
    if os.geteuid() == 0:
        if not can_drop_root_override():
            raise RuntimeError("root without CAP_SETPCAP: cannot run moot bound by file permissions")
        command = [sys.executable, "-c", _LAUNCHER]
    return subprocess.run(
        [*command, *args],
        env={**os.environ, "COLUMNS": "140", **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
