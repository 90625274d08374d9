"""Deterministic scripted models for moot's tests and for users' own tests.

A :class:`ScriptedModel` holds one script per agent. Each call pops the next
reply of that agent's script; a call with nothing left raises, and
``assert_consumed()`` raises if replies were never asked for, so a test fails
both when the loop calls the model more than expected and when it calls it
less. Nothing here touches the network.

    model = ScriptedModel({"generator": ["def add(a, b): return a + b"],
                           "critic": [Critique(...)]})
    with model:                        # registered as scripted:default
        result = await team.run(task="...")
    # leaving the block asserts every reply was consumed
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import (
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    ModelFamily,
    ModelInfo,
    RequestUsage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

from moot.errors import ConfigError, ScriptError
from moot.models._delegating import DelegatingClient
from moot.models._spec import ModelSpec
from moot.models._whole_reply import WholeReplyStream

__all__ = ["DeterministicModel", "Reply", "ScriptedCall", "ScriptedClient", "ScriptedModel", "count_words"]

Reply = str | BaseModel | Mapping[str, Any] | Exception | Callable[[Sequence[LLMMessage]], str] | CreateResult
"""A scripted reply: text, a model/dict (sent as JSON), an exception to raise, a function of the prompt
(called with the requested schema too when it takes two arguments), or a whole CreateResult returned as it is
(a reply cut off at max_tokens, a cache hit)."""

_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
)


def count_words(text: str) -> int:
    """The scripted models' token count: whitespace-separated words, deterministic and cheap."""
    return len(text.split())


def _message_text(message: LLMMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else json.dumps(content, default=str)


@dataclass(frozen=True)
class ScriptedCall:
    """What one call to a scripted client saw: the exact prompt and the structured-output request."""

    messages: tuple[LLMMessage, ...]
    json_output: bool | type[BaseModel] | None
    extra_create_args: Mapping[str, Any]

    @property
    def prompt_text(self) -> str:
        return "\n".join(_message_text(m) for m in self.messages)


@dataclass
class ScriptedClient(WholeReplyStream, ChatCompletionClient):
    """A ChatCompletionClient that replays one agent's script."""

    replies: deque[Reply]
    agent: str = "agent"
    calls: list[ScriptedCall] = field(default_factory=list)
    _usage: RequestUsage = field(default_factory=lambda: RequestUsage(prompt_tokens=0, completion_tokens=0))

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        self.calls.append(ScriptedCall(tuple(messages), json_output, dict(extra_create_args)))
        if not self.replies:
            last = _message_text(messages[-1])[:120] if messages else ""
            raise ScriptError(
                f"unexpected call #{len(self.calls)} to the scripted model of {self.agent!r}: "
                f"its script is used up (last message: {last!r})"
            )
        reply = self.replies.popleft()
        if isinstance(reply, CreateResult):
            return reply
        text = self._render(reply, messages, json_output)
        usage = RequestUsage(
            prompt_tokens=sum(count_words(_message_text(m)) for m in messages),
            completion_tokens=count_words(text),
        )
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + usage.completion_tokens,
        )
        return CreateResult(finish_reason="stop", content=text, usage=usage, cached=False)

    @staticmethod
    def _render(reply: Reply, messages: Sequence[LLMMessage], output: bool | type[BaseModel] | None = None) -> str:
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, BaseModel):
            return reply.model_dump_json()
        if isinstance(reply, Mapping):
            return json.dumps(reply)
        if isinstance(reply, _Computed):
            return reply(messages, output if isinstance(output, type) else None)
        if callable(reply):
            if len(inspect.signature(reply).parameters) >= 2:
                return reply(messages, output if isinstance(output, type) else None)
            return reply(messages)
        return reply

    def assert_consumed(self) -> None:
        if self.replies:
            raise ScriptError(f"the scripted model of {self.agent!r} has {len(self.replies)} unconsumed replies")

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(self, messages: Sequence[LLMMessage], **kwargs: Any) -> int:
        return sum(count_words(_message_text(m)) for m in messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], **kwargs: Any) -> int:
        return max(0, 32_768 - self.count_tokens(messages))

    @property
    def capabilities(self) -> ModelInfo:  # type: ignore[override]
        return _INFO

    @property
    def model_info(self) -> ModelInfo:
        return _INFO


