"""Arbiter files: one YAML file per arbiter in a catalog ``arbiters/`` folder.

``kind: llm`` is a model that rules as a role (``arbiter`` by default), with
a ``rubric`` of points appended to that role's system prompt; the votes
(``majority_vote``, ``weighted_vote``, ``rounds_vote``) call no model and take no options.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal, TypeAlias

from moot.arbiters._majority import MajorityVote
from moot.arbiters._protocol import Arbiter
from moot.arbiters._rounds_vote import RoundsVote
from moot.arbiters._weighted import WeightedVote
from moot.boundary import checked_text
from moot.catalog import CatalogFile, entries, find_entry, read_document
from moot.errors import ConfigError
from moot.roles import Role, role

__all__ = ["VOTES", "ArbiterFile", "ArbiterSpec", "VoteName", "known_arbiters", "load_arbiter", "with_rubric"]

VoteName: TypeAlias = Literal["majority_vote", "weighted_vote", "rounds_vote"]
"""A vote's one name: its arbiter file's name and ``kind:``, its class's ``name``, a saved debate's ``arbiter`` and
a result's ``verdict_by``. (``moot compare``'s debate arm spells two of them ``arbiter=vote`` and
``arbiter=rounds`` in its row keys: docs/architecture.md, Names.)"""
VOTES: dict[VoteName, type[MajorityVote] | type[WeightedVote] | type[RoundsVote]] = {
    "majority_vote": MajorityVote,
    "weighted_vote": WeightedVote,
    "rounds_vote": RoundsVote,
}
FORMER_NAMES = {"llm_judge": "model_arbiter"}
"""Built-in arbiters renamed since they shipped, old name -> new: team presets and stored runs (``moot resume``
reads the arbiter's name from the run) that name the old one still get it."""


class ArbiterFile(CatalogFile):
    """The fields of an arbiter file."""

    kind: Literal["llm", VoteName]
    role: str | None = None
    """``llm`` only: the role that rules (default ``arbiter``)."""
    rubric: list[str] = []
    """``llm`` only: what every ruling must weigh, appended to the role's system prompt."""


@dataclass(frozen=True)
class ArbiterSpec:
    """An arbiter as a team preset uses it: a role to put on a model, or a vote."""

    name: str
    description: str
    kind: str
    role: Role | None
    """The role that rules, rubric included (``llm`` only)."""

    def vote(self) -> Arbiter:
        """The vote this arbiter is (not for ``llm``: that one is an agent on a model)."""
        if self.kind not in VOTES:
            raise ConfigError(f"arbiter {self.name!r} is a model arbiter, not a vote")
        return VOTES[self.kind]()


def load_arbiter(name: str) -> ArbiterSpec:
    """The arbiter called ``name`` in the catalog (project first, then built-in)."""
    checked_text(name, "load_arbiter", "name (an arbiter's name)")
    found = find_entry("arbiters", _current_name(name))
    return _load(found.path.resolve(), found.path.stat().st_mtime_ns)


_RENAMES_NOTED: set[str] = set()


def _current_name(name: str) -> str:
    """``name``, or the built-in's new name for a former one that no catalog file still has (said once)."""
    new = FORMER_NAMES.get(name)
    if new is None or name in entries("arbiters"):
        return name
    if name not in _RENAMES_NOTED:
        _RENAMES_NOTED.add(name)
        print(f"moot: note: arbiter {name!r} is now called {new!r}", file=sys.stderr)
    return new


def known_arbiters() -> list[str]:
    return list(entries("arbiters"))


@cache
def _load(path: Path, mtime_ns: int) -> ArbiterSpec:
    document = read_document(path)
    spec = document.validate_named(ArbiterFile)
    if spec.kind != "llm":
        extra = "role" if spec.role is not None else "rubric" if spec.rubric else None
        if extra is not None:
            raise document.error(f"{extra}: only an llm arbiter takes one; {spec.kind} calls no model", [extra])
        return ArbiterSpec(spec.name, spec.description, spec.kind, None)
    try:
        arbiter_role = role(spec.role or "arbiter")
    except ConfigError as exc:
        raise document.error(f"role: {exc}", ["role"]) from None
    return ArbiterSpec(spec.name, spec.description, spec.kind, with_rubric(arbiter_role, spec.rubric))


def with_rubric(arbiter_role: Role, rubric: list[str]) -> Role:
    """``arbiter_role`` with the rubric's points closing its system prompt."""
    if not rubric:
        return arbiter_role
    points = "\n".join(f"- {point.strip()}" for point in rubric)
    prompt = f"{arbiter_role.system_prompt}\n\nRubric: weigh every ruling against these points.\n{points}"
    return replace(arbiter_role, system_prompt=prompt)
