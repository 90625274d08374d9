"""An installed package extends moot through entry points alone: a provider, an arm, a suite kind and a topology,
used from the command line and from Python, touching no file of moot's (docs/plugins.md).

The package is ``tests/plugins/moot_example_plugin`` (its own ``pyproject.toml`` declares the entry points),
installed offline with pip into a temporary folder that only the subprocesses here have on their path, so no
other test sees it. Its provider wraps moot's deterministic test model: nothing reaches a real model.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unprivileged import run_moot

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "moot_example_plugin"
PAIR_PRESET = "name: pair_review\ndescription: a writer and a reviewer\ntopology: pair\nroles: [generator, critic]\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example plugin, built and installed with pip into a folder of its own: no network, no build isolation."""
    root = tmp_path_factory.mktemp("plugin")
    source = shutil.copytree(PLUGIN, root / "source")  # setuptools writes its build folders beside the source
    target = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(source)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    (root / "site" / "moot_example_plugin").chmod(0o755)
    root.chmod(0o755)
    return target


def _path(*folders: Path) -> dict[str, str]:
    """The environment of a subprocess that sees ``folders`` (installed packages) before what this one sees (made
    absolute: the subprocess may run in another folder)."""
    inherited = [str(Path(entry).resolve()) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    return {"PYTHONPATH": os.pathsep.join([*map(str, folders), *inherited])}


def _project(tmp_path: Path) -> Path:
    """A project folder whose team preset names the plugin's topology; open to the unprivileged runner."""
    (tmp_path / "teams").mkdir()
    (tmp_path / "teams" / "pair_review.yaml").write_text(PAIR_PRESET + "termination: max_rounds(1)\n")
    for folder in (tmp_path, tmp_path / "teams"):
        folder.chmod(0o777)
    return tmp_path


def test_the_command_line_uses_the_plugin_s_provider_arm_and_suite(site, tmp_path):
    out = tmp_path / "out"
    tmp_path.chmod(0o777)
    done = run_moot(
        "compare", "doubles[:2]?n=4", "--arms", "echo,single", "--model", "canned", "--model", "echoer=canned",
        "--out", str(out), env=_path(site),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(out / "results.sqlite3") as db:
        rows = db.execute("SELECT arm, item, status FROM rows ORDER BY arm, item").fetchall()
    assert rows == [("echo", "d1", "done"), ("echo", "d2", "done"), ("single", "d1", "done"), ("single", "d2", "done")]
    report = (out / "report.md").read_text()
    assert "first echo" in report  # the arm's own name for its first round, which the report reads from the arm


def test_the_command_line_runs_a_preset_of_the_plugin_s_topology(site, tmp_path):
    project = _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "moot", "run", "pair_review", "--task", "Name a colour.", "-m", "canned",
         "--store", str(project / "runs.sqlite3")],
        cwd=project, env={**os.environ, **_path(site), "COLUMNS": "140"}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "best draft" in done.stdout  # a Reflection's result: the team the plugin's topology builds


PYTHON_USE = """
import asyncio, json, sys
from pathlib import Path

from moot.harness import CompareRequest, build_arm, known_arms, load_suite, run_comparison
from moot.models import ModelSpec, provider_names
from moot.teams import load_preset, topology, topology_names

spec = ModelSpec.parse("canned")
client = spec.client("writer")
suite = load_suite("doubles?n=2")
comparison = asyncio.run(run_comparison(CompareRequest(
    suite="doubles?n=2", arms=["echo?tone=flat"], models=["canned", "echoer=canned"], out=Path(sys.argv[1]),
)))
team = load_preset("pair_review").build(spec)
result = asyncio.run(team.run(task="Name a colour."))
print(json.dumps({
    "providers": list(provider_names()),
    "endpoint": spec.endpoint,
    "cost": spec.cost(10, 10),
    "busy": client.transient(__import__("moot_example_plugin").CannedFault()),
    "bug": client.transient(ValueError("bad request")),
    "arms": known_arms(),
    "first_round_name": build_arm("echo").first_round_name,
    "items": [item.id for item in suite.items],
    "rows": sorted((row.arm, row.item, row.status) for row in comparison.rows),
    "topologies": topology_names(),
    "team": type(team).__name__,
    "topology": topology("pair").__name__,
    "answered": bool(result.messages),
}))
"""


def test_python_uses_the_plugin_s_provider_arm_suite_and_topology(site, tmp_path):
    project = _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", PYTHON_USE, str(tmp_path / "out")],
        cwd=project, env={**os.environ, **_path(site)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    used = json.loads(done.stdout.splitlines()[-1])
    assert used["providers"] == ["local", "openai", "scripted", "component", "canned"]
    # the provider declared what moot must know of it: its calls queue apart from the embedded model's, it runs
    # here (no price, so no cost), and which of its faults are worth retrying
    assert used["endpoint"] == "canned:default" and used["cost"] == 0.0
    assert used["busy"] == "server_error" and used["bug"] is None
    assert "echo" in used["arms"] and used["first_round_name"] == "first echo"
    assert used["items"] == ["d1", "d2"]
    assert used["rows"] == [["echo?tone=flat", "d1", "done"], ["echo?tone=flat", "d2", "done"]]
    assert used["topologies"] == ["reflection", "debate", "code_debate", "planner_executor", "pair"]
    assert used["team"] == "Reflection" and used["topology"] == "PairTopology" and used["answered"]


def _installed(site: Path, group: str, entry: str) -> Path:
    """A package ``moot-odd-plugin`` whose metadata declares one entry point (``NAME = MODULE:OBJECT``) in
    ``group``: the dist-info pip would write, without a build."""
    info = site / "moot_odd_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: moot-odd-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    for folder in (site, info):
        folder.chmod(0o755)
    return site


REFUSALS = [
    pytest.param(
        "moot.arms",
        "broken = moot_missing_module:Arm",
        "plugin moot-odd-plugin: entry point broken = 'moot_missing_module:Arm' in group moot.arms failed to load: "
        "ModuleNotFoundError: No module named 'moot_missing_module'",
        id="fails to load",
    ),
    pytest.param(
        "moot.arms",
        "single = moot_example_plugin:EchoArm",
        "plugin moot-odd-plugin: entry point single = 'moot_example_plugin:EchoArm' in group moot.arms names the "
        "built-in arm 'single'; rename the entry point",
        id="clashes with a built-in arm",
    ),
    pytest.param(
        "moot.suites",
        "humaneval = moot_example_plugin:doubles",
        "in group moot.suites names the built-in suite 'humaneval'",
        id="clashes with a built-in suite",
    ),
    pytest.param(
        "moot.providers",
        "echoes = moot_example_plugin:doubles",
        "in group moot.providers is the function <function doubles",
        id="is not a provider",
    ),
    pytest.param(
        "moot.providers",
        "scripted = moot_example_plugin:CANNED",
        "in group moot.providers names the built-in provider 'scripted'",
        id="clashes with a built-in provider",
    ),
]


@pytest.mark.parametrize(("group", "entry", "message"), REFUSALS)
def test_a_plugin_moot_cannot_use_is_one_line_naming_it(site, tmp_path, group, entry, message):
    odd = _installed(tmp_path / "odd", group, entry)
    tmp_path.chmod(0o777)
    done = run_moot(
        "compare", "doubles?n=2", "--arms", "single", "--model", "scripted:deterministic", "--out",
        str(tmp_path / "out"), env=_path(odd, site),
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_a_broken_plugin_leaves_the_help_readable(site, tmp_path):
    odd = _installed(tmp_path / "odd", "moot.arms", "broken = moot_missing_module:Arm")
    done = run_moot("compare", "--help", env=_path(odd, site))
    assert done.returncode == 0, done.stderr
    assert "single" in done.stdout and "Traceback" not in done.stderr


def test_a_preset_naming_a_topology_no_one_installed_lists_the_valid_ones(tmp_path):
    """The topology names a preset may give are moot's own and installed plugins' (none here)."""
    project = _project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "moot", "run", "pair_review", "--task", "x", "-m", "scripted:deterministic"],
        cwd=project, env={**os.environ, **_path()}, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "unknown topology 'pair'; valid topologies: reflection, debate, code_debate, planner_executor" in (
        " ".join(done.stderr.split())
    )
