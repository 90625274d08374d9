"""ModelSpec: which model a role talks to, as one frozen, serialisable value; and the table of providers a spec
may name.

A spec is a *layer*: every field may be None, meaning "inherit". A debate keeps
one base spec and a small override per role (``base.resolve(override)``), so a
role's temperature or endpoint can differ without copying dicts around.

Spec -> client is one table from provider name to the :class:`Provider` that
builds its client; there is no if-chain to extend. The spec and the table define
each other (a spec may only name a registered provider, whose kind sets its
price and deadline; a provider builds its client from a spec), so both live
here. The built-in providers (``local``, ``openai``, ``scripted``, ``component``) are
registered by ``_providers.py``; a user (or a test) adds one with
:func:`register_provider`, after which ``NAME:MODEL`` parses like the built-ins.

Every way of making a spec refuses bad input in one line (:class:`ConfigError`) naming the field and what is
valid: the string form, a client component config, and the constructor itself (``ModelSpec(temperature=5)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Self
from urllib.parse import urlencode, urlsplit

from autogen_core import ComponentModel
from autogen_core.models import ChatCompletionClient, ModelInfo
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from moot._plugins import Registry
from moot.boundary import one_line
from moot.errors import ConfigError
from moot.models._component_text import (
    COMPONENT,
    COMPONENT_FORM,
    canonical_component,
    component_label,
    file_alias,
    split_component,
)
from moot.models._retry import Classify, RetryingClient, transient_kind
from moot.models._spec_text import QUERY_KEYS, RESPONSE_FORMATS, SPEC_FORM, ResponseFormat, parse_fields

__all__ = [
    "RESPONSE_FORMATS",
    "SPEC_FORM",
    "ClientBuilder",
    "ModelSpec",
    "Provider",
    "ResponseFormat",
    "build_client",
    "check_available",
    "provider_names",
    "register_provider",
    "unregister_provider",
]

NETWORK_TIMEOUT = 120.0
"""Seconds one call to a network model may take by default: a server that accepts and never answers costs at
most this times the retry attempts, not the SDK's ten minutes each."""
LOCAL_TEMPERATURE = 0.2
"""The embedded model's temperature when a spec sets none."""
# Fields that only make sense together with the provider that set them.
_ENDPOINT_FIELDS = ("model", "base_url", "api_key_env", "response_format", "component")
SpecInput = str | Mapping[str, Any] | ComponentModel
"""What :meth:`ModelSpec.parse` takes: the string form, or a client component config (mapping or ComponentModel)."""


