"""RoleAgent: an AutoGen chat agent that plays one role on one model.

It is stateless between turns on purpose: the team decides exactly what the
agent sees (latest draft + latest critique, condensed positions), so context
stays bounded however many rounds run. A structured answer that does not
validate is fed back to the same model with the validation error, a bounded
number of times, instead of crashing the run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Any, Self

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage, TextMessage
from autogen_core import CancellationToken, Component, ComponentModel
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from pydantic import BaseModel, ValidationError

from moot.boundary import argument_error, checked_count, checked_text, json_depth, text_in, text_of
from moot.errors import MalformedOutputError
from moot.models import Meter, ModelSpec, Script, meter_metadata
from moot.roles._fit import fit_text_lengths
from moot.roles._prompts import schema_hint
from moot.roles._registry import role as role_named
from moot.roles._role import Role, import_output_type
from moot.tracing import traced

__all__ = ["RoleAgent", "RoleAgentConfig"]

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
MAX_REPLY_CHARS = 400_000
"""A reply longer than this is cut (and so fails its schema, which is fed back): far above any cap a role's spec sets,
so only a misbehaving endpoint reaches it, and then it costs moot's process a bounded amount of memory."""
MAX_REPLY_DEPTH = 32
"""No answer schema nests deeper; a reply that does is refused before the JSON parser recurses through it."""


class RoleAgentConfig(BaseModel):
    name: str
    role: str
    description: str
    system_prompt: str
    persona: str = ""
    output_type: str | None = None
    model: ModelSpec | None = None
    """The spec the client is built from; stored instead of the client so no secret is serialised."""
    model_client: ComponentModel | None = None
    max_parse_retries: int = 2


