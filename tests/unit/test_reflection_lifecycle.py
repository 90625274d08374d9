"""Reflection as an AutoGen Team: streaming, save/load and resume, reset, the run guard, config round trip."""

from __future__ import annotations

import json

import pytest
from autogen_agentchat.messages import StructuredMessage

from moot import ModelSpec, Reflection, ReflectionResult, RoleAgent, role
from moot.conditions import MaxRounds, ScoreThreshold
from moot.testing import ScriptedModel
from tests.conftest import CheckpointRecorder, make_critique, make_reflection

TASK = "Write a function add(a, b) that returns the sum."
DRAFTS = ["draft one", "draft two", "draft three"]


def scripted_rounds(critique, n=3):
    critiques = [critique(40, "no hints"), critique(50, "no tests"), critique(60, "no docs")]
    return ScriptedModel({"generator": DRAFTS[:n], "critic": critiques[:n]})


def normalised(messages):
    """(type, source, essentials) per message: the transcript a reviewer of the loop reads."""
    rows = []
    for m in messages:
        text = f"{m.content.score} {m.content.verdict}" if isinstance(m, StructuredMessage) else m.to_text()
        rows.append((type(m).__name__, m.source, text))
    return rows


def prompts(model):
    return [c.prompt_text for agent in ("generator", "critic") for c in model.calls(agent)]


def outline(result):
    return [(r.round, r.draft, r.score, r.issues) for r in result.rounds]


async def test_run_stream_yields_task_then_messages_then_result(critique, reflection):
    model = ScriptedModel({"generator": ["draft one", "draft two"], "critic": [critique(60, "no hints"), critique(90)]})
    with model:
        items = [item async for item in reflection(model, ScoreThreshold(85)).run_stream(task=TASK)]
    result = items[-1]
    assert isinstance(result, ReflectionResult)
    assert normalised(items[:-1]) == [
        ("TextMessage", "user", TASK),
        ("TextMessage", "generator", "draft one"),
        ("StructuredMessage[Critique]", "critic", "60 revise"),
        ("RoundCompleted", "reflection", "round 1 completed, score 60"),
        ("TextMessage", "generator", "draft two"),
        ("StructuredMessage[Critique]", "critic", "90 accept"),
        ("RoundCompleted", "reflection", "round 2 completed, score 90"),
    ]
    assert {k: items[1].metadata[k] for k in ("moot_kind", "round")} == {"moot_kind": "draft", "round": "1"}
    assert result.messages == items[:-1]


async def test_run_stream_can_leave_out_the_task_message(critique, reflection):
    model = ScriptedModel({"generator": ["draft one"], "critic": [critique(90)]})
    with model:
        items = [i async for i in reflection(model, MaxRounds(1)).run_stream(task=TASK, output_task_messages=False)]
    assert [row[1] for row in normalised(items[:-1])] == ["generator", "critic", "reflection"]


async def test_save_and_load_into_a_fresh_team_continues_like_an_uninterrupted_run(critique, reflection):
    straight = scripted_rounds(critique)
    with straight:
        expected = await reflection(straight, MaxRounds(3)).run(task=TASK)

    resumed = scripted_rounds(critique)
    with resumed:
        first = reflection(resumed, MaxRounds(1))
        assert len((await first.run(task=TASK)).rounds) == 1
        state = json.loads(json.dumps(await first.save_state()))
        second = reflection(resumed, MaxRounds(3))
        await second.load_state(state)
        result = await second.run()

    assert (state["type"], state["version"]) == ("ReflectionState", 2)
    assert "rounds" not in state  # rebuilt from the saved messages on load
    assert outline(result) == outline(expected)
    assert result.stop_reason == expected.stop_reason == "max rounds: 3 of 3 rounds done"
    assert prompts(resumed) == prompts(straight)
    assert normalised(second.transcript) == normalised(expected.messages)


async def test_a_run_cut_after_a_draft_resumes_with_its_critique(critique, reflection):
    with scripted_rounds(critique, 2) as straight:
        expected = await reflection(straight, MaxRounds(2)).run(task=TASK)

    with scripted_rounds(critique, 2) as resumed:
        first = reflection(resumed, MaxRounds(2))
        stream = first.run_stream(task=TASK)
        assert [(await anext(stream)).source for _ in range(2)] == ["user", "generator"]
        await stream.aclose()  # e.g. the process was stopped mid-round
        second = reflection(resumed, MaxRounds(2))
        await second.load_state(await first.save_state())
        result = await second.run()
    assert outline(result) == outline(expected)
    assert prompts(resumed) == prompts(straight)
    assert normalised(result.messages)[0] == ("StructuredMessage[Critique]", "critic", "40 revise")


async def test_a_loaded_team_continues_like_the_live_team_that_saved_it(critique, reflection):
    with scripted_rounds(critique, 2) as live:
        team = reflection(live, MaxRounds(1))
        await team.run(task=TASK)
        expected = await team.run()  # the stop was reset after the first run: one more round

    with scripted_rounds(critique, 2) as restored:
        team = reflection(restored, MaxRounds(1))
        await team.run(task=TASK)
        fresh = reflection(restored, MaxRounds(1))
        await fresh.load_state(await team.save_state())  # replaying the transcript fires MaxRounds(1)
        result = await fresh.run()
    assert outline(result) == outline(expected)
    assert result.stop_reason == expected.stop_reason == "max rounds: 1 of 1 rounds done (2 in all)"


