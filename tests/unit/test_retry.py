"""RetryingClient: which faults are retried, how long it waits, when it gives up, and what it delegates."""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import openai
import pytest
from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient, CreateResult, UserMessage
from autogen_ext.models.openai import OpenAIChatCompletionClient

from moot import ModelSpec
from moot.errors import MalformedOutputError, ScriptError, TransientModelError
from moot.models._openai import openai_client
from moot.models._retry import RetryingClient, RetryPolicy, transient_kind
from moot.testing import ScriptedClient, ScriptedModel, provider_fault

PROMPT = [UserMessage(content="hello", source="user")]
REQUEST = httpx.Request("POST", "https://api.example.test/v1/chat/completions")


def status_error(status: int, cls: type[openai.APIStatusError] = openai.APIStatusError, **headers: str) -> Exception:
    response = httpx.Response(status, headers=headers, json={"error": {"message": "x"}}, request=REQUEST)
    return cls(f"Error code: {status}", response=response, body=None)


def quota_exhausted() -> Exception:
    body = {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}
    response = httpx.Response(429, json={"error": body}, request=REQUEST)
    return openai.RateLimitError("Error code: 429", response=response, body=body)


class Sleeps(list[float]):
    """The injected sleep: records each wait, never waits."""

    async def __call__(self, delay: float) -> None:
        self.append(delay)


def retrying(*replies: object, policy: RetryPolicy | None = None, **knobs: object) -> tuple[RetryingClient, Sleeps]:
    sleeps = Sleeps()
    inner = ScriptedClient(deque(replies), agent="model")  # type: ignore[arg-type]
    knobs.setdefault("random", lambda: 0.5)
    return RetryingClient(inner, policy, model="test:model", sleep=sleeps, **knobs), sleeps  # type: ignore[arg-type]


TRANSIENT = [
    pytest.param(provider_fault("429"), "rate_limit", id="429-rate-limit"),
    pytest.param(provider_fault("500"), "server_error", id="500-internal"),
    pytest.param(status_error(502), "server_error", id="502-status-error"),
    pytest.param(status_error(503, openai.InternalServerError), "server_error", id="503"),
    pytest.param(status_error(408), "timeout", id="408-request-timeout"),
    pytest.param(provider_fault("timeout"), "timeout", id="openai-timeout"),
    pytest.param(provider_fault("connection"), "connection", id="openai-connection"),
    pytest.param(TimeoutError(), "timeout", id="asyncio-timeout"),
    pytest.param(ConnectionResetError(104, "Connection reset by peer"), "connection", id="connection-reset"),
    pytest.param(httpx.ReadTimeout("read timed out", request=REQUEST), "timeout", id="httpx-read-timeout"),
    pytest.param(httpx.ConnectError("refused", request=REQUEST), "connection", id="httpx-connect"),
    pytest.param(httpx.RemoteProtocolError("peer closed", request=REQUEST), "connection", id="httpx-protocol"),
]

NOT_TRANSIENT = [
    pytest.param(status_error(400, openai.BadRequestError), id="400-bad-request"),
    pytest.param(status_error(401, openai.AuthenticationError), id="401-auth"),
    pytest.param(status_error(403, openai.PermissionDeniedError), id="403-permission"),
    pytest.param(status_error(404, openai.NotFoundError), id="404-not-found"),
    pytest.param(status_error(422, openai.UnprocessableEntityError), id="422-unprocessable"),
    pytest.param(status_error(400, openai.BadRequestError, **{"retry-after": "1"}), id="400-even-with-retry-after"),
    pytest.param(quota_exhausted(), id="429-insufficient-quota"),
    pytest.param(ValueError("bad argument"), id="value-error"),
    pytest.param(MalformedOutputError("critic", 3, "not JSON"), id="malformed-output"),
    pytest.param(ScriptError("script used up"), id="script-error"),
]


@pytest.mark.parametrize(("fault", "kind"), TRANSIENT)
async def test_a_transient_fault_is_retried_and_the_reply_returned(fault, kind):
    client, sleeps = retrying(fault, "ok")
    result = await client.create(PROMPT)
    assert result.content == "ok"
    assert transient_kind(fault) == kind
    assert (client.attempts, client.retries, client.exhausted, dict(client.faults)) == (2, 1, 0, {kind: 1})
    assert len(sleeps) == 1


