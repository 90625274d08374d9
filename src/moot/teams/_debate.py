"""Debate: independent first answers, rebuttal rounds on condensed positions, an arbiter's verdict.

Round 1: every expert answers the task alone (an Opening: reasoning, answer,
one to three arguments, confidence), unless its opening is given (``openings``:
an answer already made, such as a single call's, that the debate starts from).
Round k > 1: each expert sees every expert's last position, condensed to
answer + key arguments + confidence (none for a given opening), so the
prompt stays the same size however many rounds run (Du et al.'s
full-transcript debate grows with agents x rounds). With
``peer_answers="hidden"`` it sees the arguments only, every expert's answer
masked in its own (``without_answer``): a small model restates any answer it
is shown, so a round that shows them is a walk toward whichever claim it
answered; a round that hides them leaves it the steps to work from, and a
change is adopted only where its own recomputation lands on a peer's answer
it was not shown (the steps shown can still lead it there: docs/compare.md
measures both). Either way it must answer one
claim of another, named expert, copied from that list (a Rebuttal), work the
task again (reasoning before its answer), and say which argument decided its
answer. A changed answer is adopted only when argued (``_adoption``): met in
the claim it answered and derived in its own reasoning; otherwise it is
recorded and the previous answer stands. When a condition stops the rounds,
the arbiter rules: an LLM arbiter or a vote on the latest positions (shown in a
seeded shuffled order against position bias), or a RoundsArbiter such as
RoundsVote on every round's positions.
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Literal, Self

from autogen_agentchat.base import ChatAgent, TerminationCondition
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage
from autogen_core import CancellationToken, Component, ComponentBase, ComponentModel
from pydantic import BaseModel

from moot._renamed import former_keywords
from moot.arbiters import (
    VOTES,
    Arbiter,
    MajorityVote,
    RoundsArbiter,
    RoundsVote,
    Verdict,
    VoteArbiter,
    VoteName,
    WeightedVote,
    known_arbiters,
    load_arbiter,
    normalise_answer,
)
from moot.boundary import argument_error, checked_mapping, checked_pattern, checked_strings, checked_text, shown
from moot.conditions import Consensus, MaxRounds, TokenBudget
from moot.errors import ConfigError, MalformedOutputError, TransientModelError
from moot.messages import RoundCompleted
from moot.roles import (
    Opening,
    Position,
    Rebuttal,
    RoleAgent,
    answer_name,
    answers_with,
    citing,
    claims_of,
    render_prompt,
    with_choices,
    with_pattern,
    without_answer,
)
from moot.teams._adoption import settle_change
from moot.teams._base import Message, MessageTypes, MootTeam, Stop, checked_experts, loaded_stop
from moot.teams._debate_records import DebateResult, DebateRound, DebateState, debate_metrics, rounds_from
from moot.teams._records import Usage, add_usage, failed_turn, fingerprint, total_usage

__all__ = ["Debate"]


def default_debate_stop() -> TerminationCondition:
    return Consensus() | MaxRounds(3) | TokenBudget(60_000)


class DebateConfig(BaseModel):
    name: str
    description: str
    experts: list[ComponentModel]
    arbiter: ComponentModel | VoteName
    """An LLM arbiter's agent, or the name of a vote (MajorityVote, WeightedVote: they have no configuration)."""
    stop: ComponentModel | None = None
    options: list[str] = []
    """The closed answer set (``Debate.choices``), kept under the key saved components already use."""
    answer_pattern: str | None = None
    seed: int = 0
    openings: dict[str, Position] = {}
    held: list[str] = []
    peer_answers: Literal["shown", "hidden"] = "shown"
    rebutting: list[ComponentModel] = []


def checked_choices(choices: Sequence[str]) -> tuple[str, ...]:
    """A closed answer set as given, or ConfigError: a lone string would otherwise become its letters."""
    if isinstance(choices, str):
        raise ConfigError(
            f"choices must be a sequence of answers, e.g. choices=('split', 'keep'), not the string {choices!r}"
        )
    if not isinstance(choices, Iterable) or isinstance(choices, Mapping):
        raise argument_error("Debate", "choices", "a sequence of answers, e.g. ('split', 'keep')", choices)
    chosen = tuple(choices)
    bad = next((o for o in chosen if not isinstance(o, str) or not o.strip()), None)
    if bad is not None:
        raise ConfigError(f"choices must be non-empty strings, got {bad!r} in {list(chosen)!r}")
    if len(chosen) == 1 or len(set(chosen)) != len(chosen):
        raise ConfigError(f"choices must be at least two distinct answers (or none), got {list(chosen)!r}")
    return chosen


