"""One model call as a value, and the client base that is the only place AutoGen's call signature is spelled.

AutoGen's ``create`` and ``create_stream`` each take the messages and five
keyword arguments. Every moot client restated all of them, and each wrapper
passed them on again; one of those copies was always a place to drop or
reorder an argument. Here they are spelled once: :class:`RequestClient` takes
AutoGen's call and hands its subclass one :class:`Request`, and a wrapper sends
the same (or a rewritten) request on with :meth:`Request.send`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage, ModelInfo
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

__all__ = ["JsonOutput", "Request", "RequestClient", "ToolChoice"]

ToolChoice = Tool | Literal["auto", "required", "none"]
"""AutoGen's ``tool_choice``: one tool the model must call, or whether it may call any."""
JsonOutput = bool | type[BaseModel] | None
"""AutoGen's ``json_output``: a reply schema (structured output), JSON mode (True), or neither."""
Stream = AsyncGenerator[str | CreateResult, None]
"""What ``create_stream`` gives: text chunks, then the whole result."""


@dataclass(frozen=True)
class Request:
    """The arguments of one ``create`` call, named as AutoGen names them (so they are passed on by name).

    Frozen: a client that changes a call (a reply schema moved into the create args) makes a new
    request with :func:`dataclasses.replace`, and the caller's request stays as it was sent.
    """

    messages: Sequence[LLMMessage]
    tools: Sequence[Tool | ToolSchema] = ()
    tool_choice: ToolChoice = "auto"
    json_output: JsonOutput = None
    extra_create_args: Mapping[str, Any] = field(default_factory=dict)
    cancellation_token: CancellationToken | None = None

    async def send(self, client: ChatCompletionClient) -> CreateResult:
        """Make this call to ``client`` (its ``create``): the same objects it was given, passed by AutoGen's names."""
        return await client.create(self.messages, **self._options())

    def stream(self, client: ChatCompletionClient) -> Stream:
        """Make this call to ``client`` as a stream (its ``create_stream``)."""
        return client.create_stream(self.messages, **self._options())

    def _options(self) -> dict[str, Any]:
        """The keyword arguments: every field but the messages, under its own name."""
        return {option.name: getattr(self, option.name) for option in fields(self) if option.name != "messages"}


class RequestClient(ChatCompletionClient):
    """A ChatCompletionClient whose subclasses answer a :class:`Request` (``_complete``, ``_stream``).

    AutoGen agents call ``create`` / ``create_stream`` with keyword arguments, as they call any client;
    these two methods are the only places moot spells those arguments, with AutoGen's defaults.
    """

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: ToolChoice = "auto",
        json_output: JsonOutput = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        return await self._complete(
            Request(messages, tools, tool_choice, json_output, extra_create_args, cancellation_token)
        )

    def create_stream(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: ToolChoice = "auto",
        json_output: JsonOutput = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> Stream:
        return self._stream(Request(messages, tools, tool_choice, json_output, extra_create_args, cancellation_token))

    @abstractmethod
    async def _complete(self, request: Request) -> CreateResult:
        """The answer to ``request`` in one piece."""

    @abstractmethod
    def _stream(self, request: Request) -> Stream:
        """The answer to ``request`` as a stream: chunks, then the result."""

    @property
    def capabilities(self) -> ModelInfo:  # type: ignore[override]
        """AutoGen's deprecated name for ``model_info``, answered by it."""
        return self.model_info