@pytest.mark.parametrize("fault", NOT_TRANSIENT)
async def test_anything_else_propagates_at_once_unchanged(fault):
    client, sleeps = retrying(fault, "never reached")
    with pytest.raises(type(fault)) as info:
        await client.create(PROMPT)
    assert info.value is fault
    assert transient_kind(fault) is None
    assert (sleeps, client.attempts, client.retries, sum(client.faults.values())) == ([], 1, 0, 0)


async def test_a_provider_s_own_rule_decides_what_is_retried():
    """A provider whose SDK says "busy" its own way gives its rule (``Provider.transient``), which replaces the
    generic one: its fault is retried, and a fault the generic rule would retry is not, unless the rule says so."""

    class Busy(Exception):
        pass

    def rule(exc: BaseException) -> str | None:
        return "server_error" if isinstance(exc, Busy) else None

    client, sleeps = retrying(Busy(), "ok", transient=rule)
    assert (await client.create(PROMPT)).content == "ok"
    assert (client.attempts, client.retries, dict(client.faults), len(sleeps)) == (2, 1, {"server_error": 1}, 1)
    timeout = TimeoutError()
    client, sleeps = retrying(timeout, "never reached", transient=rule)
    with pytest.raises(TimeoutError) as info:
        await client.create(PROMPT)
    assert info.value is timeout and (client.attempts, sleeps) == (1, [])


async def test_backoff_doubles_from_base_and_is_capped_at_max_delay():
    policy = RetryPolicy(max_attempts=6, base_delay=1.0, max_delay=5.0)
    client, sleeps = retrying(*[provider_fault("500")] * 5, "ok", policy=policy, random=lambda: 1.0)
    assert (await client.create(PROMPT)).content == "ok"
    assert sleeps == [1.0, 2.0, 4.0, 5.0, 5.0]  # the draw at its top: the bound itself
    assert client.slept == sum(sleeps)


async def test_full_jitter_draws_each_wait_between_zero_and_its_bound():
    import random

    policy = RetryPolicy(max_attempts=9, base_delay=0.5, max_delay=8.0)
    client, sleeps = retrying(*[provider_fault("timeout")] * 8, "ok", policy=policy, random=random.Random(7).random)
    await client.create(PROMPT)
    bounds = [min(8.0, 0.5 * 2**k) for k in range(8)]
    assert all(0.0 <= wait <= bound for wait, bound in zip(sleeps, bounds, strict=True))
    assert len({round(wait / bound, 6) for wait, bound in zip(sleeps, bounds, strict=True)}) > 1  # really jittered
    assert RetryPolicy(base_delay=1.0).backoff(3, 0.0) == 0.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"retry-after": "600"}, 60.0),  # capped by max_retry_after
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "soon"}, 0.5 * 1.0),  # unreadable: jittered backoff instead
        ({"retry-after": "-3"}, 0.5 * 1.0),
    ],
)
async def test_retry_after_in_seconds_is_honoured_and_capped(headers, expected):
    policy = RetryPolicy(base_delay=1.0, max_retry_after=60.0)
    client, sleeps = retrying(status_error(429, openai.RateLimitError, **headers), "ok", policy=policy)
    await client.create(PROMPT)
    assert sleeps == [expected]


@pytest.mark.parametrize(("ahead", "expected"), [(12, 12.0), (-30, 0.0), (3600, 60.0)])
async def test_retry_after_as_an_http_date_is_measured_from_the_clock(ahead, expected):
    now = 1_750_000_000.0
    header = email.utils.formatdate(now + ahead, usegmt=True)
    client, sleeps = retrying(status_error(503, **{"Retry-After": header}), "ok", clock=lambda: now)
    await client.create(PROMPT)
    assert sleeps == [expected]


