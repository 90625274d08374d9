"""The example notebooks run top to bottom on scripted models (nbclient), so they cannot rot.

The kernel is this interpreter: the test writes a kernel spec for ``sys.executable`` into a temp
dir and points JUPYTER_PATH at it, so it works from a fresh clone with nothing registered.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from ipykernel.kernelspec import install
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KERNEL = "moot-test-python3"

# Per notebook: text that must appear in its outputs (what a reader is meant to see).
EXPECTED = {
    "reflection.ipynb": [
        "<h4>Reflection · 2 round(s)</h4>",
        "stop reason: quality threshold: score 93 >= 85 in round 2",
        "scores per round: [62, 93]",
        "critic, round 1: 1 call(s)",
        "--- SystemMessage",
    ],
    "debate.ipynb": [
        "<h4>Debate · 2 round(s)</h4>",
        "verdict: keep by arbiter",
        "agreement per round: [0.67, 1.0]",
        "majority vote: keep - 2 of 3 experts answered 'keep'",
    ],
    "compare.ipynb": [
        "| 2 | MajorityVote | 7 | no |",
        "| 3 | Reflection | Sydney | no |",
        "accuracy: Reflection 3/4, Debate 3/4, MajorityVote 2/4",
    ],
}


@pytest.fixture
def kernel(tmp_path_factory, monkeypatch) -> str:
    """A kernel spec for this interpreter, in a temp JUPYTER_PATH; IPython and Jupyter state kept in temp too."""
    root = tmp_path_factory.mktemp("jupyter")
    install(kernel_name=KERNEL, prefix=str(root))
    monkeypatch.setenv("JUPYTER_PATH", str(root / "share" / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(root / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(root / "ipython"))
    monkeypatch.setenv("MPLCONFIGDIR", str(root / "matplotlib"))
    return KERNEL


def outputs(notebook: nbformat.NotebookNode) -> str:
    """Every text, HTML and Markdown output of every cell, joined.

    A cell's printed text arrives in as many stream outputs as the kernel
    flushed (more on a busy machine), so it is joined as Jupyter shows it: as is.
    """
    parts = []
    for cell in notebook.cells:
        parts.append("".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream"))
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            parts += [data.get(kind, "") for kind in ("text/plain", "text/html", "text/markdown")]
    return "\n".join(parts)


def test_every_notebook_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.ipynb")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_and_shows_its_results(name, kernel, tmp_path):
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    client = NotebookClient(notebook, kernel_name=kernel, timeout=300, resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    assert client.km is None or not client.km.has_kernel
    text = outputs(notebook)
    for expected in EXPECTED[name]:
        assert expected in text, f"{name}: {expected!r} not in the outputs"
    assert not [o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_top_level_await_is_what_the_notebooks_use():
    """`await team.run(...)` straight in a cell, no asyncio.run: the executed notebooks prove it works."""
    for name in EXPECTED:
        cells = nbformat.read(EXAMPLES / name, as_version=4).cells
        source = "\n".join(c.source for c in cells if c.cell_type == "code")
        assert "await team.run(" in source and "asyncio.run" not in source


def test_the_kernel_is_this_interpreter(kernel):
    from jupyter_client.kernelspec import KernelSpecManager

    assert KernelSpecManager().get_kernel_spec(kernel).argv[0] == sys.executable
