"""Debate as an AutoGen Team: streaming, save/load and resume, reset, the run guard, bad configs, usage."""

from __future__ import annotations

import json

import pytest
from autogen_agentchat.messages import StructuredMessage

from moot import ConfigError
from moot.arbiters import MajorityVote, Verdict
from moot.conditions import Consensus, MaxRounds
from moot.roles import Position, RoleAgent, role
from moot.teams import Debate, DebateResult
from moot.testing import ScriptedModel, count_words
from tests.conftest import EXPERTS, CheckpointRecorder, make_debate, make_position, make_rebuttal, make_verdict

TASK = "Should we split the billing module out of the monolith?"


def normalised(messages):
    """(type, source, essentials) per message: the transcript a reviewer of the debate reads."""
    rows = []
    for m in messages:
        if isinstance(m, StructuredMessage) and isinstance(m.content, Position):
            text = f"{m.content.answer} @{m.content.confidence:g}"
        elif isinstance(m, StructuredMessage) and isinstance(m.content, Verdict):
            text = f"rules {m.content.decision} @{m.content.confidence:g}"
        else:
            text = m.to_text()
        rows.append((type(m).__name__, m.source, text))
    return rows


def three_rounds() -> ScriptedModel:
    """Nobody agrees for three rounds; each round's arguments are new."""
    stances = {"architect": "split", "ops": "keep", "business": "defer"}
    return ScriptedModel(
        {
            **{
                name: [make_position(s, f"{name} point 1"), *(make_rebuttal(s, f"{name} point {k}") for k in (2, 3))]
                for name, s in stances.items()
            },
            "arbiter": [make_verdict("keep")],
        }
    )


def prompts(model):
    return [call.prompt_text for agent in (*EXPERTS, "arbiter") for call in model.calls(agent)]


def outline(result):
    return [(r.round, {n: (p.answer, p.key_arguments) for n, p in r.positions.items()}) for r in result.rounds]


async def test_run_stream_yields_task_positions_rounds_verdict_then_the_result():
    model = ScriptedModel(
        {
            "architect": [make_position("split"), make_rebuttal("keep", confidence=0.6)],
            "ops": [make_position("keep", confidence=0.9), make_rebuttal("keep", confidence=0.9)],
            "arbiter": [make_verdict("keep")],
        }
    )
    with model:
        team = make_debate(model, Consensus() | MaxRounds(3), experts=("architect", "ops"), seed=3)
        items = [item async for item in team.run_stream(task=TASK)]
    result = items[-1]
    assert isinstance(result, DebateResult)
    assert normalised(items[:-1]) == [
        ("TextMessage", "user", TASK),
        ("StructuredMessage[Position]", "architect", "split @0.7"),
        ("StructuredMessage[Position]", "ops", "keep @0.9"),
        ("RoundCompleted", "debate", "round 1 completed, agreement 0.50"),
        ("StructuredMessage[Position]", "architect", "keep @0.6"),
        ("StructuredMessage[Position]", "ops", "keep @0.9"),
        ("RoundCompleted", "debate", "round 2 completed, agreement 1.00"),
        ("StructuredMessage[Verdict]", "arbiter", "rules keep @0.8"),
    ]
    assert items[1].metadata.items() >= {"parse_failures": "0", "moot_kind": "position", "round": "1"}.items()
    assert (
        items[-2].metadata.items()
        >= {
            "parse_failures": "0",
            "moot_kind": "verdict",
            "arbiter_order": ",".join(result.arbiter_order),
        }.items()
    )
    assert result.messages == items[:-1]
    assert (result.stop_reason, result.answer, result.verdict_by, result.partial) == (
        "consensus: agreement 1.00 >= 1 in round 2",
        "keep",
        "arbiter",
        False,
    )


