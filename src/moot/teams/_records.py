"""Plain records a team keeps per round and reports in its result."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from autogen_agentchat.base import TaskResult
from autogen_core.models import RequestUsage
from pydantic import BaseModel, Field

Usage = dict[str, RequestUsage]
"""Token usage keyed by agent name."""


class MootResult(TaskResult):
    """What every moot team's result carries beyond AutoGen's TaskResult."""

    run_id: str | None = None
    """The run in the store (``moot show RUN_ID``) and its trace id; None for a team with recording off."""


def add_usage(usage: Usage, agent: str, extra: RequestUsage | None) -> None:
    if extra is None:
        return
    old = usage.get(agent, RequestUsage(prompt_tokens=0, completion_tokens=0))
    usage[agent] = RequestUsage(
        prompt_tokens=old.prompt_tokens + extra.prompt_tokens,
        completion_tokens=old.completion_tokens + extra.completion_tokens,
    )


def total_usage(per_round: Iterable[Usage]) -> Usage:
    total: Usage = {}
    for usage in per_round:
        for agent, used in usage.items():
            add_usage(total, agent, used)
    return total


def fingerprint(*parts: str) -> str:
    """A short digest of normalised text, for spotting rounds that repeat themselves."""
    normal = "\x1f".join(" ".join(p.split()).lower() for p in parts)
    return hashlib.sha256(normal.encode()).hexdigest()[:16]


class TurnCount(BaseModel):
    parse_failures: int = 0
    model_turns: int = Field(default=0, description="Agent turns that called a model.")