async def test_exhausted_retries_raise_transient_model_error_with_the_attempts_and_the_cause():
    last = provider_fault("429")
    client, sleeps = retrying(
        provider_fault("500"), provider_fault("timeout"), last, policy=RetryPolicy(max_attempts=3)
    )
    with pytest.raises(TransientModelError) as info:
        await client.create(PROMPT)
    error = info.value
    assert (error.attempts, error.kind, error.model) == (3, "rate_limit", "test:model")
    assert error.__cause__ is last
    assert str(error).startswith("model test:model kept failing on transient faults: 3 attempts, the last a rate_limit")
    assert "last error: RateLimitError: Error code: 429" in str(error)
    assert "RetryPolicy.max_attempts" in str(error)
    assert len(sleeps) == 2
    assert (client.attempts, client.retries, client.exhausted) == (3, 2, 1)
    assert dict(client.faults) == {"server_error": 1, "timeout": 1, "rate_limit": 1}


async def test_one_attempt_policy_never_retries():
    client, sleeps = retrying(provider_fault("500"), policy=RetryPolicy(max_attempts=1))
    with pytest.raises(TransientModelError, match="1 attempts"):
        await client.create(PROMPT)
    assert sleeps == []


async def test_a_cancelled_call_is_not_retried():
    token = CancellationToken()
    token.cancel()
    client, sleeps = retrying(provider_fault("500"), "ok")
    with pytest.raises(asyncio.CancelledError):
        await client.create(PROMPT, cancellation_token=token)
    assert sleeps == []


class CancelsItsCaller(ScriptedClient):
    """Replies at once, having asked for its caller's task to be cancelled: Ctrl-C arriving as a reply lands."""

    caller: asyncio.Task[object] | None = None

    async def create(self, messages, **kwargs) -> CreateResult:  # type: ignore[override]
        assert self.caller is not None
        asyncio.get_running_loop().call_soon(self.caller.cancel)
        return await super().create(messages, **kwargs)


async def test_a_cancel_that_meets_a_finished_reply_is_not_lost():
    """asyncio.wait_for of Python 3.11 returns the reply and drops a cancel that arrives as the reply completes
    (fixed in 3.12): a Ctrl-C that met a reply let the run go on to its end and exit 0."""
    inner = CancelsItsCaller(deque(["ok"]), agent="model")  # type: ignore[arg-type]
    client = RetryingClient(inner, deadline=30.0)

    async def call_then_continue() -> None:
        await client.create(PROMPT)
        await asyncio.sleep(0)  # the next await of the caller must see the cancel

    task = asyncio.ensure_future(call_then_continue())
    inner.caller = task
    with pytest.raises(asyncio.CancelledError):
        await task


# ------------------------------------------------------------------ streaming
class ChunkThenFault(ScriptedClient):
    """Streams one chunk, then fails with the next scripted reply if it is an exception."""

    async def create_stream(self, messages, **kwargs) -> AsyncGenerator[str | CreateResult, None]:  # type: ignore[override]
        reply = self.replies.popleft()
        if isinstance(reply, Exception):
            raise reply
        yield "part "
        follow = self.replies.popleft()
        if isinstance(follow, Exception):
            raise follow
        yield CreateResult(finish_reason="stop", content=f"part {follow}", usage=self._usage, cached=False)


async def test_a_stream_that_fails_before_its_first_chunk_is_retried():
    client, sleeps = retrying(provider_fault("429"), "streamed")
    items = [item async for item in client.create_stream(PROMPT)]
    assert items[0] == "streamed"
    assert isinstance(items[1], CreateResult)
    assert (client.attempts, client.retries, len(sleeps)) == (2, 1, 1)


async def test_a_stream_that_fails_after_a_chunk_is_not_replayed():
    sleeps = Sleeps()
    inner = ChunkThenFault(deque(["ok", provider_fault("500")]))
    client = RetryingClient(inner, model="test:model", sleep=sleeps)
    seen: list[object] = []
    with pytest.raises(TransientModelError, match="after part of the reply was streamed") as info:
        async for item in client.create_stream(PROMPT):
            seen.append(item)
    assert seen == ["part "]
    assert isinstance(info.value.__cause__, openai.InternalServerError)
    assert (sleeps, client.attempts, client.retries, info.value.attempts) == ([], 1, 0, 1)


async def test_a_stream_retries_a_fault_before_the_first_chunk_then_streams_through():
    client = RetryingClient(ChunkThenFault(deque([provider_fault("timeout"), "ok", "rest"])), sleep=Sleeps())
    items = [item async for item in client.create_stream(PROMPT)]
    assert items[0] == "part "
    assert isinstance(items[1], CreateResult) and items[1].content == "part rest"
    assert client.attempts == 2


