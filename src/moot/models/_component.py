"""The ``component`` provider: any AutoGen ``ChatCompletionClient``, built from the component config a spec holds.

Loading a component imports the module its ``provider`` names, which runs that module's code; so a client is
built (or its class checked) only from a spec the user named: a ``--model`` option, a role file, a scenario, a
team preset's models, Python code. Nothing stored by a run or a comparison is ever turned back into a spec:
runs and results record a component by its label (``component:Class#digest``), which cannot be loaded, and a
cache-only replay reports the ``model_info`` its cache kept instead of building its client (failing that, the
config's own: see :func:`component_info`).

The class is checked before anything is built: it imports, it is an AutoGen ``Component`` and a
``ChatCompletionClient``, and the config validates against its config schema; each failure is one line. The spec's
sampling layers (``@0.9`` in a role file, a sample's seed) go into the config's fields of the same name when the
client's config has them (AutoGen's OpenAI, Azure and Anthropic clients do); the SDK's own retries are turned off
(``max_retries: 0``) when the config has that field and does not set it, since moot's retry layer wraps the client.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from autogen_core import ComponentModel, is_component_class
from autogen_core.models import ChatCompletionClient, ModelInfo
from pydantic import BaseModel, TypeAdapter, ValidationError

from moot.boundary import one_line
from moot.errors import ConfigError
from moot.models._component_text import component_data, component_label
from moot.models._spec import ModelSpec

__all__ = [
    "check_component",
    "component_class",
    "component_client",
    "component_credentials",
    "component_endpoint",
    "component_info",
]

_log = logging.getLogger(__name__)

_SAMPLING = ("temperature", "seed", "max_tokens")
_URL_FIELDS = ("base_url", "azure_endpoint", "endpoint", "host")
"""Config fields that name the server a client calls (OpenAI and compatibles, Azure, Azure AI, Ollama)."""
_KEY_ENV = {
    "OpenAIChatCompletionClient": "$OPENAI_API_KEY",
    "AzureOpenAIChatCompletionClient": "$AZURE_OPENAI_API_KEY (or the config's azure_ad_token_provider)",
    "AnthropicChatCompletionClient": "$ANTHROPIC_API_KEY",
    "AzureAIChatCompletionClient": "the config's credential",
}
"""Where the SDKs behind autogen-ext's clients read a key the config does not set."""
_WELL_KNOWN = {
    "azure_openai_chat_completion_client": "autogen_ext.models.openai.AzureOpenAIChatCompletionClient",
    "AzureOpenAIChatCompletionClient": "autogen_ext.models.openai.AzureOpenAIChatCompletionClient",
    "openai_chat_completion_client": "autogen_ext.models.openai.OpenAIChatCompletionClient",
    "OpenAIChatCompletionClient": "autogen_ext.models.openai.OpenAIChatCompletionClient",
    "OllamaChatCompletionClient": "autogen_ext.models.ollama.OllamaChatCompletionClient",
}
"""The short provider names AutoGen's ``load_component`` takes (its ``WELL_KNOWN_PROVIDERS``), so a config that uses
one names the same class here."""
_MODEL_INFO = TypeAdapter(ModelInfo)
_warned: set[tuple[str, str]] = set()


def _config_of(spec: ModelSpec) -> dict[str, Any]:
    if spec.component is None:
        raise ConfigError(f"model spec {spec} holds no client component config")
    return component_data(spec.component)


def _named(spec: ModelSpec) -> str:
    """The component as an error names it: its label, and the class its config names."""
    assert spec.component is not None
    return f"client component {component_label(spec.component)} ({_config_of(spec)['provider']})"


def component_class(spec: ModelSpec) -> type[ChatCompletionClient]:
    """The client class the spec's config names, imported and checked; ConfigError (one line) when it is not one."""
    provider = str(_config_of(spec)["provider"])
    path = _WELL_KNOWN.get(provider, provider)
    module_name, _, class_name = path.rpartition(".")
    if not module_name:
        known = ", ".join(sorted(_WELL_KNOWN))
        raise ConfigError(f"{_named(spec)}: provider must be module.Class, or one of AutoGen's short names ({known})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{_named(spec)}: cannot import {module_name} ({exc}); {_install_hint(module_name)}"
        ) from None
    except Exception as exc:  # the module's own code failed while it was imported
        raise ConfigError(
            f"{_named(spec)}: importing {module_name} raised {type(exc).__name__}: {_short(exc)}"
        ) from None
    found = getattr(module, class_name, None)
    if found is None:
        raise ConfigError(f"{_named(spec)}: module {module_name} has no {class_name}")
    if not (isinstance(found, type) and issubclass(found, ChatCompletionClient)):
        what = (
            "a class, but no ChatCompletionClient subclass"
            if isinstance(found, type)
            else (f"a {type(found).__name__}, not a class")
        )
        raise ConfigError(f"{_named(spec)}: {path} is not an AutoGen model client: it is {what}")
    if not is_component_class(found):
        raise ConfigError(
            f"{_named(spec)}: {path} is a ChatCompletionClient but not an AutoGen Component (it has no "
            "component_config_schema and _from_config), so it cannot be built from a config; pass the client itself"
        )
    return found


