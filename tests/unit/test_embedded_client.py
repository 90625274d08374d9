"""The embedded model's AutoGen client, on a stand-in engine: what reaches the engine and what comes back."""

from __future__ import annotations

from typing import Any

import pytest
from autogen_core.models import AssistantMessage, FunctionExecutionResultMessage, SystemMessage, UserMessage
from pydantic import BaseModel, Field

from moot.models import ModelSpec
from moot.models._embedded_client import EmbeddedClient
from moot.models._reply_schema import clamped_schema


class Answer(BaseModel):
    text: str = Field(max_length=40)


class StandInEngine:
    """What EmbeddedClient uses of the engine: a chat completion, the grammar check, tokens and the context."""

    def __init__(self, *replies: tuple[str, str]) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, messages: list[dict[str, str]], **args: Any) -> dict[str, Any]:
        self.calls.append({"messages": messages, **args})
        text, finish = self.replies.pop(0)
        return {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}},
        }

    def grammar_compiles(self, schema: dict[str, Any]) -> bool:
        return True

    def tokenize(self, data: bytes) -> list[int]:
        return list(data)

    def n_ctx(self) -> int:
        return 100


async def test_sampling_settings_and_the_reply_schema_reach_the_engine_on_every_call():
    engine = StandInEngine(('{"text": "hi"}', "stop"), ("plain", "length"))
    client = EmbeddedClient(engine, ModelSpec.parse("local@0.3?max_tokens=64&seed=7"))
    messages = [SystemMessage(content="rules"), UserMessage(content="ask", source="user")]
    first = await client.create(messages, json_output=Answer)
    second = await client.create([*messages, AssistantMessage(content="draft", source="a")])
    sampling = {"max_tokens": 64, "temperature": 0.3, "seed": 7, "stream": False}
    assert engine.calls[0] == {
        "messages": [{"role": "system", "content": "rules"}, {"role": "user", "content": "ask"}],
        **sampling,
        "response_format": {"type": "json_object", "schema": clamped_schema(Answer)},
    }
    assert engine.calls[1]["messages"][-1] == {"role": "assistant", "content": "draft"}
    assert "response_format" not in engine.calls[1] and engine.calls[1]["seed"] == 7
    assert (first.content, first.finish_reason, first.usage.prompt_tokens, first.usage.completion_tokens) == (
        '{"text": "hi"}',
        "stop",
        10,
        3,
    )
    assert second.finish_reason == "length"
    assert client.total_usage() == client.actual_usage()
    assert (client.total_usage().prompt_tokens, client.total_usage().completion_tokens) == (20, 6)


async def test_json_mode_without_a_schema_and_an_empty_reply_as_autogens_client_gave_them():
    engine = StandInEngine(("", "stop"))
    client = EmbeddedClient(engine, ModelSpec.parse("local"))
    result = await client.create([UserMessage(content="ask", source="user")], json_output=True)
    assert engine.calls[0]["response_format"] == {"type": "json_object"}
    assert (result.content, result.usage.prompt_tokens, result.usage.completion_tokens) == ("", 0, 0)
    assert client.total_usage().prompt_tokens == 10  # counted all the same


async def test_messages_the_model_cannot_read_are_refused():
    client = EmbeddedClient(StandInEngine(), ModelSpec.parse("local"))
    with pytest.raises(ValueError, match="Multi-part"):
        await client.create([AssistantMessage(content=[], source="a")])
    with pytest.raises(ValueError, match="Unsupported message type"):
        await client.create([FunctionExecutionResultMessage(content=[])])
    with pytest.raises(ValueError, match="json_output"):
        await client.create([UserMessage(content="ask", source="user")], json_output="yes")  # type: ignore[arg-type]


async def test_the_whole_reply_streams_as_one_chunk_and_tokens_are_counted_on_the_engine():
    client = EmbeddedClient(StandInEngine(("whole", "stop")), ModelSpec.parse("local"))
    chunks = [chunk async for chunk in client.create_stream([UserMessage(content="ask", source="user")])]
    assert chunks[0] == "whole" and chunks[1].content == "whole"
    assert client.count_tokens([UserMessage(content="abc", source="user")]) == 3
    assert client.remaining_tokens([UserMessage(content="abc", source="user")]) == 97
    assert not client.model_info["function_calling"] and client.capabilities == client.model_info
    await client.close()
