"""The embedded model as an AutoGen ChatCompletionClient."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from autogen_core import EVENT_LOGGER_NAME, MessageHandlerContext
from autogen_core.logging import LLMCallEvent
from autogen_core.models import (
    AssistantMessage,
    CreateResult,
    LLMMessage,
    ModelFamily,
    ModelInfo,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

from moot.models._reply_schema import grammar_schema
from moot.models._request import JsonOutput, Request
from moot.models._spec import ModelSpec
from moot.models._whole_reply import WholeReplyStream

if TYPE_CHECKING:
    from moot.embedded import EmbeddedEngine

__all__ = ["EMBEDDED_MODEL_INFO", "EmbeddedClient"]

EMBEDDED_MODEL_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
)
_EVENTS = logging.getLogger(EVENT_LOGGER_NAME)


class EmbeddedClient(WholeReplyStream):
    """A client of the process's embedded engine, as AutoGen's llama.cpp client would be, with its pitfalls fixed.

    * temperature / max_tokens / seed are sent on *every* call (AutoGen's
      client drops them from the constructor), and max_tokens always has a cap;
    * model_info does not claim function calling the 0.5B model cannot do;
    * ``create_stream`` yields the whole reply instead of raising;
    * a structured reply is decoded under a grammar of its schema, simplified
      until the grammar engine accepts it;
    * the engine is shared and its calls serialised; it reuses prompt states
      across roles and decodes JSON under a fast grammar.

    Not a subclass of AutoGen's ``LlamaCppChatCompletionClient``: its
    constructor loads a ``Llama`` of its own, where every client of the
    embedded model must share the one engine (one copy of the weights, calls
    taking turns), so a subclass could only skip its parent's ``__init__``.
    What that client does with a call is done here, on the engine: the same
    messages and arguments reach the model, and the same result comes back.
    """

    def __init__(self, engine: EmbeddedEngine, spec: ModelSpec) -> None:
        super().__init__()
        self.engine = engine
        self._spec = spec
        self._schemas: dict[type[BaseModel], dict[str, Any]] = {}
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    def sampling_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"max_tokens": self._spec.effective_max_tokens}
        args["temperature"] = self._spec.effective_temperature
        if self._spec.seed is not None:
            args["seed"] = self._spec.seed
        return args

    async def _complete(self, request: Request) -> CreateResult:
        """One completion; ``tools`` are ignored (the model does not call functions)."""
        if request.tool_choice != "auto":  # stacklevel 3: the caller of create, which called this
            warnings.warn("the embedded model calls no tools; tool_choice is ignored", UserWarning, stacklevel=3)
        chat = [_chat_message(message) for message in request.messages]
        args = {**self.sampling_args(), **request.extra_create_args, **self._response_format(request.json_output)}
        call = asyncio.get_event_loop().run_in_executor(
            None, lambda: self.engine.create_chat_completion(messages=chat, stream=False, **args)
        )
        if request.cancellation_token is not None:
            request.cancellation_token.link_future(call)
        response = await call
        return self._result(chat, response)

    def _response_format(self, json_output: JsonOutput) -> dict[str, Any]:
        """The ``response_format`` argument for ``json_output``: a structured reply's schema as the grammar
        engine accepts it (see :func:`grammar_schema`), plain JSON for True, else none."""
        if isinstance(json_output, type) and issubclass(json_output, BaseModel):
            if json_output not in self._schemas:
                self._schemas[json_output] = grammar_schema(json_output, self.engine.grammar_compiles)
            return {"response_format": {"type": "json_object", "schema": self._schemas[json_output]}}
        if json_output is True:
            return {"response_format": {"type": "json_object"}}
        if json_output is not None and json_output is not False:
            raise ValueError("json_output must be a boolean, a BaseModel subclass or None.")
        return {}

    def _result(self, chat: list[dict[str, str]], response: dict[str, Any]) -> CreateResult:
        """The engine's OpenAI-shaped ``response`` as AutoGen's result; usage counted and the call logged."""
        usage = RequestUsage(response["usage"]["prompt_tokens"], response["usage"]["completion_tokens"])
        self._usage = RequestUsage(
            self._usage.prompt_tokens + usage.prompt_tokens, self._usage.completion_tokens + usage.completion_tokens
        )
        choice = response["choices"][0]
        text = choice["message"]["content"]
        if not text:  # as AutoGen's llama.cpp client reports an empty reply: no usage, and not logged
            return CreateResult(content="", usage=RequestUsage(0, 0), finish_reason="stop", cached=False)
        result = CreateResult(content=text, usage=usage, finish_reason=choice["finish_reason"], cached=False)
        _EVENTS.info(
            LLMCallEvent(
                messages=chat,
                response=result.model_dump(),
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                agent_id=_agent_id(),
            )
        )
        return result

    async def close(self) -> None:
        """Nothing to close: the engine is the process's, shared by every client."""

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        """Tokens of the messages' contents (not the chat template around them)."""
        return sum(len(self.engine.tokenize(str(message.content).encode("utf-8"))) for message in messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return max(self.engine.n_ctx() - self.count_tokens(messages), 0)

    @property
    def model_info(self) -> ModelInfo:
        return EMBEDDED_MODEL_INFO


def _chat_message(message: LLMMessage) -> dict[str, str]:
    """``message`` as a chat message of the engine: role and text (what AutoGen's llama.cpp client sends)."""
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage | AssistantMessage) and isinstance(message.content, str):
        return {"role": "user" if isinstance(message, UserMessage) else "assistant", "content": message.content}
    if isinstance(message, UserMessage | AssistantMessage):
        raise ValueError("Multi-part messages such as those containing images are currently not supported.")
    raise ValueError(f"Unsupported message type: {type(message)}")


def _agent_id() -> Any:
    """The agent making the call, when it runs inside an AutoGen message handler (for the call's log event)."""
    try:
        return MessageHandlerContext.agent_id()
    except RuntimeError:
        return None
