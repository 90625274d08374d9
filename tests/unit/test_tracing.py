"""Tracing: the event sequence of scripted runs (normalised snapshots), the OpenTelemetry export,
custom sinks, and that no secret reaches a trace."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from moot import ModelSpec, Reflection, RoleAgent, role
from moot.conditions import Consensus, MaxRounds, ScoreThreshold
from moot.testing import ScriptedModel
from moot.tracing import JsonlSink, OtelSink, TraceEvent, Tracer, TraceSink, default_trace_dir
from tests.conftest import make_critique, make_debate, make_position, make_rebuttal, make_reflection, make_verdict

TASK = "Write add(a, b)."


def reflection_model() -> ScriptedModel:
    """Two rounds; the critic's first reply is malformed, so round 1's critique turn makes two model calls."""
    return ScriptedModel(
        {
            "generator": ["def add(a, b): ...", "def add(a: int, b: int) -> int: ..."],
            "critic": ["not json", make_critique(60, "no type hints"), make_critique(90)],
        }
    )


def debate_model() -> ScriptedModel:
    return ScriptedModel(
        {
            "architect": [make_position("split"), make_rebuttal("keep")],
            "ops": [make_position("keep"), make_rebuttal("keep")],
            "business": [make_position("keep"), make_rebuttal("keep")],
            "arbiter": [make_verdict("keep")],
        }
    )


def normalise(events: list[TraceEvent], run_id: str) -> list[tuple[str, str, str | None, str | None]]:
    """(kind, name, parent's kind, step id with the run id masked) per event, in emit order."""
    kinds = {e.span_id: e.kind for e in events}
    return [
        (
            e.kind,
            e.name,
            kinds.get(e.parent_id) if e.parent_id else None,
            e.step_id.replace(run_id, "<run>") if e.step_id else None,
        )
        for e in events
    ]


def turn(agent: str, seq: int, calls: int = 1) -> list[tuple[str, str, str | None, str | None]]:
    """A turn's events: its model calls end first, then the turn itself."""
    return [("model_call", agent, "turn", None)] * calls + [("turn", agent, "run", f"<run>:{seq}")]


REFLECTION_SNAPSHOT = [
    *turn("generator", 1),
    *turn("critic", 2, calls=2),
    ("round", "round 1", "run", None),
    *turn("generator", 4),
    *turn("critic", 5),
    ("round", "round 2", "run", None),
    ("termination", "ScoreThreshold", "run", None),
    ("run", "reflection", None, None),
]

DEBATE_SNAPSHOT = [
    *turn("architect", 1),
    *turn("ops", 2),
    *turn("business", 3),
    ("round", "round 1", "run", None),
    *turn("architect", 5),
    *turn("ops", 6),
    *turn("business", 7),
    ("round", "round 2", "run", None),
    ("termination", "Consensus", "run", None),
    *turn("arbiter", 9),  # the ruling comes after the stop
    ("run", "debate", None, None),
]


async def run_reflection(**team_setup: object) -> tuple[Reflection, list[TraceEvent]]:
    model = reflection_model()
    with model:
        team = make_reflection(model, ScoreThreshold(85) | MaxRounds(3))
        for name, value in team_setup.items():
            setattr(team, name, value)
        await team.run(task=TASK)
    return team, JsonlSink(default_trace_dir()).read(team.run_id)


# ------------------------------------------------------------- snapshots (JSONL)
async def test_reflection_trace_event_sequence():
    team, events = await run_reflection()
    assert normalise(events, team.run_id) == REFLECTION_SNAPSHOT
    assert {e.trace_id for e in events} == {team.run_id}
    rounds = [e for e in events if e.kind == "round"]
    assert [(e.attributes["round"], e.attributes["score"]) for e in rounds] == [(1, 60), (2, 90)]
    (run,) = [e for e in events if e.kind == "run"]
    assert run.attributes["stop_reason"] == "quality threshold: score 90 >= 85 in round 2"


async def test_debate_trace_event_sequence():
    model = debate_model()
    with model:
        team = make_debate(model, Consensus() | MaxRounds(3))
        await team.run(task="Split billing out?")
    events = JsonlSink(default_trace_dir()).read(team.run_id)
    assert normalise(events, team.run_id) == DEBATE_SNAPSHOT
    agreement = [round(e.attributes["agreement"], 2) for e in events if e.kind == "round"]
    assert agreement == [0.67, 1.0]


async def test_model_calls_carry_the_exact_prompt_reply_and_tokens():
    model = reflection_model()
    with model:
        team = make_reflection(model, ScoreThreshold(85) | MaxRounds(3))
        result = await team.run(task=TASK)
    events = JsonlSink(default_trace_dir()).read(team.run_id)
    calls = [e for e in events if e.kind == "model_call" and e.name == "critic"]
    seen = model.calls("critic")
    assert [e.messages for e in calls] == [[m.model_dump(mode="json") for m in c.messages] for c in seen]
    assert calls[0].output == "not json" and calls[0].attributes == {
        "json_output": "Critique",
        "model": "scripted:default",
        "temperature": None,
        "seed": None,
        "max_tokens": 1024,
        "cached": False,
        "finish_reason": "stop",
    }
    assert len(calls[1].messages) == len(calls[0].messages) + 2  # the bad reply and the feedback were sent back
    turns = {e.span_id: e for e in events if e.kind == "turn"}
    for e in events:
        if e.kind == "turn":  # a turn's tokens are its model calls' tokens
            children = [c for c in events if c.parent_id == e.span_id]
            assert e.prompt_tokens == sum(c.prompt_tokens for c in children) > 0
        assert e.start <= e.end
    assert all(turns[e.parent_id].name == e.name for e in events if e.kind == "model_call")
    (run,) = [e for e in events if e.kind == "run"]
    assert run.prompt_tokens == sum(u.prompt_tokens for u in result.usage.values())
    assert run.completion_tokens == sum(u.completion_tokens for u in result.usage.values())


# ----------------------------------------------------------------- custom sinks
class ListSink:
    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    def emit(self, event: TraceEvent) -> None:
        self.events.append(event)


async def test_a_custom_sink_receives_every_event():
    sink = ListSink()
    assert isinstance(sink, TraceSink)
    team, events = await run_reflection(trace_sinks=[sink])
    assert [e.model_dump() for e in sink.events] == [e.model_dump() for e in events]
    assert normalise(sink.events, team.run_id) == REFLECTION_SNAPSHOT


# --------------------------------------------------------------- OpenTelemetry
@pytest.fixture
def exporter() -> Iterator[tuple[InMemorySpanExporter, TracerProvider]]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    yield spans, provider
    provider.shutdown()


async def test_opentelemetry_export_has_model_call_spans_under_their_turns(exporter, tmp_path):
    spans, provider = exporter
    team, _ = await run_reflection(tracer=Tracer([JsonlSink(tmp_path), OtelSink(provider)]))
    events = JsonlSink(tmp_path).read(team.run_id)
    finished = spans.get_finished_spans()
    assert [s.name for s in finished] == [f"moot.{e.kind}" for e in events]  # one span per event, same order
    assert {s.context.trace_id for s in finished} == {int(team.run_id, 16)}  # the trace id is the run id
    by_moot_id = {s.attributes["moot.span_id"]: s for s in finished}
    run_span = next(s for s in finished if s.name == "moot.run")
    for event in events:
        span = by_moot_id[event.span_id]
        assert span.attributes["gen_ai.usage.input_tokens"] == event.prompt_tokens
        assert span.attributes["gen_ai.usage.output_tokens"] == event.completion_tokens
        assert span.start_time <= span.end_time
        if event.parent_id is not None:  # real parents: turn -> model call, run -> turn/round/termination
            assert span.parent.span_id == by_moot_id[event.parent_id].context.span_id
    model_calls = [s for s in finished if s.name == "moot.model_call"]
    assert len(model_calls) == 5
    for span in model_calls:
        parent = by_moot_id[next(e.parent_id for e in events if e.span_id == span.attributes["moot.span_id"])]
        assert parent.name == "moot.turn" and parent.attributes["moot.name"] == span.attributes["moot.name"]
        assert parent.parent.span_id == run_span.context.span_id
        assert span.attributes["gen_ai.usage.input_tokens"] > 0
        prompt = json.loads(span.attributes["moot.prompt"])
        assert prompt[0]["type"] == "SystemMessage" and TASK in prompt[1]["content"]
    turn_span = next(s for s in finished if s.name == "moot.turn" and s.attributes["moot.name"] == "critic")
    assert turn_span.attributes["moot.step_id"] == f"{team.run_id}:2"
    assert run_span.attributes["moot.stop_reason"].startswith("quality threshold")


# ---------------------------------------------------------------------- secrets
SECRET = "sk-moot-test-3f9c1e7a-do-not-log"


class FakeOpenAI(BaseHTTPRequestHandler):
    """A loopback OpenAI-compatible endpoint: drafts for the generator, a JSON critique for the critic."""

    seen_keys: list[str] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOpenAI.seen_keys.append(self.headers.get("Authorization", ""))
        system = body["messages"][0]["content"]
        reply = make_critique(88).model_dump_json() if "reviewer" in system else "def add(a, b):\n    return a + b"
        data = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
        }
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_a_key_used_for_real_calls_never_reaches_a_trace(endpoint, monkeypatch, tmp_path, exporter):
    spans, provider = exporter
    monkeypatch.setenv("MOOT_TEST_KEY", SECRET)
    FakeOpenAI.seen_keys = []
    spec = ModelSpec.parse(f"openai:fake-model@0.2?base_url={endpoint}&api_key_env=MOOT_TEST_KEY")
    team = Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec), stop=MaxRounds(1))
    team.tracer = Tracer([JsonlSink(tmp_path), OtelSink(provider)])
    team.run_info = {"models": {"generator": str(spec), "critic": str(spec)}}
    result = await team.run(task=TASK)
    assert result.scores == [88]
    assert FakeOpenAI.seen_keys == [f"Bearer {SECRET}"] * 2  # the key was really sent to the endpoint
    trace = (tmp_path / f"{team.run_id}.jsonl").read_text()
    assert trace.count('"kind":"model_call"') == 2
    assert SECRET not in trace
    exported = json.dumps([dict(s.attributes) for s in spans.get_finished_spans()])
    assert "moot.prompt" in exported and SECRET not in exported
    store = Path(team.hooks[0].store.path)
    assert SECRET.encode() not in store.read_bytes() + Path(f"{store}-wal").read_bytes()