async def test_run_stream_can_leave_out_the_task_message():
    model = ScriptedModel({"architect": [make_position("keep")], "ops": [make_position("keep")]})
    with model:
        team = Debate([RoleAgent(role(n), model.spec) for n in ("architect", "ops")], MajorityVote(), stop=MaxRounds(1))
        items = [i async for i in team.run_stream(task=TASK, output_task_messages=False)]
    assert [row[1] for row in normalised(items[:-1])] == ["architect", "ops", "debate", "majority_vote"]


@pytest.mark.parametrize("cut_after", [2, 4, 5, 6, 9])  # mid round 1, between its last turn and its end, ...
async def test_save_and_load_mid_run_continues_like_an_uninterrupted_run(cut_after):
    with three_rounds() as straight:
        expected = await make_debate(straight, MaxRounds(3)).run(task=TASK)

    with three_rounds() as resumed:
        first = make_debate(resumed, MaxRounds(3))
        stream = first.run_stream(task=TASK)
        seen = [await anext(stream) for _ in range(cut_after)]
        await stream.aclose()  # e.g. the process was stopped mid-run
        state = json.loads(json.dumps(await first.save_state()))
        second = make_debate(resumed, MaxRounds(3))
        await second.load_state(state)
        result = await second.run()

    assert (state["type"], state["version"]) == ("DebateState", 2)
    assert "rounds" not in state  # rebuilt from the saved messages on load
    assert normalised(second.transcript) == normalised(expected.messages)
    assert normalised(result.messages) == normalised(expected.messages)[-len(result.messages) :]
    assert len(seen) + len(result.messages) <= len(expected.messages)  # a cut batch's tail is recorded, not re-sent
    assert outline(result) == outline(expected)
    assert (result.verdict, result.arbiter_order, result.stop_reason) == (
        expected.verdict,
        expected.arbiter_order,
        "max rounds: 3 of 3 rounds done",
    )
    assert result.metrics == expected.metrics
    assert result.usage == expected.usage
    assert prompts(resumed) == prompts(straight)


async def test_a_loaded_debate_continues_like_the_live_debate_that_saved_it():
    def two_rounds():
        script = three_rounds()
        for name in EXPERTS:
            script.clients[name].replies.pop()
        script.clients["arbiter"].replies.append(make_verdict("split"))
        return script

    with two_rounds() as live:
        team = make_debate(live, MaxRounds(1))
        await team.run(task=TASK)
        expected = await team.run()  # the stop was reset after the first run: one more round

    with two_rounds() as restored:
        team = make_debate(restored, MaxRounds(1))
        await team.run(task=TASK)
        fresh = make_debate(restored, MaxRounds(1))
        await fresh.load_state(await team.save_state())  # replaying the transcript fires MaxRounds(1)
        result = await fresh.run()
    assert outline(result) == outline(expected)
    assert (result.answer, result.stop_reason) == (expected.answer, expected.stop_reason)
    assert expected.stop_reason == "max rounds: 1 of 1 rounds done (2 in all)"
    assert prompts(restored) == prompts(live)


async def test_reset_clears_progress():
    model = ScriptedModel(
        {
            "architect": [make_position("split", "OLD-POINT point"), make_position("keep")],
            "ops": [make_position("keep"), make_position("keep")],
            "arbiter": [make_verdict("keep"), make_verdict("keep")],
        }
    )
    with model:
        team = make_debate(model, MaxRounds(1), experts=("architect", "ops"))
        await team.run(task=TASK)
        await team.reset()
        assert team.transcript == []
        with pytest.raises(ValueError, match="no task given and no task to continue"):
            await team.run()
        result = await team.run(task="Another decision")
    assert [r.round for r in result.rounds] == [1]
    prompt = model.calls("ops")[1].prompt_text
    assert "Another decision" in prompt and "This is the first round" in prompt
    assert "OLD-POINT point" not in prompt and "Your position last round" not in prompt


