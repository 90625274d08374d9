"""Debate runs on scripted models: independent first round, bounded context, consensus, the arbiter's
shuffled view, per-role models, metrics, arbiters and their fallback, rebuttal enforcement, stops."""

from __future__ import annotations

import json
import re

import pytest

from moot.arbiters import ExpertAssessment, MajorityVote, Verdict, normalise_answer
from moot.conditions import Consensus, MaxRounds, NoProgress, TokenBudget
from moot.errors import ConfigError
from moot.models import ModelSpec
from moot.roles import NUMBER, Opening, Position, RoleAgent, role
from moot.scenario import load_scenario, parse_model_options
from moot.teams import Debate, DebateMetrics
from moot.testing import ScriptedModel, count_words
from tests.conftest import EXPERTS, make_debate, make_position, make_rebuttal, make_verdict

TASK = "Should we split the billing module out of the monolith?"


def arg(name: str, round_: int) -> str:
    """A one-word argument that names its expert and round, so a prompt can be searched for it."""
    return f"{name.upper()}-R{round_}-POINT made"


def answers(result):
    return [{name: p.answer for name, p in r.positions.items()} for r in result.rounds]


def arbiter_view(call) -> list[str]:
    """The experts in the order the arbiter's prompt lists their positions."""
    prompt = call.messages[-1].content
    assert all(prompt.count(f"\n{name}: ") == 1 for name in EXPERTS)
    return sorted(EXPERTS, key=lambda name: prompt.index(f"\n{name}: "))


# ------------------------------------------------------------ round 1 is independent
async def test_round_one_answers_are_independent():
    script = {
        name: [make_position(f"{name.upper()}-ANSWER", arg(name, 1)), make_rebuttal("keep", arg(name, 2))]
        for name in EXPERTS
    }
    model = ScriptedModel({**script, "arbiter": [make_verdict("keep")]})
    with model:
        await make_debate(model, MaxRounds(2)).run(task=TASK)
    opening = {name: model.calls(name)[0] for name in EXPERTS}
    for name, call in opening.items():
        others = [other for other in EXPERTS if other != name]
        for other in others:
            assert arg(other, 1) not in call.prompt_text
            assert f"{other.upper()}-ANSWER" not in call.prompt_text
            assert arg(other, 1) in model.calls(name)[1].prompt_text  # visible once the rebuttal round starts
    # Everyone gets the same rules and question; only the persona, which closes the request, differs.
    assert len({call.messages[0].content for call in opening.values()}) == 1
    for name, call in opening.items():
        assert len(call.messages) == 2
        assert call.messages[0].content.startswith(role(name).system_prompt)
        request = call.messages[1].content
        assert request.endswith(role(name).persona)
        assert request.removesuffix(role(name).persona) == opening["ops"].messages[1].content.removesuffix(
            role("ops").persona
        )
        assert call.json_output is Opening
    assert "This is the first round: answer independently." in opening["ops"].messages[1].content


async def test_rebuttal_requests_are_the_same_for_every_expert_up_to_its_name():
    """The embedded model evaluates the shared part once: only the closing lines name the expert."""
    script = {name: [make_position("keep", arg(name, 1)), make_rebuttal("keep", arg(name, 2))] for name in EXPERTS}
    model = ScriptedModel({**script, "arbiter": [make_verdict("keep")]})
    with model:
        await make_debate(model, MaxRounds(2)).run(task=TASK)
    requests = {name: model.calls(name)[1].messages[1].content for name in EXPERTS}
    shared = {text.split(f"the one under {name}.")[0] for name, text in requests.items()}
    assert len(shared) == 1
    for name in EXPERTS:
        assert all(arg(other, 1) in requests[name] for other in EXPERTS)  # every position, the own one included
        assert requests[name].endswith(role(name).persona)


async def test_each_expert_turn_shares_the_system_message_and_task_whatever_schema_it_asks_for():
    """The schema closes the request (before the persona), so a rebuttal reuses the opening's prefix."""
    script = {name: [make_position("keep", arg(name, 1)), make_rebuttal("keep", arg(name, 2))] for name in EXPERTS}
    model = ScriptedModel({**script, "arbiter": [make_verdict("keep")]})
    with model:
        await make_debate(model, MaxRounds(2)).run(task=TASK)
    systems = {call.messages[0].content for name in EXPERTS for call in model.calls(name)}
    assert systems == {role("ops").system_prompt}
    for name in EXPERTS:
        opening, rebuttal = (str(call.messages[1].content) for call in model.calls(name))
        assert opening.startswith(f"Task:\n{TASK}\n\n") and rebuttal.startswith(f"Task:\n{TASK}\n\n")
        for request, fields in ((opening, '"reasoning": '), (rebuttal, '"claim": ')):
            hint = request.index("Reply with one JSON object and nothing else")
            assert fields in request[hint:] and hint < request.index(role(name).persona)


