"""Turn a ModelSpec into an AutoGen ChatCompletionClient, one builder per provider."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient

    from moot.models._spec import ModelSpec


def build_client(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
    """Dispatch on the provider; each provider module imports its heavy deps lazily."""
    provider = spec.effective_provider
    if provider == "local":
        from moot.models._local import embedded_client

        return embedded_client(spec)
    if provider == "openai":
        from moot.models._openai import openai_client

        return openai_client(spec)
    from moot.testing import scripted_client

    return scripted_client(spec, agent)