async def test_a_debate_cannot_run_twice_concurrently():
    model = ScriptedModel(
        {
            "architect": [make_position("keep"), make_position("keep")],
            "ops": [make_position("keep"), make_position("keep")],
            "arbiter": [make_verdict("keep"), make_verdict("keep")],
        }
    )
    with model:
        team = make_debate(model, Consensus(), experts=("architect", "ops"))
        stream = team.run_stream(task=TASK)
        assert (await anext(stream)).source == "user"
        with pytest.raises(ValueError, match="'debate' is already running"):
            await team.run(task="another")
        with pytest.raises(ValueError, match="is running; it cannot be reset now"):
            await team.reset()
        rest = [item async for item in stream]
        assert rest[-1].answer == "keep"
        assert (await team.run(task="another")).answer == "keep"  # the guard is released


@pytest.mark.parametrize(
    ("experts", "message"),
    [
        ((), "a debate needs at least two experts, got 0: none"),
        (("architect",), "a debate needs at least two experts, got 1: architect"),
        (("ops", "ops"), "expert names must be unique, got ops, ops"),
    ],
)
def test_a_debate_needs_two_distinctly_named_experts(experts, message):
    with ScriptedModel({"architect": [], "ops": []}) as model:
        with pytest.raises(ConfigError) as raised:
            make_debate(model, MaxRounds(1), experts=experts, arbiter=MajorityVote())
    assert str(raised.value) == message


async def test_usage_per_agent_per_round_is_the_scripted_word_count():
    replies = {
        "architect": [make_position("split"), make_rebuttal("keep", claim="ops: argument for keep")],
        "ops": [make_position("keep"), "not json at all", make_rebuttal("keep", claim="architect: argument for split")],
        "arbiter": [make_verdict("keep")],
    }  # round 2 of ops is retried once
    model = ScriptedModel(replies)
    with model:
        result = await make_debate(model, MaxRounds(2), experts=("architect", "ops")).run(task=TASK)

    def words(reply):
        return count_words(reply if isinstance(reply, str) else reply.model_dump_json())

    turns = {"architect": [[0], [1]], "ops": [[0], [1, 2]]}  # which calls belong to which round
    for name, rounds in turns.items():
        calls = model.calls(name)
        for number, indices in enumerate(rounds):
            used = result.usage_per_round[number][name]
            assert used.prompt_tokens == sum(count_words(calls[i].prompt_text) for i in indices)
            assert used.completion_tokens == sum(words(replies[name][i]) for i in indices)
        total = result.usage[name]
        assert total.prompt_tokens == sum(count_words(c.prompt_text) for c in calls)
        assert total.completion_tokens == sum(words(r) for r in replies[name])
    assert [set(u) for u in result.usage_per_round] == [{"architect", "ops"}] * 2  # the arbiter rules after the rounds
    arbiter = model.calls("arbiter")[0]
    assert result.usage["arbiter"].prompt_tokens == count_words(arbiter.prompt_text)
    assert result.usage["arbiter"].completion_tokens == words(replies["arbiter"][0])


async def test_malformed_expert_beyond_retries_stops_with_a_verdict_and_resumes_at_that_turn():
    model = ScriptedModel(
        {
            "architect": [make_position("split", "ARCH-1 point"), make_rebuttal("split", "ARCH-2 point")],
            "ops": [make_position("keep", "OPS-1 point"), "nope", "nope", make_rebuttal("keep", "OPS-2 point")],
            "arbiter": [make_verdict("keep"), make_verdict("split")],
        }
    )
    with model:
        team = make_debate(model, MaxRounds(2), experts=("architect", "ops"), retries=1)
        first = await team.run(task=TASK)
        result = await team.run()
    assert first.partial is True
    assert first.stop_reason.startswith("error: ops gave malformed output 2 times; last error: reply is not valid JSON")
    ruling = model.calls("arbiter")[0].prompt_text
    assert "ARCH-2 point" in ruling and "OPS-1 point" in ruling  # each expert's latest position
    assert [len(r.positions) for r in first.rounds] == [2, 1]
    assert len(model.calls("architect")) == 2  # the resumed run redoes only the failed turn
    ops = model.calls("ops")
    assert ops[3].messages == ops[1].messages  # the redo asks the same question: round 1's positions
    assert (result.partial, result.stop_reason, result.answer) == (False, "max rounds: 2 of 2 rounds done", "split")
    assert result.metrics.parse_failures == 2
    assert result.metrics.agreement_per_round == [0.5, 0.5]


