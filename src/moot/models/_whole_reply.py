"""A ``create_stream`` for clients that answer in one piece."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import CreateResult, LLMMessage
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

__all__ = ["WholeReplyStream"]


class WholeReplyStream:
    """Mixin: stream the whole reply as one chunk, then the result, as AutoGen's streaming contract expects.

    The embedded model, scripted models and metering wrappers cannot stream
    (or must not, to see every token); AutoGen agents that stream still work with them.
    Put it before the ChatCompletionClient base so it takes precedence.
    """

    async def create_stream(  # type: ignore[no-untyped-def]
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        result: CreateResult = await self.create(  # type: ignore[attr-defined]
            messages,
            tools=tools,
            tool_choice=tool_choice,
            json_output=json_output,
            extra_create_args=extra_create_args,
            cancellation_token=cancellation_token,
        )
        if isinstance(result.content, str):
            yield result.content
        yield result
