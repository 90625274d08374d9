"""Model specs and the clients they build: the embedded model, OpenAI-compatible endpoints, scripted.

The embedded model itself (weights, engine, llama.cpp) is :mod:`moot.embedded`;
here is only its client.

Every client answers one :class:`Request` (``_request.py``): AutoGen's
``create`` arguments are spelled there only, and a wrapper
(:class:`DelegatingClient`) passes a request on unchanged unless it means to
change it.

Spec -> client is one table of providers (``_spec.py``, the built-ins
registered by ``_providers.py``): ``register_provider`` adds a provider from code, and an installed package adds
one under the entry-point group ``moot.providers`` (docs/plugins.md).
Scripted models (``scripted:NAME``) are production code, for dry runs as much
as for tests; ``moot.testing`` re-exports them for tests. The ``Meter`` that
counts calls lives below every package (``moot._meter``) and is re-exported here.
"""

import moot.models._providers  # noqa: F401  (registers the built-in providers: local, openai, scripted, component)
from moot._meter import Meter, TokenTotals, meter_metadata, metered
from moot.models._delegating import DelegatingClient
from moot.models._deterministic import DeterministicModel
from moot.models._request import JsonOutput, Request, RequestClient, ToolChoice
from moot.models._retry import Classify, RetryingClient, RetryPolicy, refusal, transient_kind
from moot.models._scripted import (
    Script,
    ScriptedCall,
    ScriptedClient,
    ScriptedModel,
    ScriptedReply,
    count_words,
    register_script,
    registered_scripts,
    unregister_script,
)
from moot.models._spec import SPEC_FORM, ModelSpec, Provider, provider_names, register_provider, unregister_provider
from moot.models._whole_reply import WholeReplyStream

__all__ = [
    "SPEC_FORM",
    "Classify",
    "DelegatingClient",
    "DeterministicModel",
    "JsonOutput",
    "Meter",
    "ModelSpec",
    "Provider",
    "Request",
    "RequestClient",
    "RetryPolicy",
    "RetryingClient",
    "Script",
    "ScriptedCall",
    "ScriptedClient",
    "ScriptedModel",
    "ScriptedReply",
    "TokenTotals",
    "ToolChoice",
    "WholeReplyStream",
    "count_words",
    "meter_metadata",
    "metered",
    "provider_names",
    "refusal",
    "register_provider",
    "register_script",
    "registered_scripts",
    "transient_kind",
    "unregister_provider",
    "unregister_script",
]
