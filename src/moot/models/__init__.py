"""Model specs and the clients they build: the embedded model, OpenAI-compatible endpoints, scripted."""

from moot.models._meter import Meter
from moot.models._retry import RetryingClient, RetryPolicy
from moot.models._spec import PROVIDERS, SPEC_FORM, ModelSpec

__all__ = ["PROVIDERS", "SPEC_FORM", "Meter", "ModelSpec", "RetryPolicy", "RetryingClient"]
