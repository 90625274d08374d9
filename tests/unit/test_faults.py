"""Fault injection: 429s, 500s, timeouts and malformed JSON at a 20% rate over many scripted runs.

Every run must complete or end with a classified error (malformed output:
a partial result; transient faults beyond the retries: TransientModelError),
and no turn may be lost or duplicated: each model-authored message in the
transcript is exactly one call that got through intact, rounds are numbered
without gaps, and the run store holds exactly the transcript.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count

import openai
import pytest
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage, TextMessage
from autogen_core.models import UserMessage

from moot import Critique, Reflection, RoleAgent, role
from moot.conditions import Consensus, MaxRounds
from moot.errors import ConfigError, TransientModelError
from moot.messages import RoundCompleted, TurnFailed
from moot.models._retry import RetryingClient, RetryPolicy
from moot.store import RunStore
from moot.teams import Debate
from moot.teams._base import MootTeam
from moot.testing import DeterministicModel, FaultyClient, ScriptedClient

RUNS = 120
RATE = 0.2
ROUNDS = 3
EXPERTS = ("architect", "ops", "business")
# Real delays (they are summed below), never slept: the sleep knob is a no-op. Three attempts and one
# parse retry keep both error paths in reach of 120 runs; the defaults (5 attempts, 2 retries) rarely give up.
POLICY = RetryPolicy(max_attempts=3)
PARSE_RETRIES = 1
REFLECTION_TASK = "Write a Python function add(a, b) that returns the sum."
DEBATE_TASK = "Should we split the billing module out of the monolith?"


@dataclass
class Wiring:
    """Each agent's inner client, fault injector and retry layer, for one run."""

    run: int
    inner: dict[str, ScriptedClient] = field(default_factory=dict)
    faulty: dict[str, FaultyClient] = field(default_factory=dict)
    retrying: dict[str, RetryingClient] = field(default_factory=dict)
    waits: list[float] = field(default_factory=list)

    def agent(self, name: str) -> RoleAgent:
        self.inner[name] = DeterministicModel().client(name)
        self.faulty[name] = FaultyClient(self.inner[name], rate=RATE, seed=self.run * 10 + len(self.faulty))
        self.retrying[name] = RetryingClient(self.faulty[name], POLICY, model=f"faulty:{name}", sleep=self._sleep)
        return RoleAgent(role(name), self.retrying[name], max_parse_retries=PARSE_RETRIES)

    async def _sleep(self, delay: float) -> None:
        self.waits.append(delay)


def build(run: int) -> tuple[MootTeam, Wiring, str]:
    wiring = Wiring(run)
    if run % 2 == 0:
        team: MootTeam = Reflection(wiring.agent("generator"), wiring.agent("critic"), stop=MaxRounds(ROUNDS))
        return team, wiring, REFLECTION_TASK
    experts = [wiring.agent(name) for name in EXPERTS]
    team = Debate(experts, wiring.agent("arbiter"), stop=Consensus() | MaxRounds(ROUNDS), choices=("split", "keep"))
    return team, wiring, DEBATE_TASK


# ------------------------------------------------------------------ the checks
def shape(message: object) -> tuple[object, ...]:
    """A message reduced to what the turn order is about: kind, speaker, round."""
    if isinstance(message, RoundCompleted):
        return ("round", message.round)
    if isinstance(message, TurnFailed):  # a turn out of retries: its spent calls, recorded
        return ("failed", message.source)
    assert isinstance(message, BaseChatMessage), message
    kind = message.metadata.get("moot_kind")
    if kind in ("draft", "position"):
        return (kind, message.source, int(message.metadata["round"]))
    if kind == "verdict":
        return ("verdict",)
    if isinstance(message, StructuredMessage) and isinstance(message.content, Critique):
        return ("critique", message.source)
    assert isinstance(message, TextMessage) and message.source == "user", message
    return ("task",)


def expected_order(team: MootTeam) -> Iterator[tuple[object, ...]]:
    """The one legal turn order, without end: rounds numbered from 1, each closed by exactly one event."""
    yield ("task",)
    for number in count(1):
        if isinstance(team, Reflection):
            yield from [("draft", "generator", number), ("critique", "critic"), ("round", number)]
        else:
            yield from [*(("position", name, number) for name in EXPERTS), ("round", number)]


def check_order(team: MootTeam, outcome: str) -> None:
    shapes = [shape(m) for m in team.transcript]
    ends = [s for s in shapes if s != ("verdict",)]
    failed = [i for i, s in enumerate(ends) if s[0] == "failed"]
    assert len(failed) <= 2 and all(i >= len(ends) - len(failed) for i in failed), "a failed turn ends the turns"
    shapes = [s for s in shapes if s[0] != "failed"]
    verdicts = [i for i, s in enumerate(shapes) if s == ("verdict",)]
    assert verdicts in ([], [len(shapes) - 1]), "a verdict, if any, is the one last message"
    turns = shapes[: len(shapes) - len(verdicts)]
    assert turns == [s for s, _ in zip(expected_order(team), turns, strict=False)], "turns out of order"
    if isinstance(team, Reflection) and outcome == "completed":
        assert turns[-1] == ("round", ROUNDS)
    if isinstance(team, Debate):
        assert verdicts or len(turns) == 1, "a debate ends with a verdict, even when a fault cut it short"


