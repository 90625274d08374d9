"""Consensus: stop a debate once the experts agree."""

from __future__ import annotations

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_core import Component
from pydantic import BaseModel, Field

from moot.conditions._base import MootCondition, completed_round


class ConsensusConfig(BaseModel):
    threshold: float = Field(default=1.0, gt=0.0, le=1.0)


class Consensus(MootCondition, Component[ConsensusConfig]):
    """Stop when the share of experts holding the most common answer reaches ``threshold``.

    Answers are compared after normalisation (case, punctuation, number form),
    so short answers agree when they are the same answer, and open questions
    agree when the experts took the same stance. 1.0 means everyone agrees.
    """

    component_config_schema = ConsensusConfig
    component_provider_override = "moot.conditions.Consensus"
    needs = "agreement"

    def __init__(self, threshold: float = 1.0) -> None:
        super().__init__()
        self.threshold = self.configured(ConsensusConfig, threshold=threshold).threshold

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        done = completed_round(message)
        if done is not None and done.agreement is not None and done.agreement >= self.threshold:
            return f"consensus: agreement {done.agreement:.2f} >= {self.threshold:g} in round {done.round}"
        return None
