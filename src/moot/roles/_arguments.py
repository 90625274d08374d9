"""Argument checks for moot's public constructors: a bad argument is refused where it is given, in one line.

Why one module: a team or an agent that takes a wrong argument must not accept it and fail later inside
``run()`` (an ``AttributeError`` from deep in moot, a model call wasted first), nor print a many-line
schema dump. Every check here raises :class:`~moot.errors.ConfigError` (a ``ValueError``) whose one line
says where (``Debate: arbiter``), what is valid, and what was given. It lives in ``moot.roles`` because
that is the lowest package every constructor's module (roles, arbiters, teams, scenarios) already builds on.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from autogen_agentchat.base import ChatAgent
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage
from pydantic import BaseModel, ValidationError

from moot.boundary import one_line
from moot.errors import ConfigError

__all__ = [
    "OneLineModel",
    "answer_name",
    "answer_types",
    "answers_with",
    "argument_error",
    "checked_agent",
    "checked_agents",
    "checked_choice",
    "checked_count",
    "checked_flag",
    "checked_mapping",
    "checked_number",
    "checked_optional_text",
    "checked_pattern",
    "checked_strings",
    "checked_text",
    "distinct_names",
    "one_line_validation",
    "shown",
]

T = TypeVar("T")
_SHOWN = 80
"""How much of a bad value a message repeats: enough to recognise it, never enough to wrap."""


def shown(value: object) -> str:
    """A bad value as a message names it: its type, then its (clipped, one-line) repr."""
    if isinstance(value, type):
        return f"the class {value.__name__}"
    return f"{type(value).__name__} {one_line(repr(value), _SHOWN)}"


def argument_error(where: str, argument: str, valid: str, got: object) -> ConfigError:
    """The one-line refusal of ``argument`` of ``where``: what is valid, and what was given."""
    return ConfigError(f"{where}: {argument} must be {valid}, got {shown(got)}")


def checked_text(value: object, where: str, argument: str, *, empty: bool = False) -> str:
    """A string (non-blank unless ``empty``)."""
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise argument_error(where, argument, "a string" if empty else "a non-empty string", value)
    return value


def checked_optional_text(value: object, where: str, argument: str) -> str | None:
    """None, or a non-empty string."""
    return None if value is None else checked_text(value, where, argument)


def checked_count(value: object, where: str, argument: str, least: int = 0, most: int | None = None) -> int:
    """A whole number (not a bool, not a string of digits) from ``least`` to ``most``."""
    within = isinstance(value, int) and not isinstance(value, bool) and value >= least
    if not within or (most is not None and value > most):  # type: ignore[operator]
        bounds = f"from {least} to {most}" if most is not None else f"{least} or more"
        raise argument_error(where, argument, f"a whole number, {bounds}", value)
    return value  # type: ignore[return-value]


def checked_number(value: object, where: str, argument: str, least: float, most: float) -> float:
    """A real number (not a bool) from ``least`` to ``most``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not least <= value <= most:
        raise argument_error(where, argument, f"a number from {least} to {most}", value)
    return float(value)


def checked_flag(value: object, where: str, argument: str) -> bool:
    if not isinstance(value, bool):
        raise argument_error(where, argument, "True or False", value)
    return value