class ScriptedModel:
    """Scripts for several agents under one name, usable as ``scripted:NAME`` in any spec."""

    def __init__(self, scripts: Mapping[str, Iterable[Reply]], name: str = "default") -> None:
        self.name = name
        self.clients = {agent: ScriptedClient(deque(replies), agent) for agent, replies in scripts.items()}

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        """Load ``{"agent": [reply, ...]}`` from JSON; dict replies are sent as JSON text."""
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read scripted model file {path}: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
            raise ConfigError(f"scripted model file {path} must map agent names to lists of replies")
        return cls(data, name=str(path))

    @property
    def spec(self) -> ModelSpec:
        return ModelSpec(provider="scripted", model=self.name)

    def client(self, agent: str | None) -> ScriptedClient:
        if agent is None or agent not in self.clients:
            raise ConfigError(
                f"scripted model {self.name!r} has no script for agent {agent!r}; "
                f"scripted agents: {', '.join(sorted(self.clients)) or 'none'}"
            )
        return self.clients[agent]

    def calls(self, agent: str) -> list[ScriptedCall]:
        return self.client(agent).calls

    def assert_consumed(self) -> None:
        for client in self.clients.values():
            client.assert_consumed()

    def __enter__(self) -> ScriptedModel:
        _REGISTRY[self.name] = self
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _REGISTRY.pop(self.name, None)
        if exc_type is None:
            self.assert_consumed()


class DeterministicModel:
    """Replies that are a pure function of (agent, prompt), for crash-and-resume tests.

    A resumed run in a new process sends the same prompts as the run that
    died, so it gets the same replies, however many calls came before: unlike
    a script, nothing depends on call order. Structured replies (Critique,
    Position, Rebuttal, Verdict) are valid objects whose values derive from
    the prompt's hash. ``delay`` seconds per call leave room to kill a run mid-turn.
    """

    def __init__(self, name: str = "deterministic", delay: float = 0.0, words: int = 0) -> None:
        self.name = name
        self.delay = delay
        self.words = words
        """Pad free-text fields to about this many words, to mimic a real model's verbosity."""

    def client(self, agent: str | None) -> ScriptedClient:
        return ScriptedClient(_Endless(self._reply, agent or "agent", self.delay), agent or "agent")

    def _reply(self, agent: str, messages: Sequence[LLMMessage], output: type[BaseModel] | None) -> str:
        text = "\n".join(_message_text(m) for m in messages)
        digest = int(hashlib.sha256(f"{agent}\n{text}".encode()).hexdigest(), 16)
        if output is None:
            return f"{agent} draft {digest % 10_000:04d}"
        fake = _fake_structured(output, agent, digest)
        if self.words:
            pad = " ".join(f"w{(digest >> i) % 997}" for i in range(self.words))
            for key in ("reasoning", "rationale"):
                if key in fake:
                    fake[key] = f"{fake[key]} {pad}"[:600]
            if "key_arguments" in fake:
                fake["key_arguments"] = [f"{agent} argument {i}: {pad[: 6 * 15]}" for i in range(3)]
        return json.dumps(fake)

    def register(self) -> DeterministicModel:
        _REGISTRY[self.name] = self
        return self

    def unregister(self) -> None:
        _REGISTRY.pop(self.name, None)


class _Endless(deque):  # type: ignore[type-arg]
    """A never-empty reply queue whose replies are computed from the prompt."""

    def __init__(self, reply: Callable[..., str], agent: str, delay: float) -> None:
        super().__init__()
        self.reply, self.agent, self.delay = reply, agent, delay

    def __bool__(self) -> bool:
        return True

    def __len__(self) -> int:
        return 0

    def popleft(self) -> Reply:
        return _Computed(self.reply, self.agent, self.delay)


@dataclass(frozen=True)
class _Computed:
    """A reply computed from the prompt and the requested output schema."""

    reply: Callable[..., str]
    agent: str
    delay: float

    def __call__(self, messages: Sequence[LLMMessage], output: type[BaseModel] | None) -> str:
        if self.delay:
            time.sleep(self.delay)
        return self.reply(self.agent, messages, output)


