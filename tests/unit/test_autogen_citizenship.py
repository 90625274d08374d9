"""moot teams inside AutoGen's own teams, AutoGen's conditions inside moot teams, and clean component dumps."""

from __future__ import annotations

import warnings

import pytest
from autogen_agentchat.agents import SocietyOfMindAgent
from autogen_agentchat.base import TerminationCondition
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.messages import StructuredMessage, TextMessage
from autogen_agentchat.teams import BaseGroupChat, RoundRobinGroupChat, SelectorGroupChat

from moot import MESSAGE_TYPES as TYPES
from moot import Critique, Position, Reflection, RoleAgent, role
from moot.conditions import AtRoundEnd, MaxRounds, TokenBudget
from moot.conditions._bounds import parts_of
from moot.messages import RoundCompleted
from moot.testing import ScriptedModel
from tests.conftest import make_critique, make_debate, make_position, make_reflection, make_verdict

TASK = "Write a function add(a, b) that returns the sum."


def _kinds(messages) -> list[tuple[str, str]]:
    return [(m.source, type(m).__name__) for m in messages]


async def test_a_reflection_nested_in_a_round_robin_group_chat():
    model = ScriptedModel({"generator": ["draft one"], "critic": [make_critique(90)]})
    with model:
        team = RoundRobinGroupChat([make_reflection(model, MaxRounds(1))], max_turns=1, custom_message_types=TYPES)
        result = await team.run(task=TASK)
    assert _kinds(result.messages) == [
        ("user", "TextMessage"),
        ("generator", "TextMessage"),
        ("critic", "StructuredMessage[Critique]"),
        ("reflection", "RoundCompleted"),
    ]
    assert result.stop_reason == "Maximum number of turns 1 reached."


async def test_a_debate_and_a_reflection_nested_in_a_selector_group_chat():
    """The selector picks the debate, then the reflection, which reads the debate's messages as its task."""
    model = ScriptedModel(
        {
            "architect": [make_position("monolith")],
            "ops": [make_position("monolith")],
            "arbiter": [make_verdict("monolith")],
            "generator": ["draft one"],
            "critic": [make_critique(90)],
            "selector": [],
        }
    )
    order = iter(["debate", "reflection"])
    with model:
        debate = make_debate(model, MaxRounds(1), experts=("architect", "ops"))
        team = SelectorGroupChat(
            [debate, make_reflection(model, MaxRounds(1))],
            model_client=model.client("selector"),
            selector_func=lambda _: next(order),
            termination_condition=MaxMessageTermination(20),
            max_turns=2,
            custom_message_types=TYPES,
        )
        result = await team.run(task="Monolith or services?")
    assert [s for s, _ in _kinds(result.messages)] == [
        "user", "architect", "ops", "debate", "arbiter", "generator", "critic", "reflection",
    ]  # fmt: skip
    assert "Monolith or services?" in model.calls("generator")[0].prompt_text
    assert isinstance(result.messages[4], StructuredMessage)


async def test_a_debate_nests_two_levels_deep_and_inside_a_society_of_mind_agent():
    """Each group chat that holds a moot team, at any depth, takes moot's types: one argument per group chat."""
    script = {"architect": [make_position("monolith")], "ops": [make_position("monolith")]}
    model = ScriptedModel({**script, "arbiter": [make_verdict("monolith")]})
    with model:
        debate = make_debate(model, MaxRounds(1), experts=("architect", "ops"))
        inner = RoundRobinGroupChat([debate], max_turns=1, custom_message_types=TYPES)
        outer = RoundRobinGroupChat([inner], max_turns=1, custom_message_types=TYPES)
        result = await outer.run(task="Monolith or services?")
    assert ("debate", "RoundCompleted") in _kinds(result.messages)
    model = ScriptedModel({**script, "arbiter": [make_verdict("monolith")], "summary": ["monolith"]})
    with model:
        debate = make_debate(model, MaxRounds(1), experts=("architect", "ops"))
        panel = SocietyOfMindAgent("panel", team=debate, model_client=model.client("summary"))
        result = await RoundRobinGroupChat([panel], max_turns=1, custom_message_types=TYPES).run(
            task="Monolith or services?"
        )
    assert ("debate", "RoundCompleted") in _kinds(result.messages)
    assert result.messages[-1].source == "panel"


