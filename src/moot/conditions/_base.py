"""Shared plumbing for moot's termination conditions.

Each condition is a real AutoGen ``TerminationCondition``: it sees only the
messages new since its last call, composes with ``|`` / ``&``, and round-trips
through ``dump_component()`` / ``load_component()``. This base holds the
boilerplate so each concrete condition is just its rule (and its config, whose
fields are its arguments: the base dumps and loads it).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Self, TypeVar

from autogen_agentchat.base import (
    AndTerminationCondition,
    OrTerminationCondition,
    TerminatedException,
    TerminationCondition,
)
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StopMessage
from pydantic import BaseModel, ValidationError

from moot.errors import ConfigError
from moot.messages import RoundCompleted

C = TypeVar("C", bound=BaseModel)

Messages = Sequence[BaseAgentEvent | BaseChatMessage]


class Composes:
    """``|`` and ``&`` that refuse anything but a condition at once (AutoGen's accept anything and fail at the
    first check of a run), and whose results compose the same way."""

    def __or__(self, other: TerminationCondition) -> TerminationCondition:
        return AnyOf(self, _operand(self, "|", other))

    def __and__(self, other: TerminationCondition) -> TerminationCondition:
        return AllOf(self, _operand(self, "&", other))


class MootCondition(Composes, TerminationCondition):
    """A condition that inspects each new message once and may return a stop reason."""

    needs: ClassVar[str | None] = None
    """The round value it waits for (``score``, ``agreement``); None: what every team produces."""
    bounds: ClassVar[bool] = False
    """Sure to fire sooner or later in any run (a round, step, token or time limit)."""

    def __init__(self) -> None:
        self._terminated = False

    @property
    def terminated(self) -> bool:
        return self._terminated

    async def __call__(self, messages: Messages) -> StopMessage | None:
        if self._terminated:
            raise TerminatedException(f"{type(self).__name__} has already stopped the run; call reset() first")
        for message in messages:
            reason = self.check(message)
            if reason is not None:
                self._terminated = True
                return StopMessage(content=reason, source=type(self).__name__)
        return None

    @abstractmethod
    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        """Update internal state from one message; return the stop reason, or None to go on."""

    async def reset(self) -> None:
        self._terminated = False
        self.clear()

    def configured(self, config: type[C], **values: Any) -> C:
        """``config`` built from the constructor's ``values``: a bad one is one ConfigError line naming this
        condition, the argument and what is valid, never pydantic's multi-line report.

        Strictly, as a typed signature reads: ``MaxRounds("3")`` or ``MaxRounds(True)`` is refused here rather
        than quietly coerced (an int is taken where a float is asked for). A config loaded from JSON is checked
        by AutoGen's loader before it gets here, already typed."""
        try:
            return config.model_validate(values, strict=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = ".".join(str(p) for p in first["loc"])
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(
                f"{type(self).__name__}({name}={first['input']!r}): {message[0].lower()}{message[1:]}"
            ) from None

    def clear(self) -> None:
        """Forget per-run state; conditions without any need not override."""

    # A condition's config is its arguments: each field of its ``component_config_schema`` is a constructor
    # argument of the same name, kept as an attribute of that name. So dumping and loading are said once, here.
    def _to_config(self) -> BaseModel:
        schema: type[BaseModel] = self.component_config_schema  # type: ignore[attr-defined]
        return schema(**{name: getattr(self, name) for name in schema.model_fields})

    @classmethod
    def _from_config(cls, config: BaseModel) -> Self:
        return cls(**dict(config))


# AutoGen's | and & of conditions, whose own | and & check their operand as moot's conditions do (so
# ``(MaxRounds(3) | TokenBudget(9000)) | 5`` fails at once, not at the first check of a run). They dump as
# AutoGen's composites do (same config and label, no description) under their own provider, so a loaded
# composite is checked too and ``type(c).load_component(c.dump_component())`` gives back the same type.
class _Join(Composes):
    """A ``|`` or ``&`` that keeps its parts in public (AutoGen's keep them private, with no accessor)."""

    def __init__(self, *conditions: TerminationCondition) -> None:
        super().__init__(*conditions)  # type: ignore[call-arg]  (AutoGen's Or/And, next in the MRO)
        self.parts = conditions
        """The conditions it joins."""


class AnyOf(_Join, OrTerminationCondition):
    component_provider_override = "moot.conditions.AnyOf"
    component_label = "OrTerminationCondition"


class AllOf(_Join, AndTerminationCondition):
    component_provider_override = "moot.conditions.AllOf"
    component_label = "AndTerminationCondition"


def _operand(condition: TerminationCondition, operator: str, other: object) -> TerminationCondition:
    """``other`` when it is a condition; AutoGen would accept anything and fail at the first check."""
    if not isinstance(other, TerminationCondition):
        name = "a composed condition" if isinstance(condition, AnyOf | AllOf) else type(condition).__name__
        raise TypeError(
            f"cannot combine {name} with {other!r} ({type(other).__name__}) using "
            f"{operator}: both sides must be termination conditions, e.g. MaxRounds(3) {operator} ScoreThreshold(85)"
        )
    return other


def completed_round(message: BaseAgentEvent | BaseChatMessage) -> RoundCompleted | None:
    return message if isinstance(message, RoundCompleted) else None
