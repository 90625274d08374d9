"""Trace events: one record per run, round, turn, model call, tool call and termination."""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["EventKind", "TraceEvent", "new_span_id"]

EventKind = Literal["run", "round", "turn", "model_call", "tool_call", "termination"]


def new_span_id() -> str:
    """16 hex digits, the OpenTelemetry span-id format (the run id is the 32-hex trace id)."""
    return uuid.uuid4().hex[:16]


class TraceEvent(BaseModel):
    """A finished span: what happened, under which run, when, at what token cost.

    ``messages`` is the exact prompt a model call sent (its snapshot);
    ``output`` what came back. Turns are parents of their model calls.
    """

    kind: EventKind
    name: str
    trace_id: str
    span_id: str = Field(default_factory=new_span_id)
    parent_id: str | None = None
    step_id: str | None = None
    start: float = Field(default_factory=time.time)
    end: float = Field(default_factory=time.time)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attributes: dict[str, Any] = {}
    messages: list[dict[str, Any]] | None = None
    output: str | None = None
