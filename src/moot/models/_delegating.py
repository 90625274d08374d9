"""DelegatingClient: the base of every client that wraps another (retries, faults, meters, limits).

AutoGen's ChatCompletionClient has eight members besides ``create``; a
wrapper that changes only ``create`` still has to pass the rest through, and
each copy of that pass-through was a place to get one wrong. Subclasses
override ``_complete`` (and ``_stream`` if they must); a request they do not
change goes to ``inner`` as it came.
"""

from __future__ import annotations

from collections.abc import Sequence

from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage, ModelInfo, RequestUsage
from autogen_core.tools import Tool, ToolSchema

from moot.models._request import Request, RequestClient, Stream

__all__ = ["DelegatingClient"]


class DelegatingClient(RequestClient):
    """Pass every call to ``inner``. ``owns_inner=False`` when the inner client is shared (the embedded model is):
    then closing the wrapper leaves it open for its owner to close."""

    def __init__(self, inner: ChatCompletionClient, *, owns_inner: bool = True) -> None:
        self.inner = inner
        self.owns_inner = owns_inner

    async def _complete(self, request: Request) -> CreateResult:
        return await request.send(self.inner)

    def _stream(self, request: Request) -> Stream:
        return request.stream(self.inner)

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
    def model_info(self) -> ModelInfo:
        return self.inner.model_info
