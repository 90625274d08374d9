"""Named extensions of one kind (providers, arms, suites, topologies): moot's own, those registered from code, and
those installed packages declare under an entry-point group, as pytest finds ``pytest11`` plugins.

A package adds, say, an arm by naming it in its ``pyproject.toml``::

    [project.entry-points."moot.arms"]
    echo = "moot_example_plugin:EchoArm"

The entry point's name is the name users type (``--arms echo``); its object is what the kind's registry takes
(docs/plugins.md lists the four groups and what each takes). A group's entry points are loaded the first time one
of its names is looked up, so an installed plugin costs nothing until a command needs that kind. A plugin that
fails to load, names a built-in, or holds the wrong kind of object is one ``PluginError`` line naming the
package and the entry point: it is never skipped quietly, and never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from moot.boundary import one_line
from moot.errors import ConfigError

__all__ = ["PluginError", "Registry"]

T = TypeVar("T")

NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
"""What a plugin's entry point may be named: a name every spec grammar reads (``NAME[?k=v]``, ``NAME:MODEL``)."""


class PluginError(ConfigError):
    """An installed plugin moot cannot use: it failed to load, clashes with a name moot has, or is the wrong kind."""


class Registry(Generic[T]):
    """The names of one kind of extension, in the order errors list them: built-ins, then plugins, then those
    registered from code.

    ``accepts`` says whether a plugin's loaded object is this kind's (``what`` names the kind's form in the refusal).
    """

    def __init__(
        self,
        kind: str,
        group: str,
        accepts: Callable[[object], bool],
        what: str,
        *,
        builtins: Mapping[str, T] | None = None,
    ) -> None:
        self.kind, self.group, self.accepts, self.what = kind, group, accepts, what
        self._builtin: dict[str, T] = dict(builtins or {})
        self._plugins: dict[str, T] | None = None
        self._code: dict[str, T] = {}

    def add_builtin(self, name: str, value: T) -> None:
        """One of moot's own, registered by the module that defines it."""
        self._builtin[name] = value

    def register(self, name: str, value: T) -> None:
        """Registered from code: replaces any entry of that name, a built-in's or a plugin's included."""
        self._code[name] = value

    def unregister(self, name: str) -> None:
        """Forget what code registered under ``name`` (a built-in or plugin it covered shows again)."""
        self._code.pop(name, None)

    def get(self, name: str) -> T | None:
        return self._table().get(name)

    def names(self) -> list[str]:
        """Every name, in listing order (built-ins first)."""
        return list(self._table())

    def added_names(self) -> list[str]:
        """The names installed plugins and code added to moot's own."""
        return [name for name in self._table() if name not in self._builtin or name in self._code]

    def local_names(self) -> list[str]:
        """The names found without loading any plugin: moot's own and those registered from code."""
        return list({**self._builtin, **self._code})

    def _table(self) -> dict[str, T]:
        if self._plugins is None:
            self._plugins = dict(self._load())
        return {**self._builtin, **self._plugins, **self._code}

    def _load(self) -> Iterator[tuple[str, T]]:
        seen: dict[str, str] = {}
        for entry in entry_points(group=self.group):
            package = _package(entry)
            if not NAME.match(entry.name):
                raise self._refusal(entry, "is not a valid name: lowercase letters, digits, '_' and '-', from a letter")
            if entry.name in self._builtin:
                raise self._refusal(entry, f"names the built-in {self.kind} {entry.name!r}; rename the entry point")
            if entry.name in seen:
                raise self._refusal(entry, f"names the {self.kind} {entry.name!r}, as plugin {seen[entry.name]} does")
            seen[entry.name] = package
            yield entry.name, self._loaded(entry)

    def _loaded(self, entry: EntryPoint) -> T:
        try:
            value = entry.load()
        except Exception as exc:  # whatever the plugin's import raised: said in one line, with its kind
            raise self._refusal(entry, f"failed to load: {type(exc).__name__}: {one_line(str(exc), 200)}") from None
        if not self.accepts(value):
            raise self._refusal(entry, f"is {_described(value)}, not {self.what}")
        return value  # type: ignore[return-value]  # (accepts checked it)

    def _refusal(self, entry: EntryPoint, problem: str) -> PluginError:
        where = f"plugin {one_line(_package(entry), 80)}: entry point {one_line(entry.name, 80)}"
        return PluginError(f"{where} = {one_line(entry.value, 120)!r} in group {self.group} {problem}")


def _package(entry: EntryPoint) -> str:
    """The distribution that declares ``entry``, as ``pip`` names it."""
    dist = entry.dist
    return dist.name if dist is not None else "(unknown package)"


def _described(value: object) -> str:
    return f"the {type(value).__name__} {one_line(repr(value), 80)}"
