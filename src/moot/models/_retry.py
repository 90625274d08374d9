"""RetryingClient: the one layer that retries transient model faults.

Transient faults (timeouts, dropped connections, 429, 5xx) are retried with
bounded exponential backoff and full jitter, honouring the server's
Retry-After. Everything else (400, 401, 403, 404, a bug) propagates at once,
unchanged: retrying it would only repeat the failure. When the attempts run
out, :class:`moot.errors.TransientModelError` says what kept failing and how
often, chaining the last fault. The SDK's own retries stay off
(``max_retries=0``) so failures are never multiplied.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random as _random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Self

import httpx
import openai
from autogen_core import CancellationToken, Component, ComponentModel
from autogen_core.models import ChatCompletionClient, CreateResult
from pydantic import BaseModel, ConfigDict, Field

from moot.errors import TransientModelError
from moot.models._delegating import DelegatingClient
from moot.models._request import Request, Stream

__all__ = ["RetryPolicy", "RetryingClient", "RetryingClientConfig", "refusal", "retry_after", "transient_kind"]

Sleep = Callable[[float], Awaitable[None]]


class RetryPolicy(BaseModel):
    """How hard to retry: at most ``max_attempts`` calls, waits drawn from ``[0, min(max_delay, base*2^k)]``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_attempts: int = Field(default=5, ge=1)
    """Calls in all, the first included; 1 turns retries off."""
    base_delay: float = Field(default=0.5, ge=0)
    """Upper bound of the first wait, in seconds; it doubles per retry."""
    max_delay: float = Field(default=30.0, ge=0)
    """Cap on any backoff wait."""
    max_retry_after: float = Field(default=60.0, ge=0)
    """Cap on a wait the server asked for with Retry-After."""

    def backoff(self, retry: int, draw: float) -> float:
        """The wait before retry number ``retry`` (1-based), for a uniform ``draw`` in [0, 1): full jitter."""
        return draw * min(self.max_delay, self.base_delay * 2 ** (retry - 1))


def transient_kind(exc: BaseException) -> str | None:
    """``timeout``, ``connection``, ``rate_limit`` or ``server_error`` for a transient fault; None otherwise."""
    if isinstance(exc, openai.APIStatusError) and exc.code == "insufficient_quota":
        return None  # a 429 that waiting cannot fix: the account is out of credit
    if isinstance(exc, openai.APIStatusError | httpx.HTTPStatusError):
        return _status_kind(exc.response.status_code)
    if isinstance(exc, TimeoutError | openai.APITimeoutError | httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, ConnectionError | openai.APIConnectionError | httpx.NetworkError | httpx.RemoteProtocolError):
        return "connection"
    return None


_REFUSALS = {401: "refused the API key (401 unauthorized)", 403: "refused access (403 forbidden)"}


def refusal(exc: BaseException) -> str | None:
    """For a provider that refused the credentials (401, 403): what it refused, for the one line the CLI prints.

    Not a transient fault and not a fault of the run's content: the key or its rights are wrong, so it is
    bad input, fixed by the user and never by retrying.
    """
    status = exc.response.status_code if isinstance(exc, openai.APIStatusError | httpx.HTTPStatusError) else None
    if status not in _REFUSALS:
        return None
    return f"the provider {_REFUSALS[status]}: {exc}; check the key in $OPENAI_API_KEY (or the spec's api_key_env)"


def _status_kind(status: int) -> str | None:
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    return "server_error" if status >= 500 else None