async def test_a_stream_gives_up_like_create_and_passes_other_errors_through():
    client, _ = retrying(*[provider_fault("500")] * 2, policy=RetryPolicy(max_attempts=2))
    with pytest.raises(TransientModelError, match="2 attempts"):
        [item async for item in client.create_stream(PROMPT)]
    bad = status_error(401, openai.AuthenticationError)
    client, sleeps = retrying(bad)
    with pytest.raises(openai.AuthenticationError) as info:
        [item async for item in client.create_stream(PROMPT)]
    assert info.value is bad and sleeps == []


# ----------------------------------------------------------------- delegation
async def test_everything_but_create_is_delegated_to_the_inner_client():
    inner = ScriptedClient(deque(["one two three"]), agent="model")
    client = RetryingClient(inner, sleep=Sleeps())
    await client.create(PROMPT)
    assert client.model_info == inner.model_info
    assert client.capabilities == inner.capabilities
    assert client.count_tokens(PROMPT) == inner.count_tokens(PROMPT) == 1
    assert client.remaining_tokens(PROMPT) == inner.remaining_tokens(PROMPT)
    assert client.total_usage() == inner.total_usage()
    assert client.actual_usage().completion_tokens == 3
    await client.close()
    assert client.label == "ScriptedClient"


def test_policy_is_validated_and_round_trips_through_json():
    policy = RetryPolicy(max_attempts=4, base_delay=0.1, max_delay=2.0, max_retry_after=10.0)
    assert RetryPolicy.model_validate_json(policy.model_dump_json()) == policy
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="extra"):
        RetryPolicy(retries=3)  # type: ignore[call-arg]


# ------------------------------------------------------------- build_client
def test_real_providers_are_wrapped_in_the_retry_layer_and_the_sdk_does_not_retry(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    client = ModelSpec.parse("openai:gpt-4o-mini@0.3").client()
    assert isinstance(client, RetryingClient)
    assert isinstance(client.inner, OpenAIChatCompletionClient)
    assert client.inner.dump_component().config["max_retries"] == 0
    assert client.label == "openai:gpt-4o-mini@0.3"
    dumped = client.dump_component()
    assert dumped.provider == "moot.models.RetryingClient"
    loaded = ChatCompletionClient.load_component(dumped)
    assert isinstance(loaded, RetryingClient) and isinstance(loaded.inner, OpenAIChatCompletionClient)
    assert (loaded.policy, loaded.label) == (client.policy, client.label)


def test_scripted_models_are_not_wrapped():
    with ScriptedModel({"gen": []}, name="bare") as model:
        assert isinstance(model.spec.client("gen"), ScriptedClient)


# -------------------------------------------------- the real SDK, end to end
class FlakyEndpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint on loopback that answers from a script of status codes."""

    script: deque[int] = deque()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        status = self.script.popleft() if self.script else 200
        body: dict[str, object] = {"error": {"message": f"scripted {status}", "type": "server_error"}}
        if status == 200:
            message = {"role": "assistant", "content": "hello back"}
            body = {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "served",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            }
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if status == 429:
            self.send_header("retry-after", "3")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FlakyEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_faults_from_a_real_openai_compatible_server_are_classified_and_retried(endpoint):
    spec = ModelSpec.parse(f"openai:served?base_url={endpoint}")
    FlakyEndpoint.script = deque([429, 503])
    sleeps = Sleeps()
    client = RetryingClient(openai_client(spec), model=str(spec), sleep=sleeps, random=lambda: 0.5)
    result = await client.create(PROMPT)
    assert result.content == "hello back"
    assert (sleeps, dict(client.faults)) == ([3.0, 0.5], {"rate_limit": 1, "server_error": 1})

    FlakyEndpoint.script = deque([401])
    with pytest.raises(openai.AuthenticationError):
        await client.create(PROMPT)
    assert client.attempts == 4 and len(sleeps) == 2


async def test_a_server_that_never_answers_costs_at_most_the_deadline_times_the_attempts():
    """Accepts the call and hangs: each attempt is abandoned at the spec's deadline, then retried, then given up."""

    class Hanging(ScriptedClient):
        async def create(self, messages, **kwargs):
            self.calls.append(None)
            await asyncio.sleep(3600)

    inner = Hanging(replies=deque(), agent="hung")
    client = RetryingClient(inner, RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0), deadline=0.05)
    started = time.monotonic()
    with pytest.raises(TransientModelError, match="timeout"):
        await client.create([UserMessage(content="hi", source="user")])
    assert time.monotonic() - started < 1.0
    assert (len(inner.calls), client.faults["timeout"]) == (3, 3)