def extract_json(text: str) -> str:
    """The JSON object in a reply: the outermost braces if they parse, else a fenced block's.

    The whole object is tried first: a structured answer may hold code fences
    inside its strings (an expert quoting code in its reasoning), and taking
    the first fence would cut the object apart.
    """
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end and json_depth(candidate := text[start : end + 1]) <= MAX_REPLY_DEPTH:
        try:
            json.loads(candidate, strict=False)
        except json.JSONDecodeError:
            pass
        else:
            return candidate
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
        start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def parse_structured(output: type[BaseModel], text: str) -> BaseModel:
    """Validate a reply against ``output``.

    JSON is parsed non-strictly: constrained decoders emit raw newlines inside
    strings, which strict JSON forbids but which carry no ambiguity. Text
    fields that reach their length cap are cut back to a sentence end first.
    """
    candidate = extract_json(text)
    if json_depth(candidate) > MAX_REPLY_DEPTH:
        raise ValueError(f"reply nests deeper than {MAX_REPLY_DEPTH} levels; answer with the schema's flat object")
    try:
        data = json.loads(candidate, strict=False)
    except json.JSONDecodeError as exc:
        raise ValueError(f"reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    return output.model_validate(fit_text_lengths(text_in(data), _schema(output)))


@cache
def _schema(output: type[BaseModel]) -> dict[str, Any]:
    return output.model_json_schema()


def _valid_reply(result: CreateResult) -> CreateResult:
    """The reply as moot keeps it: valid text (undecodable parts escaped), at most ``MAX_REPLY_CHARS`` long.

    Every reply of every client enters moot here, so a lone surrogate or a flood from an endpoint can never
    reach a transcript, a trace or the run store as something their writers refuse.
    """
    if not isinstance(result.content, str):
        return result
    content = text_of(result.content, MAX_REPLY_CHARS)
    return result if content is result.content else result.model_copy(update={"content": content})


def _logical(meter: Meter) -> RequestUsage:
    """A turn's ``models_usage``: the logical tokens of every call it made."""
    return RequestUsage(prompt_tokens=meter.prompt_tokens, completion_tokens=meter.completion_tokens)


Model = ModelSpec | Script | ChatCompletionClient | str
"""What a RoleAgent runs on: a spec (or its string, ``"local@0.7"``), a scripted model, or a ready client."""


class RoleAgent(BaseChatAgent, Component[RoleAgentConfig]):
    """One role on one model. ``role`` is a Role or a known role's name (``"critic"``). ``model`` is a
    ModelSpec (preferred) or its string (``"scripted:deterministic"``, read with ``ModelSpec.parse``), a
    scripted model given as it is (a :class:`~moot.models.Script`, e.g. ``ScriptedModel``: the agent plays
    its own script, and the run records the script's ``scripted:NAME`` spec), or a ready client."""

    component_config_schema = RoleAgentConfig
    component_provider_override = "moot.roles.RoleAgent"

    def __init__(
        self,
        role: Role | str,
        model: Model,
        *,
        name: str | None = None,
        max_parse_retries: int = 2,
    ) -> None:
        role = _checked_role(role)
        model = _checked_model(model)
        if name is not None and (not isinstance(name, str) or not name.isidentifier()):
            raise argument_error("RoleAgent", "name", "None or a Python identifier, e.g. 'critic_2'", name)
        checked_count(max_parse_retries, "RoleAgent", "max_parse_retries", 0, 20)
        super().__init__(name or role.name, role.description)
        self.role = role
        self.model_source: ModelSpec | Script | ChatCompletionClient = model
        """What the agent was given to run on: another role can be put on the same model (a debate's arbiter
        named by a string runs on its first expert's)."""
        self.spec, self.model_client = _connect(model, self.name)
        self.max_parse_retries = max_parse_retries

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        if self.role.output_type is None:
            return (TextMessage,)
        return (StructuredMessage[self.role.output_type],)  # type: ignore[name-defined]

    def system_message(self) -> SystemMessage:
        """The role's prompt alone: the same on every turn, whatever schema the turn asks for, so the model
        keeps its state (and the state kept on disk serves every later run of the role)."""
        return SystemMessage(content=self.role.system_prompt)

    def prompt(
        self, messages: Sequence[BaseChatMessage], output: type[BaseModel] | None = None, closing: str = ""
    ) -> list[LLMMessage]:
        """What the model is sent for ``messages``: the system message, then the request.

        The agent's own earlier replies in ``messages`` are its assistant turns, so a model that kept the
        state of the call that wrote them reads them without evaluating them again. The last request ends
        with the reply's schema (``output``, else the role's), then ``closing`` (the lines that name this
        agent), then the persona: all come after the material, so every turn of a role (and every expert of
        a round) shares the longest prefix.
        """
        converted = [self._model_message(m) for m in messages]
        last = converted[-1] if converted else None
        if isinstance(last, UserMessage) and isinstance(last.content, str):
            output = output or self.role.output_type
            tail = [schema_hint(output) if output is not None else "", closing, self.role.persona]
            converted[-1] = last.model_copy(update={"content": "\n\n".join([last.content, *filter(None, tail)])})
        return [self.system_message(), *converted]

    def chat_messages(self, request: str, output: type[BaseModel] | None = None) -> list[dict[str, str]]:
        """A one-message ``request`` as the chat messages an OpenAI-style API or the embedded engine takes."""
        kinds = {SystemMessage: "system", UserMessage: "user", AssistantMessage: "assistant"}
        prompt = self.prompt([TextMessage(content=request, source="user")], output)
        return [{"role": kinds[type(m)], "content": str(m.content)} for m in prompt]

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        return await self.respond(messages, cancellation_token)

    async def respond(
        self,
        messages: Sequence[BaseChatMessage],
        cancellation_token: CancellationToken,
        output_type: type[BaseModel] | None = None,
        closing: str = "",
    ) -> Response:
        """Answer ``messages``; ``output_type`` overrides the role's schema for this turn only; ``closing``
        ends the request after the schema (see :meth:`prompt`).

        Teams use the override when a turn needs a stricter schema than the
        role's default (a debate's later rounds require a rebuttal). The reply
        is always reported as the role's own type when it has one, so saved
        transcripts only ever hold registered message types. The message
        carries every call the turn made (see :mod:`moot._meter`):
        ``models_usage`` the logical tokens, failed attempts included, and its
        metadata the calls, billed tokens and cost.
        """
        output = output_type or self.role.output_type
        prompt = self.prompt(messages, output, closing)
        meter = Meter()
        if output is None:
            result = await self._call(prompt, None, cancellation_token, meter)
            return Response(
                chat_message=TextMessage(
                    content=str(result.content),
                    source=self.name,
                    models_usage=_logical(meter),
                    metadata=meter_metadata(meter),
                )
            )
        return await self._structured(prompt, output, cancellation_token, meter)

    def _model_message(self, message: BaseChatMessage) -> LLMMessage:
        if message.source == self.name:
            return AssistantMessage(content=message.to_model_text(), source=self.name)
        return message.to_model_message()

    async def _call(
        self, prompt: list[LLMMessage], output: type[BaseModel] | None, token: CancellationToken, meter: Meter
    ) -> CreateResult:
        """One model call, counted in ``meter`` and traced with the settings it ran with."""
        json_output: bool | type[BaseModel] | None = None
        if output is not None:
            info = self.model_client.model_info
            json_output = output if info.get("structured_output") else (True if info.get("json_output") else None)
        kind = getattr(json_output, "__name__", str(json_output))
        with traced("model_call", self.name, json_output=kind, **self._sampling()) as span:
            result = _valid_reply(
                await self.model_client.create(prompt, json_output=json_output, cancellation_token=token)
            )
            meter.add(result.usage, billed=False)
            if not result.cached:
                cost = self.spec.cost(result.usage.prompt_tokens, result.usage.completion_tokens) if self.spec else None
                meter.add(result.usage, billed=True, cost=cost)
            if span is not None:
                span.messages = [m.model_dump(mode="json") for m in prompt]
                span.output = str(result.content)
                span.prompt_tokens, span.completion_tokens = result.usage.prompt_tokens, result.usage.completion_tokens
                span.attributes.update(cached=result.cached, finish_reason=result.finish_reason)
            return result

    def _sampling(self) -> dict[str, object]:
        """The settings this agent's calls run with; an agent on a ready client knows only the client's model."""
        if self.spec is not None:
            return self.spec.sampling()
        return {"model": str(self.model_client.model_info.get("family", type(self.model_client).__name__))}

    async def _structured(
        self, prompt: list[LLMMessage], output: type[BaseModel], token: CancellationToken, meter: Meter
    ) -> Response:
        error = ""
        for attempt in range(self.max_parse_retries + 1):
            result = await self._call(prompt, output, token, meter)
            text = str(result.content)
            try:
                content = parse_structured(output, text)
            except (ValidationError, ValueError) as exc:
                error = _one_line(exc) if isinstance(exc, ValidationError) else str(exc)
                if result.finish_reason == "length":
                    error = f"{self._cap()} ({error})"
                prompt = [*prompt, AssistantMessage(content=text, source=self.name), _feedback(error)]
                continue
            reported = self.role.output_type or output
            if type(content) is not reported:  # a turn's schema (e.g. Rebuttal) stored as the role's record
                content = reported.model_validate(content.model_dump())
            message = StructuredMessage[reported](  # type: ignore[valid-type]
                content=content,
                source=self.name,
                models_usage=_logical(meter),
                metadata={**meter_metadata(meter), "parse_failures": str(attempt)},
            )
            return Response(chat_message=message)
        raise MalformedOutputError(self.name, self.max_parse_retries + 1, error, spent=meter)

    def _cap(self) -> str:
        """What a reply cut off by its token cap is told: that it hit the cap, and which one."""
        if self.spec is None:
            return "reply stopped at the client's max_tokens cap before it was complete"
        return (
            f"reply stopped at the max_tokens cap ({self.spec.effective_max_tokens} tokens, "
            f"{'set by' if self.spec.max_tokens else 'the default of'} the model spec) before it was complete"
        )

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        """Nothing to reset: the agent keeps no history between turns."""

    def _to_config(self) -> RoleAgentConfig:
        return RoleAgentConfig(
            name=self.name,
            role=self.role.name,
            description=self.role.description,
            system_prompt=self.role.system_prompt,
            persona=self.role.persona,
            output_type=self.role.output_type_path,
            model=self.spec,
            model_client=None if self.spec else self.model_client.dump_component(),
            max_parse_retries=self.max_parse_retries,
        )

    @classmethod
    def _from_config(cls, config: RoleAgentConfig) -> Self:
        output = import_output_type(config.output_type) if config.output_type else None
        role = Role(config.role, config.description, config.system_prompt, output, persona=config.persona)
        model: Any = config.model or ChatCompletionClient.load_component(config.model_client)  # type: ignore[arg-type]
        return cls(role, model, name=config.name, max_parse_retries=config.max_parse_retries)


def _checked_role(role: object) -> Role:
    """A Role, or the role a known name names; anything else is refused in one line."""
    if isinstance(role, Role):
        return role
    if isinstance(role, str):
        return role_named(checked_text(role, "RoleAgent", "role"))
    raise argument_error(
        "RoleAgent",
        "role (the first argument)",
        "a moot Role or a known role's name, e.g. role('critic') or 'critic'",
        role,
    )


def _checked_model(model: object) -> ModelSpec | Script | ChatCompletionClient:
    """What the agent runs on, a spec string read as a ModelSpec; anything else is refused in one line."""
    if isinstance(model, str):
        return ModelSpec.parse(model)
    if isinstance(model, ModelSpec | Script | ChatCompletionClient):
        return model
    valid = (
        "a ModelSpec, a spec string such as 'local' or 'scripted:deterministic', a ScriptedModel "
        "or an AutoGen ChatCompletionClient"
    )
    raise argument_error("RoleAgent", "model (the second argument)", valid, model)


def _connect(
    model: ModelSpec | Script | ChatCompletionClient, agent: str
) -> tuple[ModelSpec | None, ChatCompletionClient]:
    """The spec a run records for ``model`` (none for a ready client) and the client ``agent`` calls."""
    if isinstance(model, Script):
        return model.spec, model.client(agent)
    if isinstance(model, ModelSpec):
        return model, model.client(agent)
    return None, model


def _one_line(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:4]:
        where = ".".join(str(p) for p in err["loc"]) or "reply"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _feedback(error: str) -> UserMessage:
    text = f"Your reply was not valid: {error}. Reply again with one corrected JSON object only."
    return UserMessage(content=text, source="moot")
