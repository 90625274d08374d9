"""AutoGen's llama.cpp client, with its pitfalls fixed (imported only when llama_cpp is installed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import CreateResult, LLMMessage, ModelFamily, ModelInfo
from autogen_core.tools import Tool, ToolSchema
from autogen_ext.models.llama_cpp import LlamaCppChatCompletionClient
from pydantic import BaseModel

from moot.embedded import EmbeddedEngine
from moot.models._reply_schema import grammar_schema
from moot.models._spec import ModelSpec
from moot.models._whole_reply import WholeReplyStream

_MODEL_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
)


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