def checked_choice(value: object, where: str, argument: str, choices: Collection[str]) -> str:
    """One of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise argument_error(where, argument, f"one of {', '.join(choices)}", value)
    return value


def checked_strings(value: object, where: str, argument: str, *, example: str = "") -> list[str]:
    """A sequence of non-empty strings; a lone string is refused (it would be taken as its letters)."""
    valid = f"a list of non-empty strings{f', e.g. {example}' if example else ''}"
    if isinstance(value, str | bytes) or not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise argument_error(where, argument, valid, value)
    items = list(value)
    bad = next((item for item in items if not isinstance(item, str) or not item.strip()), None)
    if bad is not None:
        raise ConfigError(f"{where}: {argument} must be {valid}, got {shown(bad)} among them")
    return items


def checked_mapping(value: object, where: str, argument: str, valid: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise argument_error(where, argument, valid, value)
    return value


def checked_pattern(value: object, where: str, argument: str) -> str | None:
    """None, or a regular expression that compiles."""
    if value is None:
        return None
    checked_text(value, where, argument)
    try:
        re.compile(value)  # type: ignore[arg-type]
    except re.error as exc:
        raise ConfigError(f"{where}: {argument} {value!r} is not a regular expression ({exc})") from None
    return value  # type: ignore[return-value]


def checked_agent(value: object, where: str, argument: str, kind: str = "an agent") -> ChatAgent:
    """An AutoGen chat agent (a moot RoleAgent or TestCritic, or any ChatAgent)."""
    if not isinstance(value, ChatAgent):
        hint = " (make one with RoleAgent(role, model))" if isinstance(value, str) or value is None else ""
        raise argument_error(
            where, argument, f"{kind}: a RoleAgent, TestCritic or another AutoGen ChatAgent{hint}", value
        )
    return value


def checked_agents(value: object, where: str, argument: str, kind: str = "an agent") -> list[ChatAgent]:
    """One agent, or a sequence of agents (at least one)."""
    if isinstance(value, ChatAgent):
        return [value]
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise argument_error(where, argument, f"{kind} (a RoleAgent ...) or a list of them", value)
    agents = [checked_agent(item, where, argument, kind) for item in value]
    if not agents:
        raise ConfigError(f"{where}: {argument} must hold at least one agent, got none")
    return agents


def distinct_names(agents: Sequence[ChatAgent], where: str) -> None:
    """Refuse two agents of one name: turns, usage and stored runs are keyed by the agent's name."""
    names = [a.name for a in agents]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ConfigError(
            f"{where}: two agents are named {twice!r} ({', '.join(names)}); give each its own name, "
            "e.g. RoleAgent(role, model, name='critic_2')"
        )


def answer_types(agent: ChatAgent) -> tuple[type, ...]:
    """What ``agent`` answers with: the content types of the structured messages it produces, ``str`` for text."""
    found: list[type] = []
    for kind in agent.produced_message_types:
        if isinstance(kind, type) and issubclass(kind, StructuredMessage):
            content = kind.model_fields["content"].annotation
            found.append(content if isinstance(content, type) else object)
        elif isinstance(kind, type) and issubclass(kind, BaseChatMessage):
            found.append(str)
    return tuple(found)


def answers_with(agent: ChatAgent, schema: type[BaseModel]) -> bool:
    """Whether one of ``agent``'s answers is a ``schema`` (or a schema built on it)."""
    return any(isinstance(t, type) and issubclass(t, schema) for t in answer_types(agent))


def answer_name(agent: ChatAgent) -> str:
    """What an agent answers with, as a message names it: ``Critique``, ``text``."""
    names = [("text" if t is str else t.__name__) for t in answer_types(agent)]
    return " or ".join(names) or "nothing"


def one_line_validation(model: str, exc: ValidationError) -> ConfigError:
    """A pydantic ValidationError of a constructor, as one line naming each field that failed (at most four)."""
    parts = []
    for error in exc.errors()[:4]:
        where = ".".join(str(p) for p in error["loc"]) or "value"
        parts.append(f"{where}: {error['msg']}")
    more = f" (and {len(exc.errors()) - 4} more)" if len(exc.errors()) > 4 else ""
    return ConfigError(one_line(f"{model}: " + "; ".join(parts) + more, 600))


class OneLineModel(BaseModel):
    """A schema whose constructor refuses bad fields in one line: ``Critique(score=500)`` raises a ConfigError
    naming ``score``, not pydantic's many-line report. Only direct construction changes: ``model_validate``
    (how replies and stored records are read) still raises ValidationError, which the feedback loop reads."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise one_line_validation(type(self).__name__, exc) from None

    # Marked as pydantic's own: validation (``model_validate``, a nested field) then never calls this
    # constructor, so replies keep failing with a ValidationError that the feedback loop words as before.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]
