"""Tracing: structured events per run, round, turn, model call, tool call and termination.

Every event carries the run's trace id; model calls carry the exact prompt
they sent. Events go to a JSONL file per run and to OpenTelemetry (when an
SDK and exporter are configured); add your own sink with the TraceSink protocol.
A comparison keeps its runs' traces in one compressed file (TraceArchive).
"""

from moot.tracing._archive import TRACES_FILE, TraceArchive
from moot.tracing._events import EventKind, TraceEvent
from moot.tracing._sinks import JsonlSink, OtelSink, TraceScan, TraceSink
from moot.tracing._tracer import Tracer, default_trace_dir, traced

__all__ = [
    "TRACES_FILE",
    "EventKind",
    "JsonlSink",
    "OtelSink",
    "TraceArchive",
    "TraceEvent",
    "TraceScan",
    "TraceSink",
    "Tracer",
    "default_trace_dir",
    "traced",
]
