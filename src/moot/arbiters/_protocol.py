"""The Arbiter protocol: anything that turns the experts' positions into a Verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from moot._verdict import Verdict
from moot.roles import Position

__all__ = ["Arbiter"]


@runtime_checkable
class Arbiter(Protocol):
    """Implement this to plug a non-LLM judge (vote, test runner, fact table) into a Debate."""

    name: str

    async def rule(self, task: str, positions: Sequence[tuple[str, Position]]) -> Verdict: ...
