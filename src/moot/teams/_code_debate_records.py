"""What a code debate records per round, the metrics derived from it, and its result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from moot.arbiters import Candidate, ProgramRuling, ProgramVote
from moot.models import Meter
from moot.teams._records import MootResult, Usage

__all__ = ["CodeChoice", "CodeDebateMetrics", "CodeDebateResult", "CodeDebateState", "CodeRound", "code_metrics"]

Action = Literal["wrote", "keep", "fix"]


class CodeChoice(BaseModel):
    """What one expert did in one round, and the candidate it holds afterwards."""

    action: Action
    """``wrote`` (round 1), ``fix`` (its fix passed strictly more visible tests: adopted) or ``keep`` (its fix did
    not: the expert keeps the program it had)."""
    holds: str
    reasoning: str = ""
    fixed: str | None = None
    """Later rounds: the fix the expert wrote, adopted or not."""


class CodeRound(BaseModel):
    """Every expert's move in one round (in expert order) and the tokens each spent on it."""

    round: int
    choices: dict[str, CodeChoice] = {}
    usage: Usage = {}

    @property
    def holding(self) -> dict[str, str]:
        return {expert: choice.holds for expert, choice in self.choices.items()}


class CodeDebateMetrics(BaseModel):
    """How the evidence moved the experts: a later round earns its cost only by a fix that passes more tests."""

    candidates: int
    first_round_passing: int
    """Round-1 candidates passing every visible test (independent answers)."""
    fixes: int
    """Fixes written in later rounds."""
    fixes_adopted: int
    """Fixes that passed strictly more visible tests than the program they fixed (the rest stay on record only)."""
    chosen_round: int | None
    first_round_vote: str | None = None
    """The candidate the program vote picks among the round-1 candidates alone: what the debate would have
    answered with no later round, at no extra call. The rounds earn their cost only by beating it."""
    held_per_round: list[list[str]] = []
    """The candidate each expert held after each round (expert order)."""
    tokens_per_round: list[int]
    parse_failures: int


def code_metrics(
    rounds: list[CodeRound], candidates: Mapping[str, Candidate], chosen: str | None, parse_failures: int
) -> CodeDebateMetrics:
    fixes = [c for r in rounds for c in r.choices.values() if c.fixed is not None]
    return CodeDebateMetrics(
        candidates=len(candidates),
        first_round_passing=sum(c.round == 1 and c.evidence.all_pass for c in candidates.values()),
        fixes=len(fixes),
        fixes_adopted=sum(c.action == "fix" for c in fixes),
        chosen_round=candidates[chosen].round if chosen in candidates else None,
        first_round_vote=_first_round_vote(rounds, candidates),
        held_per_round=[list(r.holding.values()) for r in rounds],
        tokens_per_round=[sum(r.usage.values(), Meter()).tokens for r in rounds],
        parse_failures=parse_failures,
    )


def _first_round_vote(rounds: list[CodeRound], candidates: Mapping[str, Candidate]) -> str | None:
    """The program vote over round 1's candidates, each expert holding its own."""
    if not rounds or not rounds[0].choices:
        return None
    held = rounds[0].holding
    first = [candidates[c] for c in held.values() if c in candidates]
    return ProgramVote().rule(first, held).candidate if first else None


class CodeDebateResult(MootResult):
    """A TaskResult plus the ruling, every candidate with its evidence, every round's moves, metrics and tokens."""

    ruling: ProgramRuling | None = None
    candidates: list[Candidate] = []
    rounds: list[CodeRound] = []
    metrics: CodeDebateMetrics | None = None

    @property
    def chosen(self) -> Candidate | None:
        if self.ruling is None:
            return None
        return next((c for c in self.candidates if c.id == self.ruling.candidate), None)

    @property
    def answer(self) -> str | None:
        """The chosen program, as its author wrote it."""
        chosen = self.chosen
        return chosen.code if chosen is not None else None


class CodeDebateState(BaseModel):
    """Everything needed to continue a code debate exactly where it stopped. Versioned."""

    type: Literal["CodeDebateState"] = "CodeDebateState"
    version: int = 2
    """2: later rounds are fixes adopted only when they pass more visible tests (no keep/adopt choice)."""
    task: str | None = None
    candidates: dict[str, Candidate] = {}
    rounds: list[CodeRound] = []
    ruling: ProgramRuling | None = None
    parse_failures: int = 0
    messages: list[Mapping[str, Any]] = []
