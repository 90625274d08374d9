"""Honest accounting: failed attempts count, cache hits are free, caps are named, settings and prices are kept."""

from __future__ import annotations

import re

import pytest
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_core.models import CreateResult, RequestUsage
from rich.console import Console
from typer.testing import CliRunner

from moot import ConfigError, MalformedOutputError, ModelSpec, Reflection, RoleAgent, role
from moot.cli import app
from moot.conditions import CostBudget, MaxRounds, TokenBudget
from moot.display import model_calls, render_calls
from moot.messages import TurnFailed
from moot.models import Meter
from moot.store import RunStore
from moot.testing import ScriptedModel, count_words
from tests.conftest import make_critique, make_debate, make_position, make_reflection

TASK = "Write add(a, b)."


def words(messages) -> int:
    return sum(count_words(str(m.content)) for m in messages)


def reply(text: str, *, cached: bool = False, finish_reason: str = "stop", tokens: int = 10) -> CreateResult:
    """A whole scripted CreateResult: a cache hit, or a reply cut off at the token cap."""
    usage = RequestUsage(prompt_tokens=tokens, completion_tokens=count_words(text))
    return CreateResult(finish_reason=finish_reason, content=text, usage=usage, cached=cached)


def team_on(spec: str, model: ScriptedModel, stop, retries: int = 2) -> Reflection:
    parsed = ModelSpec.parse(spec)
    return Reflection(
        RoleAgent(role("generator"), parsed),
        RoleAgent(role("critic"), parsed, max_parse_retries=retries),
        stop=stop,
    )


# ---------------------------------------------------------------- failed attempts
async def test_a_turn_that_fails_for_good_keeps_its_tokens_in_usage_store_and_show():
    model = ScriptedModel({"generator": ["draft one"], "critic": ["not json", "still not json"]})
    with model:
        team = make_reflection(model, MaxRounds(2), critic_retries=1)
        result = await team.run(task=TASK)
    critic_calls = model.calls("critic")
    spent = sum(count_words(c.prompt_text) for c in critic_calls) + count_words("not json still not json")
    assert result.partial
    failed = [m for m in result.messages if isinstance(m, TurnFailed)]
    assert [(f.source, f.attempts) for f in failed] == [("critic", 2)]
    used = result.usage["critic"]
    assert used.prompt_tokens + used.completion_tokens == spent
    assert (result.tokens.calls, result.tokens.billed_calls) == (3, 3)  # the draft, then two failed attempts
    assert result.tokens.tokens == sum(u.prompt_tokens + u.completion_tokens for u in result.usage.values())
    record = RunStore.default().get(team.run_id)
    assert record.tokens == result.tokens
    assert record.prompt_tokens + record.completion_tokens == result.tokens.tokens
    shown = CliRunner().invoke(app, ["show", team.run_id], env={"COLUMNS": "200"}).stdout
    assert f"tokens: {result.tokens.tokens} logical in 3 calls (failed attempts included)" in shown


async def test_an_arbiter_that_fails_for_good_still_counts_its_tokens():
    model = ScriptedModel(
        {"architect": [make_position("split")], "ops": [make_position("keep")], "arbiter": ["nope"] * 3}
    )
    with model:
        result = await make_debate(model, MaxRounds(1), experts=("architect", "ops")).run(task="Split?")
    assert result.verdict_by == "majority_vote" and result.partial
    arbiter = model.calls("arbiter")
    assert result.usage["arbiter"].prompt_tokens == sum(count_words(c.prompt_text) for c in arbiter)
    assert result.usage["arbiter"].completion_tokens == 3
    assert result.tokens.calls == 5


async def test_retries_that_end_in_a_valid_reply_count_every_call():
    model = ScriptedModel({"generator": ["draft"], "critic": ["not json", make_critique(90)]})
    with model:
        result = await make_reflection(model, MaxRounds(1)).run(task=TASK)
    critique = result.messages[2]
    assert critique.metadata["moot_calls"] == "2" and result.tokens.calls == 3


# ---------------------------------------------------------------- billed vs logical
async def test_a_cache_hit_is_logical_but_not_billed_and_costs_nothing():
    model = ScriptedModel({"generator": [reply("cached draft", cached=True)], "critic": [make_critique(90)]})
    with model:
        result = await team_on("scripted:default?price_in=1000&price_out=1000", model, MaxRounds(1)).run(task=TASK)
    meter = result.tokens
    assert (meter.calls, meter.billed_calls) == (2, 1)
    critic = result.usage["critic"]
    assert meter.billed_tokens == critic.prompt_tokens + critic.completion_tokens
    assert meter.tokens == meter.billed_tokens + 10 + 2
    assert result.cost_usd == pytest.approx(meter.billed_tokens * 1000 / 1_000_000)
    # Per agent, the same meter: the generator's draft came from the cache (free), the critic's call was billed.
    generator = result.usage["generator"]
    assert (generator.calls, generator.billed_calls, generator.cost) == (1, 0, 0.0)
    assert (critic.calls, critic.billed_calls) == (1, 1)
    assert critic.cost == pytest.approx(result.cost_usd)
    assert sum(result.usage.values(), Meter()) == meter


