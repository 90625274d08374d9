"""AtRoundEnd: an AutoGen condition that a moot team checks only when a round ends.

AutoGen's own conditions know nothing of rounds. Checked after every turn,
``TextMentionTermination("split")`` stopped a debate inside its first
expert's reply: one expert of three had spoken, and the arbiter ruled on a
round that never finished. A moot team therefore hands the messages of a
round to such a condition together, when the round completes; whatever it
decides, the round it ends is whole. moot's own conditions need no wrapping:
they already know which values arrive mid-round (tokens, time) and which at
its end (scores, agreement).
"""

from __future__ import annotations

from typing import Self

from autogen_agentchat.base import TerminatedException, TerminationCondition
from autogen_agentchat.messages import StopMessage
from autogen_core import Component, ComponentModel
from pydantic import BaseModel, ConfigDict

from moot.conditions._base import Messages
from moot.errors import ConfigError
from moot.messages import RoundCompleted

__all__ = ["AtRoundEnd", "AtRoundEndConfig"]


class AtRoundEndConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    condition: ComponentModel
    """The wrapped condition, as its own ``dump_component()``."""


class AtRoundEnd(TerminationCondition, Component[AtRoundEndConfig]):
    """Hold the messages of a round and show them to ``condition`` when the round completes."""

    component_config_schema = AtRoundEndConfig
    component_provider_override = "moot.conditions.AtRoundEnd"

    def __init__(self, condition: TerminationCondition) -> None:
        if not isinstance(condition, TerminationCondition):
            raise ConfigError(
                f"AtRoundEnd(condition={condition!r}): a termination condition is needed, got "
                f"{type(condition).__name__}, e.g. AtRoundEnd(TextMentionTermination('done'))"
            )
        self.condition = condition
        self._held: Messages = []

    @property
    def terminated(self) -> bool:
        return self.condition.terminated

    async def __call__(self, messages: Messages) -> StopMessage | None:
        if self.condition.terminated:
            raise TerminatedException(f"{type(self.condition).__name__} has already stopped the run; reset() first")
        self._held = [*self._held, *messages]
        if not any(isinstance(m, RoundCompleted) for m in messages):
            return None
        held, self._held = self._held, []
        return await self.condition(held)

    async def reset(self) -> None:
        self._held = []
        await self.condition.reset()

    def _to_config(self) -> AtRoundEndConfig:
        return AtRoundEndConfig(condition=self.condition.dump_component())

    @classmethod
    def _from_config(cls, config: AtRoundEndConfig) -> Self:
        return cls(TerminationCondition.load_component(config.condition))
