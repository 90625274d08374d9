"""The built-in ``scripted:deterministic`` model: replies that are a pure function of the prompt.

It answers every prompt and every structured-output schema with valid
values, so ``moot run`` / ``moot compare`` dry-run for free and a resumed run
gets the replies the crashed one would have got.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from autogen_core.models import LLMMessage
from pydantic import BaseModel

from moot.models._scripted import (
    Script,
    ScriptedClient,
    ScriptedReply,
    message_text,
    register_script,
    unregister_script,
)

__all__ = ["BUILT_IN", "DeterministicModel"]

BUILT_IN = "deterministic"
"""The name ``scripted:deterministic`` resolves to without registering anything."""


class DeterministicModel(Script):
    """Replies that are a pure function of (agent, prompt), for crash-and-resume tests.

    A resumed run in a new process sends the same prompts as the run that
    died, so it gets the same replies, however many calls came before: unlike
    a script, nothing depends on call order. Structured replies (Critique,
    Position, Rebuttal, Verdict) are valid objects whose values derive from
    the prompt's hash. ``delay`` seconds per call leave room to kill a run mid-turn.
    """

    def __init__(self, name: str = "deterministic", delay: float = 0.0, words: int = 0) -> None:
        self.name = name
        self.delay = delay
        self.words = words
        """Pad free-text fields to about this many words, to mimic a real model's verbosity."""

    def client(self, agent: str | None) -> ScriptedClient:
        return ScriptedClient(_Endless(self._reply, agent or "agent", self.delay), agent or "agent")

    def _reply(self, agent: str, messages: Sequence[LLMMessage], output: type[BaseModel] | None) -> str:
        text = "\n".join(message_text(m) for m in messages)
        digest = int(hashlib.sha256(f"{agent}\n{text}".encode()).hexdigest(), 16)
        if output is None:
            return f"{agent} draft {digest % 10_000:04d}"
        fake = _fake_structured(output, agent, digest)
        if self.words:
            pad = " ".join(f"w{(digest >> i) % 997}" for i in range(self.words))
            for key in ("reasoning", "rationale"):
                if key in fake:
                    fake[key] = f"{fake[key]} {pad}"[:600]
            if "key_arguments" in fake:
                fake["key_arguments"] = [f"{agent} argument {i}: {pad[: 6 * 15]}" for i in range(3)]
        return json.dumps(fake)

    def register(self) -> DeterministicModel:
        register_script(self)
        return self

    def unregister(self) -> None:
        unregister_script(self.name)


class _Endless(deque):  # type: ignore[type-arg]
    """A never-empty reply queue whose replies are computed from the prompt."""

    def __init__(self, reply: Callable[..., str], agent: str, delay: float) -> None:
        super().__init__()
        self.reply, self.agent, self.delay = reply, agent, delay

    def __bool__(self) -> bool:
        return True

    def __len__(self) -> int:
        return 0

    def popleft(self) -> ScriptedReply:
        return _Computed(self.reply, self.agent, self.delay)


@dataclass(frozen=True)
class _Computed:
    """A reply computed from the prompt and the requested output schema."""

    reply: Callable[..., str]
    agent: str
    delay: float

    async def __call__(self, messages: Sequence[LLMMessage], output: type[BaseModel] | None) -> str:
        if self.delay:  # a model's latency: the event loop runs on (other tasks, a cancellation) meanwhile
            await asyncio.sleep(self.delay)
        return self.reply(self.agent, messages, output)


@cache
def _properties(output: type[BaseModel]) -> dict[str, Any]:
    return dict(output.model_json_schema().get("properties", {}))


def _fake_structured(output: type[BaseModel], agent: str, digest: int) -> dict[str, Any]:
    """A valid instance of a moot schema, with values drawn from ``digest``."""
    fields = _properties(output)
    answer = fields.get("answer", fields.get("decision", {}))
    options = answer.get("enum") or ([answer["const"]] if "const" in answer else ["yes", "no"])
    choice = options[digest % len(options)]
    point = f"{agent} point {digest % 97}"
    candidates: dict[str, Any] = {
        "reasoning": f"{agent} reasons {digest % 1000}",
        "rationale": f"{agent} weighs the positions and their evidence {digest % 1000}",
        "score": 30 + digest % 70,
        "strengths": [point],
        "issues": [f"{agent} issue {digest % 89}"],
        "verdict": "revise",
        "response": f"{agent} answers it {digest % 83}",
        "because": f"{agent} keeps its reasons {digest % 71}",
        "answer": choice,
        "decision": choice,
        "key_arguments": [point],
        "confidence": round((digest % 100) / 100, 2),
        "assessments": [{"expert": agent, "assessment": f"assessed {digest % 79}"}],
        "dissent": [],
    }
    decided = fields.get("decided_by", {}).get("enum")
    candidates["decided_by"] = decided[0] if decided else None  # a debate's ruling: the first expert's argument
    claim = fields.get("claim", {})
    claims = claim.get("enum") or ([claim["const"]] if "const" in claim else None)
    if claims:
        candidates["claim"] = claims[digest % len(claims)]
    schema = output.model_json_schema()
    return {
        name: _fitting(field, candidates[name], agent, digest)
        if name in candidates
        else _fake_value(field, schema.get("$defs", {}), agent, digest)
        for name, field in fields.items()
        if name in candidates or name in schema.get("required", [])
    }


def _fitting(schema: dict[str, Any], value: Any, agent: str, digest: int) -> Any:
    """``value``, or a stand-in matching the field's ``pattern`` when it does not (a numeric answer)."""
    pattern = schema.get("pattern")
    if pattern is None or not isinstance(value, str) or re.search(pattern, value):
        return value
    samples = (str(digest % 100), f"{digest % 100}.5", f"{agent} says {digest % 1000}", "a", "A")
    return next((sample for sample in samples if re.search(pattern, sample)), value)


def _fake_value(schema: dict[str, Any], defs: dict[str, Any], agent: str, digest: int) -> Any:
    """A value valid for one JSON-schema field of any other schema (plans, tool calls, candidate choices)."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    choices = schema.get("enum") or ([schema["const"]] if "const" in schema else None)
    if choices:
        return choices[digest % len(choices)]
    if "anyOf" in schema:
        return _fake_value(schema["anyOf"][0], defs, agent, digest)
    kind = schema.get("type")
    if kind == "object":
        required = schema.get("required", [])
        props = schema.get("properties", {})
        return {name: _fake_value(props[name], defs, agent, digest) for name in required}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [_fake_value(schema.get("items", {}), defs, agent, digest) for _ in range(count)]
    if kind in ("integer", "number"):
        return int(schema.get("minimum", 0)) + digest % 5
    if kind == "boolean":
        return bool(digest % 2)
    text = _fitting(schema, f"{agent} says {digest % 1000}", agent, digest)
    return text.ljust(int(schema.get("minLength", 0)), ".")[: int(schema.get("maxLength", 10_000))]
