"""A served model is sent each reply's schema, so the server constrains it as the embedded engine does.

Against a real OpenAI-compatible HTTP server on loopback (the real SDK, the real AutoGen client): it records
every request, and answers as told: a reply, or an error status with a body.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import openai
import pytest
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_core.models import CreateResult, UserMessage
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from moot import ModelSpec, RoleAgent, role
from moot.cli import app
from moot.errors import ConfigError
from moot.models import RetryingClient
from moot.models._reply_schema import clamped_schema, served_schema
from moot.models._served import ServedClient, forget_fallbacks
from moot.roles import Opening
from moot.roles._position import STATEMENT
from tests.conftest import make_position

OPENING = make_position("no", "one deployable is simpler to run", confidence=0.8).model_dump_json()
# What llama-cpp-python 0.3.36's server answers a json_schema response_format: its request model types
# response_format as {"type": "text" | "json_object", "schema"?}, and its route handler wraps FastAPI's
# validation error (str() of it, as fastapi 0.165 writes it) in a 500.
LLAMA_CPP_PYTHON_REFUSAL = (
    500,
    {
        "error": {
            "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    },
)


class Served(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that records each request and answers with ``answer`` (a reply's
    text, or an HTTP status and body)."""

    requests: ClassVar[list[dict[str, Any]]] = []
    answer: ClassVar[str | tuple[int, dict[str, Any]]] = OPENING
    refusing: ClassVar[dict[str, tuple[int, dict[str, Any]]]] = {}
    """Forms of response_format (as :func:`sent_form` names them) the server answers with an error, and how."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Served.requests.append(request)
        refused = self.refusing.get(sent_form(request))
        if refused is not None:
            self._send(*refused)
        elif isinstance(self.answer, tuple):
            self._send(*self.answer)
        elif request.get("stream"):
            self._stream(request["model"], self.answer)
        else:
            message = {"role": "assistant", "content": self.answer}
            self._send(200, _completion(request["model"], {"message": message}))

    def _send(self, status: int, body: dict[str, Any]) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _stream(self, model: str, text: str) -> None:
        chunks = [{"delta": {"role": "assistant", "content": text}}, {"delta": {}, "finish_reason": "stop"}]
        events = [_completion(model, chunk, "chat.completion.chunk") for chunk in chunks]
        raw = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(raw.encode())

    def log_message(self, *args: object) -> None:
        """Quiet."""


def sent_form(request: dict[str, Any]) -> str | None:
    """The response_format form a request was sent in (``json_schema``, ``json_object_schema``, ``json_object``)."""
    sent = request.get("response_format")
    if sent is None:
        return None
    if sent["type"] == "json_object" and "schema" in sent:
        return "json_object_schema"
    return str(sent["type"])


def _completion(model: str, choice: dict[str, Any], kind: str = "chat.completion") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": kind,
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", **choice}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
    }


@pytest.fixture
def endpoint() -> Iterator[str]:
    Served.requests, Served.answer, Served.refusing = [], OPENING, {}
    forget_fallbacks()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Served)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    forget_fallbacks()


async def opening_from(spec: ModelSpec) -> Opening:
    """What the architect answers in a debate's first round, asked through ``spec``."""
    agent = RoleAgent(role("architect"), spec)
    task = TextMessage(content="Should a 3-person startup adopt microservices now?", source="user")
    response = await agent.respond([task], CancellationToken(), output_type=Opening)
    return response.chat_message.content  # type: ignore[union-attr,return-value]