# ------------------------------------------------------------ bounded context
async def test_prompt_size_does_not_grow_with_the_transcript():
    stances = {"architect": "split", "ops": "keep", "business": "defer"}  # they never agree
    script = {
        name: [make_position(stance, arg(name, 1)), *(make_rebuttal(stance, arg(name, k)) for k in range(2, 6))]
        for name, stance in stances.items()
    }
    model = ScriptedModel({**script, "arbiter": [make_verdict("keep")]})
    with model:
        result = await make_debate(model, Consensus() | MaxRounds(5)).run(task=TASK)
    assert result.stop_reason == "max rounds: 5 of 5 rounds done"
    for name in EXPERTS:
        calls = model.calls(name)
        assert len(calls) == 5
        assert all(len(call.messages) == 2 for call in calls)  # system + this round's prompt, no history
        fifth = calls[4].prompt_text
        for other in EXPERTS:
            assert arg(other, 4) in fifth
            assert all(arg(other, k) not in fifth for k in (1, 2, 3))
        sizes = [count_words(call.prompt_text) for call in calls[1:]]
        assert sizes == [sizes[0]] * 4, f"{name}'s prompt grew over rounds 2-5: {sizes}"
    ruling = model.calls("arbiter")[0].prompt_text
    # The latest arguments; earlier ones only where a rebuttal quotes the claim it answered.
    assert all(arg(name, 5) in ruling and f"- {arg(name, 4)}" not in ruling for name in EXPERTS)


# ------------------------------------------------------------ consensus
@pytest.mark.parametrize("said", [("Keep", "keep.", " KEEP "), ("42", "42.0", "42")])
async def test_consensus_compares_normalised_answers(said):
    model = ScriptedModel({name: [make_position(a)] for name, a in zip(EXPERTS, said, strict=True)})
    with model:
        result = await make_debate(model, Consensus() | MaxRounds(3), arbiter=MajorityVote()).run(task=TASK)
    assert result.stop_reason == "consensus: agreement 1.00 >= 1 in round 1"
    assert len(result.rounds) == 1
    assert normalise_answer(result.answer) == normalise_answer(said[0])
    assert (result.verdict.confidence, result.verdict.dissent) == (1.0, [])


@pytest.mark.parametrize(
    ("threshold", "rounds", "reason"),
    [
        (1.0, 2, "consensus: agreement 1.00 >= 1 in round 2"),
        (0.66, 1, "consensus: agreement 0.67 >= 0.66 in round 1"),
    ],
)
async def test_consensus_threshold(threshold, rounds, reason):
    by_round = [("split", "keep", "keep"), ("keep", "keep", "keep")][:rounds]
    script = {
        name: [make_position(by_round[0][i]), *(make_rebuttal(later[i]) for later in by_round[1:])]
        for i, name in enumerate(EXPERTS)
    }
    model = ScriptedModel({**script, "arbiter": [make_verdict("keep")]})
    with model:
        result = await make_debate(model, Consensus(threshold) | MaxRounds(4)).run(task=TASK)
    assert result.stop_reason == reason
    assert len(result.rounds) == rounds


# ------------------------------------------------------------ arbiter order
async def rule_once(seed: int):
    script = {name: [make_position(a)] for name, a in zip(EXPERTS, ("split", "keep", "defer"), strict=True)}
    model = ScriptedModel({**script, "arbiter": [make_verdict("keep")]})
    with model:
        result = await make_debate(model, MaxRounds(1), seed=seed).run(task=TASK)
    return result, model.calls("arbiter")[0]


async def test_the_arbiter_sees_the_positions_in_a_seeded_shuffled_order():
    first, call = await rule_once(seed=0)
    again, call_again = await rule_once(seed=0)
    other, other_call = await rule_once(seed=1)

    verdict = first.messages[-1]
    assert verdict.metadata["moot_kind"] == "verdict"
    assert verdict.metadata["arbiter_order"] == ",".join(first.arbiter_order)
    assert arbiter_view(call) == first.arbiter_order
    assert arbiter_view(other_call) == other.arbiter_order
    assert sorted(first.arbiter_order) == sorted(other.arbiter_order) == sorted(EXPERTS)
    assert (again.arbiter_order, call_again.prompt_text) == (first.arbiter_order, call.prompt_text)
    assert first.arbiter_order != other.arbiter_order


