"""Where catalog entries come from: the project's folders, ``$MOOT_PATH``, then the built-ins.

The first file found under a name wins. A user's file that shadows a built-in
is allowed (that is how a built-in is customised) but never silent: it prints
one notice line on stderr, once per process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from moot.boundary import one_line
from moot.errors import ConfigError

__all__ = ["BUILT_IN", "KINDS", "PATH_VARIABLE", "Entry", "entries", "find_entry", "notice_override"]

Kind = Literal["roles", "teams", "arbiters", "scenarios"]
KINDS: tuple[Kind, ...] = ("roles", "teams", "arbiters", "scenarios")
BUILT_IN = Path(__file__).resolve().parent / "builtin"
"""The catalog moot ships: in a checkout links to the repository's top-level folders, in a wheel copies."""
PATH_VARIABLE = "MOOT_PATH"
"""Extra project directories (``os.pathsep``-separated), each holding ``roles/``, ``teams/`` ..., searched after
the current directory and before the built-ins."""

_SINGULAR = {"roles": "role", "teams": "team preset", "arbiters": "arbiter", "scenarios": "scenario"}


@dataclass(frozen=True)
class Entry:
    """One catalog file: its name (the file's stem), where it is, and whether moot ships it."""

    kind: Kind
    name: str
    path: Path
    built_in: bool

    @property
    def origin(self) -> str:
        """``built-in`` or the file's path, as the listing commands show it."""
        return "built-in" if self.built_in else str(self.path)


def _search_dirs(kind: Kind) -> list[tuple[Path, bool]]:
    roots = [Path.cwd()]
    roots += [Path(p) for p in os.environ.get(PATH_VARIABLE, "").split(os.pathsep) if p]
    dirs = [(root / kind, False) for root in roots] + [(BUILT_IN / kind, True)]
    unique: list[tuple[Path, bool]] = []
    seen: set[Path] = set()
    for directory, built_in in dirs:
        if directory.is_dir() and (resolved := directory.resolve()) not in seen:
            seen.add(resolved)
            # In a checkout ./roles *is* the built-in folder (through the link): it counts as built-in.
            unique.append((directory, built_in or resolved == (BUILT_IN / kind).resolve()))
    return unique


def check_kind(kind: object) -> None:
    """A kind of catalog entry, or a one-line ConfigError naming the kinds (a wrong one would list nothing)."""
    if kind not in KINDS:
        raise ConfigError(f"catalog kind {one_line(repr(kind), 60)} is not one; kinds: {', '.join(KINDS)}")


def entries(kind: Kind, suffixes: Sequence[str] = (".yaml", ".yml")) -> dict[str, Entry]:
    """Every entry of ``kind`` by name, the first found in lookup order winning; names sorted."""
    check_kind(kind)
    found: dict[str, Entry] = {}
    for directory, built_in in _search_dirs(kind):
        for path in sorted(directory.iterdir()):
            if path.suffix not in suffixes or path.name.startswith(("_", ".")) or not path.is_file():
                continue
            entry = Entry(kind, path.stem, path, built_in)
            if path.stem not in found:
                found[path.stem] = entry
            elif found[path.stem].built_in is False and built_in:
                notice_override(kind, path.stem, str(found[path.stem].path))
    return dict(sorted(found.items()))


def find_entry(kind: Kind, name: str, suffixes: Sequence[str] = (".yaml", ".yml")) -> Entry:
    """The entry called ``name``, or a ConfigError naming the ones there are."""
    if not isinstance(name, str):
        raise ConfigError(
            f"find_entry: name must be a {_SINGULAR.get(kind, 'catalog entry')}'s name, got {type(name).__name__}"
        )
    found = entries(kind, suffixes)
    if name in found:
        return found[name]
    available = ", ".join(found) or "none found"
    raise ConfigError(f"unknown {_SINGULAR[kind]} {name!r}; available: {available}")


_NOTIFIED: set[tuple[str, str, str]] = set()


def notice_override(kind: Kind, name: str, by: str) -> None:
    """Say once per process that ``by`` (a path, or "code") replaces the built-in ``name``."""
    key = (kind, name, by)
    if key in _NOTIFIED:
        return
    _NOTIFIED.add(key)
    print(one_line(f"moot: note: {_SINGULAR[kind]} {name!r} from {by} overrides the built-in"), file=sys.stderr)
