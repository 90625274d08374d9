"""The README's promises: the Quick start is what CI runs, and its Python example runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


def test_the_try_it_line_runs_a_debate_on_the_built_in_test_model(tmp_path):
    """The ten-second line, minus its install: no compiler, no model download, a finished debate."""
    section = README.split("## Try it in ten seconds", 1)[1].split("\n## ", 1)[0]
    (line,) = re.findall(r"```sh\n(.*?)\n```", section, re.DOTALL)
    command = line.split("&& .venv/bin/", 2)[-1].split()
    assert command[:2] == ["moot", "run"] and "scripted:deterministic" in command
    env = {**os.environ, "MOOT_STORE": str(tmp_path / "runs.sqlite3"), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-m", "moot", *command[1:]], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "verdict by arbiter" in done.stdout


def test_the_role_list_names_every_role_moot_roles_lists():
    import moot.cli  # noqa: F401 - registers the roles moot compare adds from code, as the command does
    from moot.roles import known_roles

    row = next(line for line in README.splitlines() if line.startswith("| **Roles**"))
    assert [name for name in known_roles() if not re.search(rf"\b{name}\b", row)] == []


def test_every_local_link_of_the_readme_and_docs_exists():
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"
