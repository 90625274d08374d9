"""DelegatingClient: the base of every client that wraps another (retries, faults, meters, limits).

AutoGen's ChatCompletionClient has eight members besides ``create``; a
wrapper that changes only ``create`` still has to pass the rest through, and
each copy of that pass-through was a place to get one wrong. Subclasses
override ``create`` (and ``create_stream`` if they must).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage, ModelInfo, RequestUsage
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

__all__ = ["DelegatingClient"]


class DelegatingClient(ChatCompletionClient):
    """Pass every call to ``inner``. ``owns_inner=False`` when the inner client is shared (the embedded model is):
    then closing the wrapper leaves it open for its owner to close."""

    def __init__(self, inner: ChatCompletionClient, *, owns_inner: bool = True) -> None:
        self.inner = inner
        self.owns_inner = owns_inner

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
        return await self.inner.create(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            json_output=json_output,
            extra_create_args=extra_create_args,
            cancellation_token=cancellation_token,
        )

    async def close(self) -> None:
        if self.owns_inner:
            await self.inner.close()

    def actual_usage(self) -> RequestUsage:
        return self.inner.actual_usage()

    def total_usage(self) -> RequestUsage:
        return self.inner.total_usage()

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return self.inner.count_tokens(messages, tools=tools)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return self.inner.remaining_tokens(messages, tools=tools)

    @property
    def capabilities(self) -> ModelInfo:  # type: ignore[override]
        return self.inner.model_info

    @property
    def model_info(self) -> ModelInfo:
        return self.inner.model_info