async def test_checkpoints_do_not_grow_with_the_rounds_and_rebuild_them_on_load():
    with three_rounds() as model:
        team = make_debate(model, MaxRounds(3))
        sizes = CheckpointRecorder()
        team.hooks.append(sizes)
        result = await team.run(task=TASK)
        restored = make_debate(model, MaxRounds(3))
    per_round = [len(json.dumps(s)) for s in sizes.states[:-1]]  # the task, then 9 positions
    assert len(per_round) == 10 and len(set(per_round)) == 1  # the same size after round 1 as after round 3
    await restored.load_state({**sizes.states[-1], "messages": [m.dump() for m in result.messages]})
    rebuilt = restored._result([], "", False)
    assert outline(rebuilt) == outline(result) and rebuilt.usage_per_round == result.usage_per_round
    assert rebuilt.metrics == result.metrics


async def test_a_version_1_checkpoint_with_its_rounds_still_loads():
    with three_rounds() as model:
        team = make_debate(model, MaxRounds(3))
        result = await team.run(task=TASK)
        state = json.loads(json.dumps(await team.save_state()))
        restored = make_debate(model, MaxRounds(3))
    old = {**state, "version": 1, "rounds": [r.model_dump(mode="json") for r in result.rounds], "messages": []}
    await restored.load_state(old)  # no messages to rebuild from: the stored rounds are used as they are
    assert outline(restored._result([], "", False)) == outline(result)


@pytest.mark.parametrize("llm_arbiter", [True, False])
async def test_config_round_trip_saves_experts_arbiter_stop_and_options_and_the_loaded_debate_runs(llm_arbiter):
    script = {"architect": [make_position("keep")], "ops": [make_position("keep")]}
    model = ScriptedModel({**script, **({"arbiter": [make_verdict("keep")]} if llm_arbiter else {})})
    with model:
        experts = [RoleAgent(role(n), model.spec) for n in ("architect", "ops")]
        arbiter = RoleAgent(role("arbiter"), model.spec) if llm_arbiter else MajorityVote()
        team = Debate(experts, arbiter, stop=Consensus() | MaxRounds(2), choices=("keep", "split"), seed=7)
        dumped = json.loads(team.dump_component().model_dump_json())
        loaded = Debate.load_component(dumped)
        result = await loaded.run(task=TASK)
    config = dumped["config"]
    assert dumped["provider"] == "moot.teams.Debate"
    assert [e["config"]["name"] for e in config["experts"]] == ["architect", "ops"]
    assert (config["options"], config["seed"]) == (["keep", "split"], 7)
    assert (config["arbiter"] == "majority_vote") is not llm_arbiter
    assert json.loads(loaded.dump_component().model_dump_json()) == dumped
    assert result.answer == "keep" and result.verdict_by == ("arbiter" if llm_arbiter else "majority_vote")


def test_a_debate_with_a_custom_arbiter_says_it_cannot_be_saved_as_a_component():
    class Coin:
        name = "coin"

        async def rule(self, task, positions):
            raise AssertionError("never asked")

    model = ScriptedModel({"architect": [], "ops": []})
    with model:
        team = Debate([RoleAgent(role(n), model.spec) for n in ("architect", "ops")], Coin())
    with pytest.raises(ConfigError, match="arbiter Coin cannot be saved as a component; valid: a RoleAgent"):
        team.dump_component()