class ModelSpec(BaseModel):
    """One model configuration: provider, model, sampling and endpoint.

    String form (see :data:`SPEC_FORM`)::

        local                     the embedded offline model
        local@0.7                 ... at temperature 0.7
        openai:gpt-4o-mini        OpenAI, key from $OPENAI_API_KEY
        openai:Qwen/Qwen2.5-7B-Instruct@0.2?base_url=http://127.0.0.1:8000/v1
                                  any OpenAI-compatible server (vLLM, Ollama, llama.cpp)
        @0.9                      an override that only changes the temperature
        scripted:NAME             a scripted model (``scripted:deterministic`` is built in)
        component:client.json     any AutoGen ChatCompletionClient, by the config its dump_component() writes
                                  (a .json or .yaml file, or inline: component:{"provider": ..., "config": ...})

    Providers are a table (:func:`register_provider` adds one; the built-ins are in ``models/_providers.py``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str | None = None
    """Where the model runs, a registered provider's name; None inherits (and means ``local`` at the bottom
    layer)."""
    model: str | None = Field(default=None, min_length=1)
    """Model name at the provider (``local`` has a built-in default)."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    seed: int | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    """Cap on completion tokens; a cap always applies (see ``effective_max_tokens``)."""
    timeout: float | None = Field(default=None, gt=0, le=3600)
    """Seconds one call may take before it is abandoned (and retried); see ``effective_timeout``."""
    base_url: str | None = None
    """OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``: an http(s) URL with a host."""
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """*Name* of the environment variable holding the API key; the key itself is never stored."""
    price_in: float | None = Field(default=None, ge=0)
    """USD per million prompt tokens (``?price_in=0.15``); the embedded and scripted models cost 0."""
    price_out: float | None = Field(default=None, ge=0)
    """USD per million completion tokens (``?price_out=0.60``)."""
    response_format: ResponseFormat | None = None
    """How a served model (``base_url``) is sent the schema a structured reply must fit, so the server
    constrains its decoding to it as the embedded engine does: ``json_schema`` (the default; OpenAI's form, which
    vLLM, SGLang, Ollama and llama.cpp's server take), ``json_object_schema`` (JSON mode with the schema beside
    it, the form llama-cpp-python's ``python -m llama_cpp.server`` takes) or ``json_object`` (plain JSON mode, no
    schema sent: for a server that refuses both; replies are still validated). Unset, a server that refuses
    ``json_schema`` is sent the next form instead, with one warning (see ``_served.py``)."""
    component: str | None = None
    """An AutoGen model client's component config (``client.dump_component()``: ``{"provider": "module.Class",
    "config": {...}}``) as canonical JSON text; given as a mapping, a ``ComponentModel`` or JSON text. Only the
    ``component`` provider has one, and builds its client from it (``ChatCompletionClient.load_component``)."""

    def __init__(self, text: SpecInput | None = None, /, **data: Any) -> None:
        """Validate as pydantic does, but refuse bad input in one line naming the field and what is valid.

        ``ModelSpec("openai:gpt-4o-mini@0.2")`` reads the string form (or a component config) as :meth:`parse` does.
        """
        if text is not None:
            if data:
                raise ConfigError("ModelSpec takes a spec string or fields by name, not both")
            data = ModelSpec.parse(text).model_dump(exclude_none=True)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _SpecProblem(_problem(exc)) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:  # type: ignore[override]
        """Pydantic's validation, refusing in the constructor's one line (not a ValidationError around it)."""
        with _one_line():
            return super().model_validate(obj, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Self:  # type: ignore[override]
        """Pydantic's validation of JSON text, refusing in the constructor's one line."""
        with _one_line():
            return super().model_validate_json(json_data, **kwargs)

    @model_validator(mode="before")
    @classmethod
    def _component_has_its_provider(cls, data: Any) -> Any:
        """A spec given a component config is a ``component`` spec without saying so."""
        if isinstance(data, dict) and data.get("component") is not None and data.get("provider") is None:
            return {**data, "provider": COMPONENT}
        return data

    @field_validator("component", mode="before")
    @classmethod
    def _is_a_component(cls, value: object) -> str | None:
        return None if value is None else canonical_component(value)

    @model_validator(mode="after")
    def _component_with_its_provider(self) -> ModelSpec:
        if (self.provider == COMPONENT) != (self.component is not None):
            if self.component is None:
                raise ValueError(f"the component provider needs the client's config: {COMPONENT_FORM}")
            raise ValueError(f"a client component config is for the component provider, not {self.provider!r}")
        if self.component is not None and self.model is not None:
            raise ValueError("a component spec takes no model name: the model is set in the client's config")
        return self

    @field_validator("provider")
    @classmethod
    def _is_registered(cls, value: str | None) -> str | None:
        if value is not None and value not in provider_names():
            raise ValueError(f"unknown provider {value!r}; valid providers: {', '.join(provider_names())}")
        return value

    @field_validator("base_url")
    @classmethod
    def _is_a_url(cls, value: str | None) -> str | None:
        """Refuse a base_url that is no URL at once: it would otherwise fail every call as a "connection fault"
        and be retried as one."""
        if value is not None:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"must be an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1, got {value!r}")
        return value

    # ----------------------------------------------------------------- layering
    def resolve(self, override: ModelSpec | SpecInput | None) -> ModelSpec:
        """Overlay the override's non-None fields on this spec (an override given as a string is parsed first).

        When the override switches provider, the endpoint fields (model,
        base_url, api_key_env) come from the override alone: a local model must
        not inherit an OpenAI model name.
        """
        if override is None:
            return self
        if not isinstance(override, ModelSpec):
            override = ModelSpec.parse(override)
        base = self.model_dump(exclude_none=True)
        if override.provider is not None and override.provider != self.effective_provider:
            for key in _ENDPOINT_FIELDS:
                base.pop(key, None)
        base.update(override.model_dump(exclude_none=True))
        return ModelSpec(**base)

    @property
    def effective_provider(self) -> str:
        return self.provider or "local"

    @property
    def effective_max_tokens(self) -> int:
        """The completion cap sent with every call: an uncapped local call runs to the context end."""
        return self.max_tokens or 1024

    @property
    def effective_temperature(self) -> float | None:
        """The temperature every call uses; None: the server's own default (a network spec that sets none) or
        none at all (a scripted model)."""
        if self.temperature is not None or self.effective_provider != "local":
            return self.temperature
        return LOCAL_TEMPERATURE

    def sampling(self) -> dict[str, object]:
        """The settings a call runs with, as a trace records them: model, temperature, seed, max_tokens."""
        return {
            "model": self.effective_provider + (f":{self.model}" if self.model else self._component_suffix),
            "temperature": self.effective_temperature,
            "seed": self.seed,
            "max_tokens": self.effective_max_tokens,
        }

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What a billed call with these tokens costs in USD; None when the price is unknown.

        A call costs what ``price_in``/``price_out`` say. Without them, a model that runs here (the
        embedded and scripted ones) costs nothing and any other provider's price is unknown; a scripted
        model given a price lets a budget be tried out for free.
        """
        if self.price_in is None and self.price_out is None:
            return 0.0 if self._runs_here else None
        price_in, price_out = self.price_in or 0.0, self.price_out or 0.0
        return (prompt_tokens * price_in + completion_tokens * price_out) / 1_000_000

    @property
    def effective_timeout(self) -> float | None:
        """The per-call deadline: ``timeout``, else :data:`NETWORK_TIMEOUT` for network models; an embedded call
        has none by default (it cannot hang on a server, and its length is bounded by ``max_tokens``)."""
        if self.timeout is not None:
            return self.timeout
        return None if self._runs_here else NETWORK_TIMEOUT

    @property
    def _runs_here(self) -> bool:
        return provider(self.effective_provider).runs_here

    @property
    def _component_suffix(self) -> str:
        return f":{component_label(self.component)}" if self.component is not None else ""

    @property
    def endpoint(self) -> str:
        """Which endpoint this spec's calls go to, as call queues know it: the embedded model is one, each server
        (a ``base_url``, a client component's service) another, each scripted model its own."""
        chosen = provider(self.effective_provider)
        if chosen.endpoint is not None:
            return chosen.endpoint(self)
        return f"{self.effective_provider}:{self.base_url or self.model or 'default'}"

    # ------------------------------------------------------------ string form
    @classmethod
    def parse(cls, text: SpecInput) -> ModelSpec:
        """Parse the compact string form, or take a client component config (a mapping, as a role file or scenario
        gives one inline, or a ``ComponentModel``); raise ConfigError naming what is valid."""
        if isinstance(text, Mapping | ComponentModel):
            return cls(component=canonical_component(text))
        if not isinstance(text, str):
            raise ConfigError(
                f"a model spec is a string ({SPEC_FORM}) or a client component mapping, not {type(text).__name__}"
            )
        try:
            return cls(**_fields(text))
        except _SpecProblem as exc:
            raise ConfigError(f"bad model spec {_quoted(text)}: {exc.problem}; form: {SPEC_FORM}") from None

    @classmethod
    def from_component(cls, client: ChatCompletionClient | SpecInput) -> ModelSpec:
        """The spec of an AutoGen model client (its ``dump_component()``) or of its component config: the client runs
        wrapped in moot's retries (and, in a comparison, its meters, cache and call queue)."""
        if isinstance(client, ChatCompletionClient):
            try:
                client = client.dump_component()
            except Exception as exc:  # AutoGen: a local class, or a client that cannot dump its config
                raise ConfigError(
                    f"{type(client).__name__} cannot be named by its component config ({one_line(str(exc), 200)}); "
                    "give moot the client itself (RoleAgent takes one) or a config it can load"
                ) from None
        if isinstance(client, str):
            return cls(component=client)
        return cls.parse(client)

    def __str__(self) -> str:
        head = self.provider or ""
        if self.model is not None:
            head += f":{self.model}"
        head += self._component_suffix
        if self.temperature is not None:
            head += "@" + repr(self.temperature).removesuffix(".0")  # shortest exact form; :g kept 6 digits
        query = {k: getattr(self, k) for k in QUERY_KEYS if k != "temperature" and getattr(self, k) is not None}
        return head + (f"?{urlencode(query, safe=':/')}" if query else "")

    # ----------------------------------------------------------------- clients
    def client(self, agent: str | None = None) -> ChatCompletionClient:
        """Build the AutoGen ChatCompletionClient for this spec.

        ``agent`` selects the agent's script for scripted models and is
        ignored by real providers.
        """
        return build_client(self, agent)

    def client_info(self) -> ModelInfo:
        """What this spec's client reports as ``model_info``, without loading weights or connecting anywhere
        (for providers that say; any other builds its client and asks it)."""
        return model_info_of(self)

    def check(self) -> None:
        """Refuse (ConfigError) a spec whose client cannot be built here, without building it: the extra is
        missing, the key is unset, the script is unknown. Loads nothing and connects nowhere."""
        check_available(self)


