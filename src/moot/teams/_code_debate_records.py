"""What a code debate records per round, the metrics derived from it, and its result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from moot._blocks import Block
from moot._result_blocks import code_debate_blocks
from moot.arbiters import Candidate, ProgramRuling
from moot.models import Meter
from moot.teams._records import MootResult, Usage

__all__ = ["CodeChoice", "CodeDebateMetrics", "CodeDebateResult", "CodeDebateState", "CodeRound", "code_metrics"]

Action = Literal["wrote", "keep", "adopt", "fix"]


class CodeChoice(BaseModel):
    """What one expert did in one round, and the candidate it holds afterwards."""

    action: Action
    holds: str
    reasoning: str = ""
    called: bool = True
    """False when the expert's candidate already passed every visible test and it kept it without a call."""


class CodeRound(BaseModel):
    """Every expert's move in one round (in expert order) and the tokens each spent on it."""

    round: int
    choices: dict[str, CodeChoice] = {}
    usage: Usage = {}

    @property
    def holding(self) -> dict[str, str]:
        return {expert: choice.holds for expert, choice in self.choices.items()}


class CodeDebateMetrics(BaseModel):
    """How the evidence moved the experts: a debate that earns its cost fixes or adopts for a reason."""

    candidates: int
    first_round_passing: int
    """Round-1 candidates passing every visible test (independent answers)."""
    keeps: int
    adoptions: int
    fixes: int
    fixes_improved: int
    """Fixes that pass more visible tests than the candidate they started from."""
    adopted_worse: int
    """Adoptions of a candidate passing fewer visible tests than the expert's own (conformity, not evidence)."""
    chosen_round: int | None
    tokens_per_round: list[int]
    parse_failures: int


def code_metrics(
    rounds: list[CodeRound], candidates: Mapping[str, Candidate], chosen: str | None, parse_failures: int
) -> CodeDebateMetrics:
    choices = [(r, e, c) for r in rounds for e, c in r.choices.items()]
    held_before: dict[str, str] = {}
    adopted_worse = 0
    for record in rounds:
        for expert, choice in record.choices.items():
            own = held_before.get(expert)
            if choice.action == "adopt" and own is not None:
                adopted_worse += candidates[choice.holds].evidence.passed < candidates[own].evidence.passed
            held_before[expert] = choice.holds
    fixed = [candidates[c.holds] for _, _, c in choices if c.action == "fix" and c.holds in candidates]
    return CodeDebateMetrics(
        candidates=len(candidates),
        first_round_passing=sum(c.round == 1 and c.evidence.all_pass for c in candidates.values()),
        keeps=sum(c.action == "keep" for _, _, c in choices),
        adoptions=sum(c.action == "adopt" for _, _, c in choices),
        fixes=len(fixed),
        fixes_improved=sum(
            f.based_on in candidates and f.evidence.passed > candidates[f.based_on].evidence.passed for f in fixed
        ),
        adopted_worse=adopted_worse,
        chosen_round=candidates[chosen].round if chosen in candidates else None,
        tokens_per_round=[sum(r.usage.values(), Meter()).tokens for r in rounds],
        parse_failures=parse_failures,
    )


class CodeDebateResult(MootResult):
    """A TaskResult plus the ruling, every candidate with its evidence, every round's moves, metrics and tokens."""

    ruling: ProgramRuling | None = None
    candidates: list[Candidate] = []
    rounds: list[CodeRound] = []
    partial: bool = False
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

    def blocks(self) -> list[Block]:
        return code_debate_blocks(self)


class CodeDebateState(BaseModel):
    """Everything needed to continue a code debate exactly where it stopped. Versioned."""

    type: Literal["CodeDebateState"] = "CodeDebateState"
    version: int = 1
    task: str | None = None
    candidates: dict[str, Candidate] = {}
    rounds: list[CodeRound] = []
    ruling: ProgramRuling | None = None
    parse_failures: int = 0
    messages: list[Mapping[str, Any]] = []
