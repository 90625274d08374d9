"""CodeDebate: experts argue with programs and test results, not prose; the evidence picks the program.

Round 1: every expert writes a complete candidate program alone (the prompt
is the task itself, exactly as one generator call sees it). Each candidate
runs on the visible tests in the sandbox (plus the probe calls, whose
outputs group candidates by behaviour).

A later round runs only while no candidate passes every visible test: once
one does, no program can beat it on the evidence, and a round could only
move votes (measured on HumanEval: 19 second rounds of 50 items changed no
outcome and cost 27% of the tokens). In a later round each expert sees the
task and the visible tests the standing programs fail (its own first), never
their code, and writes a new program, tested like any candidate: shown its
program, a small model hands it back unchanged. The new program is adopted
only when it passes strictly more visible tests than the one the expert
held; otherwise the expert keeps its program and the new one stays on
record, out of the ruling.

The ruling is :class:`moot.arbiters.ProgramVote` over the candidates experts
held (round 1's and adopted fixes): the most visible tests passed, then the
most experts holding a program that behaves like it, then the earliest. It
always picks a program an expert wrote. The hidden scoring tests are never
given to this team.
"""

from __future__ import annotations

import string
from collections.abc import AsyncGenerator, Sequence
from typing import Self

from autogen_agentchat.base import ChatAgent, TerminationCondition
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage
from autogen_core import CancellationToken, Component, ComponentModel
from pydantic import BaseModel

from moot.arbiters import Candidate, Evidence, ProgramRuling, ProgramVote, same_behaviour
from moot.boundary import argument_error, checked_optional_text, checked_strings, checked_text
from moot.conditions import Consensus, MaxRounds, TokenBudget
from moot.errors import ConfigError
from moot.messages import RoundCompleted
from moot.roles import RoleAgent, answer_name, answer_types, checked_agents, render_prompt
from moot.sandbox import SandboxLimits, SandboxRunner, extract_code, run_tests, validate_tests, without_scaffolding
from moot.teams._base import Message, MessageTypes, MootTeam, Stop, checked_experts, loaded_stop
from moot.teams._code_debate_records import (
    CodeChoice,
    CodeDebateResult,
    CodeDebateState,
    CodeRound,
    code_metrics,
)
from moot.teams._code_evidence import program_evidence
from moot.teams._records import add_usage, fingerprint, total_usage

__all__ = ["CodeDebate", "CodeDebateConfig", "default_code_debate_stop"]

TEST_LIMITS = SandboxLimits(wall_seconds=20, test_seconds=10, cpu_seconds=15)
MAX_FAILURES_SHOWN = 6
"""A later round's prompt lists at most this many failing tests, so prompts stay flat as experts add up."""


def default_code_debate_stop() -> TerminationCondition:
    return Consensus() | MaxRounds(2) | TokenBudget(60_000)


class CodeDebateConfig(BaseModel):
    name: str
    description: str
    experts: list[ComponentModel]
    tests: list[str]
    stub: str = ""
    entry_point: str | None = None
    probe_calls: list[str] = []
    stop: ComponentModel | None = None
    limits: SandboxLimits = TEST_LIMITS


def _checked_writers(experts: object) -> list[ChatAgent]:
    """Agents that answer in free text with a program, or a one-line ConfigError: a structured answer (a
    Critique, a Position) holds no program to run."""
    agents = checked_agents(experts, "CodeDebate", "experts", "an expert")
    for agent in agents:
        if str not in answer_types(agent):
            raise ConfigError(
                f"CodeDebate: expert {agent.name!r} answers with {answer_name(agent)}; a code debate's experts answer "
                "in free text with a program (a RoleAgent on a text role, e.g. role('generator'))"
            )
    return agents