def test_the_per_call_deadline_is_a_spec_option_with_a_network_default():
    from moot.models._spec import NETWORK_TIMEOUT

    assert ModelSpec.parse("local?timeout=30").effective_timeout == 30
    assert ModelSpec.parse("openai:gpt-4o-mini").effective_timeout == NETWORK_TIMEOUT
    assert ModelSpec.parse("local").effective_timeout is None
    assert str(ModelSpec.parse("openai:gpt-4o-mini?timeout=5")) == "openai:gpt-4o-mini?timeout=5.0"


# ------------------------------------------------------- any SDK's exceptions
def sdk_error(module: str, name: str, *bases: type[BaseException], **attributes: object) -> BaseException:
    """An exception shaped like one another SDK raises: its class name, module and attributes, without the SDK."""
    kind = type(name, bases or (Exception,), {"__module__": module})
    fault = kind(f"{name} from {module}")
    for key, value in attributes.items():
        setattr(fault, key, value)
    return fault


class _Response:
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        self.status_code, self.headers = status, headers or {}


ANY_SDK_TRANSIENT = [
    pytest.param(sdk_error("anthropic", "RateLimitError", status_code=429), "rate_limit", id="anthropic-429"),
    pytest.param(sdk_error("anthropic", "OverloadedError", status_code=529), "server_error", id="anthropic-529"),
    pytest.param(sdk_error("anthropic", "InternalServerError", response=_Response(500)), "server_error",
                 id="anthropic-500-on-response"),
    pytest.param(sdk_error("anthropic", "APITimeoutError"), "timeout", id="anthropic-timeout"),
    pytest.param(sdk_error("anthropic", "APIConnectionError"), "connection", id="anthropic-connection"),
    pytest.param(sdk_error("ollama", "ResponseError", status_code=503), "server_error", id="ollama-503"),
    pytest.param(sdk_error("ollama", "ResponseError", status_code=429), "rate_limit", id="ollama-429"),
    pytest.param(sdk_error("google.api_core.exceptions", "ServiceUnavailable", code=503), "server_error",
                 id="google-503"),
    pytest.param(sdk_error("google.api_core.exceptions", "ResourceExhausted"), "rate_limit", id="google-exhausted"),
    pytest.param(sdk_error("google.api_core.exceptions", "DeadlineExceeded"), "timeout", id="google-deadline"),
    pytest.param(sdk_error("google.genai.errors", "ServerError", code=500), "server_error", id="genai-500"),
    pytest.param(sdk_error("aiohttp", "ClientResponseError", status=502), "server_error", id="aiohttp-502"),
    pytest.param(sdk_error("aiohttp", "ServerDisconnectedError"), "connection", id="aiohttp-disconnected"),
    pytest.param(sdk_error("azure.core.exceptions", "ServiceRequestError"), "connection", id="azure-request"),
    pytest.param(sdk_error("azure.core.exceptions", "HttpResponseError", status_code=503), "server_error",
                 id="azure-503"),
    pytest.param(sdk_error("mistralai", "SDKError", status_code=429), "rate_limit", id="mistral-429"),
    pytest.param(TimeoutError(), "timeout", id="asyncio-timeout-error"),
    pytest.param(OSError(111, "Connection refused"), "connection", id="oserror-refused"),
    pytest.param(BrokenPipeError(32, "Broken pipe"), "connection", id="broken-pipe"),
]  # fmt: skip

