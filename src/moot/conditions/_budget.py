"""Resource stops: TokenBudget (prompt + completion tokens) and WallClock (seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_core import Component
from pydantic import BaseModel, Field

from moot.conditions._base import MootCondition
from moot.errors import ConfigError


class TokenBudgetConfig(BaseModel):
    max_tokens: int = Field(gt=0)


class TokenBudget(MootCondition, Component[TokenBudgetConfig]):
    """Stop once the run has used ``max_tokens`` tokens (prompt + completion, all agents)."""

    component_config_schema = TokenBudgetConfig
    component_provider_override = "moot.conditions.TokenBudget"
    bounds = True

    def __init__(self, max_tokens: int) -> None:
        super().__init__()
        self.max_tokens = self.configured(TokenBudgetConfig, max_tokens=max_tokens).max_tokens
        self.clear()

    def clear(self) -> None:
        self.used = 0

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        usage = message.models_usage
        if usage is not None:
            self.used += usage.prompt_tokens + usage.completion_tokens
        if self.used >= self.max_tokens:
            return f"token budget: {self.used} of {self.max_tokens} tokens used"
        return None


class WallClockConfig(BaseModel):
    seconds: float = Field(gt=0)


class WallClock(MootCondition, Component[WallClockConfig]):
    """Stop at the first message after ``seconds`` have passed since the condition first saw one.

    Checked between turns: a model call in flight is not interrupted (use a
    cancellation token for that), so a run can overrun by one turn.
    """

    component_config_schema = WallClockConfig
    component_provider_override = "moot.conditions.WallClock"
    bounds = True

    def __init__(self, seconds: float, clock: Callable[[], float] | None = None) -> None:
        super().__init__()
        self.seconds = self.configured(WallClockConfig, seconds=seconds).seconds
        if clock is not None and not callable(clock):
            raise ConfigError(
                f"WallClock(clock={clock!r}): a clock is a function returning seconds, e.g. time.monotonic"
            )
        self._clock = clock or time.monotonic
        self.clear()

    def clear(self) -> None:
        self._start: float | None = None

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        now = self._clock()
        if self._start is None:
            self._start = now
        elapsed = now - self._start
        if elapsed >= self.seconds:
            return f"wall clock: {elapsed:.1f}s of {self.seconds:g}s used"
        return None
