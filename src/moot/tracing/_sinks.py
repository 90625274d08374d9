"""Where trace events go: the TraceSink protocol, a JSONL file per run, OpenTelemetry spans."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from pydantic import ValidationError

from moot.tracing._events import TraceEvent

__all__ = ["JsonlSink", "OtelSink", "TraceScan", "TraceSink"]


@runtime_checkable
class TraceSink(Protocol):
    """Implement ``emit`` to receive every trace event (e.g. to ship them to your own backend)."""

    def emit(self, event: TraceEvent) -> None: ...


class JsonlSink:
    """Append each event as one JSON line to ``<directory>/<trace_id>.jsonl``.

    Lines are flushed as written, so a killed run keeps every event up to the kill.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path(self, trace_id: str) -> Path:
        return self.directory / f"{trace_id}.jsonl"

    def emit(self, event: TraceEvent) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.path(event.trace_id).open("a", encoding="utf-8") as out:
            out.write(event.model_dump_json() + "\n")

    def read(self, trace_id: str) -> list[TraceEvent]:
        """Every readable event of the trace, in order (see :meth:`scan` for the lines that were not)."""
        return self.scan(trace_id).events

    def scan(self, trace_id: str) -> TraceScan:
        """The trace's events, skipping lines that cannot be read: a run killed mid-write leaves a torn last
        line, and a damaged file may hold bytes that are not UTF-8; neither hides the events around it."""
        path = self.path(trace_id)
        scan = TraceScan()
        if not path.exists():
            return scan
        for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            if raw.strip():
                _scan_line(scan, number, raw)
        return scan


@dataclass
class TraceScan:
    """What a JSONL trace held: its events, and a note per line that could not be read."""

    events: list[TraceEvent] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    """``line N: why``, one per skipped line."""


def _scan_line(scan: TraceScan, number: int, raw: bytes) -> None:
    try:
        scan.events.append(TraceEvent.model_validate_json(raw.decode("utf-8")))
    except UnicodeDecodeError as exc:
        scan.unreadable.append(f"line {number}: not UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1})")
    except ValidationError:
        scan.unreadable.append(f"line {number}: torn or not a trace event")


class OtelSink:
    """Export events as OpenTelemetry spans that carry moot's trace id.

    Uses the globally configured tracer provider by default: without an SDK
    and exporter configured that is OpenTelemetry's no-op, so it costs nothing.
    Spans start when moot's spans start, so turns are real parents of their
    model calls. AutoGen emits no span for model calls; these fill that gap.
    """

    def __init__(self, provider: trace.TracerProvider | None = None) -> None:
        self._tracer = (provider or trace.get_tracer_provider()).get_tracer("moot")
        self._open: dict[str, trace.Span] = {}

    def start(self, event: TraceEvent) -> None:
        parent = self._open.get(event.parent_id or "")
        if parent is not None:
            context = trace.set_span_in_context(parent)
        else:  # the run: a remote parent context makes the SDK adopt moot's trace id
            remote = SpanContext(
                trace_id=int(event.trace_id, 16),
                span_id=int(event.span_id, 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            context = trace.set_span_in_context(NonRecordingSpan(remote))
        self._open[event.span_id] = self._tracer.start_span(
            f"moot.{event.kind}", context=context, start_time=_ns(event.start)
        )

    def emit(self, event: TraceEvent) -> None:
        span = self._open.pop(event.span_id, None)
        if span is None:
            self.start(event)
            span = self._open.pop(event.span_id)
        span.set_attributes(_attributes(event))
        span.end(end_time=_ns(event.end))


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _attributes(event: TraceEvent) -> dict[str, str | int | float | bool]:
    attributes: dict[str, str | int | float | bool] = {
        "moot.name": event.name,
        "moot.trace_id": event.trace_id,
        "moot.span_id": event.span_id,
        "gen_ai.usage.input_tokens": event.prompt_tokens,
        "gen_ai.usage.output_tokens": event.completion_tokens,
    }
    if event.step_id:
        attributes["moot.step_id"] = event.step_id
    if event.messages is not None:
        attributes["moot.prompt"] = json.dumps(event.messages)
    for key, value in event.attributes.items():
        if isinstance(value, str | int | float | bool):
            attributes[f"moot.{key}"] = value
    return attributes
