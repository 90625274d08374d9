"""The README's promises: the Quick start is what CI runs, and its Python example runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def quick_start_commands() -> list[str]:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def test_quick_start_has_exactly_two_commands_and_ci_runs_the_second_verbatim():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    assert commands[0].endswith("moot run architecture_review")
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[1] in ci_lines


@pytest.mark.embedded
def test_the_python_example_runs_on_the_embedded_model(capsys):
    block = README.split("## From Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert "max rounds: 1 of 1 rounds done" in printed[0] or printed[0].startswith("error:")
    assert printed[1].startswith("[")
