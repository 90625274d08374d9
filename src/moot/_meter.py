"""Meter: the one count of model calls and tokens, logical and billed, and what the billed ones cost.

* **logical** counts every call, failed attempts and cache hits included: the
  compute a run used.
* **billed** counts the calls that reached a model (cache misses), and
  ``cost_usd`` prices them at their spec's price. A billed call whose price is
  unknown is counted in ``unpriced_calls``, and the meter's ``cost`` is then
  None rather than a number that looks complete but is not.

A team keeps a turn's counts on its message (``metadata``, see
:func:`meter_metadata`), so the transcript, the run store and ``moot show``
all count from the same record; the compare harness meters at the client.

It sits below every package (``moot.models`` re-exports it) because an error
carries one too: :class:`~moot.errors.MalformedOutputError` holds what its
failed attempts spent.
"""

from __future__ import annotations

from collections.abc import Mapping

from autogen_core.models import RequestUsage
from pydantic import BaseModel, computed_field

__all__ = ["Meter", "TokenTotals", "meter_metadata", "metered"]


class TokenTotals:
    """Mixin: logical and billed token totals from the four prompt/completion counters a class defines."""

    prompt_tokens: int
    completion_tokens: int
    billed_prompt_tokens: int
    billed_completion_tokens: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def billed_tokens(self) -> int:
        return self.billed_prompt_tokens + self.billed_completion_tokens


class Meter(TokenTotals, BaseModel):
    """Calls, tokens and cost: logical = all calls, billed = calls that reached a model.

    The one token count of moot: a result's, a run's, a round's per agent (``moot show``), a compare
    row's. A pydantic model so every JSON document that holds one writes the same fields.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    billed_calls: int = 0
    billed_prompt_tokens: int = 0
    billed_completion_tokens: int = 0
    cost_usd: float = 0.0
    """What the priced billed calls cost, in US dollars."""
    unpriced_calls: int = 0
    """Billed calls whose model has no known price."""

    def add(self, usage: RequestUsage, *, billed: bool, cost: float | None = None) -> None:
        """Count one call on the logical side, or (``billed``) on the billed side at ``cost`` (None: unknown)."""
        if billed:
            self.billed_calls += 1
            self.billed_prompt_tokens += usage.prompt_tokens
            self.billed_completion_tokens += usage.completion_tokens
            if cost is None:
                self.unpriced_calls += 1
            else:
                self.cost_usd += cost
        else:
            self.calls += 1
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens

    @property
    def cost(self) -> float | None:
        """The billed calls' cost in USD; None when any of them has no known price."""
        return None if self.unpriced_calls else self.cost_usd

    def __add__(self, other: Meter) -> Meter:
        return Meter(**{name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields})

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        """Logical prompt plus completion tokens (``tokens``), written out in JSON documents."""
        return self.tokens


_KEYS = ("calls", "billed_calls", "billed_prompt_tokens", "billed_completion_tokens", "unpriced_calls")


def meter_metadata(meter: Meter) -> dict[str, str]:
    """A turn's counts beyond its ``models_usage`` (the logical tokens), as message metadata (strings)."""
    return {**{f"moot_{key}": str(getattr(meter, key)) for key in _KEYS}, "moot_cost_usd": repr(meter.cost_usd)}


def metered(usage: RequestUsage | Mapping[str, int] | None, metadata: Mapping[str, str]) -> Meter:
    """A message's meter from its usage and metadata. A message that carries no counts of its own (an agent
    that is not moot's) counts its usage as one billed call of unknown price."""
    if usage is None:
        return Meter()
    prompt, completion = (
        (usage.prompt_tokens, usage.completion_tokens)
        if isinstance(usage, RequestUsage)
        else (int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))
    )
    meter = Meter(calls=1, prompt_tokens=prompt, completion_tokens=completion)
    if "moot_calls" not in metadata:
        meter.add(RequestUsage(prompt_tokens=prompt, completion_tokens=completion), billed=True)
        return meter
    for key in _KEYS:
        setattr(meter, key, int(metadata[f"moot_{key}"]))
    meter.cost_usd = float(metadata.get("moot_cost_usd", "0"))
    return meter
