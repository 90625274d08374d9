"""Scripted test models: strict about unexpected and unconsumed calls, word-count usage, recorded prompts."""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque

import pytest
from autogen_core.models import CreateResult, SystemMessage, UserMessage

from moot import ConfigError, Critique, ModelSpec, Reflection, RoleAgent, role
from moot.conditions import MaxRounds
from moot.errors import ScriptError
from moot.models import Script, registered_scripts
from moot.teams import load_preset
from moot.testing import DeterministicModel, ScriptedClient, ScriptedModel
from tests.conftest import make_critique


def user(text):
    return UserMessage(content=text, source="user")


async def test_reply_text_and_word_count_usage():
    client = ScriptedClient(deque(["three word reply"]), agent="gen")
    result = await client.create([SystemMessage(content="be brief"), user("say  it\nnow please")])
    assert result.content == "three word reply"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (6, 3)
    assert client.total_usage() == result.usage


async def test_usage_accumulates_over_calls():
    client = ScriptedClient(deque(["a b", "c"]), agent="gen")
    await client.create([user("one")])
    await client.create([user("one two three")])
    assert (client.total_usage().prompt_tokens, client.total_usage().completion_tokens) == (4, 3)


async def test_unexpected_call_raises_script_error():
    client = ScriptedClient(deque(["only"]), agent="gen")
    await client.create([user("first")])
    with pytest.raises(ScriptError, match=r"unexpected call #2 to the scripted model of 'gen'.*'second'"):
        await client.create([user("second")])


async def test_calls_are_recorded_with_prompt_text_and_json_request():
    client = ScriptedClient(deque(["x", "y"]), agent="gen")
    await client.create([SystemMessage(content="sys"), user("hello")])
    await client.create([user("again")], json_output=Critique)
    assert [c.prompt_text for c in client.calls] == ["sys\nhello", "again"]
    assert [c.json_output for c in client.calls] == [None, Critique]


async def test_structured_replies_are_sent_as_json():
    critique = Critique(reasoning="ok", score=80, strengths=["clear"], issues=[], verdict="accept")
    client = ScriptedClient(deque([critique, {"a": 1}]), agent="critic")
    first = await client.create([user("review")])
    assert Critique.model_validate_json(str(first.content)) == critique
    assert json.loads(str((await client.create([user("again")])).content)) == {"a": 1}


async def test_exception_reply_is_raised_and_consumed():
    client = ScriptedClient(deque([TimeoutError("model timed out"), "after"]), agent="gen")
    with pytest.raises(TimeoutError, match="model timed out"):
        await client.create([user("hi")])
    assert (await client.create([user("hi")])).content == "after"
    client.assert_consumed()


async def test_callable_reply_gets_the_messages():
    seen = []

    def echo(messages):
        seen.extend(messages)
        return messages[-1].content.upper()

    client = ScriptedClient(deque([echo]), agent="gen")
    prompt = [SystemMessage(content="sys"), user("shout this")]
    assert (await client.create(prompt)).content == "SHOUT THIS"
    assert seen == prompt


async def test_a_slow_deterministic_model_lets_the_event_loop_run_while_it_waits():
    """Its delay stands for a model's latency: other tasks run meanwhile and a cancellation lands at once
    (``time.sleep`` inside the async call stalled the loop, and a cancellation test overshot by the delay)."""
    model = DeterministicModel("slow-loop", delay=0.5).register()
    try:
        client = ModelSpec.parse("scripted:slow-loop").client("generator")
        ticks: list[float] = []

        async def tick() -> None:
            for _ in range(4):
                await asyncio.sleep(0.05)
                ticks.append(time.monotonic())

        started = time.monotonic()
        ticking = asyncio.create_task(tick())
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.create([user("hello")]), 0.1)
        waited = time.monotonic() - started
        await ticking
    finally:
        model.unregister()
    assert waited < 0.3, waited  # cancelled at its deadline, not after the model's 0.5 s
    assert ticks[0] - started < 0.2  # the other task ran while the model waited


async def test_an_async_reply_function_is_awaited():
    async def later(messages):
        await asyncio.sleep(0)
        return f"late answer to {messages[-1].content}"

    client = ScriptedClient(deque([later]), agent="gen")
    assert (await client.create([user("q")])).content == "late answer to q"


async def test_create_stream_yields_the_text_then_the_result():
    client = ScriptedClient(deque(["streamed text"]), agent="gen")
    items = [item async for item in client.create_stream([user("go")])]
    assert items[0] == "streamed text"
    assert isinstance(items[1], CreateResult)
    assert items[1].content == "streamed text"


async def test_model_hands_each_agent_its_own_script_through_a_spec():
    with ScriptedModel({"gen": ["draft"], "critic": ["review"]}, name="pair") as model:
        assert str(model.spec) == "scripted:pair"
        gen, critic = model.spec.client("gen"), model.spec.client("critic")
        assert (await critic.create([user("r")])).content == "review"
        assert (await gen.create([user("g")])).content == "draft"
    assert [c.prompt_text for c in model.calls("gen")] == ["g"]


