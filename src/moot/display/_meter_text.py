"""A run's meter as the terminal shows it: one line of calls, tokens and cost (``moot run``, ``moot show``)."""

from __future__ import annotations

from moot.models import Meter

__all__ = ["meter_line", "usd"]


def usd(cost: float | None) -> str:
    """A cost as shown: dollars to four significant digits, or ``?`` when a price is unknown."""
    return "?" if cost is None else f"${cost:.4g}"


def meter_line(meter: Meter) -> str:
    """A run's calls, tokens and cost in one line: logical (every call), billed (calls that reached a model)."""
    return (
        f"[bold]tokens:[/] {meter.tokens} logical in {meter.calls} calls (failed attempts included), "
        f"{meter.billed_tokens} billed in {meter.billed_calls}   [bold]cost:[/] {usd(meter.cost)}"
    )
