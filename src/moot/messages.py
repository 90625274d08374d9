"""moot's own AutoGen message types (round events, draft tagging) and a factory that rebuilds them."""

from __future__ import annotations

from typing import Literal

from autogen_agentchat.messages import BaseAgentEvent, MessageFactory, StructuredMessage

from moot.roles import Critique

__all__ = ["DRAFT", "RoundCompleted", "message_factory"]

DRAFT = "draft"
"""``metadata["moot_kind"]`` of a generator's draft message."""


class RoundCompleted(BaseAgentEvent):
    """Emitted by a moot team when a round ends; round-based conditions read it.

    ``fingerprints`` holds digests of what the round produced (draft, critique
    issues, positions) so NoProgress can spot a loop that stopped moving.
    """

    round: int
    score: float | None = None
    agreement: float | None = None
    fingerprints: dict[str, str] = {}
    type: Literal["RoundCompleted"] = "RoundCompleted"

    def to_text(self) -> str:
        extra = f", score {self.score:g}" if self.score is not None else ""
        extra += f", agreement {self.agreement:.2f}" if self.agreement is not None else ""
        return f"round {self.round} completed{extra}"


def message_factory(*structured: type) -> MessageFactory:
    """A MessageFactory that can rebuild moot's saved messages (critiques, positions, round events)."""
    factory = MessageFactory()
    for message_type in (RoundCompleted, StructuredMessage[Critique], *structured):
        if not factory.is_registered(message_type):
            factory.register(message_type)
    return factory