class CodeDebate(MootTeam, Component[CodeDebateConfig]):
    """Experts debate with candidate programs and their visible-test results (see module docstring).

    ``experts`` answer in free text with a fenced program (a RoleAgent on the
    ``generator`` role is the usual choice; give each its own seed or
    temperature so first candidates differ). ``tests`` are the visible tests
    (Python snippets, usually asserts). With ``stub`` and ``entry_point`` a
    reply is run after the stub (its imports and helpers), as a task's stub
    would be. ``probe_calls`` are example calls whose outputs group
    candidates by behaviour. ``runner`` replaces the sandbox (not saved by
    ``dump_component``).
    """

    _state_type = CodeDebateState
    _signals = frozenset({"agreement"})

    component_config_schema = CodeDebateConfig
    component_provider_override = "moot.teams.CodeDebate"

    def __init__(
        self,
        experts: Sequence[RoleAgent],
        tests: Sequence[str],
        *,
        stub: str = "",
        entry_point: str | None = None,
        probe_calls: Sequence[str] = (),
        stop: Stop = None,
        limits: SandboxLimits | None = None,
        runner: SandboxRunner | None = None,
        name: str = "code_debate",
        description: str = "Experts propose programs, see each other's test results, fix while none passes "
        "every visible test; the evidence picks the program.",
        custom_message_types: MessageTypes = None,
    ) -> None:
        where = "CodeDebate"
        writers = _checked_writers(experts)
        self.experts = checked_experts(writers, "code debate", most=len(string.ascii_uppercase))
        self.tests = validate_tests(checked_strings(tests, where, "tests", example="['assert add(1, 2) == 3']"))
        self.stub = checked_text(stub, where, "stub", empty=True)
        self.entry_point = checked_optional_text(entry_point, where, "entry_point")
        if self.entry_point is not None and not self.entry_point.isidentifier():
            raise argument_error(where, "entry_point", "None or the tested function's name, e.g. 'add'", entry_point)
        self.probe_calls = checked_strings(probe_calls, where, "probe_calls", example="['add(1, 2)']")
        if limits is not None and not isinstance(limits, SandboxLimits):
            raise argument_error(where, "limits", "None or a moot.sandbox.SandboxLimits", limits)
        self.limits = limits or TEST_LIMITS
        if runner is not None and not callable(runner):
            raise argument_error(where, "runner", "None or a function that runs tests (moot.sandbox.run_tests)", runner)
        self.runner: SandboxRunner = runner or run_tests
        super().__init__(
            checked_text(name, where, "name"),
            checked_text(description, where, "description", empty=True),
            stop if stop is not None else default_code_debate_stop(),
            custom_message_types=custom_message_types,
        )
        self.letters = {e.name: string.ascii_uppercase[i] for i, e in enumerate(self.experts)}

    # ------------------------------------------------------------------ turns
    async def _turns(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        while True:
            rounds = self.state.rounds
            if not rounds or len(rounds[-1].choices) == len(self.experts):
                if rounds and self._settled() is not None:
                    return  # a candidate passes every visible test: no later round can beat it on the evidence
                rounds.append(CodeRound(round=len(rounds) + 1))
            current = rounds[-1]
            expert = self.experts[len(current.choices)]
            if current.round == 1:
                batch = [await self._write(expert, current, token)]
            else:
                batch = [await self._fix(expert, current, token)]
            if len(current.choices) == len(self.experts):
                batch.append(self._round_event(current))
            yield batch

    def _settled(self) -> Candidate | None:
        """The first held candidate that passes every visible test, if any."""
        return next((c for c in self._eligible() if c.evidence.all_pass), None)

    def _done_reason(self) -> str:
        settled = self._settled()
        if settled is None:
            return super()._done_reason()
        return f"settled: {settled.id} passes every visible test (round {settled.round})"

    async def _write(self, expert: RoleAgent, current: CodeRound, token: CancellationToken) -> Message:
        """Round 1: the task alone, exactly as a single generator call sees it."""
        message = await self._agent_turn(expert, self.state.task or "", token)
        candidate = await self._candidate(expert.name, message, current.round, self.letters[expert.name])
        current.choices[expert.name] = CodeChoice(action="wrote", holds=candidate.id)
        add_usage(current.usage, expert.name, message)
        return message

    async def _fix(self, expert: RoleAgent, current: CodeRound, token: CancellationToken) -> Message:
        """A later round: a new program written from the failing tests; adopted only if it passes strictly more."""
        own = self._held(expert.name)
        prompt = render_prompt("turns/code_fix", task=self.state.task, failures=self._failures(own))
        message = await self._agent_turn(expert, prompt, token)
        letter = f"{self.letters[expert.name]}{current.round}"
        fixed = await self._candidate(expert.name, message, current.round, letter, based_on=own.id)
        adopted = fixed.evidence.passed > own.evidence.passed
        current.choices[expert.name] = CodeChoice(
            action="fix" if adopted else "keep",
            holds=fixed.id if adopted else own.id,
            reasoning=f"{fixed.id} {fixed.evidence.summary()}; {own.id} {own.evidence.summary()}",
            fixed=fixed.id,
        )
        add_usage(current.usage, expert.name, message)
        message.metadata = {**message.metadata, "action": "fix" if adopted else "keep"}
        return message

    def _failures(self, own: Candidate) -> list[str]:
        """The visible tests the standing programs fail, the expert's own first, each once.

        The fix prompt shows failures, never code: shown its program, a small model returns it
        unchanged (HumanEval 100-130: 30 fixes, none passed more tests); shown only what failed, it
        writes a new program from the task.
        """
        standing = [own, *(c for c in self._standing() if c.id != own.id)]
        lines = dict.fromkeys(f for c in standing for f in c.evidence.failures)
        return list(lines)[:MAX_FAILURES_SHOWN]

    async def _candidate(
        self, author: str, message: BaseChatMessage, round_: int, cid: str, based_on: str | None = None
    ) -> Candidate:
        reply = message.to_model_text()
        candidate = Candidate(
            id=cid,
            author=author,
            round=round_,
            code=without_scaffolding(extract_code(reply)[0]),
            origin="fixed" if based_on else "wrote",
            based_on=based_on,
            evidence=await self._evidence(reply),
        )
        self.state.candidates[cid] = candidate
        message.metadata = {
            **message.metadata,
            "moot_kind": "candidate",
            "round": str(round_),
            "candidate": cid,
            "tests_passed": str(candidate.evidence.passed),
            "tests_total": str(candidate.evidence.total),
        }
        return candidate

    async def _evidence(self, reply: str) -> Evidence:
        return await program_evidence(
            reply, self.tests, runner=self.runner, limits=self.limits, stub=self.stub, entry_point=self.entry_point,
            probe_calls=self.probe_calls, tool=f"{self.name} sandbox",
        )  # fmt: skip

    # --------------------------------------------------------------- views
    def _held(self, expert: str) -> Candidate:
        """The candidate ``expert`` holds after its latest move."""
        for record in reversed(self.state.rounds):
            if expert in record.choices:
                return self.state.candidates[record.choices[expert].holds]
        raise KeyError(f"{expert} holds no candidate yet")

    def _eligible(self) -> list[Candidate]:
        """The candidates some expert held after some round (round 1's and adopted fixes), in order proposed."""
        held = {c.holds for r in self.state.rounds for c in r.choices.values()}
        return [c for c in self.state.candidates.values() if c.id in held]

    def _standing(self) -> list[Candidate]:
        """The candidates held after the last completed round, once each, in the experts' order."""
        held = self.state.rounds[-2].holding if len(self.state.rounds) > 1 else {}
        ids = list(dict.fromkeys(held[e.name] for e in self.experts if e.name in held))
        return [self.state.candidates[i] for i in ids]

    def _round_event(self, record: CodeRound) -> RoundCompleted:
        held = [self.state.candidates[c.holds] for c in record.choices.values()]
        passing = [c for c in held if c.evidence.all_pass]
        alike = max((sum(same_behaviour(c, other) for other in passing) for c in passing), default=0)
        agreement = alike / len(self.experts)
        return RoundCompleted(
            source=self.name,
            round=record.round,
            agreement=agreement,
            fingerprints={"candidates": fingerprint(*(f"{c.id}={c.evidence.behaviour}" for c in held))},
        )

    def _agents(self) -> list[ChatAgent]:
        return list(self.experts)

    # ---------------------------------------------------------------- ruling
    async def _closing(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        candidates = self._eligible()
        if not candidates:
            return
        held = {
            e.name: self._held(e.name).id for e in self.experts if any(e.name in r.choices for r in self.state.rounds)
        }
        ruling = ProgramVote().rule(candidates, held)
        self.state.ruling = ruling
        message = StructuredMessage[ProgramRuling](content=ruling, source=ProgramVote.name)
        message.metadata = {"moot_kind": "verdict"}
        yield [message]

    def _result(self, messages: list[Message], stop_reason: str, partial: bool) -> CodeDebateResult:
        state = self.state
        rounds = [r.model_copy(deep=True) for r in state.rounds]
        return CodeDebateResult(
            messages=messages,
            stop_reason=stop_reason,
            ruling=state.ruling,
            candidates=list(state.candidates.values()),
            rounds=rounds,
            partial=partial or state.ruling is None,
            usage=total_usage(r.usage for r in rounds),
            metrics=code_metrics(
                rounds, state.candidates, state.ruling.candidate if state.ruling else None, state.parse_failures
            ),
        )

    # ----------------------------------------------------------------- config
    def _to_config(self) -> CodeDebateConfig:
        return CodeDebateConfig(
            name=self.name,
            description=self.description,
            experts=[e.dump_component() for e in self.experts],
            tests=self.tests,
            stub=self.stub,
            entry_point=self.entry_point,
            probe_calls=self.probe_calls,
            stop=self._stop_component(),
            limits=self.limits,
        )

    @classmethod
    def _from_config(cls, config: CodeDebateConfig) -> Self:
        return cls(
            [ChatAgent.load_component(e) for e in config.experts],  # type: ignore[misc]
            config.tests,
            stub=config.stub,
            entry_point=config.entry_point,
            probe_calls=config.probe_calls,
            stop=loaded_stop(config.stop),
            limits=config.limits,
            name=config.name,
            description=config.description,
        )
