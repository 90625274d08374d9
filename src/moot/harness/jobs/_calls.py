"""Every model call of a comparison goes through here: a per-endpoint limit, a persistent cache, two meters
(:class:`moot.models.Meter`).

The stack for one agent in one row (outermost first)::

    logical meter -> ChatCompletionCache(CallStore for this exact spec) -> billed meter -> endpoint limit -> client

* The **logical** meter sees every call, cache hits included: the compute an
  arm used. The **billed** meter sees only calls that reached the model.
  Both are reported: a cache hit costs nothing, but the compute it stands for did happen.
* AutoGen's cache key covers the messages, the json_output schema and the
  create args but *not* the model or its sampling settings, so there is one
  store per full spec (provider, model, temperature, seed, max_tokens,
  base_url): a different seed can never replay another seed's sample.
* The store keeps JSON only, validated on every read (:mod:`moot.harness.jobs._call_store`): a cache folder
  from elsewhere is data, never code.
* Cache hits skip the endpoint limit: they take no endpoint capacity.
* Each store keeps the ``model_info`` its spec's client reported: a cache-only replay reports it instead of
  building a client to query (agents shape their requests, so the keys, by it). A spec naming an AutoGen client by
  its component config (``component:client.json``) is keyed by its label, ``component:Class#digest`` (the digest
  covers the whole config), so its replay neither builds the client nor imports its class.

This module is the harness's one seam to AutoGen's client types (only models,
roles, teams and conditions import ``autogen_*``, to keep that seam narrow); it belongs in ``moot.models``
once that package grows a caching layer of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol

from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage, ModelInfo, RequestUsage
from autogen_core.tools import Tool, ToolSchema

from moot.errors import MootError
from moot.harness.jobs._call_store import CallFile, CallStore
from moot.models import DelegatingClient, Meter, ModelSpec, Request, WholeReplyStream

__all__ = ["CacheMissError", "CacheOnly", "CallCache", "ClientFactory", "EndpointLimits", "endpoint_of", "spec_label"]

BaseClientFactory = Callable[[ModelSpec, str], ChatCompletionClient]


def spec_label(spec: ModelSpec) -> str:
    """The full spec as text, provider spelled out: the identity a cache store is keyed by."""
    return str(spec.model_copy(update={"provider": spec.effective_provider}))


def endpoint_of(spec: ModelSpec) -> str:
    """Which endpoint a spec's calls queue for (:attr:`ModelSpec.endpoint`): only the embedded model's calls share
    one queue; each server (a ``base_url``, a client component's service) and each scripted model has its own."""
    return spec.endpoint


class _Delegating(WholeReplyStream, DelegatingClient):
    """Passes everything to ``inner``, which may be shared (the embedded model is): its owner closes it."""

    def __init__(self, inner: ChatCompletionClient) -> None:
        super().__init__(inner, owns_inner=False)


class _Metered(_Delegating):
    def __init__(self, inner: ChatCompletionClient, meter: Meter, *, billed: ModelSpec | None) -> None:
        """``billed``: the spec whose price billed calls cost; None meters the logical side."""
        super().__init__(inner)
        self.meter, self.billed = meter, billed

    async def _complete(self, request: Request) -> CreateResult:
        result = await super()._complete(request)
        if self.billed is None:
            self.meter.add(result.usage, billed=False)
        else:
            cost = self.billed.cost(result.usage.prompt_tokens, result.usage.completion_tokens)
            self.meter.add(result.usage, billed=True, cost=cost)
        return result


class _Limited(_Delegating):
    def __init__(self, inner: ChatCompletionClient, limit: AbstractAsyncContextManager[Any]) -> None:
        super().__init__(inner)
        self.limit = limit

    async def _complete(self, request: Request) -> CreateResult:
        async with self.limit:
            return await super()._complete(request)


class CacheMissError(MootError):
    """A call of a cache-only comparison (``--cache-only``) that the cache could not answer: its row fails."""


class CacheOnly:
    """The base client factory of a cache-only comparison: clients that answer nothing, so every call must
    come from the cache, which sits above them; no weights are loaded and no endpoint is contacted.

    Each client reports the ``model_info`` the spec's real client would (:meth:`ModelSpec.client_info`):
    agents shape their requests by it, and so the cache keys. A class, not a closure, so Ray can send it.
    """

    def __call__(self, spec: ModelSpec, agent: str) -> ChatCompletionClient:
        return _Refusing(spec, agent)


class _Refusing(WholeReplyStream):
    def __init__(self, spec: ModelSpec, agent: str, info: ModelInfo | None = None) -> None:
        """``info``: the ``model_info`` kept in the cache with the calls; None asks the spec (``client_info``)."""
        self.spec, self.agent = spec, agent
        self.info = info if info is not None else spec.client_info()

    async def _complete(self, request: Request) -> CreateResult:
        raise CacheMissError(
            f"--cache-only: a call of {self.agent} ({spec_label(self.spec)}) is not in the cache; run without "
            "--cache-only to make it"
        )

    @property
    def model_info(self) -> ModelInfo:
        return self.info

    async def close(self) -> None:
        """Nothing was opened."""

    def actual_usage(self) -> RequestUsage:
        return RequestUsage(prompt_tokens=0, completion_tokens=0)

    def total_usage(self) -> RequestUsage:
        return RequestUsage(prompt_tokens=0, completion_tokens=0)

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        raise self._no_tokenizer()

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        raise self._no_tokenizer()

    def _no_tokenizer(self) -> CacheMissError:
        """Loud, not a guess: a made-up count could change what is sent, and so what the cache is asked."""
        return CacheMissError(f"--cache-only: {self.agent} asked to count tokens, which needs the model itself")


class EndpointLimits:
    """One semaphore per endpoint: at most ``per_endpoint`` calls in flight to each."""

    def __init__(self, per_endpoint: int) -> None:
        self.per_endpoint = per_endpoint
        self._limits: dict[str, asyncio.Semaphore] = {}

    def __call__(self, endpoint: str) -> asyncio.Semaphore:
        if endpoint not in self._limits:
            self._limits[endpoint] = asyncio.Semaphore(self.per_endpoint)
        return self._limits[endpoint]


class CallCache:
    """The persistent cache under one directory: one :class:`CallFile` (JSON in SQLite), a :class:`CallStore` in it
    per full model spec.

    Each spec's store is named ``<slug>-<digest>`` of its label; the sub-folder of that name an earlier moot wrote
    (one file per spec, or diskcache) is copied in on first open (:mod:`moot.harness.jobs._call_store`). The file is
    opened when a spec first asks for its store.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._file: CallFile | None = None

    def store(self, spec: ModelSpec) -> CallStore:
        return self.labelled(spec_label(spec))

    def labelled(self, label: str) -> CallStore:
        """The store for the spec whose :func:`spec_label` is ``label``."""
        if self._file is None:
            self._file = CallFile(self.directory)
        return self._file.store(store_folder(label))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def store_folder(label: str) -> str:
    """The folder name of a spec's store: readable, and unique by the label's digest."""
    slug = re.sub(r"[^A-Za-z0-9.@_-]+", "_", label)[:60]
    return f"{slug}-{hashlib.sha256(label.encode()).hexdigest()[:12]}"


Limits = Callable[[str], AbstractAsyncContextManager[Any]]
"""Endpoint -> the guard one call holds while in flight: a local semaphore, or a cluster-wide permit."""


class CacheStores(Protocol):
    def store(self, spec: ModelSpec) -> Any: ...


class ClientFactory:
    """Builds the metered, cached, limited client for one agent of one row (see the module docstring)."""

    def __init__(
        self,
        limits: Limits,
        cache: CacheStores | None,
        base: BaseClientFactory | None = None,
    ) -> None:
        self.limits = limits
        self.cache = cache
        self.base: BaseClientFactory = base or (lambda spec, agent: spec.client(agent))

    def client(self, spec: ModelSpec, agent: str, meter: Meter) -> ChatCompletionClient:
        from autogen_ext.models.cache import ChatCompletionCache

        store = self.cache.store(spec) if self.cache is not None else None
        inner: ChatCompletionClient = _Limited(self._base(spec, agent, store), self.limits(endpoint_of(spec)))
        inner = _Metered(inner, meter, billed=spec)
        if store is not None:
            inner = ChatCompletionCache(inner, store)
        return _Metered(inner, meter, billed=None)

    def _base(self, spec: ModelSpec, agent: str, store: Any) -> ChatCompletionClient:
        """The client calls reach: a cache-only one reports the ``model_info`` kept with the calls (so no client is
        built to learn it: a component's class is not even imported); a real one has its ``model_info`` kept."""
        kept = getattr(store, "model_info", None)
        if isinstance(self.base, CacheOnly) and callable(kept):
            return _Refusing(spec, agent, kept())
        client = self.base(spec, agent)
        keep = getattr(store, "keep_model_info", None)
        if callable(keep):
            keep(client.model_info)
        return client