class _SpecProblem(ConfigError):
    """A spec's fields refused: ``bad model spec: PROBLEM``; :meth:`ModelSpec.parse` quotes the text it read too."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"bad model spec: {problem}")
        self.problem = problem


@contextmanager
def _one_line() -> Iterator[None]:
    """A ValidationError pydantic raised around the constructor's one-line refusal becomes that refusal again."""
    try:
        yield
    except ValidationError as exc:
        first = exc.errors()[0]
        inner = first.get("ctx", {}).get("error")
        raise (inner if isinstance(inner, ConfigError) else _SpecProblem(_problem(exc))) from None


def _fields(text: str) -> dict[str, Any]:
    """The fields of the string form; ``component:`` (or ``@`` before a file's name) is followed by a config (a file
    or inline JSON) first."""
    provider_name, sep, rest = text.strip().partition(":")
    aliased = file_alias(text)
    if aliased is not None:
        provider_name, sep, rest = COMPONENT, ":", aliased
    if provider_name != COMPONENT or not sep:
        try:
            return parse_fields(text, provider_names())
        except ConfigError as exc:
            if text.strip().lower().endswith((".json", ".yaml", ".yml")):
                raise ConfigError(
                    f"{exc}; a client component's config file is given as component:{text.strip()}"
                ) from None
            raise
    config, tail = split_component(text, rest)
    return {**parse_fields(COMPONENT + tail, provider_names()), "component": config}


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _problem(exc: ValidationError) -> str:
    """The first problem pydantic found, as ``field: what is wrong`` (one line; what is valid where it says)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "spec"
    message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())
    if first["type"] == "extra_forbidden":
        return f"unknown field {where!r}; valid fields: {', '.join(ModelSpec.model_fields)}"
    if first["type"] not in ("value_error", "assertion_error") and "input" in first:
        message += f", got {_short_repr(first['input'])}"
    return f"{where}: {message}" if first["loc"] else message


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- providers
ClientBuilder = Callable[[ModelSpec, str | None], ChatCompletionClient]
"""Build the client of one spec; the second argument names the agent (scripted models keep a script per agent)."""

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def _nothing_to_check(spec: ModelSpec) -> None:
    """A provider without a cheap availability check: its failures surface at the first call."""


@dataclass(frozen=True)
class Provider:
    """How one provider turns a spec into a client, and checks cheaply that it could."""

    build: ClientBuilder
    check: Callable[[ModelSpec], None] = _nothing_to_check
    retried: bool = True
    """Wrap the client in the one retry layer (:class:`RetryingClient`); scripted clients are not, so a test's
    scripted exception reaches the team as it is."""
    runs_here: bool = False
    """The model runs in this process (the embedded and scripted models): it costs nothing unless a spec names a
    price, and a call has no deadline unless a spec sets one. A provider that calls a server (every registered
    provider unless it says otherwise) has an unknown price and the network deadline by default."""
    info: Callable[[ModelSpec], ModelInfo] | None = None
    """What the spec's client reports as ``model_info``, found without loading or connecting anything; None
    builds the client and asks it. A replay from a call cache needs it: an agent asks a model that reports
    ``structured_output`` for a reply schema, and the schema is part of the cache key."""
    endpoint: Callable[[ModelSpec], str] | None = None
    """Which endpoint a spec's calls queue for (:attr:`ModelSpec.endpoint`); None: the provider and the spec's
    ``base_url`` (else its model)."""
    credentials: Callable[[ModelSpec], str] | None = None
    """Where the spec's client finds its key, as a refusal (401, 403) names it; None: the provider's own key."""
    transient: Classify = transient_kind
    """Which of the client's faults are worth retrying, and as what kind (``timeout``, ``connection``,
    ``rate_limit``, ``server_error``; None: not transient, raised at once). The default reads what every common
    SDK's exceptions carry (HTTP status, class names, network errors); a provider whose SDK says it otherwise
    gives its own rule, which may fall back on :func:`moot.models.transient_kind`."""


_PROVIDERS: Registry[Provider] = Registry(
    "provider", "moot.providers", lambda value: isinstance(value, Provider), "a moot.models.Provider"
)
"""The providers a spec may name: the built-ins (``_providers.py``), then installed plugins' (entry-point group
``moot.providers``, each a :class:`Provider`), then those registered from code."""


def register_provider(
    name: str,
    build: ClientBuilder,
    check: Callable[[ModelSpec], None] = _nothing_to_check,
    *,
    retried: bool = True,
    runs_here: bool = False,
    info: Callable[[ModelSpec], ModelInfo] | None = None,
    endpoint: Callable[[ModelSpec], str] | None = None,
    credentials: Callable[[ModelSpec], str] | None = None,
    transient: Classify = transient_kind,
) -> None:
    """Make ``NAME[:MODEL]`` specs build their clients with ``build``; a name registered again is replaced.

    ``check`` must refuse (ConfigError / ModelUnavailableError) a spec that cannot work here without loading
    or connecting anything, so commands refuse before they write.
    """
    if not _NAME.match(name):
        raise ConfigError(f"bad provider name {name!r}: lowercase letters, digits, '_' and '-', starting with a letter")
    _PROVIDERS.register(name, Provider(build, check, retried, runs_here, info, endpoint, credentials, transient))


def unregister_provider(name: str) -> None:
    _PROVIDERS.unregister(name)


def provider_names() -> tuple[str, ...]:
    """The providers a spec may name: built-ins first, then plugins', then those registered from code."""
    return tuple(_PROVIDERS.names())


