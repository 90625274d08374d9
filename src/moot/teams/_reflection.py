"""Reflection: generate -> critique -> revise, until a termination condition fires.

What the generator sees on a revision is the task, its latest draft and the
latest critique, never the whole history, so prompts stay flat as rounds grow.
With ``revision="fresh"`` it sees the task and the critiques instead, never a
draft, and writes a new answer: shown its own program and the visible tests it
failed, a small model hands the program back (the first 81 HumanEval items, 0.5B model: 43
revisions, one passed more visible tests), as the code debate found for its fixes.
The result carries the best-scoring draft so far, which is often not the last.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, Literal, Self

from autogen_agentchat.base import ChatAgent
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage, TextMessage
from autogen_core import CancellationToken, Component, ComponentModel
from pydantic import BaseModel

from moot.boundary import checked_choice, checked_text
from moot.conditions import default_stop
from moot.errors import ConfigError
from moot.messages import DRAFT, RoundCompleted, messages_by_round
from moot.roles import Critique, answer_name, answers_with, checked_agent, checked_agents, distinct_names, render_prompt
from moot.teams._base import Message, MessageTypes, MootTeam, Stop, loaded_stop
from moot.teams._records import MootResult, Usage, add_usage, fingerprint, total_usage

__all__ = ["Reflection", "ReflectionConfig", "ReflectionResult", "ReflectionRound", "Revision"]

Revision = Literal["continue", "fresh"]
"""How a revision is asked for: ``continue`` the exchange with the latest draft and its critique, or write a
``fresh`` answer from the task and the critiques, shown no draft."""
MAX_ISSUES_SHOWN = 6
"""A fresh revision lists at most this many critique points, the latest draft's first."""


class ReflectionRound(BaseModel):
    """One draft and the critique(s) of it."""

    round: int
    draft: str
    critiques: list[Critique] = []
    usage: Usage = {}

    @property
    def score(self) -> float | None:
        """The round's score: the lowest critic's, since every critic must be satisfied."""
        return min((c.score for c in self.critiques), default=None)

    @property
    def issues(self) -> list[str]:
        return [issue for c in self.critiques for issue in c.issues]


class ReflectionResult(MootResult):
    """A TaskResult plus what a reviewer of the loop needs: best draft, scores, usage, stop reason."""

    best: ReflectionRound | None = None
    """The highest-scoring critiqued round (earliest on ties); None if nothing was critiqued."""
    latest_draft: str | None = None
    rounds: list[ReflectionRound] = []
    parse_failures: int = 0

    @property
    def scores(self) -> list[float | None]:
        return [r.score for r in self.rounds]

    @property
    def answer(self) -> str | None:
        """The answer to use: the best-scoring draft, else the latest (unscored) draft."""
        return self.best.draft if self.best else self.latest_draft


class ReflectionState(BaseModel):
    """Everything needed to continue a reflection exactly where it stopped. Versioned."""

    type: Literal["ReflectionState"] = "ReflectionState"
    version: int = 2
    """2: ``rounds`` is left out of checkpoints and rebuilt from the transcript."""
    task: str | None = None
    next_critic: int = -1
    """-1: the generator writes next; i >= 0: critic i reviews the current draft next."""
    rounds: list[ReflectionRound] = []
    parse_failures: int = 0
    messages: list[Mapping[str, Any]] = []


def _rounds_from(transcript: Sequence[Any]) -> list[ReflectionRound]:
    """The rounds as the transcript records them: a round's draft, and the critiques of it."""
    rounds: list[ReflectionRound] = []
    for number, messages in messages_by_round(transcript).items():
        record: ReflectionRound | None = None
        for message in messages:
            if message.metadata.get("moot_kind") == DRAFT:
                record = ReflectionRound(round=number, draft=message.to_model_text())
                rounds.append(record)
            elif (
                record is not None and isinstance(message, StructuredMessage) and isinstance(message.content, Critique)
            ):
                record.critiques.append(message.content)
            else:
                continue
            add_usage(record.usage, message.source, message)
    return rounds


class ReflectionConfig(BaseModel):
    name: str
    description: str
    generator: ComponentModel
    critics: list[ComponentModel]
    stop: ComponentModel | None = None
    revision: Revision = "continue"


