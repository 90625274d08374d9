"""Shared plumbing for moot's termination conditions.

Each condition is a real AutoGen ``TerminationCondition``: it sees only the
messages new since its last call, composes with ``|`` / ``&``, and round-trips
through ``dump_component()`` / ``load_component()``. This base holds the
boilerplate so each concrete condition is just its rule.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from autogen_agentchat.base import TerminatedException, TerminationCondition
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StopMessage

from moot.messages import RoundCompleted

Messages = Sequence[BaseAgentEvent | BaseChatMessage]


class MootCondition(TerminationCondition):
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

    def clear(self) -> None:
        """Forget per-run state; conditions without any need not override."""


def completed_round(message: BaseAgentEvent | BaseChatMessage) -> RoundCompleted | None:
    return message if isinstance(message, RoundCompleted) else None