def check_calls(team: MootTeam, wiring: Wiring) -> int:
    """Every model-authored message is one intact reply, and every intact reply made it into the transcript."""
    for name, faulty in wiring.faulty.items():
        said = [m for m in team.transcript if isinstance(m, BaseChatMessage) and m.source == name]
        assert len(said) == len(faulty.delivered), f"{name}: {len(said)} messages for {len(faulty.delivered)} replies"
        for message, reply in zip(said, faulty.delivered, strict=True):
            if isinstance(message, StructuredMessage):
                stored = message.content
                if getattr(stored, "proposed", None):  # an unargued change is kept as said, not adopted
                    stored = stored.model_copy(update={"answer": stored.proposed, "proposed": None})
                assert type(message.content).model_validate_json(str(reply.content)) == stored
            else:
                assert message.content == reply.content
        # Raised faults never reach the model; malformed replies do (they are real replies, cut short).
        assert len(wiring.inner[name].calls) == len(faulty.delivered) + faulty.injected["malformed"]
        retrying = wiring.retrying[name]
        raised = faulty.calls - len(faulty.delivered) - faulty.injected["malformed"]
        assert retrying.attempts == faulty.calls
        assert retrying.retries + retrying.exhausted == raised
    return sum(len(f.delivered) for f in wiring.faulty.values())


def check_store(team: MootTeam, outcome: str) -> None:
    assert team.run_id is not None
    store = RunStore.shared(None)
    turns = store.turns(team.run_id)
    assert [t.seq for t in turns] == list(range(len(team.transcript)))
    assert [t.step_id for t in turns] == [f"{team.run_id}:{seq}" for seq in range(len(turns))]
    assert [t.payload for t in turns] == [json.loads(json.dumps(m.dump())) for m in team.transcript]
    record = store.get(team.run_id)
    status = {"completed": "finished", "partial": "partial", "transient": "partial"}[outcome]
    assert record.status == status
    if outcome == "transient":  # out of retries: the best so far, labelled partial, with the reason
        assert (record.stop_reason or "").startswith("error: model faulty:")


def classify(result: object, error: TransientModelError | None) -> str:
    if error is not None:
        assert error.attempts == POLICY.max_attempts
        assert isinstance(error.__cause__, openai.RateLimitError | openai.InternalServerError | openai.APITimeoutError)
        return "transient"
    partial = getattr(result, "partial", None)
    assert isinstance(partial, bool)
    reason = str(getattr(result, "stop_reason", ""))
    if not partial:
        assert reason.startswith(("max rounds:", "consensus")), reason
        return "completed"
    if reason.startswith("error: model faulty:") and "kept failing on transient faults" in reason:
        return "transient"
    malformed = reason.startswith("error: ") and " gave malformed output 2 times; last error: " in reason
    assert malformed or "majority vote ruled" in reason, reason
    return "partial"


@dataclass
class Figures:
    outcomes: Counter[str] = field(default_factory=Counter)
    injected: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    delivered: int = 0
    retries: int = 0
    exhausted: int = 0
    waited: float = 0.0

    def add(self, wiring: Wiring, outcome: str, delivered: int) -> None:
        self.outcomes[outcome] += 1
        self.delivered += delivered
        for faulty in wiring.faulty.values():
            self.injected.update(faulty.injected)
            self.calls += faulty.calls
        self.retries += sum(r.retries for r in wiring.retrying.values())
        self.exhausted += sum(r.exhausted for r in wiring.retrying.values())
        self.waited += sum(wiring.waits)

    def report(self) -> str:
        kinds = ", ".join(f"{k} {self.injected[k]}" for k in ("429", "500", "timeout", "malformed"))
        return (
            f"fault injection over {sum(self.outcomes.values())} runs at rate {RATE}: "
            f"completed {self.outcomes['completed']}, partial {self.outcomes['partial']}, "
            f"out of retries (ended partial) {self.outcomes['transient']}; model calls {self.calls}, intact replies "
            f"{self.delivered}; faults injected {sum(self.injected.values())} ({kinds}); retries {self.retries}, "
            f"calls given up {self.exhausted}; backoff that would have been slept {self.waited:.1f}s"
        )


async def run_once(run: int, figures: Figures) -> None:
    team, wiring, task = build(run)
    result, error = None, None
    try:
        result = await team.run(task=task)
    except TransientModelError as exc:
        error = exc
    outcome = classify(result, error)
    check_order(team, outcome)
    delivered = check_calls(team, wiring)
    check_store(team, outcome)
    figures.add(wiring, outcome, delivered)