def _configured(spec: ModelSpec, kind: type[ChatCompletionClient]) -> dict[str, Any]:
    """The config the client is built from: the spec's sampling layers in the config's fields of the same name, the
    SDK's retries off, the spec's deadline as the SDK's timeout (each only where the config schema has the field)."""
    config = dict(_config_of(spec)["config"])
    schema: type[BaseModel] = kind.component_config_schema  # type: ignore[attr-defined]
    fields = schema.model_fields
    for name in _SAMPLING:
        value = getattr(spec, name)
        if value is None:
            continue
        if name in fields:
            config[name] = value
        elif (kind.__name__, name) not in _warned:
            _warned.add((kind.__name__, name))
            _log.warning(
                "moot: warning: %s has no %s setting; the spec's %s=%s is not applied (set it in the client's config)",
                kind.__name__, name, name, value,
            )  # fmt: skip
    if "max_retries" in fields and "max_retries" not in config:
        config["max_retries"] = 0
    if "timeout" in fields and "timeout" not in config and spec.effective_timeout is not None:
        config["timeout"] = spec.effective_timeout
    try:
        schema.model_validate(config)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "config"
        message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())
        valid = f"; valid fields: {', '.join(fields)}" if first["type"] in ("extra_forbidden", "missing") else ""
        raise ConfigError(f"{_named(spec)}: config.{where}: {message}{valid}") from None
    return config


def check_component(spec: ModelSpec) -> None:
    """Refuse a component that cannot be built, without building it: the class and its config are checked."""
    _configured(spec, component_class(spec))


def component_client(spec: ModelSpec, agent: str | None = None) -> ChatCompletionClient:
    """The client the spec's config describes (the retry layer wraps it: see ``build_client``)."""
    kind = component_class(spec)
    data = _config_of(spec)
    model = ComponentModel.model_validate({**data, "provider": f"{kind.__module__}.{kind.__qualname__}"})
    model.config = _configured(spec, kind)
    try:
        return ChatCompletionClient.load_component(model, expected=kind)
    except Exception as exc:  # the client's own constructor refused its settings (a missing key, a bad value)
        raise ConfigError(f"{_named(spec)} could not be built: {type(exc).__name__}: {_short(exc)}") from None


def component_info(spec: ModelSpec) -> ModelInfo:
    """What the client reports as ``model_info``: the config's own ``model_info`` when it has one (nothing is imported
    or built: a cache-only replay stays a replay), else the built client's."""
    given = _config_of(spec)["config"].get("model_info")
    if isinstance(given, dict):
        try:
            return _MODEL_INFO.validate_python(given)
        except ValidationError:
            pass  # the class's own validation, at build, names what is wrong
    return component_client(spec).model_info


def component_endpoint(spec: ModelSpec) -> str:
    """The endpoint a component's calls queue for: the server its config names, else its class (one service)."""
    data = _config_of(spec)
    config = data["config"]
    server = next((str(config[name]) for name in _URL_FIELDS if isinstance(config.get(name), str)), None)
    return f"component:{server or _WELL_KNOWN.get(data['provider'], data['provider'])}"


def component_credentials(spec: ModelSpec) -> str:
    """Where the component's client finds its key, for the one line a refusal of it prints."""
    data = _config_of(spec)
    if "api_key" in data["config"]:
        return f"the api_key in the config of {component_label(spec.component or '')}"
    name = str(data["provider"]).rpartition(".")[2]
    return _KEY_ENV.get(name, f"the key {name} reads (its config's credentials or its SDK's environment variable)")


def _install_hint(module_name: str) -> str:
    """What to install for a module that does not import: autogen-ext's clients each need an extra."""
    parts = module_name.split(".")
    if parts[:2] == ["autogen_ext", "models"] and len(parts) > 2:
        return f"install its extra: pip install 'autogen-ext[{parts[2].replace('_', '-')}]'"
    return f"is the package that provides {module_name} installed?"


def _short(exc: BaseException) -> str:
    return one_line(str(exc), 200)
