"""A served model (vLLM, SGLang, Ollama, llama.cpp's server): its replies constrained to the schema, as embedded.

The embedded engine decodes a structured reply under a grammar built from the
reply's schema, so a reply that ends fits it (three key arguments at most, a
confidence in [0, 1]). A served model in plain JSON mode gets no such bound: the
same 0.5B model wrote four key arguments where three are allowed, three times
in a row, and the debate ended partial. Servers constrain decoding too, given
the schema as ``response_format``; :class:`ServedClient` sends it in the form the
spec names (``ModelSpec.response_format``) and turns a server's refusal of that
form into one line naming the option that changes it.

AutoGen's OpenAI client is given the ``response_format`` as a create argument,
its public way in: its own structured-output path would parse the reply itself
and raise on a malformed one, where moot feeds the error back to the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
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

__all__ = ["DEFAULT_RESPONSE_FORMAT", "ServedClient", "response_format", "schema_refusal"]

DEFAULT_RESPONSE_FORMAT: ResponseFormat = "json_schema"
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


def schema_refusal(exc: BaseException, spec: ModelSpec) -> str | None:
    """For a server that refused the schema sent with a call: the one line saying so and which option to set.

    A refusal is an error status a server gives a field it does not take, with a message about the response
    format, the schema or the grammar built from it; any other failure (a context overflow, a 5xx of its own)
    is None, left to the retry layer and the run.
    """
    form = spec.response_format or DEFAULT_RESPONSE_FORMAT
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

    It reports ``structured_output`` so agents ask for a schema (not bare JSON), sends that schema as the
    spec's ``response_format``, and raises :class:`ConfigError` (bad input: one line, exit 2) when the server
    refuses it, instead of a fault the retry layer would repeat.
    """

    def __init__(self, inner: ChatCompletionClient, spec: ModelSpec) -> None:
        super().__init__(inner)
        self.spec = spec
        self.form: ResponseFormat = spec.response_format or DEFAULT_RESPONSE_FORMAT
        self._formats: dict[type[BaseModel], dict[str, Any]] = {}

    @property
    def model_info(self) -> ModelInfo:
        return {**self.inner.model_info, "structured_output": True}

    def _rewritten(self, request: Request) -> Request:
        """A reply schema moves from ``json_output`` into ``response_format``; anything else passes unchanged."""
        output = request.json_output
        if not (isinstance(output, type) and issubclass(output, BaseModel)):
            return request
        if output not in self._formats:
            self._formats[output] = response_format(output, self.form)
        extra = {**request.extra_create_args, "response_format": self._formats[output]}
        return replace(request, json_output=None, extra_create_args=extra)

    async def _complete(self, request: Request) -> CreateResult:
        request = self._rewritten(request)
        with self._refusals():
            return await request.send(self.inner)

    async def _stream(self, request: Request) -> Stream:
        stream = self._rewritten(request).stream(self.inner)
        try:
            with self._refusals():
                async for chunk in stream:
                    yield chunk
        finally:
            await stream.aclose()

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        """A server's refusal of the schema becomes the one-line ConfigError; any other error passes unchanged."""
        try:
            yield
        except openai.APIStatusError as exc:
            refused = schema_refusal(exc, self.spec)
            if refused is None:
                raise
            raise ConfigError(refused) from None