@cache
def _properties(output: type[BaseModel]) -> dict[str, Any]:
    return dict(output.model_json_schema().get("properties", {}))


def _fake_structured(output: type[BaseModel], agent: str, digest: int) -> dict[str, Any]:
    """A valid instance of a moot schema, with values drawn from ``digest``."""
    fields = _properties(output)
    answer = fields.get("answer", fields.get("decision", {}))
    options = answer.get("enum") or ([answer["const"]] if "const" in answer else ["yes", "no"])
    choice = options[digest % len(options)]
    point = f"{agent} point {digest % 97}"
    candidates: dict[str, Any] = {
        "reasoning": f"{agent} reasons {digest % 1000}",
        "rationale": f"{agent} weighs the positions {digest % 1000}",
        "score": 30 + digest % 70,
        "strengths": [point],
        "issues": [f"{agent} issue {digest % 89}"],
        "verdict": "revise",
        "response": f"{agent} answers it {digest % 83}",
        "because": f"{agent} keeps its reasons {digest % 71}",
        "answer": choice,
        "decision": choice,
        "key_arguments": [point],
        "confidence": round((digest % 100) / 100, 2),
        "assessments": [{"expert": agent, "assessment": f"assessed {digest % 79}"}],
        "dissent": [],
    }
    claim = fields.get("claim", {})
    claims = claim.get("enum") or ([claim["const"]] if "const" in claim else None)
    if claims:
        candidates["claim"] = claims[digest % len(claims)]
    schema = output.model_json_schema()
    return {
        name: _fitting(field, candidates[name], agent, digest)
        if name in candidates
        else _fake_value(field, schema.get("$defs", {}), agent, digest)
        for name, field in fields.items()
        if name in candidates or name in schema.get("required", [])
    }


def _fitting(schema: dict[str, Any], value: Any, agent: str, digest: int) -> Any:
    """``value``, or a stand-in matching the field's ``pattern`` when it does not (a numeric answer)."""
    pattern = schema.get("pattern")
    if pattern is None or not isinstance(value, str) or re.search(pattern, value):
        return value
    samples = (str(digest % 100), f"{digest % 100}.5", f"{agent} says {digest % 1000}", "a", "A")
    return next((sample for sample in samples if re.search(pattern, sample)), value)


