"""Test helpers for moot's tests and for users' own: scripted models, and a client that injects faults.

The scripted models are the ``scripted:`` provider's (``moot.models``),
re-exported here under their test-facing names; nothing in ``moot`` imports
this module.

    model = ScriptedModel({"generator": ["def add(a, b): return a + b"],
                           "critic": [Critique(...)]})
    team = Reflection(RoleAgent(role("generator"), model), RoleAgent(role("critic"), model))
    result = await team.run(task="...")
    model.assert_consumed()            # every reply was asked for

A spec string names a scripted model once it is registered: ``with model:``
makes it ``scripted:default`` and asserts on leaving that every reply was used.
"""

from __future__ import annotations

from collections.abc import Sequence

from autogen_core.models import ChatCompletionClient, CreateResult

from moot.errors import ConfigError
from moot.models import (
    DelegatingClient,
    DeterministicModel,
    JsonOutput,
    Request,
    ScriptedCall,
    ScriptedClient,
    ScriptedModel,
    ScriptedReply,
    WholeReplyStream,
    count_words,
)

__all__ = [
    "FAULT_KINDS",
    "DeterministicModel",
    "FaultyClient",
    "ScriptedCall",
    "ScriptedClient",
    "ScriptedModel",
    "ScriptedReply",
    "count_words",
    "provider_fault",
]

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

    def _draw(self, json_output: JsonOutput) -> str | None:
        if self._rng.random() >= self.rate:
            return None
        kinds = [k for k in self.faults if k != "malformed" or json_output]
        return self._rng.choice(kinds) if kinds else None

    async def _complete(self, request: Request) -> CreateResult:
        self.calls += 1
        kind = self._draw(request.json_output)
        if kind is not None:
            self.injected[kind] += 1
            if kind != "malformed":
                raise provider_fault(kind)
        result = await super()._complete(request)
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