# ------------------------------------------------------------ per-role models
async def test_each_expert_talks_to_its_own_model():
    """architect runs on model 'a' at 0.9, the others on model 'b': no call crosses over."""
    a = ScriptedModel(
        {"architect": [make_position("split", "A-ONLY point")], "arbiter": [make_verdict("keep")]}, name="a"
    )
    b = ScriptedModel(
        {"ops": [make_position("keep", "B-ONLY point")], "business": [make_position("keep", "B-ONLY point")]}, "b"
    )
    specs = {"architect": "scripted:a@0.9", "ops": "scripted:b", "business": "scripted:b", "arbiter": "scripted:a@0.1"}
    with a, b:
        team = Debate(
            [RoleAgent(role(name), ModelSpec.parse(specs[name])) for name in EXPERTS],
            RoleAgent(role("arbiter"), ModelSpec.parse(specs["arbiter"])),
            stop=MaxRounds(1),
        )
        result = await team.run(task=TASK)
    for agent in [*team.experts, team.arbiter]:
        owner = a if specs[agent.name].startswith("scripted:a") else b
        assert agent.spec == ModelSpec.parse(specs[agent.name])
        assert agent.model_client is owner.client(agent.name)
        assert len(owner.calls(agent.name)) == 1
    assert set(a.clients) == {"architect", "arbiter"} and set(b.clients) == {"ops", "business"}
    assert answers(result) == [{"architect": "split", "ops": "keep", "business": "keep"}]
    assert result.rounds[0].positions["architect"].key_arguments == ["A-ONLY point"]


def test_model_options_give_one_role_of_the_scenario_its_own_temperature():
    scenario = load_scenario("architecture_review")
    models = parse_model_options(["scripted:base", "architect=@0.9"], scenario.roles)
    assert models.spec("architect") == ModelSpec(provider="scripted", model="base", temperature=0.9)
    for name in ("ops", "business", "arbiter"):
        assert models.spec(name) == ModelSpec(provider="scripted", model="base")


async def test_the_scenario_routes_each_role_to_its_resolved_model():
    scenario = load_scenario("architecture_review")
    models = parse_model_options(["scripted:base", "architect=scripted:arch@0.9"], scenario.roles)
    base = ScriptedModel(
        {"ops": [make_position("defer")], "business": [make_position("defer")], "arbiter": [make_verdict("defer")]},
        name="base",
    )
    arch = ScriptedModel({"architect": [make_position("defer")]}, name="arch")
    with base, arch:
        team = scenario.build(models)
        result = await team.run(task=scenario.task)
    assert isinstance(team, Debate)
    specs = {agent.name: agent.spec for agent in [*team.experts, team.arbiter]}
    assert specs == {
        "architect": ModelSpec(provider="scripted", model="arch", temperature=0.9),
        "ops": ModelSpec(provider="scripted", model="base"),
        "business": ModelSpec(provider="scripted", model="base"),
        "arbiter": ModelSpec(provider="scripted", model="base"),
    }
    assert len(arch.calls("architect")) == 1
    assert [len(base.calls(name)) for name in ("ops", "business", "arbiter")] == [1, 1, 1]
    assert (result.stop_reason, result.answer) == ("consensus: agreement 1.00 >= 1 in round 1", "defer")


# ------------------------------------------------------------ metrics
@pytest.mark.parametrize(("decision", "matches"), [("keep", True), ("split", False)])
async def test_metrics_of_a_debate_with_known_flips(decision, matches):
    model = ScriptedModel(
        {
            # architect: split -> keep in round 2, answering a keep claim and reasoning its way to keep: adopted;
            # its first reply is malformed and retried
            "architect": [
                "I think we should split",
                make_position("split"),
                make_rebuttal("keep", claim="ops: argument for keep", reasoning="the migration risk says keep"),
            ],
            # ops: keep -> split answering a keep claim, with no reason for split: recorded, not adopted
            "ops": [make_position("keep"), make_rebuttal("split", claim="business: argument for keep")],
            # business: keep -> defer, an answer nobody held (no argument for it met): recorded, not adopted
            "business": [
                make_position("keep"),
                make_rebuttal("defer", reasoning="neither holds until the audit is done, so defer"),
            ],
            "arbiter": [make_verdict(decision)],
        }
    )
    with model:
        result = await make_debate(model, MaxRounds(2)).run(task=TASK)
    assert answers(result) == [
        {"architect": "split", "ops": "keep", "business": "keep"},
        {"architect": "keep", "ops": "keep", "business": "keep"},
    ]
    assert result.rounds[1].positions["ops"].proposed == "split"
    assert result.rounds[1].positions["business"].proposed == "defer"
    assert result.stop_reason == "max rounds: 2 of 2 rounds done"
    assert result.metrics == DebateMetrics(
        first_round_diversity=2,
        flips={"architect": [2], "ops": [], "business": []},
        argued_flips=1,
        unargued_flips=2,
        flips_to_unheld_answer=1,
        agreement_per_round=[2 / 3, 1.0],
        first_round_vote="keep",
        first_round_tied_answers=1,
        final_matches_first_round_vote=matches,
        final_in_first_round=True,
        final_majority="keep",
        answers_per_round=[["split", "keep", "keep"], ["keep", "keep", "keep"]],
        said_per_round=[["split", "keep", "keep"], ["keep", "split", "defer"]],
        tokens_per_round=[sum(u.prompt_tokens + u.completion_tokens for u in r.usage.values()) for r in result.rounds],
        parse_failures=1,
    )
    assert all(tokens > 0 for tokens in result.metrics.tokens_per_round)
    # Every change is argued (adopted) or unargued (not adopted): the parts add up to the total; a change to an
    # answer no other expert held is one of them, not a third kind.
    metrics = result.metrics
    assert metrics.answer_changes == metrics.argued_flips + metrics.unargued_flips == 3
    assert sum(len(rounds) for rounds in metrics.flips.values()) == metrics.argued_flips  # flips: the adopted ones
    assert metrics.changes_summary() == (
        "answer changes 3 (argued, adopted 1; unargued, not adopted 2), 1 of the 3 to an answer no other expert held"
    )