def provider(name: str) -> Provider:
    found = _PROVIDERS.get(name)
    if found is None:
        raise ConfigError(f"unknown provider {name!r}; valid providers: {', '.join(_PROVIDERS.names())}")
    return found


def build_client(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    """The client for ``spec``, in the retry layer when its provider asks for it."""
    chosen = provider(spec.effective_provider)
    client = chosen.build(spec, agent)
    if not chosen.retried:
        return client
    where = chosen.credentials(spec) if chosen.credentials is not None else None
    return RetryingClient(
        client, model=_label(spec), deadline=spec.effective_timeout, credentials=where, transient=chosen.transient
    )


def model_info_of(spec: ModelSpec) -> ModelInfo:
    """What ``spec``'s client reports as ``model_info``, without building it where its provider can say."""
    chosen = provider(spec.effective_provider)
    return chosen.info(spec) if chosen.info is not None else chosen.build(spec, None).model_info


def check_available(spec: ModelSpec) -> None:
    """Refuse a spec that cannot be used here, cheaply (see :func:`register_provider`)."""
    provider(spec.effective_provider).check(spec)


def _label(spec: ModelSpec) -> str:
    """The spec as errors name it, provider spelled out (``local@0.7``, not ``@0.7``); never holds a secret."""
    return str(spec.model_copy(update={"provider": spec.effective_provider}))
