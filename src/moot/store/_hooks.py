"""Lifecycle hooks a team calls as it runs: the seam between teams and the run store or tracing.

Subclass :class:`TeamHooks` and override what you need; every method is a
no-op by default. Hooks see moot's own records (message dumps, state dicts),
so a hook never needs to know AutoGen's types. The module imports only the
store's RunStatus; it lives with the run store, whose RunRecorder implements
it, so the store never loads a team (``moot.teams`` re-exports both names).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from moot.store._status import RunStatus

__all__ = ["RunInfo", "TeamHooks"]


@dataclass
class RunInfo:
    """What a run was started from, kept with it so it can be resumed or inspected later."""

    team: str
    task: str
    scenario: str | None = None
    models: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    """What must not change between a run and its resumption (team kind, stop conditions, models, options)."""
    force: bool = False
    """Resume even though ``config`` changed."""


class TeamHooks:
    """No-op lifecycle hooks. ``seq`` is the transcript index of the first message of a batch."""

    async def on_run_start(self, run_id: str, info: RunInfo, resumed: bool) -> None:
        """A run started (``resumed``: continued from a checkpoint or a previous call)."""

    async def on_batch(
        self, run_id: str, seq: int, messages: Sequence[Mapping[str, Any]], state: Mapping[str, Any]
    ) -> None:
        """A turn completed: its messages and the team state after it (a checkpoint)."""

    async def on_run_end(
        self, run_id: str, status: RunStatus, stop_reason: str | None, result: Mapping[str, Any] | None
    ) -> None:
        """The run ended or paused: finished, partial, suspended, interrupted or failed."""
