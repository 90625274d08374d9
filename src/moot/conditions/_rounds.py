"""Round-count and score-based stops: MaxRounds, ScoreThreshold, NoImprovement."""

from __future__ import annotations

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_core import Component
from pydantic import BaseModel, Field, field_validator

from moot.conditions._base import MootCondition, completed_round


class MaxRoundsConfig(BaseModel):
    rounds: int = Field(gt=0)


class MaxRounds(MootCondition, Component[MaxRoundsConfig]):
    """Stop after ``rounds`` completed rounds (a round = draft + critique, or one debate round) since the run
    started: as with AutoGen's own conditions, each ``run()`` of a team that has finished starts a fresh budget
    (a run resumed after a crash counts the rounds it had done)."""

    component_config_schema = MaxRoundsConfig
    component_provider_override = "moot.conditions.MaxRounds"
    bounds = True

    def __init__(self, rounds: int) -> None:
        super().__init__()
        self.rounds = self.configured(MaxRoundsConfig, rounds=rounds).rounds
        self.clear()

    def clear(self) -> None:
        self._seen = 0

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        done = completed_round(message)
        if done is None:
            return None
        self._seen += 1
        if self._seen < self.rounds:
            return None
        in_all = f" ({done.round} in all)" if done.round != self._seen else ""
        return f"max rounds: {self._seen} of {self.rounds} rounds done{in_all}"


class ScoreThresholdConfig(BaseModel):
    threshold: float = Field(ge=0, le=100)
    """On the critics' 0-100 scale: a fraction such as 0.85 is refused (it would accept every draft)."""

    @field_validator("threshold")
    @classmethod
    def _not_a_fraction(cls, value: float) -> float:
        if 0 < value < 1:
            raise ValueError(f"scores are on a 0-100 scale; did you mean ScoreThreshold({value * 100:g})?")
        return value


class ScoreThreshold(MootCondition, Component[ScoreThresholdConfig]):
    """Stop once a round's score reaches ``threshold`` (0-100)."""

    component_config_schema = ScoreThresholdConfig
    component_provider_override = "moot.conditions.ScoreThreshold"
    needs = "score"

    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = self.configured(ScoreThresholdConfig, threshold=threshold).threshold

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        done = completed_round(message)
        if done is not None and done.score is not None and done.score >= self.threshold:
            return f"quality threshold: score {done.score:g} >= {self.threshold:g} in round {done.round}"
        return None


class NoImprovementConfig(BaseModel):
    patience: int = Field(gt=0)
    min_delta: float = Field(default=0.0, ge=0)


class NoImprovement(MootCondition, Component[NoImprovementConfig]):
    """Stop when the best score has not risen by more than ``min_delta`` for ``patience`` scored rounds."""

    component_config_schema = NoImprovementConfig
    component_provider_override = "moot.conditions.NoImprovement"
    needs = "score"

    def __init__(self, patience: int, min_delta: float = 0.0) -> None:
        super().__init__()
        config = self.configured(NoImprovementConfig, patience=patience, min_delta=min_delta)
        self.patience, self.min_delta = config.patience, config.min_delta
        self.clear()

    def clear(self) -> None:
        self._best: float | None = None
        self._stale = 0

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        done = completed_round(message)
        if done is None or done.score is None:
            return None
        if self._best is None or done.score > self._best + self.min_delta:
            self._best, self._stale = done.score, 0
            return None
        self._stale += 1
        if self._stale >= self.patience:
            return f"no improvement: best score {self._best:g} not beaten for {self._stale} rounds"
        return None
