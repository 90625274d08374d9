"""AutoGen's call signature has one owner: clients answer a Request, wrappers pass it on unchanged, and AutoGen's
own agents still call moot's clients with keyword arguments, streaming or not."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

from autogen_agentchat.agents import AssistantAgent
from autogen_core import CancellationToken
from autogen_core.models import CreateResult, RequestUsage, UserMessage

from moot.models import DelegatingClient, Request, RequestClient, WholeReplyStream
from moot.testing import ScriptedClient

SRC = Path(__file__).resolve().parents[2] / "src" / "moot"
PROMPT = [UserMessage(content="hi", source="user")]


class Recording(WholeReplyStream, DelegatingClient):
    """Keeps every request it is handed, then passes it on."""

    def __init__(self, inner: ScriptedClient) -> None:
        super().__init__(inner)
        self.requests: list[Request] = []

    async def _complete(self, request: Request) -> CreateResult:
        self.requests.append(request)
        return await super()._complete(request)


async def test_an_autogen_agent_calls_a_moot_client_with_keywords_and_streams_from_it():
    for stream in (False, True):
        client = ScriptedClient(deque(["hello back"]), agent="assistant")
        agent = AssistantAgent("assistant", model_client=client, model_client_stream=stream)
        result = await agent.run(task="hi")
        assert result.messages[-1].content == "hello back"
        assert client.calls[0].prompt_text.endswith("hi")


async def test_a_wrapper_hands_its_inner_client_the_very_arguments_it_was_given():
    inner = ScriptedClient(deque(["a", "b"]), agent="gen")
    recording = Recording(inner)
    outer = DelegatingClient(recording)
    args, token = {"temperature": 0.5}, CancellationToken()
    await outer.create(PROMPT, json_output=True, extra_create_args=args, cancellation_token=token)
    sent = recording.requests[0]
    assert sent.messages is PROMPT and sent.extra_create_args is args and sent.cancellation_token is token
    assert (sent.json_output, sent.tool_choice, tuple(sent.tools)) == (True, "auto", ())
    chunks = [chunk async for chunk in outer.create_stream(PROMPT)]
    assert chunks[0] == "b" and isinstance(chunks[1], CreateResult)
    assert inner.calls[1].messages == tuple(PROMPT)


async def test_a_request_is_sent_by_autogens_names_to_any_client():
    inner = ScriptedClient(deque(["x"]), agent="gen")
    request = Request(PROMPT, json_output=True, extra_create_args={"seed": 1})
    result = await request.send(inner)
    assert result.usage == RequestUsage(prompt_tokens=1, completion_tokens=1)
    assert (inner.calls[0].json_output, inner.calls[0].extra_create_args) == (True, {"seed": 1})


def test_only_the_request_client_spells_autogens_create():
    """Every other moot client answers ``_complete`` / ``_stream``: no function elsewhere takes AutoGen's
    arguments one by one, nor overrides ``create`` / ``create_stream`` (with ``**kwargs`` or otherwise)."""
    spelled = sorted(
        f"{path.relative_to(SRC)}:{node.name}"
        for path in SRC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.name in ("create", "create_stream") or "extra_create_args" in {a.arg for a in node.args.kwonlyargs})
    )
    assert spelled == ["models/_request.py:create", "models/_request.py:create_stream"]
    assert issubclass(ScriptedClient, RequestClient)