async def test_unconsumed_replies_fail_at_with_exit():
    model = ScriptedModel({"gen": ["used", "left over"]})
    with pytest.raises(ScriptError, match="'gen' has 1 unconsumed replies"):
        with model:
            await model.client("gen").create([user("x")])


def test_an_error_inside_the_block_is_not_masked_by_the_unconsumed_check():
    with pytest.raises(KeyError), ScriptedModel({"gen": ["never used"]}):
        raise KeyError("boom")


def test_unknown_scripted_name_lists_registered_names():
    with ScriptedModel({"gen": []}, name="alpha"), pytest.raises(ConfigError) as info:
        ModelSpec.parse("scripted:beta").client("gen")
    assert "no scripted model named 'beta'; registered: " in str(info.value)
    assert "alpha" in str(info.value)


def test_model_is_unregistered_after_the_block():
    with ScriptedModel({"gen": []}, name="gone"):
        pass
    with pytest.raises(ConfigError, match="no scripted model named 'gone'"):
        ModelSpec.parse("scripted:gone").client("gen")


def test_unknown_agent_lists_scripted_agents():
    model = ScriptedModel({"generator": [], "critic": []})
    with pytest.raises(ConfigError, match="has no script for agent 'judge'; scripted agents: critic, generator"):
        model.client("judge")


async def test_from_file_loads_scripts_and_sends_dicts_as_json(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"gen": ["first draft"], "critic": [{"score": 5}]}))
    model = ScriptedModel.from_file(path)
    assert model.name == str(path)
    assert (await model.client("gen").create([user("g")])).content == "first draft"
    assert json.loads(str((await model.client("critic").create([user("c")])).content)) == {"score": 5}
    model.assert_consumed()


async def test_spec_naming_a_json_file_loads_it(tmp_path):
    path = tmp_path / "by-spec.json"
    path.write_text(json.dumps({"gen": ["from file"]}))
    client = ModelSpec(provider="scripted", model=str(path)).client("gen")
    assert (await client.create([user("g")])).content == "from file"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "scripted model file .* is not valid JSON"),
        ('["a", "b"]', "must map agent names to lists of replies"),
        ('{"gen": "not a list"}', "must map agent names to lists of replies"),
    ],
)
def test_from_file_rejects_bad_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        ScriptedModel.from_file(path)


def test_from_file_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read scripted model file"):
        ScriptedModel.from_file(tmp_path / "absent.json")


# ------------------------------------------------------------ a scripted model given as it is
def _reflection_on(model: Script, stop_rounds: int = 1) -> Reflection:
    return Reflection(
        RoleAgent(role("generator"), model), RoleAgent(role("critic"), model), stop=MaxRounds(stop_rounds)
    )


async def test_a_scripted_model_given_as_it_is_runs_a_team_without_the_registry():
    model = ScriptedModel({"generator": ["draft"], "critic": [make_critique(90)]}, name="unregistered")
    result = await _reflection_on(model).run(task="Write add(a, b).")
    assert result.answer == "draft" and "unregistered" not in registered_scripts()
    model.assert_consumed()
    assert "draft" in model.calls("critic")[0].prompt_text  # exactly what the critic saw
    team = _reflection_on(ScriptedModel({"generator": [], "critic": []}, name="unregistered"))
    assert team.generator.spec == ModelSpec.parse("scripted:unregistered")  # what the run records


async def test_a_scripted_model_given_as_it_is_stays_strict():
    extra_call = ScriptedModel({"generator": ["draft"], "critic": []})
    with pytest.raises(ScriptError, match="unexpected call #1 to the scripted model of 'critic'"):
        await _reflection_on(extra_call).run(task="Write add(a, b).")
    unused = ScriptedModel({"generator": ["draft", "never asked for"], "critic": [make_critique(90)]})
    await _reflection_on(unused).run(task="Write add(a, b).")
    with pytest.raises(ScriptError, match="'generator' has 1 unconsumed replies"):
        unused.assert_consumed()
    with pytest.raises(ConfigError, match="has no script for agent 'critic'"):
        _reflection_on(ScriptedModel({"generator": []}))


async def test_a_deterministic_model_is_given_as_it_is_too():
    result = await _reflection_on(DeterministicModel(name="quiet")).run(task="Write add(a, b).")
    assert result.answer.startswith("generator draft") and "quiet" not in registered_scripts()


def test_a_preset_builds_on_a_scripted_model_given_as_it_is():
    model = ScriptedModel({name: [] for name in ("architect", "ops", "business", "arbiter")}, name="panel")
    team = load_preset("expert_panel").build(model)
    assert {agent.name: agent.model_client for agent in [*team.experts, team.arbiter]} == {
        name: model.client(name) for name in ("architect", "ops", "business", "arbiter")
    }
    assert "panel" not in registered_scripts()