def test_the_changes_summary_of_a_debate_without_changes_names_no_part():
    metrics = DebateMetrics(first_round_diversity=1, flips={}, agreement_per_round=[1.0], parse_failures=0)
    assert metrics.changes_summary() == "answer changes 0 (argued, adopted 0; unargued, not adopted 0)"


# ------------------------------------------------------------ arbiters
async def test_majority_vote_rules_without_any_model_call():
    model = ScriptedModel(
        {"architect": [make_position("Keep")], "ops": [make_position("keep.")], "business": [make_position("split")]}
    )
    with model:
        result = await make_debate(model, Consensus() | MaxRounds(1), arbiter=MajorityVote()).run(task=TASK)
    assert "arbiter" not in model.clients  # no script, so an LLM arbiter could not even have been built
    assert (result.verdict_by, result.partial, result.stop_reason) == (
        "majority_vote",
        False,
        "max rounds: 1 of 1 rounds done",
    )
    assert normalise_answer(result.answer) == "keep"
    assert (result.verdict.confidence, result.verdict.dissent) == (2 / 3, ["business answered 'split'"])
    assert set(result.usage) == set(EXPERTS)
    verdict = result.messages[-1]
    assert (verdict.source, verdict.metadata["moot_kind"], verdict.models_usage) == ("majority_vote", "verdict", None)


async def test_majority_vote_in_a_debate_breaks_a_tie_by_confidence():
    model = ScriptedModel(
        {"architect": [make_position("split", confidence=0.9)], "ops": [make_position("keep", confidence=0.6)]}
    )
    with model:
        team = make_debate(model, MaxRounds(1), experts=("architect", "ops"), arbiter=MajorityVote())
        result = await team.run(task=TASK)
    assert (result.answer, result.verdict.dissent) == ("split", ["ops answered 'keep'"])


def fallback_script(arbiter, rounds=1):
    stances = {"architect": "split", "ops": "keep", "business": "keep"}
    script = {name: [make_position(s), *[make_rebuttal(s)] * (rounds - 1)] for name, s in stances.items()}
    return ScriptedModel({**script, "arbiter": arbiter})


async def test_a_malformed_arbiter_beyond_retries_falls_back_to_a_majority_vote():
    model = fallback_script(["not json", json.dumps({"decision": "keep"})])
    with model:
        result = await make_debate(model, MaxRounds(1), retries=1).run(task=TASK)
    assert len(model.calls("arbiter")) == 2
    assert (result.partial, result.verdict_by, result.answer) == (True, "majority_vote", "keep")
    assert result.stop_reason.startswith(
        "max rounds: 1 of 1 rounds done; arbiter failed (arbiter gave malformed output 2 times; last error: "
    )
    assert "rationale: Field required" in result.stop_reason
    assert result.stop_reason.endswith("); majority vote ruled")
    assert result.metrics.parse_failures == 2
    assert (result.messages[-1].source, result.messages[-1].metadata["moot_kind"]) == ("majority_vote", "verdict")


async def test_a_later_good_ruling_clears_an_earlier_fallback():
    model = fallback_script(["not json", "still not json", make_verdict("split")], rounds=2)
    with model:
        team = make_debate(model, MaxRounds(1), retries=1)
        assert (await team.run(task=TASK)).verdict_by == "majority_vote"
        result = await team.run()  # one more round; this time the arbiter answers properly
    assert (result.partial, result.verdict_by, result.answer) == (False, "arbiter", "split")
    assert result.stop_reason == "max rounds: 1 of 1 rounds done (2 in all)"
    assert result.metrics.parse_failures == 2  # the earlier failures still count


# ------------------------------------------------------------ the verdict says whose argument decided it
GOOD_REASON = "Ops argued best: keeping costs nothing this quarter, and nobody answered that"


