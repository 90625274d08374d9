"""Former public names that still work: the one owner of "this was renamed, say so and carry on".

When a public keyword, attribute or function gets the one name its concept has (docs/architecture.md, Names),
code written against the former name keeps working for now: it gets a ``DeprecationWarning`` naming the new
spelling, and the value goes where the new name puts it. Each rename is one line where the renamed thing is
defined, so the former names are easy to find and, later, to delete together.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from moot.errors import ConfigError, MootError

__all__ = ["RenamedWarning", "former_function", "former_key", "former_keywords", "say_renames_to", "warn_renamed"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
V = TypeVar("V")


class RenamedWarning(DeprecationWarning):
    """A former spelling was used: a DeprecationWarning of moot's own renames (see :func:`say_renames_to`)."""


_SINKS: list[Callable[[str], None]] = []
_SAID: set[str] = set()


def say_renames_to(sink: Callable[[str], None]) -> None:
    """Also hand each former spelling's message, once, to ``sink``: the command line prints it as a one-line note,
    since Python hides a library's DeprecationWarnings and a user who wrote ``?options=`` in a spec should hear."""
    _SINKS.append(sink)


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is now called ``new`` (a DeprecationWarning at the caller's line), and tell any sink once."""
    message = f"{old} is deprecated; it is now called {new}"
    warnings.warn(message, RenamedWarning, stacklevel=stacklevel)
    if _SINKS and message not in _SAID:
        _SAID.add(message)
        for sink in _SINKS:
            sink(message)


def former_keywords(**renamed: str) -> Callable[[T], T]:
    """Decorator of a class or a function: each former keyword (``old=new``) still works, warning; on a class, so
    does reading the former attribute. Giving both spellings at once is a TypeError, as any repeated argument is.
    A refusal naming the new keyword, of a value given under the former one, says so: it names what the caller
    wrote."""

    def decorate(target: T) -> T:
        if not isinstance(target, type):
            owner = target.__qualname__.removesuffix(".__init__")  # a class's __init__: the class is called
            return _taking_former(target, owner, renamed)  # type: ignore[return-value]
        target.__init__ = _taking_former(target.__init__, target.__name__, renamed)  # type: ignore[misc]
        for old, new in renamed.items():
            setattr(target, old, _former_attribute(target.__name__, old, new))
        return target

    return decorate


def _taking_former(call: Callable[..., R], owner: str, renamed: dict[str, str]) -> Callable[..., R]:
    """``call`` taking each former keyword under its new name (see :func:`former_keywords`)."""

    @functools.wraps(call)
    def taking(*args: Any, **kwargs: Any) -> R:
        given = [old for old in renamed if old in kwargs]
        for old in given:
            new = renamed[old]
            if new in kwargs:
                raise TypeError(f"{owner}() got both {old}= and {new}=; give only {new}=")
            warn_renamed(f"{owner}({old}=...)", f"{new}=")
            kwargs[new] = kwargs.pop(old)
        try:
            return call(*args, **kwargs)
        except (TypeError, ValueError, MootError) as exc:
            named = [old for old in given if exc.args and renamed[old] in str(exc.args[0])]
            if named:
                said = ", ".join(f"given as {old}=" for old in named)
                exc.args = (f"{exc.args[0]} ({said})", *exc.args[1:])
            raise

    return taking


def _former_attribute(owner: str, old: str, new: str) -> property:
    """A read-only property ``old`` that warns and reads ``new``."""

    def read(self: Any) -> Any:
        warn_renamed(f"{owner}.{old}", f"{owner}.{new}")
        return getattr(self, new)

    return property(read, doc=f"Deprecated: now called ``{new}``.")


def former_function(old: str, function: Callable[P, R]) -> Callable[P, R]:
    """``function`` under its former name ``old``: the same call, with a warning naming the new one."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        warn_renamed(old, function.__name__)
        return function(*args, **kwargs)

    call.__name__ = call.__qualname__ = old
    return call


def former_key(data: Mapping[str, V], old: str, new: str, *, where: str, stacklevel: int = 3) -> dict[str, V]:
    """``data`` (a file's fields, a spec's parameters) with a value given under the former key ``old`` moved to
    ``new``, warning (``where`` names what holds the key); giving both is a ConfigError, as any repeated key is."""
    if old not in data:
        return dict(data)
    if new in data:
        raise ConfigError(f"{where}: give {new} once ({old} is its former name)")
    warn_renamed(f"{where}: {old}", new, stacklevel=stacklevel)
    return {(new if key == old else key): value for key, value in data.items()}