# ------------------------------------------------------------- what is sent
async def test_a_served_model_is_sent_the_reply_schema_as_json_schema(endpoint):
    """The issue's failure: four key arguments where the schema allows three. The server now gets the bound."""
    opening = await opening_from(ModelSpec.parse(f"openai:qwen?base_url={endpoint}"))
    assert opening.answer == "no"
    [request] = Served.requests
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Opening", "schema": served_schema(Opening)},
    }
    sent = request["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["key_arguments"]["maxItems"] == 3
    assert sent["required"] == list(Opening.model_fields)  # the embedded grammar's field order, reasoning first


@pytest.mark.parametrize(
    ("form", "sent"),
    [
        ("json_object_schema", {"type": "json_object", "schema": served_schema(Opening)}),
        ("json_object", {"type": "json_object"}),
    ],
)
async def test_the_spec_option_chooses_how_the_schema_is_sent(endpoint, form, sent):
    spec = ModelSpec.parse(f"openai:qwen?base_url={endpoint}&response_format={form}")
    assert (await opening_from(spec)).answer == "no"
    assert [r["response_format"] for r in Served.requests] == [sent]


async def test_a_reply_without_a_schema_is_sent_as_before(endpoint):
    client = ModelSpec.parse(f"openai:qwen?base_url={endpoint}").client()
    await client.create([UserMessage(content="hi", source="user")])
    await client.create([UserMessage(content="hi", source="user")], json_output=True)
    assert ["response_format" in r for r in Served.requests] == [False, True]
    assert Served.requests[1]["response_format"] == {"type": "json_object"}


async def test_a_stream_is_sent_the_schema_too(endpoint):
    client = ModelSpec.parse(f"openai:qwen?base_url={endpoint}").client()
    chunks = [c async for c in client.create_stream([UserMessage(content="hi", source="user")], json_output=Opening)]
    assert isinstance(chunks[-1], CreateResult) and Opening.model_validate_json(str(chunks[-1].content))
    assert Served.requests[0]["response_format"]["json_schema"]["schema"] == served_schema(Opening)


def test_only_a_served_model_is_wrapped(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    served = ModelSpec.parse("openai:qwen?base_url=http://127.0.0.1:8000/v1").client()
    assert isinstance(served, RetryingClient) and isinstance(served.inner, ServedClient)
    assert served.model_info["structured_output"] is True  # so agents ask for the schema, not bare JSON
    plain = ModelSpec.parse("openai:qwen?base_url=http://127.0.0.1:8000/v1&response_format=json_object").client()
    assert not isinstance(plain.inner, ServedClient) and plain.model_info["structured_output"] is False
    assert not isinstance(ModelSpec.parse("openai:gpt-4o-mini").client().inner, ServedClient)


# ------------------------------------------------------------------ the schema
def test_the_served_schema_is_the_embedded_one_without_regex_patterns():
    """llama.cpp-family servers copy a pattern's escapes into a grammar they cannot parse; the rest is kept."""
    assert clamped_schema(Opening)["properties"]["key_arguments"]["items"]["pattern"] == STATEMENT
    sent = served_schema(Opening)
    assert "pattern" not in json.dumps(sent)
    items = sent["properties"]["key_arguments"]["items"]
    assert (items["minLength"], items["maxLength"]) == (3, 200)
    assert {k: v for k, v in clamped_schema(Opening).items() if k != "properties"} == {
        k: v for k, v in sent.items() if k != "properties"
    }

    class Matcher(BaseModel):
        pattern: str = Field(max_length=50, pattern=r"^\w+$")  # a field *named* pattern stays

    kept = served_schema(Matcher)["properties"]["pattern"]
    assert (kept["maxLength"], "pattern" in kept) == (50, False)


def test_every_builtin_schema_becomes_a_grammar_llama_cpp_can_parse():
    """llama-cpp-python's server turns the schema into llama.cpp's grammar (GBNF), whose parser knows only these
    escapes; an unknown one fails the parse and crashes the server when sampling starts."""
    converter = pytest.importorskip("llama_cpp.llama_grammar")
    from tests.integration.test_embedded_model import builtin_schemas

    valid = set('xuUtrn\\"[]')
    for _, output, _ in builtin_schemas():
        grammar = converter.json_schema_to_gbnf(json.dumps(served_schema(output)))
        escapes = {m.group(1) for m in re.finditer(r"\\(.)", grammar)}
        assert escapes <= valid, (output.__name__, escapes - valid)
    bad = converter.json_schema_to_gbnf(json.dumps(clamped_schema(Opening)))
    assert {m.group(1) for m in re.finditer(r"\\(.)", bad)} - valid  # the check can fail: the full schema fails it


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    "refusal",
    [
        LLAMA_CPP_PYTHON_REFUSAL,
        (422, {"detail": [{"loc": ["body", "response_format", "type"], "msg": "unexpected value"}]}),
        (400, {"error": {"message": "Unknown response_format type: json_schema"}}),
        (400, {"error": {"message": "Failed to parse grammar"}}),
    ],
)
async def test_a_refused_schema_the_spec_names_is_one_line_naming_the_option_and_is_not_retried(endpoint, refusal):
    Served.answer = refusal
    spec = ModelSpec.parse(f"openai:qwen?base_url={endpoint}&response_format=json_schema")
    with pytest.raises(ConfigError) as refused:
        await opening_from(spec)
    message = str(refused.value)
    assert message.startswith(f"model {spec} refused the reply schema sent as response_format json_schema (")
    assert "&response_format=json_object_schema" in message and "&response_format=json_object " in message
    assert "\n" not in message
    assert len(Served.requests) == 1  # bad input, not a transient fault: asked once


async def test_a_refused_schema_is_the_same_one_line_when_streaming(endpoint):
    Served.answer = LLAMA_CPP_PYTHON_REFUSAL
    client = ModelSpec.parse(f"openai:qwen?base_url={endpoint}&response_format=json_schema").client()
    with pytest.raises(ConfigError, match=r"refused the reply schema sent as response_format json_schema"):
        async for _ in client.create_stream([UserMessage(content="hi", source="user")], json_output=Opening):
            pass
    assert len(Served.requests) == 1


async def test_a_refused_schema_in_json_mode_names_plain_json_mode(endpoint):
    Served.answer = (422, {"detail": "json_object schema: unsupported keyword 'multipleOf'"})
    spec = ModelSpec.parse(f"openai:qwen?base_url={endpoint}&response_format=json_object_schema")
    with pytest.raises(ConfigError, match=r"as response_format json_object_schema .*&response_format=json_object "):
        await opening_from(spec)


@pytest.mark.parametrize(
    ("answer", "raised"),
    [
        ((400, {"error": {"message": "Requested tokens (9000) exceed context window"}}), openai.BadRequestError),
        ((401, {"error": {"message": "invalid api key for response_format"}}), openai.AuthenticationError),
    ],
)
async def test_other_failures_are_not_called_a_refusal_of_the_schema(endpoint, answer, raised):
    Served.answer = answer
    client = ModelSpec.parse(f"openai:qwen?base_url={endpoint}").client()
    with pytest.raises(raised):
        await client.create([UserMessage(content="hi", source="user")], json_output=Opening)


async def test_plain_json_mode_sends_no_schema_so_nothing_is_called_its_refusal(endpoint):
    Served.answer = (400, {"error": {"message": "response_format json_object is not supported"}})
    client = ModelSpec.parse(f"openai:qwen?base_url={endpoint}&response_format=json_object").client()
    with pytest.raises(openai.BadRequestError):
        await client.create([UserMessage(content="hi", source="user")], json_output=True)


def test_a_refusal_in_a_run_is_one_line_and_exit_2(endpoint):
    Served.answer = LLAMA_CPP_PYTHON_REFUSAL
    result = CliRunner().invoke(
        app,
        ["run", "architecture_review", "-m", f"openai:qwen?base_url={endpoint}&response_format=json_schema"],
        env={"COLUMNS": "140"},
    )
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("moot: error: model openai:qwen?base_url=")
    assert "response_format=json_object_schema" in result.stderr and result.stderr.count("\n") == 1


# --------------------------------------------------------------------- spec
def test_response_format_is_a_spec_option_of_served_models(monkeypatch):
    spec = ModelSpec.parse("openai:qwen?base_url=http://127.0.0.1:8000/v1&response_format=json_object_schema")
    assert spec.response_format == "json_object_schema"
    assert ModelSpec.parse(str(spec)) == spec
    assert spec.resolve(ModelSpec.parse("local")).response_format is None  # an endpoint field: not inherited
    with pytest.raises(ConfigError, match=r"response_format: Input should be 'json_schema', 'json_object_schema'"):
        ModelSpec.parse("openai:qwen?base_url=http://127.0.0.1:8000/v1&response_format=xml")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ConfigError, match=r"response_format is for a served model \(add \?base_url="):
        ModelSpec.parse("openai:gpt-4o-mini?response_format=json_object").check()


