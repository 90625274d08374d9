"""What a debate records per round, the metrics derived from it, and its result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from moot.arbiters import Verdict, agreement, majority_tally, modal_answer, normalise_answer
from moot.messages import messages_by_round
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
    """What the rounds did: conformity, diversity, and the first-round vote every ruling is measured against."""

    first_round_diversity: int
    """Distinct normalised answers in round 1 (independent answers)."""
    flips: dict[str, list[int]]
    """Per expert, the rounds in which its answer changed from its previous one."""
    argued_flips: int = 0
    """Changes adopted because they were argued: the expert answered a claim of an expert holding the new answer,
    or its own reasoning derived it."""
    unargued_flips: int = 0
    """Changes with no argument for the new answer: recorded (``Position.proposed``), not adopted."""
    flips_to_unheld_answer: int = 0
    """Of all changes (argued or not), those to an answer no other expert held the round before: a new answer,
    which is neither persuasion nor conformity."""
    agreement_per_round: list[float]
    """Per completed round: a round cut short by a stop has too few answers to agree or disagree."""
    first_round_vote: str | None = None
    """The majority vote over the independent round-1 answers (a tie goes to the tied answer held by the expert
    listed first, never to how an answer is spelled): what the debate would
    have answered with no rebuttal round, at no extra call. The rounds earn their cost only by beating it.
    (None also in metrics stored before the vote had this name, which a report still reads.)"""
    first_round_tied_answers: int | None = None
    """How many answers tied for the most round-1 votes (1: no tie decided the first-round vote)."""
    final_matches_first_round_vote: bool | None = None
    """Did the verdict keep the first-round vote?"""
    tied_answers: int | None = None
    """How many answers tied for the most votes when a vote ruled (1: no tie); None when an LLM ruled, or in
    metrics stored before ties were recorded."""
    decided_by_tie: bool | None = None
    """Did the tie rule choose the verdict (``tied_answers`` > 1)? None as ``tied_answers``: a report counts the
    verdicts a tie decided from this."""
    final_in_first_round: bool | None = None
    """Was the verdict one of the independent first answers (else the debate produced a new answer)?"""
    final_majority: str | None = None
    """The most common answer of the latest positions, to check whether the ruling overturned it."""
    answers_per_round: list[list[str]] = []
    """Every expert's answer in each round (expert order): scored per round to show where right answers go."""
    said_per_round: list[list[str]] = []
    """What each expert said in each round, adopted or not (an unargued change is said, not adopted)."""
    tokens_per_round: list[int] = []
    parse_failures: int

    @property
    def answer_changes(self) -> int:
        """Every change of answer an expert made, adopted or not: ``argued_flips + unargued_flips``."""
        return self.argued_flips + self.unargued_flips

    def changes_summary(self) -> str:
        """The answer changes in words whose parts add up: each change was argued (and adopted) or unargued (and
        not adopted), and those to an answer no other expert held are a part of either, not a third kind."""
        total = self.answer_changes
        text = (
            f"answer changes {total} (argued, adopted {self.argued_flips}; unargued, not adopted {self.unargued_flips})"
        )
        if total:
            text += f", {self.flips_to_unheld_answer} of the {total} to an answer no other expert held"
        return text


def debate_metrics(
    rounds: list[DebateRound],
    verdict: Verdict | None,
    parse_failures: int,
    *,
    experts: int,
    tied_answers: int | None = None,
) -> DebateMetrics:
    """``tied_answers``: how many answers tied for the most votes of the vote that ruled (None: no vote ruled)."""
    first = [p.answer for p in rounds[0].positions.values()] if rounds else []
    first_tally = majority_tally(list(rounds[0].positions.items())) if first else None
    voted = first_tally.winner if first_tally else None
    vote = next((a for a in first if normalise_answer(a) == voted), None)  # as an expert wrote it
    flips, kinds = _flips(rounds)
    decision = normalise_answer(verdict.decision) if verdict is not None else None
    latest = {name: p.answer for r in rounds for name, p in r.positions.items()}
    return DebateMetrics(
        first_round_diversity=len({normalise_answer(a) for a in first}),
        flips=flips,
        argued_flips=kinds["argued"],
        unargued_flips=kinds["unargued"],
        flips_to_unheld_answer=kinds["unheld"],
        final_in_first_round=None
        if decision is None or not first
        else decision in {normalise_answer(a) for a in first},
        final_majority=modal_answer(list(latest.values()))[0] if latest else None,
        answers_per_round=[[p.answer for p in r.positions.values()] for r in rounds],
        said_per_round=[[p.proposed or p.answer for p in r.positions.values()] for r in rounds],
        tokens_per_round=[sum(r.usage.values(), Meter()).tokens for r in rounds],
        agreement_per_round=[r.agreement for r in rounds if len(r.positions) == experts],
        first_round_vote=vote,
        first_round_tied_answers=len(first_tally.tied) if first_tally else None,
        final_matches_first_round_vote=None if decision is None or voted is None else decision == voted,
        tied_answers=tied_answers,
        decided_by_tie=None if tied_answers is None else tied_answers > 1,
        parse_failures=parse_failures,
    )


def _flips(rounds: list[DebateRound]) -> tuple[dict[str, list[int]], dict[str, int]]:
    """Per expert the rounds its answer changed in, and every change it made by kind: argued (adopted: it met
    an argument or derived the answer, see ``moot.teams._adoption``), unargued (recorded in ``proposed``, not
    adopted) and, of either, those to an answer no other expert held the round before."""
    flips: dict[str, list[int]] = {}
    previous: dict[str, str] = {}
    kinds = {"argued": 0, "unargued": 0, "unheld": 0}
    for record in rounds:
        held = dict(previous)
        for name, position in record.positions.items():
            said = normalise_answer(position.proposed or position.answer)
            flips.setdefault(name, [])
            if name in previous and previous[name] != said:
                adopted = position.proposed is None
                kinds["argued" if adopted else "unargued"] += 1
                kinds["unheld"] += said not in {a for n, a in held.items() if n != name}
                if adopted:
                    flips[name].append(record.round)
            previous[name] = normalise_answer(position.answer)
    return flips, kinds


class DebateResult(MootResult):
    """A TaskResult plus the verdict, every round's positions, metrics and tokens per agent per round."""

    verdict: Verdict | None = None
    verdict_by: str | None = None
    """Who ruled: the arbiter's name, or ``majority_vote`` when it stood in for a failed arbiter."""
    arbiter_order: list[str] = []
    """The (seeded, shuffled) order in which the arbiter saw the positions."""
    rounds: list[DebateRound] = []
    metrics: DebateMetrics | None = None

    @property
    def answer(self) -> str | None:
        return self.verdict.decision if self.verdict else None

    @property
    def usage_per_round(self) -> list[Usage]:
        return [r.usage for r in self.rounds]


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
    tied_answers: int | None = None
    """How many answers tied for the most votes when a vote ruled (see ``DebateMetrics.tied_answers``)."""
    parse_failures: int = 0
    messages: list[Mapping[str, Any]] = []
