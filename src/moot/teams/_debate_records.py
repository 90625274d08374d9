"""What a debate records per round, the metrics derived from it, and its result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from moot._blocks import Block
from moot._result_blocks import debate_blocks
from moot._transcript_rounds import messages_by_round
from moot.arbiters import Verdict, agreement, modal_answer, normalise_answer
from moot.models import Meter
from moot.roles import Position
from moot.teams._records import MootResult, Usage, add_usage

__all__ = ["DebateMetrics", "DebateResult", "DebateRound", "DebateState", "debate_metrics", "rounds_from"]


class DebateRound(BaseModel):
    """Every expert's position in one round (in expert order) and the tokens each spent on it."""

    round: int
    positions: dict[str, Position] = {}
    usage: Usage = {}

    @property
    def agreement(self) -> float:
        return agreement([p.answer for p in self.positions.values()])


def rounds_from(transcript: Sequence[Any]) -> list[DebateRound]:
    """The rounds as a debate's transcript records them: each expert's position, per round."""
    rounds: list[DebateRound] = []
    for number, messages in messages_by_round(transcript).items():
        positions = [m for m in messages if m.metadata.get("moot_kind") == "position"]
        if not positions:
            continue
        record = DebateRound(round=number)
        for message in positions:
            content = message.content
            record.positions[message.source] = (
                content if isinstance(content, Position) else Position.model_validate(content)
            )
            add_usage(record.usage, message.source, message)
        rounds.append(record)
    return rounds


class DebateMetrics(BaseModel):
    """Conformity and diversity signals: small debating models conform to each other, so this is tracked."""

    first_round_diversity: int
    """Distinct normalised answers in round 1 (independent answers)."""
    flips: dict[str, list[int]]
    """Per expert, the rounds in which its answer changed from its previous one."""
    argued_flips: int = 0
    """Flips made while answering a claim of an expert who held the answer moved to: an argument was met."""
    unargued_flips: int = 0
    """Flips with no argument for the new answer answered that round: conformity, not persuasion."""
    agreement_per_round: list[float]
    """Per completed round: a round cut short by a stop has too few answers to agree or disagree."""
    first_round_majority: str | None
    final_matches_first_majority: bool | None
    """Did the verdict keep the majority of the independent first answers?"""
    final_in_first_round: bool | None = None
    """Was the verdict one of the independent first answers (else the debate produced a new answer)?"""
    final_majority: str | None = None
    """The most common answer of the latest positions, to check whether the ruling overturned it."""
    tokens_per_round: list[int] = []
    parse_failures: int


def debate_metrics(
    rounds: list[DebateRound], verdict: Verdict | None, parse_failures: int, *, experts: int
) -> DebateMetrics:
    first = [p.answer for p in rounds[0].positions.values()] if rounds else []
    majority = modal_answer(first)[0] if first else None
    flips, argued = _flips(rounds)
    decision = normalise_answer(verdict.decision) if verdict is not None else None
    matches = None if decision is None or majority is None else decision == majority
    latest = {name: p.answer for r in rounds for name, p in r.positions.items()}
    return DebateMetrics(
        first_round_diversity=len({normalise_answer(a) for a in first}),
        flips=flips,
        argued_flips=argued,
        unargued_flips=sum(len(v) for v in flips.values()) - argued,
        final_in_first_round=None
        if decision is None or not first
        else decision in {normalise_answer(a) for a in first},
        final_majority=modal_answer(list(latest.values()))[0] if latest else None,
        tokens_per_round=[sum(r.usage.values(), Meter()).tokens for r in rounds],
        agreement_per_round=[r.agreement for r in rounds if len(r.positions) == experts],
        first_round_majority=majority,
        final_matches_first_majority=matches,
        parse_failures=parse_failures,
    )


def _flips(rounds: list[DebateRound]) -> tuple[dict[str, list[int]], int]:
    """Per expert the rounds its answer changed in, and how many of those changes met an argument for the
    new answer (the claim answered belonged to an expert who held that answer in the previous round)."""
    flips: dict[str, list[int]] = {}
    previous: dict[str, str] = {}
    argued = 0
    for record in rounds:
        held = dict(previous)
        for name, position in record.positions.items():
            answer = normalise_answer(position.answer)
            flips.setdefault(name, [])
            if name in previous and previous[name] != answer:
                flips[name].append(record.round)
                argued += position.responds_to is not None and held.get(position.responds_to) == answer
            previous[name] = answer
    return flips, argued


class DebateResult(MootResult):
    """A TaskResult plus the verdict, every round's positions, metrics and tokens per agent per round."""

    verdict: Verdict | None = None
    verdict_by: str | None = None
    """Who ruled: the arbiter's name, or ``majority_vote`` when it stood in for a failed arbiter."""
    arbiter_order: list[str] = []
    """The (seeded, shuffled) order in which the arbiter saw the positions."""
    rounds: list[DebateRound] = []
    partial: bool = False
    metrics: DebateMetrics | None = None

    @property
    def answer(self) -> str | None:
        return self.verdict.decision if self.verdict else None

    @property
    def usage_per_round(self) -> list[Usage]:
        return [r.usage for r in self.rounds]

    def blocks(self) -> list[Block]:
        return debate_blocks(self)


class DebateState(BaseModel):
    """Everything needed to continue a debate exactly where it stopped. Versioned."""

    type: Literal["DebateState"] = "DebateState"
    version: int = 2
    """2: ``rounds`` is left out of checkpoints and rebuilt from the transcript."""
    task: str | None = None
    rounds: list[DebateRound] = []
    verdict: Verdict | None = None
    verdict_by: str | None = None
    arbiter_order: list[str] = []
    fallback_reason: str | None = None
    parse_failures: int = 0
    messages: list[Mapping[str, Any]] = []
