"""Plain records a team keeps per round and reports in its result."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from autogen_agentchat.base import TaskResult
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_core.models import RequestUsage
from pydantic import Field

from moot.errors import MalformedOutputError
from moot.messages import TurnFailed
from moot.models import Meter, meter_metadata, metered

Usage = dict[str, Meter]
"""Each agent's calls and tokens, logical and billed, and their cost (``result.usage["critic"].prompt_tokens``)."""


class MootResult(TaskResult):
    """What every moot team's result carries beyond AutoGen's TaskResult.

    Plain data: how a result shows (terminal, Jupyter) is ``moot.display``'s business, decided there on the
    result's type, so no result imports the presentation package.
    """

    run_id: str | None = None
    """The run in the store (``moot show RUN_ID``) and its trace id; None for a team with recording off."""
    usage: Usage = {}
    """Logical tokens per agent: every call, failed attempts and cache hits included."""
    tokens: Meter = Field(default_factory=Meter)
    """The task's calls and tokens in all, logical and billed, and what the billed ones cost."""
    partial: bool = False
    """True when the run ended on a fault (or a team's own failure, such as no ruling): what the result holds is
    what was done so far, labelled as such."""

    @property
    def cost_usd(self) -> float | None:
        """What the task's billed calls cost in USD; None when a model's price is unknown (see ModelSpec)."""
        return self.tokens.cost


def failed_turn(error: MalformedOutputError) -> TurnFailed | None:
    """The transcript's record of a turn that failed for good, with what its calls spent; None if nothing was."""
    if error.spent is None:
        return None
    spent = error.spent
    return TurnFailed(
        source=error.agent,
        attempts=error.attempts,
        error=error.last_error,
        models_usage=RequestUsage(prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens),
        metadata=meter_metadata(spent),
    )


def account(result: MootResult, transcript: Sequence[BaseAgentEvent | BaseChatMessage]) -> None:
    """Complete a result's accounting from the whole transcript: failed turns' tokens, and the run's meter."""
    for message in transcript:
        if isinstance(message, TurnFailed):
            add_usage(result.usage, message.source, message)
    result.tokens = sum((metered(m.models_usage, m.metadata) for m in transcript), Meter())


def add_usage(usage: Usage, agent: str, message: BaseAgentEvent | BaseChatMessage) -> None:
    """Count ``message``'s calls and tokens (logical and billed, and their cost) against ``agent``."""
    if message.models_usage is not None:
        usage[agent] = usage.get(agent, Meter()) + metered(message.models_usage, message.metadata)


def total_usage(per_round: Iterable[Usage]) -> Usage:
    """Each agent's meter summed over rounds."""
    total: Usage = {}
    for usage in per_round:
        for agent, used in usage.items():
            total[agent] = total.get(agent, Meter()) + used
    return total


def fingerprint(*parts: str) -> str:
    """A short digest of normalised text, for spotting rounds that repeat themselves."""
    normal = "\x1f".join(" ".join(p.split()).lower() for p in parts)
    return hashlib.sha256(normal.encode()).hexdigest()[:16]
