"""The built-in providers, added to the table ``_spec.py`` keeps (``_PROVIDERS``): ``local`` (the embedded model),
``openai`` (OpenAI and any compatible server), ``scripted`` (scripts by name) and ``component`` (any AutoGen
model client, by its component config: ``_component.py``).

Each provider's module is imported when a spec first builds or checks one of
its clients, so naming the ``local`` provider loads no engine.
"""

from __future__ import annotations

from autogen_core.models import ChatCompletionClient, ModelInfo

from moot.embedded import DEFAULT_MODEL, model_path, require_installed, shared_engine
from moot.errors import ConfigError, ModelUnavailableError
from moot.models._deterministic import BUILT_IN, DeterministicModel
from moot.models._scripted import Script, find_script, registered_scripts
from moot.models._spec import _PROVIDERS, ModelSpec, Provider

__all__ = ["scripted_model"]


def _local(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    _check_local(spec)
    from moot.models._embedded_client import EmbeddedClient

    return EmbeddedClient(shared_engine(model_path()), spec)


def _local_info(spec: ModelSpec) -> ModelInfo:
    from moot.models._embedded_client import EMBEDDED_MODEL_INFO

    return EMBEDDED_MODEL_INFO


def _check_local(spec: ModelSpec) -> None:
    """Refuse an unknown local model name or a missing ``[local]`` extra, without loading anything."""
    if spec.model not in (None, DEFAULT_MODEL):
        raise ModelUnavailableError(
            f"unknown local model {spec.model!r}; the embedded model is {DEFAULT_MODEL!r} (or omit the name)"
        )
    require_installed()


def _openai(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    from moot.models._openai import openai_client

    return openai_client(spec)


def _openai_info(spec: ModelSpec) -> ModelInfo:
    from moot.models._openai import openai_model_info

    return openai_model_info(spec)


def _check_openai(spec: ModelSpec) -> None:
    from moot.models._openai import check_openai

    check_openai(spec)


def _openai_endpoint(spec: ModelSpec) -> str:
    return f"openai:{spec.base_url or 'api.openai.com'}"


def _openai_credentials(spec: ModelSpec) -> str:
    from moot.models._openai import DEFAULT_KEY_ENV

    return f"the key in ${spec.api_key_env or DEFAULT_KEY_ENV}" + (
        "" if spec.api_key_env else " (or the spec's api_key_env)"
    )


def _component(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    from moot.models._component import component_client

    return component_client(spec, agent)


def _check_component(spec: ModelSpec) -> None:
    from moot.models._component import check_component

    check_component(spec)


def _component_info(spec: ModelSpec) -> ModelInfo:
    from moot.models._component import component_info

    return component_info(spec)


def _component_endpoint(spec: ModelSpec) -> str:
    from moot.models._component import component_endpoint

    return component_endpoint(spec)


def _component_credentials(spec: ModelSpec) -> str:
    from moot.models._component import component_credentials

    return component_credentials(spec)


def scripted_model(spec: ModelSpec) -> Script:
    """Resolve ``scripted:NAME``: a registered script, a script file ``NAME.json``, or the built-in
    ``deterministic`` (which a registered script of that name replaces)."""
    name = spec.model or "default"
    found = find_script(name)
    if found is not None:
        return found
    if name == BUILT_IN:
        return DeterministicModel()
    known = ", ".join(sorted({*registered_scripts(), BUILT_IN}))
    raise ConfigError(f"no scripted model named {name!r}; registered: {known} (or give a script file NAME.json)")


def _scripted(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    return scripted_model(spec).client(agent)


def _check_scripted(spec: ModelSpec) -> None:
    scripted_model(spec)


_PROVIDERS.add_builtin(
    "local", Provider(_local, _check_local, runs_here=True, info=_local_info, endpoint=lambda spec: "local")
)
_PROVIDERS.add_builtin(
    "openai",
    Provider(_openai, _check_openai, info=_openai_info, endpoint=_openai_endpoint, credentials=_openai_credentials),
)
_PROVIDERS.add_builtin(
    "scripted",
    Provider(
        _scripted, _check_scripted, retried=False, runs_here=True,
        endpoint=lambda spec: f"scripted:{spec.model or 'default'}",
    ),
)  # fmt: skip
_PROVIDERS.add_builtin(
    "component",
    Provider(
        _component, _check_component, info=_component_info, endpoint=_component_endpoint,
        credentials=_component_credentials,
    ),
)  # fmt: skip
