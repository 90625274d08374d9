"""Any OpenAI-compatible endpoint: OpenAI itself, vLLM, Ollama, a llama.cpp server."""

from __future__ import annotations

import os

from autogen_core.models import ChatCompletionClient, ModelFamily, ModelInfo
from autogen_ext.models.openai import OpenAIChatCompletionClient

from moot.errors import ConfigError, ModelUnavailableError
from moot.models._served import ServedClient
from moot.models._spec import ModelSpec

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# Served models unknown to AutoGen: no tools assumed; AutoGen's own structured output (which parses the reply
# itself) stays off, and moot sends the reply schema as response_format instead (see _served.py).
_SERVED_MODEL_INFO = ModelInfo(
    vision=False,
    function_calling=False,
    json_output=True,
    family=ModelFamily.UNKNOWN,
    structured_output=False,
)


def api_key(spec: ModelSpec) -> str:
    """Read the key from the env var the spec names.

    A self-hosted endpoint (``base_url`` set, no ``api_key_env``) needs no key;
    OpenAI itself, or an explicitly named variable, does.
    """
    if spec.base_url is not None and spec.api_key_env is None:
        return os.environ.get(DEFAULT_KEY_ENV) or "not-needed"
    name = spec.api_key_env or DEFAULT_KEY_ENV
    value = os.environ.get(name)
    if not value:
        raise ModelUnavailableError(
            f"model {spec} needs an API key in ${name}, which is not set; "
            "set it, or name another variable with ?api_key_env=VAR"
        )
    return value


def check_openai(spec: ModelSpec) -> str:
    """Refuse a spec without a model name, with a response_format but no server, or without its key; return the
    key."""
    _check_form(spec)
    return api_key(spec)


def _check_form(spec: ModelSpec) -> None:
    """Refuse a spec without a model name, or with a response_format but no server."""
    if spec.model is None:
        raise ConfigError(f"model spec {spec} names no model; use e.g. openai:gpt-4o-mini")
    if spec.response_format is not None and spec.base_url is None:
        raise ConfigError(
            f"model spec {spec}: response_format is for a served model (add ?base_url=http://HOST:PORT/v1); "
            "OpenAI itself is sent the reply schema by AutoGen's structured output"
        )


def openai_client(spec: ModelSpec) -> ChatCompletionClient:
    """Build the client with per-call sampling settings baked into its create args.

    ``max_retries=0``: the SDK must not retry on its own, so that failures are
    not multiplied under moot's own retry policy. A served model (``base_url``)
    is sent each reply's schema (:class:`ServedClient`) unless its spec asks for
    plain JSON mode.
    """
    key = check_openai(spec)
    kwargs: dict[str, object] = {"max_tokens": spec.effective_max_tokens, "max_retries": 0}
    if spec.effective_timeout is not None:
        kwargs["timeout"] = spec.effective_timeout
    if spec.temperature is not None:
        kwargs["temperature"] = spec.temperature
    if spec.seed is not None:
        kwargs["seed"] = spec.seed
    client = _autogen_client(spec, key, **kwargs)
    return ServedClient(client, spec) if _sends_schema(spec) else client


def openai_model_info(spec: ModelSpec) -> ModelInfo:
    """What :func:`openai_client` would report as ``model_info``, with no key and no connection: AutoGen's
    table for a model of OpenAI's, or what a served model is assumed to do."""
    _check_form(spec)
    if spec.base_url is None:
        return _autogen_client(spec, "unused: this client makes no call").model_info
    return {**_SERVED_MODEL_INFO, "structured_output": True} if _sends_schema(spec) else _SERVED_MODEL_INFO


def _sends_schema(spec: ModelSpec) -> bool:
    """A served model is sent each reply's schema (:class:`ServedClient`) unless its spec asks for plain JSON."""
    return spec.base_url is not None and spec.response_format != "json_object"


def _autogen_client(spec: ModelSpec, key: str, **kwargs: object) -> OpenAIChatCompletionClient:
    """AutoGen's client (building it connects nowhere); an unknown model without a server is bad input."""
    if spec.base_url is not None:
        kwargs = {"base_url": spec.base_url, "model_info": _SERVED_MODEL_INFO, **kwargs}
    try:
        return OpenAIChatCompletionClient(model=spec.model, api_key=key, **kwargs)  # type: ignore[arg-type]
    except ValueError as exc:  # AutoGen: unknown model name without model_info
        raise ConfigError(
            f"model spec {spec}: {exc}; for a self-hosted model add ?base_url=http://HOST:PORT/v1"
        ) from None
