"""RetryingClient: the one layer that retries transient model faults.

Transient faults (timeouts, dropped connections, 429, 5xx) are retried with
bounded exponential backoff and full jitter, honouring the server's
Retry-After. Everything else (400, 401, 403, 404, a bug) propagates at once,
unchanged: retrying it would only repeat the failure. When the attempts run
out, :class:`moot.errors.TransientModelError` says what kept failing and how
often, chaining the last fault. The SDK's own retries stay off
(``max_retries=0``) so failures are never multiplied.

Any AutoGen client may sit inside (OpenAI's, Azure's, Anthropic's, Ollama's, a user's own), so a fault is
classified by what exceptions of every SDK carry rather than by one SDK's types: an HTTP status
(``status_code``, ``status``, ``code``, ``http_status``, or the same on its ``response``), else the names of its
classes (``RateLimitError``, ``APITimeoutError``, ``ServiceUnavailable``, ``InternalServerError``,
``OverloadedError``, ``DeadlineExceeded``, ...), else Python's own ``TimeoutError`` and network ``OSError`` errors.
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import math
import random as _random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Self

from autogen_core import CancellationToken, Component, ComponentModel
from autogen_core.models import ChatCompletionClient, CreateResult
from pydantic import BaseModel, ConfigDict, Field

from moot.errors import TransientModelError
from moot.models._delegating import DelegatingClient
from moot.models._request import Request, Stream

__all__ = [
    "Classify",
    "RetryPolicy",
    "RetryingClient",
    "RetryingClientConfig",
    "refusal",
    "retry_after",
    "status_of",
    "transient_kind",
]

Sleep = Callable[[float], Awaitable[None]]
Classify = Callable[[BaseException], str | None]
"""A fault -> the kind of transient fault it is (``timeout``, ``connection``, ``rate_limit``, ``server_error``),
or None for one that retrying cannot fix: :func:`transient_kind` is the generic one."""


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


_STATUS_NAMES = ("status_code", "status", "code", "http_status")
"""Where SDKs keep a fault's HTTP status: openai and anthropic ``status_code`` (and ``response.status_code``, as
httpx does), aiohttp ``status``, google's ``code``, ollama's ``ResponseError.status_code``."""
# Class names of transient faults across SDKs, compared without a trailing "Error"/"Exception", lowercased.
_KINDS_BY_NAME: Mapping[str, str] = {
    **dict.fromkeys(("ratelimit", "ratelimitexceeded", "toomanyrequests", "resourceexhausted", "throttling"),
                    "rate_limit"),
    **dict.fromkeys(("timeout", "apitimeout", "readtimeout", "connecttimeout", "writetimeout", "pooltimeout",
                     "deadlineexceeded", "requesttimeout", "servertimeout"), "timeout"),
    **dict.fromkeys(("connection", "apiconnection", "connect", "network", "remoteprotocol", "serverdisconnected",
                     "clientconnection", "clientconnector", "clientoserror", "protocol", "servicerequest",
                     "serviceresponse"), "connection"),
    **dict.fromkeys(("internalserver", "serviceunavailable", "overloaded", "badgateway", "gatewaytimeout", "server",
                     "apiserver", "internal", "unavailable"), "server_error"),
}  # fmt: skip
_NETWORK_ERRNOS = frozenset(
    getattr(errno, name) for name in (
        "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ETIMEDOUT", "EHOSTUNREACH", "EHOSTDOWN", "ENETUNREACH",
        "ENETDOWN", "ENETRESET", "EPIPE",
    ) if hasattr(errno, name)
)  # fmt: skip
_OUT_OF_CREDIT = "insufficient_quota"
"""A 429 that waiting cannot fix: the account is out of credit (OpenAI's error code; Azure's and others' too)."""


def status_of(exc: BaseException) -> int | None:
    """The HTTP status a fault carries, on itself or on its ``response``, whichever SDK raised it; None if none."""
    for holder in (exc, _attribute(exc, "response")):
        if holder is None:
            continue
        for name in _STATUS_NAMES:
            value = _attribute(holder, name)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                return value
    return None


def transient_kind(exc: BaseException) -> str | None:
    """``timeout``, ``connection``, ``rate_limit`` or ``server_error`` for a transient fault; None otherwise.

    A status decides when there is one (429, 408 and 5xx are transient, any other is not, whatever the class is
    called); else the class names (see the module docstring); else ``TimeoutError`` and network ``OSError`` errors.
    """
    if _out_of_credit(exc):
        return None
    status = status_of(exc)
    if status is not None:
        return _status_kind(status)
    for name in _class_names(exc):
        kind = _KINDS_BY_NAME.get(name)
        if kind is not None:
            return kind
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ConnectionError) or (isinstance(exc, OSError) and exc.errno in _NETWORK_ERRNOS):
        return "connection"
    return None