def ruling(rationale: str, decision: str = "keep", decided_by: str | None = "ops") -> Verdict:
    return Verdict(
        rationale=rationale,
        decided_by=decided_by,
        assessments=[ExpertAssessment(expert="ops", assessment="strongest case")],
        decision=decision,
        confidence=0.8,
    )


@pytest.mark.parametrize(
    ("first", "feedback"),
    [
        (ruling("split"), "at least 40 characters"),
        (ruling("keep-the-monolith-it-is-cheaper-to-run-this-year"), "is not a reason"),
        (ruling(GOOD_REASON, decided_by=None), "decided_by"),
        (ruling(GOOD_REASON, decided_by="nobody"), "decided_by"),
    ],
    ids=["one-word", "one-long-word", "no-expert", "not-an-expert"],
)
async def test_a_ruling_that_does_not_say_whose_argument_decided_and_why_is_fed_back_and_asked_again(first, feedback):
    model = fallback_script([first, ruling(GOOD_REASON)])
    with model:
        result = await make_debate(model, MaxRounds(1)).run(task=TASK)
    calls = model.calls("arbiter")
    assert len(calls) == 2
    assert feedback in calls[1].prompt_text
    assert (result.partial, result.verdict_by, result.answer) == (False, "arbiter", "keep")
    assert (result.verdict.decided_by, result.verdict.rationale) == ("ops", GOOD_REASON)
    assert result.metrics.parse_failures == 1


def test_the_arbiters_schema_asks_for_a_sentence_and_one_of_the_experts_in_a_form_decoders_keep():
    """Constrained decoding (and a served model's schema) keep a choice of names and a length: the small model
    that answered 'split' three times cannot close the rationale after one word, nor name nobody."""
    from moot.models._reply_schema import clamped_schema, served_schema
    from moot.roles import citing

    schema = citing(Verdict, ("architect", "ops"))
    for sent in (clamped_schema(schema), served_schema(schema)):
        properties = sent["properties"]
        assert list(properties)[:2] == ["rationale", "decided_by"]  # the reason first, then whose argument
        assert properties["decided_by"]["enum"] == ["architect", "ops"]
        assert properties["rationale"]["minLength"] >= 40
        assert {"rationale", "decided_by"} <= set(sent["required"])


async def test_an_arbiter_that_never_says_whose_argument_decided_falls_back_to_a_majority_vote():
    model = fallback_script([ruling("split")] * 2)
    with model:
        result = await make_debate(model, MaxRounds(1), retries=1).run(task=TASK)
    assert (result.partial, result.verdict_by, result.answer) == (True, "majority_vote", "keep")
    assert "at least 40 characters" in result.stop_reason


def test_a_stored_verdict_with_a_short_rationale_and_no_deciding_expert_still_loads():
    """Only a debate's request holds the arbiter to a reason; verdicts recorded before the rules still read."""
    stored = ruling("split", decided_by=None).model_dump()
    del stored["decided_by"]
    assert Verdict.model_validate(stored).rationale == "split"


# ------------------------------------------------------------ rebuttals and options
async def test_a_later_position_that_answers_no_claim_is_fed_back():
    no_claim = make_position("split", "still the same point")
    model = ScriptedModel(
        {
            "architect": [make_position("split"), no_claim, make_rebuttal("split")],
            "ops": [make_position("keep", "OPS-CLAIM point"), make_rebuttal("keep")],
            "arbiter": [make_verdict("keep")],
        }
    )
    with model:
        result = await make_debate(model, MaxRounds(2), experts=("architect", "ops")).run(task=TASK)
    calls = model.calls("architect")
    assert len(calls) == 3  # round 1 accepted without a claim; round 2 retried once
    retry = calls[2].messages
    assert retry[-2].content == no_claim.model_dump_json()
    assert retry[-1].content.startswith("Your reply was not valid: claim: Field required")
    assert result.rounds[0].positions["architect"].claim is None
    second = result.rounds[1].positions["architect"]
    assert (second.claim, second.responds_to) == ("ops: OPS-CLAIM point", "ops")  # the only claim it could answer
    assert (result.metrics.parse_failures, result.partial) == (1, False)
    assert [m.metadata["parse_failures"] for m in result.messages if m.source == "architect"] == ["0", "1"]


async def test_a_rebuttal_can_only_answer_another_experts_claim_as_it_was_made():
    model = ScriptedModel(
        {
            "architect": [make_position("split", "ARCH-1 point", "ARCH-2 point"), make_rebuttal("split")],
            "ops": [
                make_position("keep", "OPS-1 point"),
                make_rebuttal("keep", claim="ops: OPS-1 point"),
                make_rebuttal("keep"),
            ],
            "arbiter": [make_verdict("keep")],
        }
    )
    with model:
        result = await make_debate(model, MaxRounds(2), experts=("architect", "ops")).run(task=TASK)
    ops = model.calls("ops")
    assert ops[1].json_output.model_json_schema()["properties"]["claim"]["enum"] == [
        "architect: ARCH-1 point",
        "architect: ARCH-2 point",
    ]
    assert (
        "claim: Input should be 'architect: ARCH-1 point' or 'architect: ARCH-2 point'" in ops[2].messages[-1].content
    )
    assert result.rounds[1].positions["ops"].responds_to == "architect"


