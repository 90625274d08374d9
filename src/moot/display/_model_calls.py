"""A run's model calls, from its JSONL trace: what each call actually saw and answered, under its turn.

``moot show --prompts`` prints them (``_show.py``); ``--json`` is these models dumped
(schema ``PROMPTS_SCHEMA``). Given the run's view, each turn carries its round.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from moot.display._run_view import RunView
from moot.errors import ConfigError
from moot.tracing import JsonlSink, TraceEvent, TraceScan, default_trace_dir

__all__ = [
    "PROMPTS_SCHEMA",
    "ModelCall",
    "TurnCalls",
    "calls_by_turn",
    "group_calls",
    "model_calls",
    "prompts_document",
    "read_trace",
    "trace_path",
]

PROMPTS_SCHEMA = "moot.prompts/1"
"""Version of ``moot show --prompts --json``."""


class ModelCall(BaseModel):
    """One model call from the trace: the exact messages sent, the reply, its tokens."""

    agent: str
    messages: list[dict[str, Any]]
    output: str | None
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    attributes: dict[str, Any] = {}


class TurnCalls(BaseModel):
    """The model calls one turn made (several when a malformed reply was retried)."""

    step_id: str | None
    agent: str
    round: int | None = None
    calls: list[ModelCall]


def trace_path(run_id: str, store_path: str | Path | None = None) -> Path:
    """The run's JSONL trace: in $MOOT_TRACES, else ``traces/`` next to the store; ConfigError if absent."""
    candidates = _trace_dirs(store_path)
    for directory in candidates:
        path = JsonlSink(directory).path(run_id)
        if path.exists():
            return path
    looked = ", ".join(str(d) for d in candidates)
    raise ConfigError(
        f"no trace for run {run_id} (looked in {looked}); traces are written to $MOOT_TRACES "
        "or traces/ next to the run store while a run is live"
    )


def _trace_dirs(store_path: str | Path | None) -> list[Path]:
    dirs = [default_trace_dir(store_path), default_trace_dir()]
    return [d for i, d in enumerate(dirs) if d not in dirs[:i]]


def model_calls(run_id: str, store_path: str | Path | None = None, view: RunView | None = None) -> list[TurnCalls]:
    """Every model call of the run, in order, grouped under the turn that made it (with its round, given ``view``)."""
    return calls_by_turn(read_trace(run_id, store_path).events, view)


def read_trace(run_id: str, store_path: str | Path | None = None) -> TraceScan:
    """The run's trace events, and the lines that could not be read (skipped, so the rest still shows)."""
    return JsonlSink(trace_path(run_id, store_path).parent).scan(run_id)


def calls_by_turn(events: Iterable[TraceEvent], view: RunView | None = None) -> list[TurnCalls]:
    """The model calls among ``events``, grouped under their turns, each with its round when ``view`` is given."""
    groups = group_calls(events)
    rounds = {t.step_id: t.round for t in view.turns} if view is not None else {}
    for group in groups:
        group.round = rounds.get(group.step_id or "")
    return groups


def prompts_document(run_id: str, turns: Sequence[TurnCalls]) -> dict[str, Any]:
    """``moot show --prompts --json``: every model call, grouped under its turn."""
    return {"schema": PROMPTS_SCHEMA, "run_id": run_id, "turns": [t.model_dump(mode="json") for t in turns]}


def group_calls(events: Iterable[TraceEvent]) -> list[TurnCalls]:
    events = list(events)
    turns = {e.span_id: e for e in events if e.kind == "turn"}
    groups: dict[str, TurnCalls] = {}
    for event in events:
        if event.kind != "model_call":
            continue
        turn = turns.get(event.parent_id or "")
        key = turn.span_id if turn else f"orphan:{event.span_id}"
        group = groups.setdefault(
            key, TurnCalls(step_id=turn.step_id if turn else None, agent=turn.name if turn else event.name, calls=[])
        )
        group.calls.append(
            ModelCall(
                agent=event.name,
                messages=event.messages or [],
                output=event.output,
                prompt_tokens=event.prompt_tokens,
                completion_tokens=event.completion_tokens,
                seconds=round(event.end - event.start, 3),
                attributes=event.attributes,
            )
        )
    return list(groups.values())