def _check_named(field: str, given: Iterable[str], experts: Sequence[RoleAgent]) -> None:
    """ConfigError naming the experts that exist if a name in ``given`` (an option keyed by expert) is not one."""
    names = [e.name for e in experts]
    unknown = next((n for n in given if n not in names), None)
    if unknown is not None:
        raise ConfigError(f"{field}: no expert is named {unknown!r}; valid names: {', '.join(names)}")


def _checked_openings(openings: Mapping[str, Position], experts: Sequence[RoleAgent]) -> dict[str, Position]:
    """Given openings keyed by expert name, or ConfigError naming the experts that exist."""
    checked_mapping(openings, "Debate", "openings", "a mapping of expert name to Position, e.g. {'ops': Position(...)}")
    stray = next((p for p in openings.values() if not isinstance(p, Position)), None)
    if stray is not None:
        raise argument_error("Debate", "openings", "a mapping of expert name to moot.Position", stray)
    _check_named("openings", openings, experts)
    return dict(openings)


def _checked_held(held: Sequence[str], openings: Mapping[str, Position], experts: int) -> tuple[str, ...]:
    """Experts whose given opening stands in every round, or ConfigError naming the ones that may hold. Every
    opening may be given (round 1 then costs the debate no call), but someone must argue after it."""
    held = checked_strings(held, "Debate", "held", example="held=['ops']")
    stray = next((n for n in held if n not in openings), None)
    if stray is not None:
        valid = ", ".join(openings) or "none (no opening is given)"
        raise ConfigError(f"held: {stray!r} has no given opening to hold; valid names: {valid}")
    kept = tuple(dict.fromkeys(held))
    if len(kept) == experts:
        raise ConfigError("held: at least one expert must argue after round 1 (holding every expert is not a debate)")
    return kept


def _checked_rebutting(rebutting: Sequence[RoleAgent], experts: Sequence[RoleAgent]) -> dict[str, RoleAgent]:
    """Agents that speak for experts after round 1, by the expert's name, or ConfigError naming the experts."""
    agents = _agents_in(rebutting, "rebutting")
    _check_named("rebutting", (a.name for a in agents), experts)
    rebutting = _answering_positions(agents, "rebutting")
    by_name: dict[str, RoleAgent] = {}
    for agent in rebutting:
        if agent.name in by_name:
            raise ConfigError(f"rebutting: two agents speak for {agent.name!r}; give at most one per expert")
        by_name[agent.name] = agent
    return by_name


def _agents_in(experts: object, argument: str) -> list[ChatAgent]:
    """A sequence of agents (a lone agent, a string or a mapping is refused), or a one-line ConfigError."""
    if isinstance(experts, str | bytes | Mapping) or not isinstance(experts, Iterable):
        raise argument_error("Debate", argument, "a list of RoleAgents on expert roles, e.g. [architect, ops]", experts)
    agents = list(experts)
    stray = next((a for a in agents if not isinstance(a, ChatAgent)), None)
    if stray is not None:
        raise ConfigError(f"Debate: {argument} must hold RoleAgents on expert roles, got {shown(stray)} among them")
    return agents


def _answering_positions(agents: list[ChatAgent], argument: str) -> list[RoleAgent]:
    """The agents, if each is a RoleAgent that answers with a Position: a debate asks every expert for an Opening,
    then Rebuttals, and reads their answers and arguments; else a one-line ConfigError."""
    for agent in agents:
        if not isinstance(agent, RoleAgent) or not answers_with(agent, Position):
            raise ConfigError(
                f"Debate: {argument}: {agent.name!r} answers with {answer_name(agent)}; an expert must be a RoleAgent "
                "on a role that answers with a Position (an expert role, e.g. role('architect') or moot.expert(...))"
            )
    return agents  # type: ignore[return-value]