async def test_every_faulty_run_completes_or_ends_classified_and_no_turn_is_lost_or_duplicated():
    figures = Figures()
    for run in range(RUNS):
        try:
            await run_once(run, figures)
        except AssertionError as exc:
            raise AssertionError(f"run {run} ({'reflection' if run % 2 == 0 else 'debate'}): {exc}") from exc
    print("\n" + figures.report())
    assert sum(figures.outcomes.values()) == RUNS
    assert figures.outcomes["completed"] > RUNS // 2
    assert figures.outcomes["partial"] > 0 and figures.outcomes["transient"] > 0, "both error paths exercised"
    assert all(figures.injected[k] > 0 for k in ("429", "500", "timeout", "malformed"))
    assert figures.retries > 0


# ------------------------------------------------------------ the injector itself
PROMPT = [UserMessage(content="hello", source="user")]


def endless(agent: str = "agent") -> ScriptedClient:
    return DeterministicModel().client(agent)


async def outcomes(client: FaultyClient, calls: int, json_output: type | None = Critique) -> list[str]:
    seen = []
    for _ in range(calls):
        try:
            result = await client.create(PROMPT, json_output=json_output)
        except openai.APIError as exc:
            seen.append(type(exc).__name__)
        else:
            seen.append("ok" if result in client.delivered else "malformed")
    return seen


async def test_the_same_seed_injects_the_same_faults_at_the_same_calls():
    first = await outcomes(FaultyClient(endless(), rate=0.5, seed=3), 40)
    again = await outcomes(FaultyClient(endless(), rate=0.5, seed=3), 40)
    other = await outcomes(FaultyClient(endless(), rate=0.5, seed=4), 40)
    assert first == again != other
    assert set(first) == {"ok", "malformed", "RateLimitError", "InternalServerError", "APITimeoutError"}


async def test_rate_zero_never_injects_and_rate_one_always_does():
    clean = FaultyClient(endless(), rate=0.0, seed=1)
    assert set(await outcomes(clean, 20)) == {"ok"}
    assert sum(clean.injected.values()) == 0
    broken = FaultyClient(endless(), rate=1.0, seed=1)
    assert "ok" not in await outcomes(broken, 20)
    assert sum(broken.injected.values()) == broken.calls == 20


async def test_injected_errors_are_the_sdks_own_with_real_responses():
    rate_limited = FaultyClient(endless(), rate=1.0, seed=0, faults=("429",))
    with pytest.raises(openai.RateLimitError) as info:
        await rate_limited.create(PROMPT)
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "1"
    assert info.value.response.request.url.path == "/v1/chat/completions"
    with pytest.raises(openai.InternalServerError) as server:
        await FaultyClient(endless(), rate=1.0, seed=0, faults=("500",)).create(PROMPT)
    assert server.value.status_code == 500
    with pytest.raises(openai.APITimeoutError):
        await FaultyClient(endless(), rate=1.0, seed=0, faults=("timeout",)).create(PROMPT)
    with pytest.raises(openai.APIConnectionError):
        await FaultyClient(endless(), rate=1.0, seed=0, faults=("connection",)).create(PROMPT)


async def test_malformed_is_the_real_reply_cut_short_and_only_for_json_calls():
    inner = endless("critic")
    client = FaultyClient(inner, rate=1.0, seed=0, faults=("malformed",))
    result = await client.create(PROMPT, json_output=Critique)
    intact = await endless("critic").create(PROMPT, json_output=Critique)
    assert intact.content.startswith(result.content) and len(result.content) < len(intact.content)
    with pytest.raises(json.JSONDecodeError):
        json.loads(result.content)
    text = await client.create(PROMPT)  # a plain-text call: nothing to break
    assert text in client.delivered
    assert client.injected == {"malformed": 1}
    assert len(inner.calls) == 2


async def test_streams_and_usage_go_through_the_injector():
    inner = endless()
    client = FaultyClient(inner, rate=0.0, seed=0)
    items = [item async for item in client.create_stream(PROMPT)]
    assert items[0] == items[1].content
    assert client.total_usage() == inner.total_usage()
    assert client.count_tokens(PROMPT) == inner.count_tokens(PROMPT)
    assert client.model_info == inner.model_info


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"faults": ("429", "503")},
            "unknown fault kinds ['503']; valid kinds: 429, 500, timeout, connection, malformed",
        ),
        ({"faults": ()}, "unknown fault kinds none given; valid kinds: "),
        ({"rate": 1.5}, "fault rate must be between 0 and 1, got 1.5"),
    ],
)
def test_bad_injector_settings_name_what_is_valid(options, message):
    settings = {"rate": 0.2, "seed": 0, **options}
    with pytest.raises(ConfigError) as info:
        FaultyClient(endless(), **settings)
    assert str(info.value).startswith(message)