# ---------------------------------------------------------------- caps
async def test_a_reply_cut_at_max_tokens_names_the_cap_of_its_spec():
    cut = reply('{"reasoning": "the draft', finish_reason="length")
    model = ScriptedModel({"critic": [cut, cut]})
    with model:
        agent = RoleAgent(role("critic"), ModelSpec.parse("scripted:default?max_tokens=5"), max_parse_retries=1)
        with pytest.raises(MalformedOutputError) as caught:
            await agent.on_messages([TextMessage(content="Review.", source="user")], CancellationToken())
    assert caught.value.last_error.startswith(
        "reply stopped at the max_tokens cap (5 tokens, set by the model spec) before it was complete"
    )
    assert "not valid JSON" not in caught.value.last_error.split("(", 2)[1]
    assert caught.value.spent == Meter(calls=2, prompt_tokens=20, completion_tokens=6, billed_calls=2,
                                       billed_prompt_tokens=20, billed_completion_tokens=6)  # fmt: skip


# ---------------------------------------------------------------- settings and specs
async def test_each_model_call_records_its_settings_and_show_prompts_prints_them():
    model = ScriptedModel({"generator": ["draft"], "critic": [make_critique(90)]})
    with model:
        team = team_on("scripted:default@0.3?seed=7&max_tokens=64", model, MaxRounds(1))
        await team.run(task=TASK)
    calls = [c for turn in model_calls(team.run_id) for c in turn.calls]
    assert {(c.attributes["model"], c.attributes["temperature"], c.attributes["seed"]) for c in calls} == {
        ("scripted:default", 0.3, 7)
    }
    assert {c.attributes["max_tokens"] for c in calls} == {64}
    console = Console(record=True, width=200)
    render_calls(console, team.run_id, model_calls(team.run_id))
    assert "settings: model scripted:default · temperature 0.3 · seed 7 · max_tokens 64" in console.export_text()


async def test_a_run_started_from_code_records_its_agents_model_specs():
    model = ScriptedModel({"generator": ["draft"], "critic": [make_critique(90)]})
    with model:
        team = team_on("scripted:default@0.3?seed=7", model, MaxRounds(1))
        await team.run(task=TASK)
    spec = "scripted:default@0.3?seed=7"
    assert RunStore.default().get(team.run_id).models == {"generator": spec, "critic": spec}


# ---------------------------------------------------------------- money
def test_specs_take_prices_per_million_tokens_and_local_and_scripted_models_are_free():
    spec = ModelSpec.parse("openai:gpt-4o-mini?price_in=0.15&price_out=0.60")
    assert (spec.price_in, spec.price_out) == (0.15, 0.6)
    assert ModelSpec.parse(str(spec)) == spec
    assert spec.cost(1_000_000, 500_000) == pytest.approx(0.45)
    assert ModelSpec.parse("openai:gpt-4o-mini").cost(10, 10) is None  # unknown, not free
    assert ModelSpec.parse("local").cost(10, 10) == ModelSpec.parse("scripted:x").cost(10, 10) == 0.0
    with pytest.raises(ConfigError, match="price_in must be a number"):
        ModelSpec.parse("openai:x?price_in=cheap")
    with pytest.raises(ConfigError, match="price_out"):
        ModelSpec.parse("openai:x?price_out=-1")


async def test_cost_budget_stops_a_run_once_billed_calls_cost_enough_and_composes():
    model = ScriptedModel({"generator": ["draft one"], "critic": []})
    with model:
        team = team_on("scripted:default?price_in=10000&price_out=10000", model, CostBudget(0.05) | MaxRounds(3))
        result = await team.run(task=TASK)
    assert result.stop_reason.startswith("cost budget: $") and result.stop_reason.endswith(" of $0.05 spent")
    assert result.cost_usd is not None and result.cost_usd >= 0.05
    budget = CostBudget(0.5) & TokenBudget(100)
    assert type(budget).load_component(budget.dump_component()).dump_component() == budget.dump_component()
    with pytest.raises(ValueError):
        CostBudget(0)


async def test_cost_budget_never_counts_cache_hits():
    model = ScriptedModel({"generator": [reply("draft", cached=True, tokens=10_000)], "critic": [make_critique(90)]})
    with model:  # the cached 10,000 tokens would cost $1; the critic's billed call costs about $0.01
        team = team_on("scripted:default?price_in=100&price_out=100", model, CostBudget(0.05) | MaxRounds(1))
        result = await team.run(task=TASK)
    assert result.stop_reason == "max rounds: 1 of 1 rounds done"


async def test_moot_runs_and_show_report_cost_when_prices_are_known():
    model = ScriptedModel({"generator": ["draft"], "critic": [make_critique(90)]})
    with model:
        team = team_on("scripted:default?price_in=1000&price_out=2000", model, MaxRounds(1))
        result = await team.run(task=TASK)
    cost = f"${result.cost_usd:.4g}"
    runner = CliRunner()
    listing = runner.invoke(app, ["runs"], env={"COLUMNS": "200"}).stdout
    assert re.search(rf"│\s*{result.tokens.tokens}\s*│", listing) and f"│ {cost} │" in listing  # cost under the tokens
    assert f"cost: {cost}" in runner.invoke(app, ["show", team.run_id], env={"COLUMNS": "200"}).stdout
    listed = runner.invoke(app, ["runs", "--json"]).stdout
    assert f'"cost_usd": {result.tokens.cost_usd}' in listed.replace("\n", " ").replace("  ", " ")
