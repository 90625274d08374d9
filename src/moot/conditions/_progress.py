"""NoProgress: stop a loop that keeps producing the same thing."""

from __future__ import annotations

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_core import Component
from pydantic import BaseModel, Field

from moot.conditions._base import MootCondition, completed_round


class NoProgressConfig(BaseModel):
    window: int = Field(default=1, gt=0)


class NoProgress(MootCondition, Component[NoProgressConfig]):
    """Stop when a round's output repeats unchanged for ``window`` rounds in a row.

    Teams put a digest of each round's essentials in ``RoundCompleted.fingerprints``
    (the draft, the critique's issues, the experts' positions); any one of them
    staying identical for ``window`` consecutive rounds means the loop is stuck.
    """

    component_config_schema = NoProgressConfig
    component_provider_override = "moot.conditions.NoProgress"

    def __init__(self, window: int = 1) -> None:
        super().__init__()
        self.window = self.configured(NoProgressConfig, window=window).window
        self.clear()

    def clear(self) -> None:
        self._last: dict[str, str] = {}
        self._repeats: dict[str, int] = {}

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        done = completed_round(message)
        if done is None:
            return None
        for key, digest in done.fingerprints.items():
            repeated = self._last.get(key) == digest
            self._repeats[key] = self._repeats.get(key, 0) + 1 if repeated else 0
            self._last[key] = digest
            if self._repeats[key] >= self.window:
                return f"no progress: {key} unchanged for {self._repeats[key]} round(s) (round {done.round})"
        return None
