"""The Tracer: opens spans, tracks the current one, and hands finished events to the sinks.

The current span lives in a context variable, so code deep inside a turn (an
agent's model call, a tool call) attaches its span to the right parent without
anything being passed down to it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from pathlib import Path
from typing import Any

from moot.tracing._events import EventKind, TraceEvent
from moot.tracing._sinks import JsonlSink, OtelSink, TraceSink

__all__ = ["Tracer", "default_trace_dir", "traced"]

_TRACER: ContextVar[Tracer | None] = ContextVar("moot_tracer", default=None)
_SPAN: ContextVar[TraceEvent | None] = ContextVar("moot_span", default=None)


def default_trace_dir(store_path: str | Path | None = None) -> Path:
    """$MOOT_TRACES, else ``traces/`` next to the run store (``store_path``, or the default store)."""
    if explicit := os.environ.get("MOOT_TRACES"):
        return Path(explicit)
    if store_path is not None:
        return Path(store_path).parent / "traces"
    from moot.store import RunStore

    return RunStore.default_path().parent / "traces"


class Tracer:
    """Spans for one run at a time; ``default()`` writes JSONL and exports to OpenTelemetry."""

    def __init__(self, sinks: Sequence[TraceSink]) -> None:
        self.sinks = list(sinks)
        self.trace_id: str | None = None

    @classmethod
    def default(cls, directory: Path | None = None) -> Tracer:
        return cls([JsonlSink(directory or default_trace_dir()), OtelSink()])

    @contextmanager
    def span(
        self, kind: EventKind, name: str, *, step_id: str | None = None, **attributes: Any
    ) -> Iterator[TraceEvent]:
        """Open a span under the current one; the caller fills tokens, messages, output before it closes."""
        assert self.trace_id is not None, "Tracer.span() outside a run"
        parent = _SPAN.get()
        event = TraceEvent(
            kind=kind,
            name=name,
            trace_id=self.trace_id,
            parent_id=parent.span_id if parent else None,
            step_id=step_id,
            attributes=attributes,
        )
        for sink in self.sinks:
            start = getattr(sink, "start", None)
            if start is not None:
                start(event)
        token = _SPAN.set(event)
        try:
            yield event
        finally:
            _reset(_SPAN, token)
            event.end = time.time()
            for sink in self.sinks:
                sink.emit(event)

    @contextmanager
    def activate(self, trace_id: str) -> Iterator[Tracer]:
        """Make this the tracer that model and tool calls report to, for one run."""
        self.trace_id = trace_id
        token = _TRACER.set(self)
        try:
            yield self
        finally:
            _reset(_TRACER, token)


@contextmanager
def traced(kind: EventKind, name: str, **attributes: Any) -> Iterator[TraceEvent | None]:
    """A span under the active tracer, or nothing when no run is being traced (e.g. an agent used alone)."""
    tracer = _TRACER.get()
    if tracer is None or tracer.trace_id is None:
        yield None
        return
    with tracer.span(kind, name, **attributes) as event:
        yield event


def _reset(var: ContextVar[Any], token: Token[Any]) -> None:
    """Reset, tolerating an async generator finalised in another context (its value is moot there)."""
    try:
        var.reset(token)
    except ValueError:
        var.set(None)
