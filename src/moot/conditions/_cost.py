"""CostBudget: stop once the run's billed calls have cost ``usd`` dollars."""

from __future__ import annotations

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_core import Component
from pydantic import BaseModel, ConfigDict, Field

from moot.conditions._base import MootCondition
from moot.models import metered


class CostBudgetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    usd: float = Field(gt=0)
    """The budget in US dollars."""


class CostBudget(MootCondition, Component[CostBudgetConfig]):
    """Stop at the first turn after the billed calls have cost ``usd`` (prices from the model specs).

    Only billed calls cost: a cache hit is free, a failed attempt is not. A
    call whose model has no price (an ``openai:`` spec without ``price_in`` /
    ``price_out``) costs nothing here, so give every network model a price
    when a run must stay under budget. Checked between turns, like TokenBudget.
    Not a bound: a free or unpriced model never reaches it, so a stop with no
    other bound still gets moot's hard round cap beside it.
    """

    component_config_schema = CostBudgetConfig
    component_provider_override = "moot.conditions.CostBudget"

    def __init__(self, usd: float) -> None:
        super().__init__()
        self.usd = self.configured(CostBudgetConfig, usd=usd).usd
        self.clear()

    def clear(self) -> None:
        self.spent = 0.0

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        self.spent += metered(message.models_usage, message.metadata).cost_usd
        if self.spent >= self.usd:
            return f"cost budget: ${self.spent:.4g} of ${self.usd:g} spent"
        return None
