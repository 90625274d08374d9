"""A served model (vLLM, SGLang, Ollama, llama.cpp's server): its replies constrained to the schema, as embedded.

The embedded engine decodes a structured reply under a grammar built from the
reply's schema, so a reply that ends fits it (three key arguments at most, a
confidence in [0, 1]). A served model in plain JSON mode gets no such bound: the
same 0.5B model wrote four key arguments where three are allowed, three times
in a row, and the debate ended partial. Servers constrain decoding too, given
the schema as ``response_format``; :class:`ServedClient` sends it in the form the
spec names (``ModelSpec.response_format``).

Not every server takes OpenAI's ``json_schema`` form: llama-cpp-python's
``python -m llama_cpp.server`` answers it with a 500 (it takes the schema inside
JSON mode). When the spec names no form, a refusal of one is not an error: the
call is sent again in the next form (``json_object_schema``, then plain
``json_object``), one warning line says so, and the server's form is remembered
for the rest of the process, so later calls (every agent's) send it at once. A
form the spec names is kept: its refusal is one line naming the option that
changes it.

AutoGen's OpenAI client is given the ``response_format`` as a create argument,
its public way in: its own structured-output path would parse the reply itself
and raise on a malformed one, where moot feeds the error back to the model.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

import openai
from autogen_core.models import ChatCompletionClient, CreateResult, ModelInfo
from pydantic import BaseModel

from moot.errors import ConfigError
from moot.models._delegating import DelegatingClient
from moot.models._reply_schema import served_schema
from moot.models._request import Request, Stream
from moot.models._spec import ModelSpec, ResponseFormat

__all__ = ["DEFAULT_RESPONSE_FORMAT", "ServedClient", "forget_fallbacks", "response_format", "schema_refusal"]

_log = logging.getLogger(__name__)

DEFAULT_RESPONSE_FORMAT: ResponseFormat = "json_schema"
_NEXT_FORM: dict[ResponseFormat, ResponseFormat] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
}
"""The form sent after a server refused one, when the spec names none: the schema inside JSON mode, then JSON mode."""
_ORDER: tuple[ResponseFormat, ...] = ("json_schema", "json_object_schema", "json_object")
_FALLBACKS: dict[tuple[str, str], ResponseFormat] = {}
"""The form each server (base_url, model) took after refusing the default, for the rest of the process."""
_REFUSING_STATUSES = frozenset({400, 415, 422, 500, 501})
"""How servers answer a request field they do not take: 400 or 422 (validation), 415, 501; llama-cpp-python's
server wraps its validation error in a 500."""
_ABOUT_THE_SCHEMA = re.compile(r"response_format|schema|grammar", re.IGNORECASE)
_SERVER_TEXT = 300
"""Characters of the server's own message kept in the one-line error."""


def response_format(output: type[BaseModel], form: ResponseFormat) -> dict[str, Any]:
    """The ``response_format`` that asks a server to constrain a reply to ``output`` (``form``: see the spec)."""
    schema = served_schema(output)
    if form == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if form == "json_object":
        return {"type": "json_object"}
    name = re.sub(r"[^A-Za-z0-9_-]", "_", output.__name__)[:64]  # OpenAI's rule for a schema's name
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def forget_fallbacks() -> None:
    """Forget the forms servers were found to take (a new process starts with none; tests start afresh)."""
    _FALLBACKS.clear()


def schema_refusal(exc: BaseException, spec: ModelSpec, form: ResponseFormat | None = None) -> str | None:
    """For a server that refused the schema sent with a call: the one line saying so and which option to set.

    A refusal is an error status a server gives a field it does not take, with a message about the response
    format, the schema or the grammar built from it; any other failure (a context overflow, a 5xx of its own)
    is None, left to the retry layer and the run. ``form`` is the form that was sent (default: the spec's).
    """
    form = form or spec.response_format or DEFAULT_RESPONSE_FORMAT
    if form == "json_object" or not isinstance(exc, openai.APIStatusError):
        return None
    text = " ".join(str(exc).split())
    if exc.status_code not in _REFUSING_STATUSES or not _ABOUT_THE_SCHEMA.search(text):
        return None
    if len(text) > _SERVER_TEXT:
        text = text[:_SERVER_TEXT] + "..."
    fix = (
        "add &response_format=json_object_schema to the spec if the server takes the schema inside JSON mode "
        "(llama-cpp-python's server does), or &response_format=json_object for plain JSON mode"
        if form == "json_schema"
        else "add &response_format=json_object to the spec for plain JSON mode"
    )
    return f"model {spec} refused the reply schema sent as response_format {form} ({text}); {fix}"


