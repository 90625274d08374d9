"""The docs name what the code defines: the extras a user can install, the hooks a topology can write.

Each list is read from the code (pyproject.toml, ``LoopTeam``, ``MootTeam``), so a new extra or hook that the
docs leave out fails here rather than misleading the next reader.
"""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

from moot._extras import EXTRAS
from moot.teams import MootTeam
from moot.teams._loop import LoopTeam

ROOT = Path(__file__).resolve().parents[2]


def _section(doc: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of any level."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    start = text.index(f"{heading}\n")
    following = re.search(r"^#+ ", text[start + len(heading) :], flags=re.MULTILINE)
    return text[start : start + len(heading) + following.start()] if following else text[start:]


def test_the_layout_lists_every_extra_pyproject_defines():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    listed = re.findall(r"^- `([a-z-]+)`: ", _section("layout.md", "## Extras"), flags=re.MULTILINE)
    assert sorted(listed) == sorted(extras)
    assert set(listed[: len(EXTRAS)]) == set(EXTRAS)  # "code checks for the first five"


def _underscore_members(cls: type) -> set[str]:
    """What ``cls`` declares with one leading underscore: methods and annotated attributes."""
    names = {name for name, value in vars(cls).items() if inspect.isfunction(value)} | set(cls.__annotations__)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def test_the_architecture_names_every_hook_the_loop_drives_and_every_abstract_one():
    written = _section("architecture.md", "### What a topology writes")
    named = set(re.findall(r"`(_[a-z_]+)[`(]", written))
    assert _underscore_members(LoopTeam) <= named, sorted(_underscore_members(LoopTeam) - named)
    assert MootTeam.__abstractmethods__ <= named, sorted(MootTeam.__abstractmethods__ - named)
    assert {"_state_type", "_derived_state", "_signals"} <= named