# ---------------------------------------------------- falling back (no form named)
async def test_a_server_refusing_json_schema_is_sent_the_schema_in_json_mode_said_once_and_remembered(endpoint, caplog):
    """llama-cpp-python's server answers OpenAI's json_schema form with a 500; the README debate served through it
    must still run: the call is sent again with the schema inside JSON mode, one warning says so, and every later
    call to that server (another agent's, a new client's) is sent that form at once."""
    Served.refusing = {"json_schema": LLAMA_CPP_PYTHON_REFUSAL}
    spec = ModelSpec.parse(f"openai:qwen?base_url={endpoint}")
    with caplog.at_level("WARNING"):
        assert (await opening_from(spec)).answer == "no"
        assert (await opening_from(ModelSpec.parse(f"openai:qwen?base_url={endpoint}"))).answer == "no"
    assert [sent_form(r) for r in Served.requests] == ["json_schema", "json_object_schema", "json_object_schema"]
    assert Served.requests[1]["response_format"] == {"type": "json_object", "schema": served_schema(Opening)}
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert "refused the reply schema as response_format json_schema (HTTP 500)" in warnings[0]
    assert "sending it as json_object_schema" in warnings[0] and "&response_format=json_object_schema" in warnings[0]


async def test_a_server_refusing_the_schema_in_both_forms_gets_plain_json_mode(endpoint, caplog):
    Served.refusing = {
        "json_schema": (400, {"error": {"message": "Unknown response_format type: json_schema"}}),
        "json_object_schema": (400, {"error": {"message": "Failed to parse grammar from schema"}}),
    }
    with caplog.at_level("WARNING"):
        assert (await opening_from(ModelSpec.parse(f"openai:qwen?base_url={endpoint}"))).answer == "no"
    assert [sent_form(r) for r in Served.requests] == ["json_schema", "json_object_schema", "json_object"]
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 2  # one line per change of form