def retry_after(exc: BaseException, now: float) -> float | None:
    """Seconds the server asked to wait (``Retry-After``: seconds or an HTTP date; ``retry-after-ms``), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not isinstance(headers, httpx.Headers):
        return None
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def _seconds(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class RetryingClientConfig(BaseModel):
    client: ComponentModel
    policy: RetryPolicy = RetryPolicy()
    model: str | None = None
    deadline: float | None = None


class RetryingClient(DelegatingClient, Component[RetryingClientConfig]):
    """Wrap any ChatCompletionClient so transient faults are retried (see the module docstring).

    ``sleep``, ``random`` (a uniform draw in [0, 1)) and ``clock`` (for
    HTTP-date Retry-After) are knobs so tests run instantly and
    deterministically. The counters are public so a run can report them.
    """

    component_type = "model"
    component_config_schema = RetryingClientConfig
    component_provider_override = "moot.models.RetryingClient"

    def __init__(
        self,
        inner: ChatCompletionClient,
        policy: RetryPolicy | None = None,
        *,
        model: str | None = None,
        deadline: float | None = None,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self.model = model
        self.deadline = deadline
        """Seconds one attempt may take; past it the attempt is abandoned as a timeout (and retried)."""
        self._sleep, self._random, self._clock = sleep, random, clock
        self.attempts = 0
        """Calls made to the inner client."""
        self.retries = 0
        """Calls that repeated one that failed on a transient fault."""
        self.exhausted = 0
        """Calls given up on (each raised TransientModelError)."""
        self.faults: Counter[str] = Counter()
        """Transient faults seen, by kind."""
        self.slept = 0.0
        """Seconds spent waiting between attempts."""

    @property
    def label(self) -> str:
        """The model named in errors: the spec it was built from, else the inner client's type."""
        return self.model or type(self.inner).__name__

    # ------------------------------------------------------------------ calls
    async def _complete(self, request: Request) -> CreateResult:
        attempt = 0
        while True:
            attempt += 1
            self.attempts += 1
            try:
                # Not asyncio.wait_for: on Python 3.11 it drops a cancel that arrives as the reply completes
                # (a Ctrl-C would go unheard); asyncio.timeout runs the call in this task and loses none.
                async with asyncio.timeout(self.deadline):
                    return await request.send(self.inner)
            except Exception as exc:
                kind = transient_kind(exc)
                if kind is None:
                    raise
                await self._wait_or_give_up(exc, kind, attempt, request.cancellation_token)

    async def _stream(self, request: Request) -> Stream:
        """Retry a stream that failed before its first chunk; a stream already under way is never replayed."""
        attempt = 0
        while True:
            attempt += 1
            self.attempts += 1
            stream = request.stream(self.inner)
            started = False
            try:
                while True:
                    try:
                        chunk = await anext(stream)
                    except StopAsyncIteration:
                        return
                    except Exception as exc:
                        kind = transient_kind(exc)
                        if kind is None:
                            raise
                        if started:
                            self._count_fault(kind)
                            raise self._give_up(exc, kind, attempt, "after part of the reply was streamed") from exc
                        await self._wait_or_give_up(exc, kind, attempt, request.cancellation_token)
                        break
                    started = True
                    yield chunk
            finally:
                await stream.aclose()

    # ---------------------------------------------------------------- backoff
    async def _wait_or_give_up(self, exc: Exception, kind: str, attempt: int, token: CancellationToken | None) -> None:
        """After a transient fault: wait before the next attempt, or raise if none is left or the call was cancelled."""
        self._count_fault(kind)
        if attempt >= self.policy.max_attempts:
            raise self._give_up(exc, kind, attempt, None) from exc
        if token is not None and token.is_cancelled():
            raise asyncio.CancelledError(f"cancelled while retrying a {kind} fault of model {self.label}") from exc
        delay = self.delay(exc, attempt)
        self.slept += delay
        self.retries += 1
        await self._sleep(delay)

    def delay(self, exc: BaseException, retry: int) -> float:
        """The wait before retry number ``retry``: the server's Retry-After (capped), else jittered backoff."""
        asked = retry_after(exc, self._clock())
        if asked is not None:
            return min(asked, self.policy.max_retry_after)
        return self.policy.backoff(retry, self._random())

    def _count_fault(self, kind: str) -> None:
        self.faults[kind] += 1

    def _give_up(self, exc: Exception, kind: str, attempts: int, why: str | None) -> TransientModelError:
        self.exhausted += 1
        last = f"{type(exc).__name__}: {exc}" + (f" ({why}; a started stream is not retried)" if why else "")
        return TransientModelError(self.label, attempts, kind, last)

    # ----------------------------------------------------------------- config
    def _to_config(self) -> RetryingClientConfig:
        return RetryingClientConfig(
            client=self.inner.dump_component(), policy=self.policy, model=self.model, deadline=self.deadline
        )

    @classmethod
    def _from_config(cls, config: RetryingClientConfig) -> Self:
        client = ChatCompletionClient.load_component(config.client)
        return cls(client, config.policy, model=config.model, deadline=config.deadline)