def checked_arbiter(arbiter: object, experts: Sequence[RoleAgent]) -> RoleAgent | Arbiter:
    """The debate's arbiter: an LLM agent that answers with a Verdict, an Arbiter instance, or a known arbiter's
    name (a vote, or a model arbiter's role put on the first expert's model); else a one-line ConfigError."""
    known = ", ".join(known_arbiters())
    if isinstance(arbiter, str):
        try:
            spec = load_arbiter(arbiter)
        except ConfigError:
            raise ConfigError(f"Debate: arbiter {arbiter!r} is no known arbiter; known arbiters: {known}") from None
        if spec.role is None:
            return spec.vote()
        return RoleAgent(spec.role, experts[0].model_source)
    if isinstance(arbiter, type):
        raise ConfigError(f"Debate: arbiter must be an instance, e.g. {arbiter.__name__}(), not {shown(arbiter)}")
    if isinstance(arbiter, RoleAgent):
        if not answers_with(arbiter, Verdict):
            raise ConfigError(
                f"Debate: arbiter {arbiter.name!r} answers with {answer_name(arbiter)}; an LLM arbiter must answer "
                f"with a Verdict (RoleAgent(role('arbiter'), model)), or give an Arbiter such as MajorityVote(), "
                f"or a known arbiter's name: {known}"
            )
        if arbiter.name in {e.name for e in experts}:
            raise ConfigError(f"Debate: the arbiter is named {arbiter.name!r} like an expert; give it its own name")
        return arbiter
    if isinstance(arbiter, Arbiter) and not isinstance(arbiter, ChatAgent):
        return arbiter
    valid = f"a RoleAgent on the arbiter role, an Arbiter such as MajorityVote(), or a known arbiter's name ({known})"
    raise argument_error("Debate", "arbiter", valid, arbiter)