class Reflection(MootTeam, Component[ReflectionConfig]):
    """Generator + one or more critics in a revise loop (see module docstring).

    ``stop`` defaults to :func:`moot.conditions.default_stop`. Several critics
    (e.g. a test runner, then an LLM reviewer) each review every draft; the
    round's score is the lowest of theirs. ``revision``: see the module docstring.
    """

    _state_type = ReflectionState
    _derived_state = {"rounds": _rounds_from}  # drafts and critiques are turns: a checkpoint need not grow per round
    _signals = frozenset({"score"})

    component_config_schema = ReflectionConfig
    component_provider_override = "moot.teams.Reflection"

    def __init__(
        self,
        generator: ChatAgent,
        critic: ChatAgent | Sequence[ChatAgent],
        *,
        stop: Stop = None,
        revision: Revision = "continue",
        name: str = "reflection",
        description: str = "Generate, critique, revise until good enough.",
        custom_message_types: MessageTypes = None,
    ) -> None:
        self.generator, self.critics = _checked_agents(generator, critic)
        self.revision = checked_choice(revision, "Reflection", "revision", ("continue", "fresh"))
        super().__init__(
            checked_text(name, "Reflection", "name"),
            checked_text(description, "Reflection", "description", empty=True),
            stop if stop is not None else default_stop(),
            custom_message_types=custom_message_types,
        )

    # ------------------------------------------------------------------ turns
    async def _turns(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        while True:
            if self.state.next_critic < 0:
                yield [await self._generate(token)]
                continue
            batch = [await self._critique(self.state.next_critic, token)]
            if self.state.next_critic < 0:
                batch.append(self._round_event(self.state.rounds[-1]))
            yield batch

    def _agents(self) -> list[ChatAgent]:
        return [self.generator, *self.critics]

    async def _generate(self, token: CancellationToken) -> Message:
        state = self.state
        previous = state.rounds[-1] if state.rounds else None
        request = render_prompt("turns/generate", task=state.task)
        if previous is None:
            message = await self._agent_turn(self.generator, request, token)
        elif self.revision == "fresh":
            prompt = render_prompt("turns/redraft", task=state.task, issues=self._issues_so_far())
            message = await self._agent_turn(self.generator, prompt, token)
        else:
            # The revision continues the exchange that asked for the draft, with the draft as the generator's
            # own reply: a model that kept the state of that call reads the draft without evaluating it again.
            # Only the latest draft is shown, so the context stays bounded however many rounds run.
            history = [
                TextMessage(content=request, source="user"),
                TextMessage(content=previous.draft, source=self.generator.name),
            ]
            prompt = render_prompt("turns/revise", score=previous.score, issues=previous.issues)
            message = await self._agent_turn(self.generator, prompt, token, history=history)
        draft = message.to_model_text()
        record = ReflectionRound(round=len(state.rounds) + 1, draft=draft)
        add_usage(record.usage, self.generator.name, message)
        state.rounds.append(record)
        state.next_critic = 0
        message.metadata = {**message.metadata, "moot_kind": DRAFT, "round": str(record.round)}
        return message

    def _issues_so_far(self) -> list[str]:
        """Every draft's critique points, the latest draft's first, each once, at most ``MAX_ISSUES_SHOWN``."""
        lines = dict.fromkeys(issue for record in reversed(self.state.rounds) for issue in record.issues)
        return list(lines)[:MAX_ISSUES_SHOWN]

    async def _critique(self, index: int, token: CancellationToken) -> Message:
        state, critic = self.state, self.critics[index]
        current = state.rounds[-1]
        earlier = state.rounds[-2].issues if len(state.rounds) > 1 else []
        prompt = render_prompt("turns/critique", task=state.task, draft=current.draft, previous_issues=earlier)
        message = await self._agent_turn(critic, prompt, token)
        critique = _as_critique(critic.name, message)
        current.critiques.append(critique)
        add_usage(current.usage, critic.name, message)
        state.parse_failures += int(message.metadata.get("parse_failures", "0"))
        state.next_critic = index + 1 if index + 1 < len(self.critics) else -1
        return message

    def _round_event(self, record: ReflectionRound) -> RoundCompleted:
        return RoundCompleted(
            source=self.name,
            round=record.round,
            score=record.score,
            fingerprints={"draft": fingerprint(record.draft), "issues": fingerprint(*sorted(record.issues))},
        )

    # ----------------------------------------------------------------- result
    def _result(self, messages: list[Message], stop_reason: str, partial: bool) -> ReflectionResult:
        rounds = [r.model_copy(deep=True) for r in self.state.rounds]
        scored = [r for r in rounds if r.score is not None]
        best = max(scored, key=lambda r: r.score or 0.0, default=None)  # max keeps the earliest on ties
        return ReflectionResult(
            messages=messages,
            stop_reason=stop_reason,
            best=best,
            latest_draft=rounds[-1].draft if rounds else None,
            rounds=rounds,
            partial=partial,
            usage=total_usage(r.usage for r in rounds),
            parse_failures=self.state.parse_failures,
        )

    # ----------------------------------------------------------------- config
    def _to_config(self) -> ReflectionConfig:
        return ReflectionConfig(
            name=self.name,
            description=self.description,
            generator=self.generator.dump_component(),
            critics=[c.dump_component() for c in self.critics],
            stop=self._stop_component(),
            revision=self.revision,
        )

    @classmethod
    def _from_config(cls, config: ReflectionConfig) -> Self:
        return cls(
            ChatAgent.load_component(config.generator),
            [ChatAgent.load_component(c) for c in config.critics],
            stop=loaded_stop(config.stop),
            revision=config.revision,
            name=config.name,
            description=config.description,
        )


def _checked_agents(generator: object, critic: object) -> tuple[ChatAgent, list[ChatAgent]]:
    """The generator and the critics, or a one-line ConfigError: a critic must answer with a Critique (the
    loop reads its score and issues), the generator with the draft, and every agent needs its own name."""
    writer = checked_agent(generator, "Reflection", "generator (the first argument)", "the agent that writes drafts")
    critics = checked_agents(critic, "Reflection", "critic (the second argument)", "a critic")
    for agent in critics:
        if not answers_with(agent, Critique):
            raise ConfigError(
                f"Reflection: critic {agent.name!r} answers with {answer_name(agent)}; a critic must answer with a "
                "Critique: a RoleAgent on the critic role (role('critic')) or a TestCritic"
            )
    if answers_with(writer, Critique):
        raise ConfigError(
            f"Reflection: generator {writer.name!r} answers with a Critique; the generator writes the draft "
            "(e.g. RoleAgent(role('generator'), model)) and the critics review it"
        )
    distinct_names([writer, *critics], "Reflection")
    return writer, critics


def _as_critique(agent: str, message: BaseChatMessage) -> Critique:
    if isinstance(message, StructuredMessage) and isinstance(message.content, Critique):
        return message.content
    raise TypeError(f"critic {agent!r} must answer with StructuredMessage[Critique], got {type(message).__name__}")
