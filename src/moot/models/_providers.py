"""Spec -> client: one table from provider name to the factory that builds its client.

Every ``ModelSpec.client()`` and ``ModelSpec.check()`` goes through
:func:`build_client` / :func:`check_available`, which look the provider up
here; there is no if-chain to extend. A user (or a test) adds a provider with
:func:`register_provider`, after which ``NAME:MODEL`` parses as a spec like the
built-in ``local``, ``openai`` and ``scripted``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from moot.embedded import DEFAULT_MODEL, model_path, require_installed, shared_engine
from moot.errors import ConfigError, ModelUnavailableError
from moot.models._deterministic import BUILT_IN, DeterministicModel
from moot.models._retry import RetryingClient
from moot.models._scripted import Script, find_script, registered_scripts

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient

    from moot.models._spec import ModelSpec

__all__ = [
    "ClientBuilder",
    "Provider",
    "build_client",
    "check_available",
    "provider_names",
    "register_provider",
    "unregister_provider",
]

ClientBuilder = Callable[["ModelSpec", "str | None"], "ChatCompletionClient"]
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


_PROVIDERS: dict[str, Provider] = {}


def register_provider(
    name: str,
    build: ClientBuilder,
    check: Callable[[ModelSpec], None] = _nothing_to_check,
    *,
    retried: bool = True,
    runs_here: bool = False,
) -> None:
    """Make ``NAME[:MODEL]`` specs build their clients with ``build``; a name registered again is replaced.

    ``check`` must refuse (ConfigError / ModelUnavailableError) a spec that cannot work here without loading
    or connecting anything, so commands refuse before they write.
    """
    if not _NAME.match(name):
        raise ConfigError(f"bad provider name {name!r}: lowercase letters, digits, '_' and '-', starting with a letter")
    _PROVIDERS[name] = Provider(build, check, retried, runs_here)


def unregister_provider(name: str) -> None:
    _PROVIDERS.pop(name, None)


def provider_names() -> tuple[str, ...]:
    """The providers a spec may name, in registration order (built-ins first)."""
    return tuple(_PROVIDERS)


def provider(name: str) -> Provider:
    found = _PROVIDERS.get(name)
    if found is None:
        raise ConfigError(f"unknown provider {name!r}; valid providers: {', '.join(_PROVIDERS)}")
    return found


def build_client(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    """The client for ``spec``, in the retry layer when its provider asks for it."""
    chosen = provider(spec.effective_provider)
    client = chosen.build(spec, agent)
    if not chosen.retried:
        return client
    return RetryingClient(client, model=_label(spec), deadline=spec.effective_timeout)


def check_available(spec: ModelSpec) -> None:
    """Refuse a spec that cannot be used here, cheaply (see :func:`register_provider`)."""
    provider(spec.effective_provider).check(spec)


def _label(spec: ModelSpec) -> str:
    """The spec as errors name it, provider spelled out (``local@0.7``, not ``@0.7``); never holds a secret."""
    return str(spec.model_copy(update={"provider": spec.effective_provider}))


# ------------------------------------------------------------------ built-ins
def _local(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    _check_local(spec)
    from moot.models._embedded_client import EmbeddedClient

    return EmbeddedClient(shared_engine(model_path()), spec)


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


def _check_openai(spec: ModelSpec) -> None:
    from moot.models._openai import check_openai

    check_openai(spec)


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


register_provider("local", _local, _check_local, runs_here=True)
register_provider("openai", _openai, _check_openai)
register_provider("scripted", _scripted, _check_scripted, retried=False, runs_here=True)
