"""AutoGen's llama.cpp client, with its pitfalls fixed (imported only when llama_cpp is installed)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import CreateResult, LLMMessage, ModelFamily, ModelInfo
from autogen_core.tools import Tool, ToolSchema
from autogen_ext.models.llama_cpp import LlamaCppChatCompletionClient
from pydantic import BaseModel

from moot.models._llama_engine import EmbeddedEngine
from moot.models._spec import ModelSpec
from moot.models._whole_reply import WholeReplyStream

_MODEL_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
)
GRAMMAR_MAX_LENGTH = 800
NUMBER_DECIMALS = 4
"""Decimals a number may have in a grammar (a confidence of 0.8125 fits)."""
NUMBER_LIMIT = 10**15
"""The range a number without one gets in a grammar, so its integer digits are bounded too."""
_log = logging.getLogger(__name__)


def grammar_schema(output: type[BaseModel], compiles: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The JSON schema the engine turns into a grammar: the tightest version of it that compiles.

    With llguidance (the default) the first candidate, bounds clamped, compiles
    for every built-in schema: its lexer checks lengths without unrolling them.
    llama.cpp's own grammar (``MOOT_LOCAL_GRAMMAR=llama``) unrolls ``maxLength``
    into one nested rule per character and refuses a grammar whose repetitions
    grow too large, and a refused grammar crashes the process later (segfault)
    instead of raising. So each candidate is compiled first: bounds clamped (numbers bounded too),
    then bounds (lengths and patterns) inside arrays dropped, then all string bounds dropped.
    """
    schema = output.model_json_schema()
    # Every candidate is clamped: a simpler grammar still bounds its numbers and keeps the field order.
    candidates = (
        _clamped(schema),
        _clamped(_without_bounds(schema, arrays_only=True)),
        _clamped(_without_bounds(schema)),
    )
    for number, candidate in enumerate(candidates):
        if compiles(candidate):
            if number:
                _log.warning(
                    "the grammar for %s drops %s string bounds (the full schema does not compile); "
                    "replies are still validated against them",
                    output.__name__,
                    "its list items'" if number == 1 else "all its",
                )
            return candidate
    raise ValueError(f"no grammar can be built for {output.__name__}; simplify its schema")


def _clamped(node: Any) -> Any:
    """``node`` with every string's ``maxLength`` capped, every number given a finite number of digits and
    every field of every object required.

    A JSON number is otherwise unbounded in a grammar: a small model asked for a confidence in [0, 1] was seen
    writing ``0.8934567893456789...`` until ``max_tokens`` cut the reply. So numbers get a range (when they
    have none) and at most :data:`NUMBER_DECIMALS` decimals.

    Fields are required so the reply is written in the schema's order, reasoning before verdict (verdict-first
    schemas made the small critic accept every wrong answer): llama.cpp's grammar puts required fields before
    optional ones, so an expert's ``Position`` came out answer first, reasoning last. A field with a default is
    then written explicitly (``"claim": null``). The reply is still validated against the schema itself.
    """
    if isinstance(node, dict):
        bounded = {
            key: min(value, GRAMMAR_MAX_LENGTH) if key == "maxLength" and isinstance(value, int) else _clamped(value)
            for key, value in node.items()
        }
        if node.get("type") == "object" and isinstance(node.get("properties"), dict):
            bounded["required"] = list(node["properties"])
        if node.get("type") in ("number", "integer"):
            bounded.setdefault("minimum", -NUMBER_LIMIT)
            bounded.setdefault("maximum", NUMBER_LIMIT)
            if node["type"] == "number":
                bounded.setdefault("multipleOf", 10**-NUMBER_DECIMALS)
        return bounded
    if isinstance(node, list):
        return [_clamped(value) for value in node]
    return node


def _without_bounds(node: Any, arrays_only: bool = False, in_array: bool = False) -> Any:
    if isinstance(node, dict):
        drop = in_array or not arrays_only
        return {
            key: _without_bounds(value, arrays_only, in_array or key in ("items", "$defs"))
            for key, value in node.items()
            if not (drop and key in ("maxLength", "minLength", "pattern"))
        }
    if isinstance(node, list):
        return [_without_bounds(value, arrays_only, in_array) for value in node]
    return node


class EmbeddedClient(WholeReplyStream, LlamaCppChatCompletionClient):
    """AutoGen's llama.cpp client with its pitfalls fixed.

    * temperature / max_tokens / seed are sent on *every* call (AutoGen drops
      them from the constructor), and max_tokens always has a cap;
    * model_info does not claim function calling the 0.5B model cannot do;
    * ``create_stream`` yields the whole reply instead of raising;
    * the underlying engine is shared and its calls serialised; it reuses
      prompt states across roles and decodes JSON under a fast grammar.
    """

    def __init__(self, model: EmbeddedEngine, spec: ModelSpec) -> None:
        # Deliberately not calling the parent constructor: it would load a
        # second copy of the weights. These are the attributes it sets.
        self.llm = model
        self._model_info = _MODEL_INFO
        self._total_usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self._spec = spec
        self._schemas: dict[type[BaseModel], dict[str, Any]] = {}

    def sampling_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"max_tokens": self._spec.effective_max_tokens}
        args["temperature"] = self._spec.effective_temperature
        if self._spec.seed is not None:
            args["seed"] = self._spec.seed
        return args

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
        args = {**self.sampling_args(), **extra_create_args}
        if isinstance(json_output, type) and issubclass(json_output, BaseModel):
            if json_output not in self._schemas:
                self._schemas[json_output] = grammar_schema(json_output, self.llm.grammar_compiles)
            schema = self._schemas[json_output]
            args["response_format"] = {"type": "json_object", "schema": schema}
            json_output = None
        return await super().create(
            messages,
            tools=list(tools),
            tool_choice=tool_choice,
            json_output=json_output,
            extra_create_args=args,
            cancellation_token=cancellation_token,
        )