async def test_a_stream_falls_back_too(endpoint):
    Served.refusing = {"json_schema": LLAMA_CPP_PYTHON_REFUSAL}
    client = ModelSpec.parse(f"openai:qwen?base_url={endpoint}").client()
    chunks = [c async for c in client.create_stream([UserMessage(content="hi", source="user")], json_output=Opening)]
    assert isinstance(chunks[-1], CreateResult) and Opening.model_validate_json(str(chunks[-1].content))
    assert [sent_form(r) for r in Served.requests] == ["json_schema", "json_object_schema"]


async def test_the_fallback_is_per_server_and_other_errors_are_not_fallen_back_from(endpoint):
    Served.answer = (400, {"error": {"message": "Requested tokens (9000) exceed context window"}})
    client = ModelSpec.parse(f"openai:qwen?base_url={endpoint}").client()
    with pytest.raises(openai.BadRequestError):
        await client.create([UserMessage(content="hi", source="user")], json_output=Opening)
    assert [sent_form(r) for r in Served.requests] == ["json_schema"]
    Served.answer, Served.refusing = OPENING, {"json_schema": LLAMA_CPP_PYTHON_REFUSAL}
    await opening_from(ModelSpec.parse(f"openai:qwen?base_url={endpoint}"))
    other = ModelSpec.parse(f"openai:other-model?base_url={endpoint}")  # another model: not known to take it yet
    await opening_from(other)
    assert [sent_form(r) for r in Served.requests[1:]] == [
        "json_schema",
        "json_object_schema",
        "json_schema",
        "json_object_schema",
    ]