async def test_without_moots_types_autogen_refuses_the_first_moot_event_by_name():
    """moot patches nothing: a group chat not given the types fails as AutoGen does, naming the first one."""
    model = ScriptedModel({"generator": ["draft one"], "critic": [make_critique(90)]})
    with (
        model,
        pytest.raises(
            RuntimeError,
            match=r"Message type <class 'autogen_agentchat.messages.StructuredMessage\[Critique\]'> is not registered",
        ),
    ):
        await RoundRobinGroupChat([make_reflection(model, MaxRounds(1))], max_turns=1).run(task=TASK)


def test_importing_moot_leaves_autogens_group_chat_as_autogen_made_it():
    import moot.teams  # noqa: F401  (every moot team module is loaded)

    assert BaseGroupChat.__init__.__module__ == "autogen_agentchat.teams._group_chat._base_group_chat"
    assert not hasattr(BaseGroupChat.__init__, "__wrapped__")


async def test_autogen_conditions_are_checked_at_round_ends_so_a_round_is_never_cut():
    """TextMentionTermination matches the first expert's reply, but the round finishes and nothing is partial."""
    model = ScriptedModel(
        {
            "architect": [make_position("split")],
            "ops": [make_position("monolith")],
            "business": [make_position("split")],
            "arbiter": [make_verdict("split")],
        }
    )
    with model:
        result = await make_debate(model, TextMentionTermination("split") | MaxRounds(3)).run(task="Split it?")
    assert len(result.rounds) == 1 and len(result.rounds[0].positions) == 3
    assert (result.partial, result.stop_reason) == (False, "Text 'split' mentioned")
    assert result.verdict.decision == "split"


async def test_a_token_budget_of_moots_own_still_stops_mid_round():
    model = ScriptedModel({"architect": [make_position("split")], "ops": [], "arbiter": [make_verdict("split")]})
    with model:
        team = make_debate(model, TokenBudget(1) | MaxRounds(3), experts=("architect", "ops"))
        result = await team.run(task="Split it?")
    assert result.stop_reason.startswith("token budget: ")
    assert list(result.rounds[0].positions) == ["architect"]


async def test_wrapped_conditions_round_trip_and_are_not_wrapped_twice():
    model = ScriptedModel({"generator": [], "critic": []})
    with model:
        team = make_reflection(model, TextMentionTermination("done") | MaxRounds(2))
        loaded = Reflection.load_component(team.dump_component())
    dumped = loaded.dump_component().model_dump(mode="json")
    assert dumped == team.dump_component().model_dump(mode="json")
    assert [type(c).__name__ for c in parts_of(loaded._stop)] == ["AtRoundEnd", "MaxRounds"]
    assert isinstance(
        TerminationCondition.load_component(AtRoundEnd(MaxMessageTermination(2)).dump_component()), AtRoundEnd
    )


def test_dumping_moot_components_raises_no_warning():
    model = ScriptedModel({name: [] for name in ("generator", "critic", "architect", "ops", "business", "arbiter")})
    with model, warnings.catch_warnings():
        warnings.simplefilter("error")
        for component in (
            make_reflection(model, TextMentionTermination("x") | MaxRounds(2)),
            make_debate(model, MaxRounds(2) | TokenBudget(100)),
            RoleAgent(role("critic"), model.spec),
        ):
            component.dump_component()


def test_message_types_cover_every_type_a_team_emits():
    names = {t.__name__ for t in TYPES}
    assert {RoundCompleted.__name__, "StructuredMessage[Critique]", "StructuredMessage[Position]"} <= names
    assert TextMessage.__name__ not in names  # AutoGen registers its own types itself
    assert Critique and Position
