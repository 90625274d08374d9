"""Argument checks about agents, for the constructors of roles and teams: which agent answers with which schema,
distinct names, one-line validation errors. The checks of plain values (text, counts, choices ...) are
:mod:`moot.boundary`'s, which every package can reach."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from autogen_agentchat.base import ChatAgent
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage
from pydantic import BaseModel, ValidationError

from moot.boundary import argument_error, one_line
from moot.errors import ConfigError

__all__ = [
    "OneLineModel",
    "answer_name",
    "answer_types",
    "answers_with",
    "checked_agent",
    "checked_agents",
    "distinct_names",
    "one_line_validation",
]

T = TypeVar("T")


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