async def test_answers_outside_the_options_are_fed_back():
    options = ("split", "keep")
    model = ScriptedModel(
        {
            "architect": [make_position("split")],
            "ops": [make_position("merge"), make_position("keep")],
            "arbiter": [make_verdict("defer"), make_verdict("keep")],
        }
    )
    with model:
        team = make_debate(model, MaxRounds(1), experts=("architect", "ops"), choices=options)
        result = await team.run(task=TASK)
    ops, arbiter = model.calls("ops"), model.calls("arbiter")
    assert "answer: Input should be 'split' or 'keep'" in ops[1].messages[-1].content
    assert "decision: Input should be 'split' or 'keep'" in arbiter[1].messages[-1].content
    assert ops[0].json_output.model_json_schema()["properties"]["answer"]["enum"] == list(options)
    assert arbiter[0].json_output.model_json_schema()["properties"]["decision"]["enum"] == list(options)
    assert "Your answer must be one of: split, keep." in ops[0].prompt_text
    assert (result.answer, result.metrics.parse_failures) == ("keep", 2)
    assert type(result.rounds[0].positions["ops"]) is Position  # reported as the role's own type
    assert type(result.verdict) is Verdict


async def test_an_answer_pattern_holds_positions_and_decision_to_a_number():
    model = ScriptedModel(
        {
            "architect": [make_position("-4")],
            "ops": [make_position("ops: subtract first"), make_position("-4.0")],
            "arbiter": [make_verdict("5 - 3 - 6"), make_verdict("-4")],
        }
    )
    with model:
        team = make_debate(model, MaxRounds(1), experts=("architect", "ops"), answer_pattern=NUMBER)
        result = await team.run(task=TASK)
        assert Debate.load_component(team.dump_component()).answer_pattern == NUMBER
    ops, arbiter = model.calls("ops"), model.calls("arbiter")
    assert "answer: String should match pattern" in ops[1].messages[-1].content
    assert "decision: String should match pattern" in arbiter[1].messages[-1].content
    assert ops[0].json_output.model_json_schema()["properties"]["answer"]["pattern"] == NUMBER
    assert (result.answer, result.metrics.parse_failures) == ("-4", 2)


# ------------------------------------------------------------ other stops
async def test_no_progress_stops_when_the_answers_repeat():
    model = ScriptedModel(
        {
            "architect": [make_position("split", "first point"), make_rebuttal("Split", "second point")],
            "ops": [make_position("keep", "first point"), make_rebuttal("keep.", "second point")],
            "arbiter": [make_verdict("keep")],
        }
    )
    with model:
        result = await make_debate(model, NoProgress() | MaxRounds(5), experts=("architect", "ops")).run(task=TASK)
    assert result.stop_reason == "no progress: positions unchanged for 1 round(s) (round 2)"
    assert len(result.rounds) == 2


async def test_experts_swapping_answers_is_progress():
    model = ScriptedModel(
        {
            "architect": [make_position("split"), make_rebuttal("keep"), make_rebuttal("keep")],
            "ops": [make_position("keep"), make_rebuttal("split"), make_rebuttal("split")],
            "arbiter": [make_verdict("keep")],
        }
    )
    with model:
        result = await make_debate(model, NoProgress() | MaxRounds(5), experts=("architect", "ops")).run(task=TASK)
    assert result.stop_reason == "no progress: positions unchanged for 1 round(s) (round 3)"
    assert result.metrics.flips == {"architect": [2], "ops": [2]}


def budget_script() -> ScriptedModel:
    script = {
        name: [make_position(stance, arg(name, 1)), make_rebuttal("keep", arg(name, 2))]
        for name, stance in zip(EXPERTS, ("split", "keep", "split"), strict=True)
    }
    return ScriptedModel({**script, "arbiter": [make_verdict("keep")]})


