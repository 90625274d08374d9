"""Turn a ModelSpec into an AutoGen ChatCompletionClient, one builder per provider."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.models._retry import RetryingClient

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient

    from moot.models._spec import ModelSpec


def build_client(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    """Dispatch on the provider; each provider module imports its heavy deps lazily.

    Real providers are wrapped in the one retry layer (:class:`RetryingClient`);
    scripted models are not, so a test's scripted exception reaches the team as is.
    """
    provider = spec.effective_provider
    if provider == "local":
        from moot.models._local import embedded_client

        return RetryingClient(embedded_client(spec), model=_label(spec), deadline=spec.effective_timeout)
    if provider == "openai":
        from moot.models._openai import openai_client

        return RetryingClient(openai_client(spec), model=_label(spec), deadline=spec.effective_timeout)
    from moot.testing import scripted_client

    return scripted_client(spec, agent)


def _label(spec: ModelSpec) -> str:
    """The spec as errors name it, provider spelled out (``local@0.7``, not ``@0.7``); never holds a secret."""
    return str(spec.model_copy(update={"provider": spec.effective_provider}))


def check_available(spec: ModelSpec) -> None:
    """Refuse (ModelUnavailableError / ConfigError) a spec that cannot be used here, cheaply: nothing is loaded,
    no weights are assembled and no connection is made, so a command can refuse before it writes anything."""
    provider = spec.effective_provider
    if provider == "local":
        from moot.models._local import check_local

        check_local(spec)
    elif provider == "openai":
        from moot.models._openai import check_openai

        check_openai(spec)
    else:
        from moot.testing import scripted_model

        scripted_model(spec)
