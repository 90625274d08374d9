"""Fresh virtual environments for the install tests (the wheel, the core install)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def fresh_venv(venv: Path) -> tuple[Path, Path]:
    """A new venv at ``venv`` with nothing installed: its python and its site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    query = [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    return python, Path(subprocess.check_output(query, text=True).strip())