async def test_a_token_budget_stop_mid_round_still_gets_a_verdict_on_the_latest_positions():
    with budget_script() as full:  # measure what each turn costs
        measured = await make_debate(full, MaxRounds(2)).run(task=TASK)
    used = [sum(u.prompt_tokens + u.completion_tokens for u in r.usage.values()) for r in measured.rounds]
    architect_second = measured.rounds[1].usage["architect"]
    budget = used[0] + architect_second.prompt_tokens + architect_second.completion_tokens

    model = budget_script()
    model.clients["ops"].replies.pop()  # the budget runs out before ops' and business' second turns
    model.clients["business"].replies.pop()
    with model:
        result = await make_debate(model, TokenBudget(budget) | MaxRounds(2)).run(task=TASK)
    assert result.stop_reason == f"token budget: {budget} of {budget} tokens used"
    assert answers(result) == [{"architect": "split", "ops": "keep", "business": "split"}, {"architect": "keep"}]
    ruling = model.calls("arbiter")[0].prompt_text
    for latest in (arg("architect", 2), arg("ops", 1), arg("business", 1)):
        assert latest in ruling
    assert arg("architect", 1) not in ruling
    assert sorted(result.arbiter_order) == sorted(EXPERTS)
    assert (result.verdict_by, result.answer) == ("arbiter", "keep")
    assert result.metrics.agreement_per_round == [2 / 3]  # a round cut short has no agreement to report
    assert result.metrics.flips == {"architect": [2], "ops": [], "business": []}


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ("split", "choices must be a sequence of answers, e.g. choices=('split', 'keep'), not the string 'split'"),
        (("split",), "choices must be at least two distinct answers (or none), got ['split']"),
        (("split", "split"), "choices must be at least two distinct answers (or none), got ['split', 'split']"),
        (("split", ""), "choices must be non-empty strings, got '' in ['split', '']"),
        (("split", 3), "choices must be non-empty strings, got 3 in ['split', 3]"),
    ],
)
def test_choices_are_refused_at_construction_unless_a_set_of_answers(choices, message):
    from moot.errors import ConfigError

    scripts = {name: [] for name in (*EXPERTS, "arbiter")}
    with ScriptedModel(scripts) as model, pytest.raises(ConfigError) as info:
        make_debate(model, MaxRounds(1), choices=choices)
    assert str(info.value) == message
    with ScriptedModel(scripts) as model:
        assert make_debate(model, MaxRounds(1), choices=["split", "keep"]).choices == ("split", "keep")


# ------------------------------------------------------------ given openings
GIVEN = Position(
    reasoning="Billing shares six tables.", answer="keep", key_arguments=["six shared tables"], confidence=1.0
)


def panel(model: ScriptedModel, arbiter=None, **options) -> Debate:
    """The three built-in experts on ``model``, with a majority vote unless ``arbiter`` is given."""
    return Debate([RoleAgent(role(n), model.spec) for n in EXPERTS], arbiter or MajorityVote(), **options)


async def test_a_given_opening_is_not_asked_and_stands_in_round_one_like_any_other():
    script = {
        "architect": [make_rebuttal("keep", arg("architect", 2))],  # its opening is given: one call only
        "ops": [make_position("split", arg("ops", 1)), make_rebuttal("split", arg("ops", 2))],
        "business": [make_position("keep", arg("business", 1)), make_rebuttal("keep", arg("business", 2))],
    }
    model = ScriptedModel({**script, "arbiter": [make_verdict("keep")]})
    with model:
        team = panel(
            model, arbiter=RoleAgent(role("arbiter"), model.spec), stop=MaxRounds(2), openings={"architect": GIVEN}
        )
        result = await team.run(task=TASK)
        loaded = Debate.load_component(team.dump_component())
    assert answers(result) == [{"architect": "keep", "ops": "split", "business": "keep"}] * 2
    assert result.rounds[0].positions["architect"] == GIVEN and "architect" not in result.rounds[0].usage
    assert "architect: keep\n- six shared tables" in model.calls("ops")[1].prompt_text  # no confidence of its own
    assert "ops: split (confidence 0.7)" in model.calls("ops")[1].prompt_text
    assert result.metrics.first_round_vote == "keep"
    assert loaded.openings == {"architect": GIVEN}


@pytest.mark.parametrize(
    ("openings", "held", "message"),
    [
        ({"judge": GIVEN}, (), "openings: no expert is named 'judge'; valid names: architect, ops, business"),
        ({name: GIVEN for name in EXPERTS}, EXPERTS, "held: at least one expert must argue after round 1"),
    ],
)
def test_given_openings_name_experts_and_leave_someone_to_argue(openings, held, message):
    with ScriptedModel({name: [] for name in EXPERTS}) as model, pytest.raises(ConfigError, match=re.escape(message)):
        panel(model, openings=openings, held=held)