class ServedClient(DelegatingClient):
    """AutoGen's OpenAI client for a served model, with every structured reply's schema sent to the server.

    It reports ``structured_output`` so agents ask for a schema (not bare JSON) and sends that schema as the
    spec's ``response_format``. A refused form is replaced by the next one when the spec names none (see the
    module docstring); a refusal of a form the spec names raises :class:`ConfigError` (bad input: one line,
    exit 2), instead of a fault the retry layer would repeat.
    """

    def __init__(self, inner: ChatCompletionClient, spec: ModelSpec) -> None:
        super().__init__(inner)
        self.spec = spec
        self.server = (spec.base_url or "", spec.model or "")
        self.fixed = spec.response_format is not None
        """The spec names the form: it is kept, and its refusal is an error."""
        self.form: ResponseFormat = spec.response_format or _FALLBACKS.get(self.server, DEFAULT_RESPONSE_FORMAT)
        self._formats: dict[type[BaseModel], dict[str, Any]] = {}

    @property
    def model_info(self) -> ModelInfo:
        return {**self.inner.model_info, "structured_output": True}

    def _rewritten(self, request: Request) -> Request:
        """A reply schema moves from ``json_output`` into ``response_format``; anything else passes unchanged."""
        output = request.json_output
        if not (isinstance(output, type) and issubclass(output, BaseModel)):
            return request
        self.form = self._current_form()
        key = (output, self.form)
        if key not in self._formats:
            self._formats[key] = response_format(output, self.form)
        extra = {**request.extra_create_args, "response_format": self._formats[key]}
        return replace(request, json_output=None, extra_create_args=extra)

    def _current_form(self) -> ResponseFormat:
        """The spec's form, else the one this server was last found to take (by any client of this process)."""
        return self.form if self.fixed else _FALLBACKS.get(self.server, self.form)

    async def _complete(self, request: Request) -> CreateResult:
        while True:
            sent = self._rewritten(request)
            try:
                return await sent.send(self.inner)
            except openai.APIStatusError as exc:
                self._fall_back_or_raise(exc, schema_sent=sent is not request)

    async def _stream(self, request: Request) -> Stream:
        started = False
        while True:
            sent = self._rewritten(request)
            stream = sent.stream(self.inner)
            try:
                async for chunk in stream:
                    started = True
                    yield chunk
                return
            except openai.APIStatusError as exc:
                if started:
                    raise
                self._fall_back_or_raise(exc, schema_sent=sent is not request)
            finally:
                await stream.aclose()

    def _fall_back_or_raise(self, exc: openai.APIStatusError, *, schema_sent: bool) -> None:
        """After an error status: return to send the call again in the next form, when the server refused the schema
        and the spec names no form; raise the one-line ConfigError for a refusal of a form the spec names; re-raise
        anything else unchanged."""
        form: ResponseFormat = self.form
        refused = schema_refusal(exc, self.spec, form) if schema_sent else None
        if refused is None:
            raise exc
        following = _NEXT_FORM.get(form)
        if self.fixed or following is None:
            raise ConfigError(refused) from None
        remembered = _FALLBACKS.get(self.server, DEFAULT_RESPONSE_FORMAT)
        if _ORDER.index(remembered) >= _ORDER.index(following):  # another client got further meanwhile
            following = remembered
        else:
            _FALLBACKS[self.server] = following
            _log.warning(
                "moot: warning: %s refused the reply schema as response_format %s (HTTP %s); sending it as %s from "
                "now on (add &response_format=%s to the spec to skip this)",
                self.spec, form, exc.status_code, following, following,
            )  # fmt: skip
        self.form = following
