"""The ``scripted:`` provider's clients: replies replayed from a script, never from the network.

A :class:`ScriptedModel` holds one script per agent. Each call pops the next
reply of that agent's script; a call with nothing left raises, and
``assert_consumed()`` raises if replies were never asked for, so a test fails
both when the loop calls the model more than expected and when it calls it
less. Users dry-run with them too (``--model scripted:deterministic``, see
``_deterministic.py``), which is why they live here and not in ``moot.testing``.

A scripted model is given to a role as it is, like any client
(``RoleAgent(role, model)``: each agent plays its own script), or named in a
spec string, ``scripted:NAME``, which is what the one registry is for:
:func:`register_script` / :func:`unregister_script`, or ``with model:``.
"""

from __future__ import annotations

import inspect
import json
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from autogen_core.models import (
    CreateResult,
    LLMMessage,
    ModelFamily,
    ModelInfo,
    RequestUsage,
)
from pydantic import BaseModel

from moot.boundary import load_json, read_bounded
from moot.errors import ConfigError, ScriptError
from moot.models._request import JsonOutput, Request
from moot.models._spec import ModelSpec
from moot.models._whole_reply import WholeReplyStream

__all__ = [
    "Script",
    "ScriptedCall",
    "ScriptedClient",
    "ScriptedModel",
    "ScriptedReply",
    "count_words",
    "message_text",
    "register_script",
    "registered_scripts",
    "unregister_script",
]

ScriptedReply = (
    str
    | BaseModel
    | Mapping[str, Any]
    | Exception
    | Callable[[Sequence[LLMMessage]], str]
    | Callable[[Sequence[LLMMessage]], Awaitable[str]]
    | CreateResult
)
"""A scripted reply: text, a model/dict (sent as JSON), an exception to raise, a function of the prompt, sync
or async (called with the requested schema too when it takes two arguments), or a whole CreateResult returned
as it is (a reply cut off at max_tokens, a cache hit)."""

_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
)


def count_words(text: str) -> int:
    """The scripted models' token count: whitespace-separated words, deterministic and cheap."""
    return len(text.split())


def message_text(message: LLMMessage) -> str:
    """A message's content as the text a scripted model counts and hashes."""
    content = message.content
    return content if isinstance(content, str) else json.dumps(content, default=str)


@dataclass(frozen=True)
class ScriptedCall:
    """What one call to a scripted client saw: the exact prompt and the structured-output request."""

    messages: tuple[LLMMessage, ...]
    json_output: JsonOutput
    extra_create_args: Mapping[str, Any]

    @property
    def prompt_text(self) -> str:
        return "\n".join(message_text(m) for m in self.messages)


@dataclass
class ScriptedClient(WholeReplyStream):
    """A ChatCompletionClient that replays one agent's script."""

    replies: deque[ScriptedReply]
    agent: str = "agent"
    calls: list[ScriptedCall] = field(default_factory=list)
    _usage: RequestUsage = field(default_factory=lambda: RequestUsage(prompt_tokens=0, completion_tokens=0))

    async def _complete(self, request: Request) -> CreateResult:
        messages = request.messages
        self.calls.append(ScriptedCall(tuple(messages), request.json_output, dict(request.extra_create_args)))
        if not self.replies:
            last = message_text(messages[-1])[:120] if messages else ""
            raise ScriptError(
                f"unexpected call #{len(self.calls)} to the scripted model of {self.agent!r}: "
                f"its script is used up (last message: {last!r})"
            )
        reply = self.replies.popleft()
        if isinstance(reply, CreateResult):
            return reply
        text = self._render(reply, messages, request.json_output)
        if inspect.isawaitable(text):  # an async reply function
            text = await text
        usage = RequestUsage(
            prompt_tokens=sum(count_words(message_text(m)) for m in messages),
            completion_tokens=count_words(text),
        )
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + usage.completion_tokens,
        )
        return CreateResult(finish_reason="stop", content=text, usage=usage, cached=False)

    @staticmethod
    def _render(
        reply: ScriptedReply, messages: Sequence[LLMMessage], output: JsonOutput = None
    ) -> str | Awaitable[str]:
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, BaseModel):
            return reply.model_dump_json()
        if isinstance(reply, Mapping):
            return json.dumps(reply)
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
        return sum(count_words(message_text(m)) for m in messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], **kwargs: Any) -> int:
        return max(0, 32_768 - self.count_tokens(messages))

    @property
    def model_info(self) -> ModelInfo:
        return _INFO


class Script(ABC):
    """A named source of one scripted client per agent: given to a role as it is (``RoleAgent(role, script)``),
    or named in a spec as ``scripted:NAME`` once registered."""

    name: str

    @abstractmethod
    def client(self, agent: str | None) -> ScriptedClient:
        """The client that plays ``agent``'s part (the same one on every call, so its script is shared)."""

    @property
    def spec(self) -> ModelSpec:
        """The spec that names this script (``scripted:NAME``), as a run records the model its roles ran on."""
        return ModelSpec(provider="scripted", model=self.name)


class ScriptedModel(Script):
    """Scripts for several agents under one name: give it to the roles directly, or register it (``with model:``)
    to name it as ``scripted:NAME`` in a spec."""

    def __init__(self, scripts: Mapping[str, Iterable[ScriptedReply]], name: str = "default") -> None:
        self.name = name
        self.clients = {agent: ScriptedClient(deque(replies), agent) for agent, replies in scripts.items()}

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        """Load ``{"agent": [reply, ...]}`` from JSON; dict replies are sent as JSON text."""
        data = load_json(read_bounded(path, "scripted model file", 50_000_000), f"scripted model file {path}")
        if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
            raise ConfigError(f"scripted model file {path} must map agent names to lists of replies")
        return cls(data, name=str(path))

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
        """Raise ScriptError if a reply was never asked for (leaving ``with model:`` checks this too)."""
        for client in self.clients.values():
            client.assert_consumed()

    def __enter__(self) -> ScriptedModel:
        register_script(self)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        unregister_script(self.name)
        if exc_type is None:
            self.assert_consumed()


_REGISTRY: dict[str, Script] = {}


def register_script(script: Script, *, replace: bool = True) -> None:
    """Make ``script`` answer ``scripted:<its name>``; ``replace=False`` keeps a script already there."""
    if replace or script.name not in _REGISTRY:
        _REGISTRY[script.name] = script


def unregister_script(name: str) -> None:
    _REGISTRY.pop(name, None)


def registered_scripts() -> dict[str, Script]:
    """A copy of the registry: what a worker process must register to resolve the same names."""
    return dict(_REGISTRY)


def find_script(name: str) -> Script | None:
    """The registered script ``name``, loading (and registering) ``name`` as a script file when it ends in .json."""
    if name not in _REGISTRY and name.endswith(".json"):
        _REGISTRY[name] = ScriptedModel.from_file(Path(name))
    return _REGISTRY.get(name)