# ------------------------------------------------------------ hidden answers
async def test_hidden_peer_answers_show_later_rounds_the_arguments_with_every_answer_masked():
    script = {
        "architect": [make_position("214", "57 + 87 = 144, then 144 + 70 = 214"), make_rebuttal("214")],
        "ops": [make_position("144", "57 + 87 + 70 = 144 exactly"), make_rebuttal("214")],
        "business": [make_position("204", "adding 57 and 87 gives 144"), make_rebuttal("204")],
    }
    model = ScriptedModel(script)
    with model:
        team = panel(model, stop=MaxRounds(2), peer_answers="hidden")
        result = await team.run(task="57 + 87 + 70 =")
        loaded = Debate.load_component(team.dump_component())
    prompt = model.calls("ops")[1].prompt_text
    assert "architect:\n- 57 + 87 = 144, then 144 + 70 = ?" in prompt
    assert "ops:\n- 57 + 87 + 70 = ? exactly" in prompt
    assert "business:\n- adding 57 and 87 gives 144" in prompt  # 144 is an intermediate step here, not its answer
    assert "214" not in prompt and "204" not in prompt and "(confidence" not in prompt
    offered = model.calls("ops")[1].json_output.model_json_schema()["properties"]["claim"]["enum"]
    assert "architect: 57 + 87 = 144, then 144 + 70 = ?" in offered  # the claims offered are the masked ones
    assert [p.answer for p in result.rounds[1].positions.values()] == ["214", "214", "204"]
    assert loaded.peer_answers == "hidden"


def test_an_unknown_peer_answers_view_is_refused():
    with (
        ScriptedModel({name: [] for name in EXPERTS}) as model,
        pytest.raises(ConfigError, match="valid: shown, hidden"),
    ):
        panel(model, peer_answers="blind")  # type: ignore[arg-type]


async def test_a_held_opening_stands_in_every_round_without_a_call():
    script = {
        "architect": [],  # given and held: never asked
        "ops": [make_position("split", arg("ops", 1)), make_rebuttal("keep", arg("ops", 2)), make_rebuttal("keep")],
        "business": [make_position("split", arg("business", 1)), make_rebuttal("split"), make_rebuttal("split")],
    }
    model = ScriptedModel(script)
    with model:
        team = panel(model, stop=MaxRounds(3), openings={"architect": GIVEN}, held=["architect"])
        result = await team.run(task=TASK)
        loaded = Debate.load_component(team.dump_component())
    assert [r.positions["architect"] for r in result.rounds] == [GIVEN] * 3
    assert all("architect" not in r.usage for r in result.rounds)
    assert "architect: keep\n- six shared tables" in model.calls("ops")[2].prompt_text  # round 3: still no confidence
    assert result.metrics.flips["architect"] == [] and loaded.held == ("architect",)


def test_only_a_given_opening_can_be_held():
    with ScriptedModel({name: [] for name in EXPERTS}) as model:
        with pytest.raises(
            ConfigError, match=re.escape("held: 'ops' has no given opening to hold; valid names: architect")
        ):
            panel(model, openings={"architect": GIVEN}, held=["ops"])
        with pytest.raises(ConfigError, match=re.escape("valid names: none (no opening is given)")):
            panel(model, held=["ops"])


# ------------------------------------------------------------ rebutting agents
async def test_a_rebutting_agent_speaks_for_its_expert_after_round_one():
    model = ScriptedModel(
        {
            "architect": [make_position("keep", arg("architect", 1))],  # rebuts through its rebutting agent
            "ops": [make_position("split", arg("ops", 1)), make_rebuttal("split", arg("ops", 2))],
            "business": [make_position("keep", arg("business", 1)), make_rebuttal("keep", arg("business", 2))],
        }
    )
    hot = ScriptedModel({"architect": [make_rebuttal("keep", arg("architect", 2))]}, name="hot")
    with model, hot:
        rebutter = RoleAgent(role("architect"), ModelSpec(provider="scripted", model="hot", temperature=0.7))
        team = panel(model, stop=MaxRounds(2), rebutting=[rebutter])
        result = await team.run(task=TASK)
        loaded = Debate.load_component(team.dump_component())
    assert len(model.calls("architect")) == 1 and len(hot.calls("architect")) == 1
    assert "ops: split (confidence 0.7)" in hot.calls("architect")[0].prompt_text  # the round-2 view, as any rebuttal
    assert result.rounds[1].positions["architect"].answer == "keep" and "architect" in result.rounds[1].usage
    assert team._model_specs()["architect rebutting"] == "scripted:hot@0.7"
    assert [a.name for a in loaded.rebutting.values()] == ["architect"]
    assert loaded.rebutting["architect"].spec == rebutter.spec


def test_a_rebutting_agent_must_name_one_expert_once():
    with ScriptedModel({name: [] for name in [*EXPERTS, "judge"]}) as model:
        judge = RoleAgent(role("arbiter"), model.spec, name="judge")
        with pytest.raises(
            ConfigError, match=re.escape("rebutting: no expert is named 'judge'; valid names: architect, ops, business")
        ):
            panel(model, rebutting=[judge])
        ops = RoleAgent(role("ops"), model.spec)
        with pytest.raises(ConfigError, match=re.escape("rebutting: two agents speak for 'ops'")):
            panel(model, rebutting=[ops, ops])