async def test_reset_clears_progress(critique, reflection):
    model = ScriptedModel(
        {"generator": ["draft one", "fresh draft"], "critic": [critique(40, "no hints"), critique(45, "x y")]}
    )
    with model:
        team = reflection(model, MaxRounds(1))
        await team.run(task=TASK)
        await team.reset()
        assert team.transcript == []
        with pytest.raises(ValueError, match="no task given and no task to continue"):
            await team.run()
        result = await team.run(task="Another task")
    assert [r.round for r in result.rounds] == [1]
    prompt = model.calls("generator")[1].prompt_text
    assert prompt.endswith("\nAnother task")  # the first draft is asked for with the task alone, as a single call is
    assert "draft one" not in prompt and "Your latest draft" not in prompt


async def test_run_without_any_task_raises(reflection):
    with ScriptedModel({"generator": [], "critic": []}) as model:
        with pytest.raises(ValueError, match="no task given and no task to continue; pass task="):
            await reflection(model, MaxRounds(1)).run()


async def test_a_team_cannot_run_twice_concurrently(critique, reflection):
    model = ScriptedModel({"generator": ["draft one", "draft two"], "critic": [critique(90), critique(95)]})
    with model:
        team = reflection(model, MaxRounds(1))
        stream = team.run_stream(task=TASK)
        assert (await anext(stream)).source == "user"
        with pytest.raises(ValueError, match="'reflection' is already running"):
            await team.run(task="another")
        with pytest.raises(ValueError, match="is running; it cannot be reset now"):
            await team.reset()
        rest = [item async for item in stream]
        assert rest[-1].answer == "draft one"
        assert (await team.run(task="another")).answer == "draft two"  # the guard is released


async def test_config_round_trip_serialises_the_spec_and_the_loaded_team_runs(critique, reflection):
    model = ScriptedModel({"generator": ["draft one"], "critic": [critique(90)]})
    with model:
        team = reflection(model, ScoreThreshold(85) | MaxRounds(3), critic_retries=1)
        dumped = json.loads(team.dump_component().model_dump_json())
        loaded = Reflection.load_component(dumped)
        result = await loaded.run(task=TASK)
    critic = dumped["config"]["critics"][0]["config"]
    assert ModelSpec.model_validate(critic["model"]) == model.spec
    assert critic.get("model_client") is None
    assert (critic["output_type"], critic["max_parse_retries"]) == ("moot.roles._critique:Critique", 1)
    assert isinstance(loaded, Reflection)
    assert json.loads(loaded.dump_component().model_dump_json()) == dumped
    assert (result.answer, result.stop_reason) == (
        "draft one",
        "quality threshold: score 90 >= 85 in round 1",
    )


def test_agent_config_holds_the_key_variable_name_never_the_key(monkeypatch):
    monkeypatch.setenv("MOOT_TEST_KEY", "sk-secret-value")
    agent = RoleAgent(role("generator"), ModelSpec.parse("openai:gpt-4o-mini?api_key_env=MOOT_TEST_KEY"))
    dumped = agent.dump_component().model_dump_json()
    assert "MOOT_TEST_KEY" in dumped
    assert "sk-secret-value" not in dumped


async def test_checkpoints_do_not_grow_with_the_rounds_and_rebuild_them_on_load(critique, reflection):
    with scripted_rounds(critique) as model:
        team = reflection(model, MaxRounds(3))
        hooks = CheckpointRecorder()
        team.hooks.append(hooks)
        result = await team.run(task=TASK)
        restored = reflection(model, MaxRounds(3))
    sizes = {len(json.dumps(s)) for s in hooks.states[1:]}  # after the task: drafts and critiques of 3 rounds
    assert len(hooks.states) == 7 and len(sizes) <= 2  # only next_critic changes between 0 and -1
    await restored.load_state({**hooks.states[-1], "messages": [m.dump() for m in result.messages]})
    rebuilt = restored._result([], "", False)
    assert rebuilt.rounds == result.rounds and rebuilt.best == result.best and rebuilt.usage == result.usage


async def test_a_version_1_checkpoint_with_its_rounds_still_loads(critique, reflection):
    with scripted_rounds(critique) as model:
        team = reflection(model, MaxRounds(3))
        result = await team.run(task=TASK)
        state = json.loads(json.dumps(await team.save_state()))
        restored = reflection(model, MaxRounds(3))
    old = {**state, "version": 1, "rounds": [r.model_dump(mode="json") for r in result.rounds], "messages": []}
    await restored.load_state(old)  # no messages to rebuild from: the stored rounds are used as they are
    assert restored._result([], "", False).rounds == result.rounds


async def test_the_result_names_its_run_so_it_can_be_shown_and_resumed():
    from moot.store import RunStore

    model = ScriptedModel({"generator": ["draft"], "critic": [make_critique(90)]})
    with model:
        team = make_reflection(model, MaxRounds(1))
        result = await team.run(task="Write slugify.")
    assert result.run_id == team.run_id
    assert RunStore.default().get(result.run_id).status == "finished"


@pytest.mark.parametrize("rounds", [1, 3])
async def test_each_run_of_a_finished_team_has_a_fresh_round_budget(rounds):
    """As AutoGen's own teams: a stop that fired is reset, so run() again gets MaxRounds(n) rounds more, not one
    round that finds the limit passed."""
    spec = ModelSpec.parse("scripted:deterministic")
    team = Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec), stop=MaxRounds(rounds))
    first = await team.run(task=TASK)
    again = await team.run()
    assert (len(first.rounds), first.stop_reason) == (rounds, f"max rounds: {rounds} of {rounds} rounds done")
    assert len(again.rounds) == 2 * rounds
    assert again.stop_reason == f"max rounds: {rounds} of {rounds} rounds done ({2 * rounds} in all)"