@former_keywords(options="choices")
class Debate(MootTeam, Component[DebateConfig]):
    """Experts debate, an arbiter rules (see module docstring).

    ``arbiter`` is an LLM agent (a RoleAgent with the ``arbiter`` role, on any
    model), any :class:`moot.arbiters.Arbiter` such as ``MajorityVote()``, or a
    known arbiter's name (``"majority_vote"``; ``"model_arbiter"`` rules on the
    first expert's model). An LLM arbiter's rationale must name the expert whose
    argument decided the ruling; a reply that does not is fed back like any malformed one.
    ``choices`` restricts answers and the decision to a closed set;
    ``answer_pattern`` to strings matching a regular expression (such as
    :data:`moot.roles.NUMBER`, so a vote compares numbers). ``seed``
    fixes the arbiter's shuffled view. ``openings`` gives some (or all) experts'
    round-1 positions instead of asking them (they cost the debate no call);
    ``held`` names those of them that stand unchanged in every later round
    (asked nothing again), so the others must out-vote them rather than talk them round.
    ``peer_answers="hidden"`` shows later rounds the others' arguments without their answers.
    ``rebutting`` holds agents that speak for experts of the same name after round 1 (the same role on
    another model spec, such as a higher temperature), so openings and rebuttals can be drawn differently.
    If the LLM arbiter's output stays malformed, a majority vote rules instead and the result says so.
    ``dump_component()`` saves the whole team (experts, arbiter, stop); a
    custom Arbiter that is not an agent cannot be saved that way.
    """

    _state_type = DebateState
    _derived_state = {"rounds": rounds_from}  # every position is a turn: a checkpoint need not grow per round
    _signals = frozenset({"agreement"})

    component_config_schema = DebateConfig
    component_provider_override = "moot.teams.Debate"

    def __init__(
        self,
        experts: Sequence[RoleAgent],
        arbiter: RoleAgent | Arbiter,
        *,
        stop: Stop = None,
        choices: Sequence[str] = (),
        answer_pattern: str | None = None,
        seed: int = 0,
        openings: Mapping[str, Position] | None = None,
        held: Sequence[str] = (),
        peer_answers: Literal["shown", "hidden"] = "shown",
        rebutting: Sequence[RoleAgent] = (),
        name: str = "debate",
        description: str = "Experts debate in rounds; an arbiter rules.",
        custom_message_types: MessageTypes = None,
    ) -> None:
        self.experts: list[RoleAgent] = checked_experts(
            _answering_positions(_agents_in(experts, "experts"), "experts"), "debate"
        )  # type: ignore[assignment]
        self.arbiter = checked_arbiter(arbiter, self.experts)
        self.choices = checked_choices(choices)
        self.answer_pattern = checked_pattern(answer_pattern, "Debate", "answer_pattern")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise argument_error("Debate", "seed", "a whole number, e.g. 0 or 7", seed)
        self.seed = seed
        self.openings = _checked_openings({} if openings is None else openings, self.experts)
        self.held = _checked_held(held, self.openings, len(self.experts))
        if peer_answers not in ("shown", "hidden"):
            raise ConfigError(f"peer_answers: {peer_answers!r} is not a view; valid: shown, hidden")
        self.peer_answers = peer_answers
        self.rebutting = _checked_rebutting(rebutting, self.experts)
        super().__init__(
            checked_text(name, "Debate", "name"),
            checked_text(description, "Debate", "description", empty=True),
            stop if stop is not None else default_debate_stop(),
            custom_message_types=custom_message_types,
        )

    # ------------------------------------------------------------------ turns
    async def _turns(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        while True:
            rounds = self.state.rounds
            if not rounds or len(rounds[-1].positions) == len(self.experts):
                rounds.append(DebateRound(round=len(rounds) + 1))
            current = rounds[-1]
            expert = self.experts[len(current.positions)]
            batch: list[Message] = [await self._position(expert, current, token)]
            if len(current.positions) == len(self.experts):
                batch.append(self._round_event(current))
            yield batch

    async def _position(self, expert: RoleAgent, current: DebateRound, token: CancellationToken) -> Message:
        previous = self.state.rounds[-2] if current.round > 1 else None
        if previous is None and expert.name in self.openings:
            return self._given(expert.name, self.openings[expert.name], current)
        if previous is not None and expert.name in self.held:
            return self._given(expert.name, previous.positions[expert.name], current)
        closing = ""
        if previous is None:
            prompt = render_prompt("turns/debate_open", task=self.state.task, choices=self.choices)
            schema: type[BaseModel] = self._answering(Opening, "answer")
        else:
            # Every expert gets the same text up to its own name, so the model evaluates it once for all.
            shown = [(e.name, previous.positions[e.name]) for e in self.experts if e.name in previous.positions]
            if self.peer_answers == "hidden":
                shown = [(name, without_answer(p)) for name, p in shown]
            # A given opening stated no confidence of its own: the view shows none rather than the vote's weight.
            unstated = [n for n in self.openings if previous.round == 1 or n in self.held]
            prompt = render_prompt(
                "turns/debate_rebut",
                task=self.state.task,
                positions=shown,
                choices=self.choices,
                unstated=unstated,
                hidden=self.peer_answers == "hidden",
            )
            closing = render_prompt("turns/debate_own", own=expert.name)
            schema = with_choices(
                self._answering(Rebuttal, "answer"), "claim", claims_of(shown, expert.name), listed=True
            )
        speaker = expert if previous is None else self.rebutting.get(expert.name, expert)
        message = await self._agent_turn(speaker, prompt, token, schema, closing=closing)
        if not (isinstance(message, StructuredMessage) and isinstance(message.content, Position)):
            raise TypeError(f"expert {expert.name!r} must answer with a Position, got {type(message).__name__}")
        if previous is not None and expert.name in previous.positions:
            held = {n: normalise_answer(p.answer) for n, p in previous.positions.items() if n != expert.name}
            own = previous.positions[expert.name]
            message.content = settle_change(message.content, own, held, self.state.task or "")
        current.positions[expert.name] = message.content
        add_usage(current.usage, expert.name, message)
        self.state.parse_failures += int(message.metadata.get("parse_failures", "0"))
        message.metadata = {**message.metadata, "moot_kind": "position", "round": str(current.round)}
        return message

    def _given(self, name: str, position: Position, current: DebateRound) -> Message:
        """Expert ``name``'s given position (its given opening, or the one it holds), recorded as a turn like
        any other (no call, no usage)."""
        current.positions[name] = position.model_copy(deep=True)
        return StructuredMessage[Position](
            content=current.positions[name],
            source=name,
            metadata={"moot_kind": "position", "round": str(current.round), "given": "true"},
        )

    def _round_event(self, record: DebateRound) -> RoundCompleted:
        # Who holds which answer (normalised): two experts swapping answers is progress, a respelling is not.
        answers = [f"{name}={normalise_answer(p.answer)}" for name, p in record.positions.items()]
        return RoundCompleted(
            source=self.name,
            round=record.round,
            agreement=record.agreement,
            fingerprints={"positions": fingerprint(*answers)},
        )

    def _agents(self) -> list[ChatAgent]:
        return [*self.experts, *([self.arbiter] if isinstance(self.arbiter, ChatAgent) else [])]

    def _model_specs(self) -> dict[str, str]:
        """Each agent's model spec; an expert's rebuttals under ``NAME rebutting`` when another agent speaks them."""
        specs = super()._model_specs()
        specs.update({f"{n} rebutting": str(a.spec) for n, a in self.rebutting.items() if a.spec is not None})
        return specs

    # ---------------------------------------------------------------- verdict
    def latest_positions(self) -> list[tuple[str, Position]]:
        """Each expert's most recent position (a stop mid-round leaves some at the previous round)."""
        latest: dict[str, Position] = {}
        for record in self.state.rounds:
            latest.update(record.positions)
        return [(e.name, latest[e.name]) for e in self.experts if e.name in latest]

    async def _closing(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        positions = self.latest_positions()
        if not positions:
            return
        rng = random.Random(f"{self.seed}:{len(self.state.rounds)}")
        shown = positions[:]
        rng.shuffle(shown)
        # A vote is given the experts' order (its tie rule goes to the expert listed first); an LLM arbiter the
        # seeded shuffle, against position bias.
        self.state.arbiter_order = [n for n, _ in (shown if isinstance(self.arbiter, RoleAgent) else positions)]
        message, failed = await self._rule(positions, shown, token)
        message.metadata = {
            **message.metadata,
            "moot_kind": "verdict",
            "arbiter_order": ",".join(self.state.arbiter_order),
        }
        yield [*failed, message]

    def _answering(self, base: type[BaseModel], field: str) -> type[BaseModel]:
        """``base`` with its answer ``field`` held to the debate's choices, else to its answer pattern."""
        return (
            with_choices(base, field, self.choices) if self.choices else with_pattern(base, field, self.answer_pattern)
        )

    async def _rule(
        self, positions: list[tuple[str, Position]], shown: list[tuple[str, Position]], token: CancellationToken
    ) -> tuple[BaseChatMessage, list[Message]]:
        """The verdict message, after the record of an arbiter turn that failed (its tokens were spent) if any.
        ``positions`` in the experts' order (what a vote counts), ``shown`` shuffled (what an LLM arbiter reads)."""
        task = self.state.task or ""
        self.state.tied_answers = None
        if isinstance(self.arbiter, RoundsArbiter):
            rounds = [list(r.positions.items()) for r in self.state.rounds if r.positions]
            verdict = await self.arbiter.rule_rounds(task, rounds)
            if isinstance(self.arbiter, RoundsVote):
                self.state.tied_answers = len(self.arbiter.tally_rounds(rounds).tied)
            return self._verdict_message(verdict, self.arbiter.name, None), []
        if not isinstance(self.arbiter, RoleAgent):
            verdict = await self.arbiter.rule(task, positions)
            if isinstance(self.arbiter, VoteArbiter):
                self.state.tied_answers = len(self.arbiter.tally(positions).tied)
            return self._verdict_message(verdict, self.arbiter.name, None), []
        prompt = render_prompt("turns/arbiter_rule", task=task, positions=shown, choices=self.choices)
        # The ruling must say whose argument decided it: a one-word rationale is fed back as malformed.
        schema = citing(self._answering(Verdict, "decision"), tuple(e.name for e in self.experts))
        try:
            message = await self._agent_turn(self.arbiter, prompt, token, schema)
        except (MalformedOutputError, TransientModelError) as exc:
            failed = failed_turn(exc) if isinstance(exc, MalformedOutputError) else None
            if isinstance(exc, MalformedOutputError):
                self.state.parse_failures += exc.attempts
            fallback = await MajorityVote().rule(task, positions)
            self.state.tied_answers = len(MajorityVote().tally(positions).tied)
            reason = f"arbiter failed ({exc}); majority vote ruled"
            return self._verdict_message(fallback, MajorityVote.name, reason), [failed] if failed else []
        if not (isinstance(message, StructuredMessage) and isinstance(message.content, Verdict)):
            raise TypeError(f"arbiter {self.arbiter.name!r} must answer with a Verdict, got {type(message).__name__}")
        self.state.parse_failures += int(message.metadata.get("parse_failures", "0"))
        # A ruling of the arbiter's own clears a fallback left by an earlier run of this debate.
        self.state.verdict, self.state.verdict_by, self.state.fallback_reason = message.content, self.arbiter.name, None
        return message, []

    def _verdict_message(self, verdict: Verdict, by: str, fallback: str | None) -> BaseChatMessage:
        self.state.verdict, self.state.verdict_by, self.state.fallback_reason = verdict, by, fallback
        return StructuredMessage[Verdict](content=verdict, source=by)

    # ----------------------------------------------------------------- result
    def _result(self, messages: list[Message], stop_reason: str, partial: bool) -> DebateResult:
        state = self.state
        rounds = [r.model_copy(deep=True) for r in state.rounds]
        if state.fallback_reason:
            stop_reason, partial = f"{stop_reason}; {state.fallback_reason}", True
        return DebateResult(
            messages=messages,
            stop_reason=stop_reason,
            verdict=state.verdict,
            verdict_by=state.verdict_by,
            arbiter_order=list(state.arbiter_order),
            rounds=rounds,
            partial=partial,
            usage=total_usage(r.usage for r in rounds) | self._arbiter_usage(messages),
            metrics=debate_metrics(
                rounds, state.verdict, state.parse_failures, experts=len(self.experts), tied_answers=state.tied_answers
            ),
        )

    def _arbiter_usage(self, messages: list[Message]) -> Usage:
        usage: Usage = {}
        for message in messages:
            if message.metadata.get("moot_kind") == "verdict":
                add_usage(usage, message.source, message)
        return usage

    # ----------------------------------------------------------------- config
    def _to_config(self) -> DebateConfig:
        if isinstance(self.arbiter, MajorityVote | WeightedVote | RoundsVote):
            arbiter: ComponentModel | VoteName = self.arbiter.name  # type: ignore[assignment]
        elif isinstance(self.arbiter, ComponentBase):
            arbiter = self.arbiter.dump_component()
        else:
            raise ConfigError(
                f"arbiter {type(self.arbiter).__name__} cannot be saved as a component; "
                "valid: a RoleAgent (LLM arbiter), MajorityVote() or WeightedVote()"
            )
        return DebateConfig(
            name=self.name,
            description=self.description,
            experts=[e.dump_component() for e in self.experts],
            arbiter=arbiter,
            stop=self._stop_component(),
            options=list(self.choices),
            answer_pattern=self.answer_pattern,
            seed=self.seed,
            openings=dict(self.openings),
            held=list(self.held),
            peer_answers=self.peer_answers,
            rebutting=[a.dump_component() for a in self.rebutting.values()],
        )

    @classmethod
    def _from_config(cls, config: DebateConfig) -> Self:
        arbiter = (
            VOTES[config.arbiter]() if isinstance(config.arbiter, str) else ChatAgent.load_component(config.arbiter)
        )
        return cls(
            [ChatAgent.load_component(e) for e in config.experts],  # type: ignore[misc]
            arbiter,  # type: ignore[arg-type]
            stop=loaded_stop(config.stop),
            choices=config.options,
            answer_pattern=config.answer_pattern,
            seed=config.seed,
            openings=config.openings,
            held=config.held,
            peer_answers=config.peer_answers,
            rebutting=[ChatAgent.load_component(a) for a in config.rebutting],  # type: ignore[misc]
            name=config.name,
            description=config.description,
        )