def _class_names(exc: BaseException) -> Iterator[str]:
    """The exception's class names, most derived first, without a trailing Error/Exception, lowercased; Python's
    own bases (Exception, OSError ...) are left to the isinstance checks."""
    for kind in type(exc).__mro__:
        if kind.__module__ == "builtins" and kind not in (TimeoutError, ConnectionError):
            continue
        name = kind.__name__.lower()
        for suffix in ("error", "exception"):
            name = name.removesuffix(suffix)
        yield name


def _out_of_credit(exc: BaseException) -> bool:
    if _attribute(exc, "code") == _OUT_OF_CREDIT:
        return True
    body = _attribute(exc, "body")
    error = body.get("error", body) if isinstance(body, Mapping) else None
    return isinstance(error, Mapping) and _OUT_OF_CREDIT in (error.get("code"), error.get("type"))


_REFUSALS = {401: "refused the API key (401 unauthorized)", 403: "refused access (403 forbidden)"}
_REFUSED_BY = "moot_refused_by"
"""The attribute the retry layer sets on a refused call's exception: (the model's label, where its key is)."""


def refusal(exc: BaseException) -> str | None:
    """For a provider that refused the credentials (401, 403): what it refused, for the one line the CLI prints.

    Not a transient fault and not a fault of the run's content: the key or its rights are wrong, so it is
    bad input, fixed by the user and never by retrying. The line names the model and where its key comes from
    when the retry layer saw the call (it marks the exception); a cause chained under another error counts too.
    """
    for fault in _chain(exc):
        status = status_of(fault)
        if status in _REFUSALS:
            model, where = getattr(fault, _REFUSED_BY, (None, None))
            who = f"model {model}" if model else "the provider"
            check = where or _KEY_OF_SDK.get(type(fault).__module__.partition(".")[0], _ANY_KEY)
            return f"{who} {_REFUSALS[status]}: {' '.join(str(fault).split())}; check {check}"
    return None


_KEY_OF_SDK = {
    "openai": "the key in $OPENAI_API_KEY (or the spec's api_key_env)",
    "anthropic": "the key in $ANTHROPIC_API_KEY",
}
"""Where an SDK reads its key, by the SDK whose exception it is: for a refusal the retry layer did not see."""
_ANY_KEY = "the provider's API key (the spec's api_key_env, or the key its client config sets)"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and the ones it was raised from or during, nearest first (a cycle is walked once)."""
    seen: set[int] = set()
    fault: BaseException | None = exc
    while fault is not None and id(fault) not in seen and len(seen) < 8:
        seen.add(id(fault))
        yield fault
        fault = fault.__cause__ or fault.__context__


def _status_kind(status: int) -> str | None:
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    return "server_error" if status >= 500 else None


def retry_after(exc: BaseException, now: float) -> float | None:
    """Seconds the server asked to wait (``Retry-After``: seconds or an HTTP date; ``retry-after-ms``), if any."""
    headers = _headers(exc)
    if headers is None:
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


def _headers(exc: BaseException) -> Mapping[str, str] | None:
    """The fault's response headers (on its ``response``, else on itself, as aiohttp keeps them), names lowercased;
    None when it has none."""
    for holder in (_attribute(exc, "response"), exc):
        headers = _attribute(holder, "headers")
        items = getattr(headers, "items", None)
        if callable(items):
            try:
                return {str(name).lower(): str(value) for name, value in items()}
            except Exception:  # not a header mapping after all
                return None
    return None


def _attribute(holder: object, name: str) -> Any:
    """``getattr(holder, name, None)``, None too when the attribute is a property that raises (httpx's do)."""
    try:
        return getattr(holder, name, None)
    except Exception:
        return None


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
    credentials: str | None = None


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
        credentials: str | None = None,
        transient: Classify | None = None,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self.model = model
        self.deadline = deadline
        """Seconds one attempt may take; past it the attempt is abandoned as a timeout (and retried)."""
        self.credentials = credentials
        """Where the model's key comes from (``$OPENAI_API_KEY``), as a refusal of it is told (:func:`refusal`)."""
        self.transient: Classify = transient or transient_kind
        """How a fault classifies: its provider's own rule (:attr:`moot.models.Provider.transient`), else the
        generic one."""
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
                kind = self.transient(exc)
                if kind is None:
                    self._mark(exc)
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
                        kind = self.transient(exc)
                        if kind is None:
                            self._mark(exc)
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

    def _mark(self, exc: Exception) -> None:
        """Tell a refusal of the key (401, 403) which model it was and where its key comes from, for the one line
        :func:`refusal` makes of it; the exception itself passes on unchanged."""
        if status_of(exc) in _REFUSALS and not hasattr(exc, _REFUSED_BY):
            try:
                setattr(exc, _REFUSED_BY, (self.label, self.credentials))
            except AttributeError:  # an exception type with __slots__: the line names the provider generically
                pass

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
            client=self.inner.dump_component(),
            policy=self.policy,
            model=self.model,
            deadline=self.deadline,
            credentials=self.credentials,
        )

    @classmethod
    def _from_config(cls, config: RetryingClientConfig) -> Self:
        client = ChatCompletionClient.load_component(config.client)
        return cls(client, config.policy, model=config.model, deadline=config.deadline, credentials=config.credentials)
