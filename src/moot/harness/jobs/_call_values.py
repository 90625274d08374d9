"""What one call-cache entry may hold, and how it is read back from plain data: the one definition both the
cache store (:mod:`moot.harness.jobs._call_store`) and the reader of earlier moots' folders
(:mod:`moot.harness.jobs._legacy_cache`) validate against."""

from __future__ import annotations

from typing import Annotated, Any

from autogen_core.models import CreateResult
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from moot.boundary import DataBounds

__all__ = ["ENTRY_BOUNDS", "CallValue", "dump_value", "parse_value"]

ENTRY_BOUNDS = DataBounds(max_bytes=8_000_000, max_depth=32, max_nodes=200_000)
"""One cached reply: far above any reply a model of moot's writes, far below what would strain memory."""

CallValue = CreateResult | list[str | CreateResult]
"""What ChatCompletionCache stores: one reply, or a streamed reply's chunks ending in its CreateResult."""

_Count = Annotated[int, Field(ge=0, le=2**53)]


class _Usage(BaseModel):
    """Token counts as a cache hit reports them to the meters: a forged negative or huge count is refused."""

    model_config = ConfigDict(extra="ignore")
    prompt_tokens: _Count
    completion_tokens: _Count


_VALUE = TypeAdapter(CallValue)


def parse_value(data: Any) -> CallValue:
    """Plain data (from JSON, or a migrated entry) as a ChatCompletionCache value; ValueError when it is not one."""
    value = _VALUE.validate_python(data, strict=False)
    results = [value] if isinstance(value, CreateResult) else [v for v in value if isinstance(v, CreateResult)]
    if isinstance(value, list) and (not results or not isinstance(value[-1], CreateResult)):
        raise ValueError("a streamed entry must end with its CreateResult")
    for result in results:
        _Usage(prompt_tokens=result.usage.prompt_tokens, completion_tokens=result.usage.completion_tokens)
    return value


def dump_value(value: CallValue) -> str:
    """The JSON text a value is stored as."""
    return _VALUE.dump_json(value).decode("utf-8")