ANY_SDK_NOT_TRANSIENT = [
    pytest.param(sdk_error("anthropic", "BadRequestError", status_code=400), id="anthropic-400"),
    pytest.param(sdk_error("anthropic", "AuthenticationError", status_code=401), id="anthropic-401"),
    pytest.param(sdk_error("ollama", "ResponseError", status_code=404), id="ollama-404-model-not-pulled"),
    pytest.param(sdk_error("x", "InternalServerError", status_code=400), id="a-status-decides-over-a-name"),
    pytest.param(sdk_error("x", "RateLimitError", code="insufficient_quota", status_code=429), id="out-of-credit"),
    pytest.param(sdk_error("x", "APIError", body={"error": {"type": "insufficient_quota"}}, status_code=429),
                 id="out-of-credit-in-the-body"),
    pytest.param(sdk_error("x", "Failure", code=3), id="a-code-that-is-no-http-status"),
    pytest.param(FileNotFoundError(2, "No such file"), id="oserror-not-network"),
    pytest.param(KeyError("x"), id="key-error"),
]  # fmt: skip


@pytest.mark.parametrize(("fault", "kind"), ANY_SDK_TRANSIENT)
async def test_any_sdks_transient_faults_are_classified_by_status_or_class_name(fault, kind):
    assert transient_kind(fault) == kind
    if kind is None:
        return
    client, _ = retrying(fault, "ok")
    assert (await client.create(PROMPT)).content == "ok" and dict(client.faults) == {kind: 1}


@pytest.mark.parametrize("fault", ANY_SDK_NOT_TRANSIENT)
async def test_any_sdks_other_faults_propagate_at_once(fault):
    assert transient_kind(fault) is None
    client, sleeps = retrying(fault, "never reached")
    with pytest.raises(type(fault)):
        await client.create(PROMPT)
    assert (sleeps, client.attempts) == ([], 1)


def test_retry_after_is_read_from_any_sdks_response_headers():
    client, _ = retrying()
    fault = sdk_error("anthropic", "RateLimitError", status_code=429, response=_Response(429, {"Retry-After": "7"}))
    assert client.delay(fault, 1) == 7.0
    on_itself = sdk_error("aiohttp", "ClientResponseError", status=503, headers={"retry-after-ms": "1500"})
    assert client.delay(on_itself, 1) == 1.5


def test_a_refused_key_names_the_model_and_its_key_and_only_then_openais():
    from moot.models import refusal

    fault = sdk_error("anthropic", "AuthenticationError", status_code=401)
    client, _ = retrying(fault)
    client.credentials = "$ANTHROPIC_API_KEY"
    with pytest.raises(type(fault)):
        asyncio.run(client.create(PROMPT))
    line = refusal(fault) or ""
    assert line.startswith("model test:model refused the API key (401 unauthorized): AuthenticationError from")
    assert line.endswith("; check $ANTHROPIC_API_KEY") and "OPENAI" not in line
    wrapped = RuntimeError("the run failed")
    wrapped.__cause__ = sdk_error("x", "PermissionDenied", status=403)
    assert (refusal(wrapped) or "").startswith("the provider refused access (403 forbidden)")
    assert refusal(sdk_error("x", "BadRequest", status_code=400)) is None


def test_an_openai_spec_refusal_names_its_own_key_variable(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-test")
    client = ModelSpec.parse("openai:gpt-4o-mini?api_key_env=MY_KEY").client()
    assert isinstance(client, RetryingClient) and client.credentials == "the key in $MY_KEY"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    default = ModelSpec.parse("openai:gpt-4o-mini").client()
    assert default.credentials == "the key in $OPENAI_API_KEY (or the spec's api_key_env)"  # type: ignore[attr-defined]


def test_a_refusal_the_retry_layer_did_not_see_names_the_key_of_the_sdk_that_raised_it():
    from moot.models import refusal

    assert (refusal(status_error(401, openai.AuthenticationError)) or "").endswith(
        "check the key in $OPENAI_API_KEY (or the spec's api_key_env)"
    )
    assert (refusal(sdk_error("anthropic", "AuthenticationError", status_code=401)) or "").endswith(
        "check the key in $ANTHROPIC_API_KEY"
    )
    assert (refusal(sdk_error("somesdk.errors", "Forbidden", status=403)) or "").endswith(
        "check the provider's API key (the spec's api_key_env, or the key its client config sets)"
    )
