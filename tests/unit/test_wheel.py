"""The wheel is the product: installed from it alone, in a fresh venv and an empty directory, moot runs its
built-in scenarios and team presets (the catalog ships inside the package)."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

from tests.conftest import make_critique, make_position, make_verdict
from tests.venvs import fresh_venv

ROOT = Path(__file__).resolve().parents[2]


def test_a_wheel_installed_in_a_fresh_venv_runs_a_built_in_scenario_and_preset_from_an_empty_directory(tmp_path: Path):
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w"]
    subprocess.run([*build, str(wheels)], check=True, capture_output=True, timeout=300)
    (wheel,) = wheels.glob("moot-*.whl")

    venv = tmp_path / "venv"
    python, packages = fresh_venv(venv)
    # Dependencies from this environment (a plain path: its editable moot is not loaded); moot from the wheel.
    (packages / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True, timeout=300
    )

    script = tmp_path / "script.json"
    experts = {
        name: [json.loads(make_position("split").model_dump_json())] for name in ("architect", "ops", "business")
    }
    script.write_text(json.dumps({**experts, "arbiter": [json.loads(make_verdict("split").model_dump_json())]}))
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_", "PYTHON"))}
    env |= {"MOOT_STORE": str(tmp_path / "runs.sqlite3"), "COLUMNS": "120"}
    where = subprocess.run(
        [python, "-c", "import moot; print(moot.__file__)"], cwd=empty, env=env, capture_output=True, text=True
    )
    assert where.stdout.startswith(str(venv)), where
    run = subprocess.run(
        [python, "-m", "moot", "run", "architecture_review", "-m", f"scripted:{script}"],
        cwd=empty, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "verdict by arbiter" in run.stdout and ": split" in run.stdout

    review = tmp_path / "review.json"
    review.write_text(json.dumps({"generator": ["def f(): ..."], "critic": [make_critique(95).model_dump()]}))
    preset = subprocess.run(
        [python, "-m", "moot", "run", "draft_review", "--task", "Write f().", "-m", f"scripted:{review}"],
        cwd=empty, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert preset.returncode == 0, preset.stderr[-2000:]
    assert "stop reason: quality threshold: score 95 >= 85 in round 1" in preset.stdout
    listed = subprocess.run(
        [python, "-m", "moot", "teams", "--json"], cwd=empty, env=env, capture_output=True, text=True, timeout=300
    )
    teams = {t["name"]: t["origin"] for t in json.loads(listed.stdout)}
    assert teams == {"draft_review": "built-in", "expert_panel": "built-in", "plan_and_execute": "built-in"}
    assert list(empty.iterdir()) == []