def _fake_value(schema: dict[str, Any], defs: dict[str, Any], agent: str, digest: int) -> Any:
    """A value valid for one JSON-schema field of any other schema (plans, tool calls, candidate choices)."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    choices = schema.get("enum") or ([schema["const"]] if "const" in schema else None)
    if choices:
        return choices[digest % len(choices)]
    if "anyOf" in schema:
        return _fake_value(schema["anyOf"][0], defs, agent, digest)
    kind = schema.get("type")
    if kind == "object":
        required = schema.get("required", [])
        props = schema.get("properties", {})
        return {name: _fake_value(props[name], defs, agent, digest) for name in required}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [_fake_value(schema.get("items", {}), defs, agent, digest) for _ in range(count)]
    if kind in ("integer", "number"):
        return int(schema.get("minimum", 0)) + digest % 5
    if kind == "boolean":
        return bool(digest % 2)
    text = _fitting(schema, f"{agent} says {digest % 1000}", agent, digest)
    return text.ljust(int(schema.get("minLength", 0)), ".")[: int(schema.get("maxLength", 10_000))]


_REGISTRY: dict[str, ScriptedModel | DeterministicModel] = {}


BUILT_IN = "deterministic"
"""``scripted:deterministic`` works everywhere without registering anything: a :class:`DeterministicModel` that
answers every prompt and schema with valid values, so ``moot run`` / ``moot compare`` can dry-run for free."""


def scripted_model(spec: ModelSpec) -> ScriptedModel | DeterministicModel:
    """Resolve ``scripted:NAME`` (a registered model, or the built-in ``deterministic``) or ``scripted:path.json``."""
    name = spec.model or "default"
    if name not in _REGISTRY and name.endswith(".json"):
        _REGISTRY[name] = ScriptedModel.from_file(Path(name))
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name == BUILT_IN:
        return DeterministicModel()
    known = ", ".join(sorted({*_REGISTRY, BUILT_IN}))
    raise ConfigError(f"no scripted model named {name!r}; registered: {known} (or give a script file NAME.json)")


def scripted_client(spec: ModelSpec, agent: str | None) -> ScriptedClient:
    """The client of ``agent`` in the scripted model ``spec`` names (see :func:`scripted_model`)."""
    return scripted_model(spec).client(agent)


__all__ += ["FAULT_KINDS", "FaultyClient", "provider_fault"]

FAULT_KINDS = ("429", "500", "timeout", "connection", "malformed")
"""What a :class:`FaultyClient` can inject: provider errors, or a reply whose JSON is cut short."""


class FaultyClient(WholeReplyStream, DelegatingClient):
    """Wrap a client and inject realistic faults at a seeded rate, for resilience tests.

    Before each call, with probability ``rate``, one of ``faults`` happens
    instead of a clean reply: ``"429"`` / ``"500"`` raise the OpenAI SDK's own
    ``RateLimitError`` (with a Retry-After header) / ``InternalServerError``
    built on real httpx request and response objects, ``"timeout"`` raises
    ``APITimeoutError``, ``"connection"`` raises ``APIConnectionError``, and
    ``"malformed"`` makes the real call but returns its reply truncated, so
    the JSON is broken. ``malformed`` is only drawn for calls that ask for
    JSON; a plain-text reply has no JSON to break. The same seed gives the
    same faults at the same calls.

    ``injected`` counts faults per kind; ``delivered`` holds every reply
    passed on intact, in order: the calls that succeeded.
    """

    def __init__(
        self,
        inner: ChatCompletionClient,
        rate: float,
        seed: int,
        faults: Sequence[str] = ("429", "500", "timeout", "malformed"),
    ) -> None:
        import random

        unknown = [f for f in faults if f not in FAULT_KINDS]
        if unknown or not faults:
            raise ConfigError(f"unknown fault kinds {unknown or 'none given'}; valid kinds: {', '.join(FAULT_KINDS)}")
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"fault rate must be between 0 and 1, got {rate}")
        super().__init__(inner)
        self.rate = rate
        self.faults = tuple(faults)
        self._rng = random.Random(seed)
        self.calls = 0
        self.injected: dict[str, int] = dict.fromkeys(self.faults, 0)
        self.delivered: list[CreateResult] = []

    def _draw(self, json_output: bool | type[BaseModel] | None) -> str | None:
        if self._rng.random() >= self.rate:
            return None
        kinds = [k for k in self.faults if k != "malformed" or json_output]
        return self._rng.choice(kinds) if kinds else None

    async def create(self, messages: Sequence[LLMMessage], **kwargs: Any) -> CreateResult:
        self.calls += 1
        kind = self._draw(kwargs.get("json_output"))
        if kind is not None:
            self.injected[kind] += 1
            if kind != "malformed":
                raise provider_fault(kind)
        result = await super().create(messages, **kwargs)
        if kind == "malformed":
            text = str(result.content)
            return result.model_copy(update={"content": text[: len(text) // 2]})
        self.delivered.append(result)
        return result


def provider_fault(kind: str) -> Exception:
    """The exception the OpenAI SDK raises for a fault kind, on real httpx request/response objects."""
    import httpx
    import openai

    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    if kind == "timeout":
        return openai.APITimeoutError(request=request)
    if kind == "connection":
        return openai.APIConnectionError(request=request)
    if kind == "429":
        body = {"error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}
        response = httpx.Response(429, headers={"retry-after": "1"}, json=body, request=request)
        return openai.RateLimitError(f"Error code: 429 - {body}", response=response, body=body["error"])
    if kind == "500":
        body = {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}
        response = httpx.Response(500, json=body, request=request)
        return openai.InternalServerError(f"Error code: 500 - {body}", response=response, body=body["error"])
    raise ConfigError(f"no provider exception for fault kind {kind!r}; valid kinds: 429, 500, timeout, connection")
