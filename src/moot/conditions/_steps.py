"""MaxSteps: stop a planner-executor after a number of executed steps."""

from __future__ import annotations

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_core import Component
from pydantic import BaseModel, Field

from moot.conditions._base import MootCondition
from moot.messages import StepFinished


class MaxStepsConfig(BaseModel):
    steps: int = Field(gt=0)


class MaxSteps(MootCondition, Component[MaxStepsConfig]):
    """Stop after ``steps`` executed steps (a step = one tool call and its check, passed or failed).

    Counts :class:`~moot.messages.StepFinished` events, so retried and re-planned
    steps count too: it bounds the work done, not the length of the plan.
    """

    component_config_schema = MaxStepsConfig
    component_provider_override = "moot.conditions.MaxSteps"
    needs = "steps"
    bounds = True

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = self.configured(MaxStepsConfig, steps=steps).steps
        self.clear()

    def clear(self) -> None:
        self.done = 0

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        if isinstance(message, StepFinished):
            self.done += 1
            if self.done >= self.steps:
                return f"max steps: {self.done} of {self.steps} steps done"
        return None
