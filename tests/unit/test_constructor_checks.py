"""Every public constructor refuses a bad argument where it is given: one line, naming the argument, nothing run.

Table-driven: each row is a bad input to a constructor reachable from ``moot.__all__`` or the ``__all__`` of
``moot.teams``, ``moot.roles``, ``moot.arbiters``, ``moot.catalog`` or ``moot.scenario``, and the name of the
argument its message must name. A refusal is moot's ConfigError (or a TypeError / ValueError that is not
pydantic's many-line ValidationError), never an AttributeError or KeyError from inside moot; its message is
one line; no model was called and no run was recorded. Then what the README implies is accepted and runs:
a model spec string, a role by name, an arbiter by name, one feedback point by name.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from moot import (
    CodeDebate,
    Debate,
    Feedback,
    HumanInTheLoop,
    PermissionPolicy,
    PlannerExecutor,
    Reflection,
    Role,
    RoleAgent,
    Rule,
    TestCritic,
    builtin_tools,
    custom_role,
    expert,
    role,
)
from moot.arbiters import MajorityVote, load_arbiter
from moot.catalog import entries, find_entry, read_document
from moot.conditions import MaxRounds
from moot.display import ConsoleFeedback
from moot.errors import MootError
from moot.models import ModelSpec
from moot.roles import Critique, Opening, Plan, Position, Verdict, register_role
from moot.scenario import Scenario, load_scenario
from moot.teams import AnswerOnce, CallbackFeedback, load_preset
from moot.testing import ScriptedModel
from moot.tools import Tool

AGENTS = ("generator", "critic", "architect", "ops", "business", "arbiter", "planner", "executor")
TESTS = ["assert add(1, 2) == 3"]
OPENING = Position(answer="keep", key_arguments=["keeping costs nothing"], confidence=0.5)


def _kit(model: ScriptedModel) -> SimpleNamespace:
    """Well-formed agents on an empty script: any model call a constructor made would fail the test."""
    spec = model.spec
    agent = {name: RoleAgent(role(name), spec) for name in AGENTS}
    return SimpleNamespace(
        spec=spec,
        model=model,
        experts=[agent["architect"], agent["ops"]],
        second_writer=RoleAgent(role("generator"), spec, name="writer_b"),
        tools=builtin_tools("work"),
        **agent,
    )


Case = tuple[str, Callable[[SimpleNamespace], Any], str]
"""An id, the bad call (given the kit), and the argument its message must name."""

ROLE_AGENT: list[Case] = [
    ("role-int", lambda k: RoleAgent(123, k.spec), "role"),
    ("role-and-model-swapped", lambda k: RoleAgent(k.spec, role("generator")), "role"),
    ("role-none", lambda k: RoleAgent(None, k.spec), "role"),
    ("role-unknown-name", lambda k: RoleAgent("no_such_role", k.spec), "role"),
    ("model-int", lambda k: RoleAgent(role("generator"), 123), "model"),
    ("model-none", lambda k: RoleAgent(role("generator"), None), "model"),
    ("model-role", lambda k: RoleAgent(role("generator"), role("critic")), "model"),
    ("model-bad-spec-string", lambda k: RoleAgent(role("generator"), "bogus:thing"), "model spec"),
    ("model-empty-string", lambda k: RoleAgent(role("generator"), ""), "model spec"),
    ("name-int", lambda k: RoleAgent(role("generator"), k.spec, name=5), "name"),
    ("name-not-identifier", lambda k: RoleAgent(role("generator"), k.spec, name="two words"), "name"),
    ("retries-negative", lambda k: RoleAgent(role("critic"), k.spec, max_parse_retries=-1), "max_parse_retries"),
    ("retries-string", lambda k: RoleAgent(role("critic"), k.spec, max_parse_retries="2"), "max_parse_retries"),
    ("retries-bool", lambda k: RoleAgent(role("critic"), k.spec, max_parse_retries=True), "max_parse_retries"),
    ("retries-huge", lambda k: RoleAgent(role("critic"), k.spec, max_parse_retries=10**6), "max_parse_retries"),
]

ROLES: list[Case] = [
    ("custom-persona-int", lambda k: custom_role("x", 123), "persona"),
    ("custom-persona-blank", lambda k: custom_role("x", "   "), "persona"),
    ("custom-name-int", lambda k: custom_role(123, "a persona"), "name"),
    ("custom-name-bad", lambda k: custom_role("Bad Name", "a persona"), "name"),
    ("custom-description-int", lambda k: custom_role("x", "a persona", description=5), "description"),
    ("custom-output-not-model", lambda k: custom_role("x", "a persona", output_type=dict), "output_type"),
    ("custom-output-instance", lambda k: custom_role("x", "p", output_type=OPENING), "output_type"),
    ("expert-persona-none", lambda k: expert("x", None), "persona"),
    ("expert-name-none", lambda k: expert(None, "a persona"), "name"),
    ("role-lookup-int", lambda k: role(5), "role"),
    ("role-lookup-unknown", lambda k: role("no_such_role"), "role"),
    ("Role-prompt-int", lambda k: Role("x", "d", 5), "system_prompt"),
    ("Role-name-blank", lambda k: Role("", "d", "a prompt"), "name"),
    ("Role-output-string", lambda k: Role("x", "d", "a prompt", output_type="Critique"), "output_type"),
    ("Role-model-string", lambda k: Role("x", "d", "a prompt", model="@0.9"), "model"),
    ("Role-persona-none", lambda k: Role("x", "d", "a prompt", persona=None), "persona"),
    ("register-a-name", lambda k: register_role("critic"), "role"),
]

REFLECTION: list[Case] = [
    ("generator-none", lambda k: Reflection(None, k.critic), "generator"),
    ("generator-string", lambda k: Reflection("generator", k.critic), "generator"),
    (
        "generator-is-a-critic",
        lambda k: Reflection(k.critic, RoleAgent(role("critic"), k.spec, name="c2")),
        "generator",
    ),
    ("critic-none", lambda k: Reflection(k.generator, None), "critic"),
    ("critic-empty", lambda k: Reflection(k.generator, []), "critic"),
    ("critic-string", lambda k: Reflection(k.generator, "critic"), "critic"),
    ("critic-answers-text", lambda k: Reflection(k.generator, k.second_writer), "critic"),
    ("critic-answers-position", lambda k: Reflection(k.generator, k.ops), "critic"),
    ("critic-list-with-int", lambda k: Reflection(k.generator, [k.critic, 5]), "critic"),
    ("critic-mapping", lambda k: Reflection(k.generator, {"critic": k.critic}), "critic"),
    ("duplicate-names", lambda k: Reflection(k.generator, [k.critic, k.critic]), "named"),
    ("revision-bogus", lambda k: Reflection(k.generator, k.critic, revision="bogus"), "revision"),
    ("revision-none", lambda k: Reflection(k.generator, k.critic, revision=None), "revision"),
    ("name-int", lambda k: Reflection(k.generator, k.critic, name=3), "name"),
    ("name-empty", lambda k: Reflection(k.generator, k.critic, name=""), "name"),
    ("description-int", lambda k: Reflection(k.generator, k.critic, description=5), "description"),
]

DEBATE: list[Case] = [
    ("experts-string", lambda k: Debate("ab", MajorityVote()), "experts"),
    ("experts-one-agent", lambda k: Debate(k.architect, MajorityVote()), "experts"),
    ("experts-none", lambda k: Debate(None, MajorityVote()), "experts"),
    ("experts-with-int", lambda k: Debate([k.architect, 1], MajorityVote()), "experts"),
    ("experts-one", lambda k: Debate([k.architect], MajorityVote()), "experts"),
    ("experts-zero", lambda k: Debate([], MajorityVote()), "experts"),
    ("experts-duplicate", lambda k: Debate([k.architect, k.architect], MajorityVote()), "expert"),
    ("experts-answer-text", lambda k: Debate([k.generator, k.second_writer], MajorityVote()), "experts"),
    ("experts-include-critic", lambda k: Debate([k.architect, k.critic], MajorityVote()), "experts"),
    ("arbiter-unknown-name", lambda k: Debate(k.experts, "bogus"), "arbiter"),
    ("arbiter-none", lambda k: Debate(k.experts, None), "arbiter"),
    ("arbiter-is-a-critic", lambda k: Debate(k.experts, k.critic), "arbiter"),
    ("arbiter-answers-text", lambda k: Debate(k.experts, k.generator), "arbiter"),
    ("arbiter-class", lambda k: Debate(k.experts, MajorityVote), "arbiter"),
    ("arbiter-int", lambda k: Debate(k.experts, 5), "arbiter"),
    (
        "arbiter-named-like-expert",
        lambda k: Debate(k.experts, RoleAgent(role("arbiter"), k.spec, name="ops")),
        "arbiter",
    ),
    ("seed-string", lambda k: Debate(k.experts, MajorityVote(), seed="x"), "seed"),
    ("seed-float", lambda k: Debate(k.experts, MajorityVote(), seed=1.5), "seed"),
    ("seed-bool", lambda k: Debate(k.experts, MajorityVote(), seed=True), "seed"),
    ("options-string", lambda k: Debate(k.experts, MajorityVote(), options="split"), "options"),
    ("options-int", lambda k: Debate(k.experts, MajorityVote(), options=5), "options"),
    ("options-one", lambda k: Debate(k.experts, MajorityVote(), options=["split"]), "options"),
    ("options-blank", lambda k: Debate(k.experts, MajorityVote(), options=["split", " "]), "options"),
    ("choices-string", lambda k: Debate(k.experts, MajorityVote(), choices="split"), "choices"),
    ("choices-int", lambda k: Debate(k.experts, MajorityVote(), choices=5), "choices"),
    ("choices-one", lambda k: Debate(k.experts, MajorityVote(), choices=["split"]), "choices"),
    ("choices-blank", lambda k: Debate(k.experts, MajorityVote(), choices=["split", " "]), "choices"),
    ("pattern-not-regex", lambda k: Debate(k.experts, MajorityVote(), answer_pattern="("), "answer_pattern"),
    ("pattern-int", lambda k: Debate(k.experts, MajorityVote(), answer_pattern=5), "answer_pattern"),
    ("openings-list", lambda k: Debate(k.experts, MajorityVote(), openings=[OPENING]), "openings"),
    ("openings-text", lambda k: Debate(k.experts, MajorityVote(), openings={"ops": "keep"}), "openings"),
    ("openings-unknown", lambda k: Debate(k.experts, MajorityVote(), openings={"nobody": OPENING}), "openings"),
    ("held-string", lambda k: Debate(k.experts, MajorityVote(), openings={"ops": OPENING}, held="ops"), "held"),
    ("held-unknown", lambda k: Debate(k.experts, MajorityVote(), held=["nobody"]), "held"),
    ("peer-answers-bogus", lambda k: Debate(k.experts, MajorityVote(), peer_answers="bogus"), "peer_answers"),
    ("rebutting-one-agent", lambda k: Debate(k.experts, MajorityVote(), rebutting=k.ops), "rebutting"),
    ("rebutting-unknown", lambda k: Debate(k.experts, MajorityVote(), rebutting=[k.business]), "rebutting"),
    (
        "rebutting-answers-critique",
        lambda k: Debate(k.experts, MajorityVote(), rebutting=[RoleAgent(role("critic"), k.spec, name="ops")]),
        "rebutting",
    ),
    ("name-none", lambda k: Debate(k.experts, MajorityVote(), name=None), "name"),
]

CODE_DEBATE: list[Case] = [
    ("tests-string", lambda k: CodeDebate([k.generator, k.second_writer], "assert 1"), "tests"),
    ("tests-empty", lambda k: CodeDebate([k.generator, k.second_writer], []), "tests"),
    ("tests-int", lambda k: CodeDebate([k.generator, k.second_writer], 5), "tests"),
    ("tests-with-int", lambda k: CodeDebate([k.generator, k.second_writer], [1]), "tests"),
    ("tests-not-python", lambda k: CodeDebate([k.generator, k.second_writer], ["assert ("]), "test"),
    ("experts-one", lambda k: CodeDebate([k.generator], TESTS), "experts"),
    ("experts-string", lambda k: CodeDebate("generator", TESTS), "experts"),
    ("experts-structured", lambda k: CodeDebate(k.experts, TESTS), "expert"),
    ("experts-test-critics", lambda k: CodeDebate([TestCritic(TESTS), TestCritic(TESTS, name="t2")], TESTS), "expert"),
    ("experts-duplicate", lambda k: CodeDebate([k.generator, k.generator], TESTS), "expert"),
    ("stub-int", lambda k: CodeDebate([k.generator, k.second_writer], TESTS, stub=5), "stub"),
    (
        "entry-point-phrase",
        lambda k: CodeDebate([k.generator, k.second_writer], TESTS, entry_point="a b"),
        "entry_point",
    ),
    ("entry-point-int", lambda k: CodeDebate([k.generator, k.second_writer], TESTS, entry_point=5), "entry_point"),
    (
        "probe-calls-string",
        lambda k: CodeDebate([k.generator, k.second_writer], TESTS, probe_calls="f(1)"),
        "probe_calls",
    ),
    ("limits-dict", lambda k: CodeDebate([k.generator, k.second_writer], TESTS, limits={"wall_seconds": 1}), "limits"),
    ("runner-int", lambda k: CodeDebate([k.generator, k.second_writer], TESTS, runner=5), "runner"),
]

PLANNER_EXECUTOR: list[Case] = [
    ("planner-none", lambda k: PlannerExecutor(None, k.executor, tools=k.tools), "planner"),
    ("executor-string", lambda k: PlannerExecutor(k.planner, "executor", tools=k.tools), "executor"),
    ("same-agent-twice", lambda k: PlannerExecutor(k.planner, k.planner, tools=k.tools), "named"),
    ("tools-empty", lambda k: PlannerExecutor(k.planner, k.executor, tools=[]), "tool"),
    ("tools-string", lambda k: PlannerExecutor(k.planner, k.executor, tools="run_python"), "tools"),
    ("tools-with-int", lambda k: PlannerExecutor(k.planner, k.executor, tools=[5]), "tools"),
    (
        "replans-negative",
        lambda k: PlannerExecutor(k.planner, k.executor, tools=k.tools, max_replans=-1),
        "max_replans",
    ),
    ("replans-string", lambda k: PlannerExecutor(k.planner, k.executor, tools=k.tools, max_replans="3"), "max_replans"),
    ("policy-string", lambda k: PlannerExecutor(k.planner, k.executor, tools=k.tools, policy="allow"), "policy"),
    ("name-int", lambda k: PlannerExecutor(k.planner, k.executor, tools=k.tools, name=1), "name"),
]

HUMAN: list[Case] = [
    ("points-unknown", lambda k: HumanInTheLoop(["bogus"]), "point"),
    ("points-int", lambda k: HumanInTheLoop(5), "points"),
    ("points-with-int", lambda k: HumanInTheLoop([1]), "points"),
    ("feedback-int", lambda k: HumanInTheLoop(["round"], feedback=5), "feedback"),
    ("feedback-action-bogus", lambda k: Feedback(action="bogus"), "action"),
    ("feedback-comment-too-long", lambda k: Feedback.reject("x" * 3000), "comment"),
    ("callback-not-callable", lambda k: CallbackFeedback(5), "fn"),
    ("console-stdin-string", lambda k: ConsoleFeedback(stdin="a\n"), "stdin"),
    ("console-console-int", lambda k: ConsoleFeedback(console=5), "console"),
    ("answer-once-without-human", lambda k: AnswerOnce(None, Feedback.approve()), "human"),
    ("answer-once-feedback-string", lambda k: AnswerOnce(HumanInTheLoop(), "approve"), "feedback"),
]

TEST_CRITIC: list[Case] = [
    ("tests-string", lambda k: TestCritic("assert 1"), "tests"),
    ("tests-empty", lambda k: TestCritic([]), "tests"),
    ("tests-with-int", lambda k: TestCritic([5]), "tests"),
    ("name-phrase", lambda k: TestCritic(TESTS, name="test critic"), "name"),
    ("retries-negative", lambda k: TestCritic(TESTS, tool_retries=-1), "tool_retries"),
    ("backoff-string", lambda k: TestCritic(TESTS, retry_backoff_seconds="x"), "retry_backoff_seconds"),
    ("entry-points-string", lambda k: TestCritic(TESTS, entry_points="add"), "entry_points"),
    ("runner-int", lambda k: TestCritic(TESTS, runner=5), "runner"),
    ("limits-int", lambda k: TestCritic(TESTS, limits=5), "limits"),
]

CATALOG: list[Case] = [
    ("load-arbiter-int", lambda k: load_arbiter(5), "name"),
    ("load-arbiter-unknown", lambda k: load_arbiter("bogus"), "arbiter"),
    ("load-preset-int", lambda k: load_preset(5), "name_or_path"),
    ("load-preset-unknown", lambda k: load_preset("bogus"), "preset"),
    ("preset-roles-string", lambda k: load_preset("expert_panel").with_parts(roles="architect"), "roles"),
    ("preset-roles-unknown", lambda k: load_preset("expert_panel").with_parts(roles=["architect", "nobody"]), "role"),
    ("preset-arbiter-int", lambda k: load_preset("expert_panel").with_parts(arbiter=5), "arbiter"),
    ("preset-options-int", lambda k: load_preset("expert_panel").with_options(5), "options"),
    ("preset-options-unknown", lambda k: load_preset("expert_panel").with_options({"bogus": 1}), "option"),
    ("load-scenario-int", lambda k: load_scenario(5), "name_or_path"),
    ("scenario-build-int", lambda k: Scenario("s", "d", "t", ("critic",), build=5), "build"),
    ("scenario-roles-string", lambda k: Scenario("s", "d", "t", "critic", build=lambda m: None), "roles"),
    ("scenario-name-int", lambda k: Scenario(5, "d", "t", ("critic",), build=lambda m: None), "name"),
    ("scenario-task-none", lambda k: Scenario("s", "d", None, ("critic",), build=lambda m: None), "task"),
    (
        "scenario-role-default-bad-spec",
        lambda k: Scenario("s", "d", "t", ("critic",), build=lambda m: None, role_defaults={"critic": "bogus:x"}),
        "role_defaults",
    ),
    (
        "scenario-default-bad-spec",
        lambda k: Scenario("s", "d", "t", ("critic",), build=lambda m: None, scenario_defaults={"critic": "bogus:x"}),
        "scenario_defaults",
    ),
    ("entries-unknown-kind", lambda k: entries("bogus"), "kind"),
    ("find-entry-name-int", lambda k: find_entry("roles", 5), "name"),
    ("read-document-int", lambda k: read_document(5), "path"),
]

SCHEMAS: list[Case] = [
    (
        "critique-score-too-high",
        lambda k: Critique(reasoning="r", score=500, strengths=[], issues=[], verdict="accept"),
        "score",
    ),
    (
        "critique-revise-without-issue",
        lambda k: Critique(reasoning="r", score=5, strengths=[], issues=[], verdict="revise"),
        "issue",
    ),
    ("position-empty-answer", lambda k: Position(answer="", key_arguments=["a reason"], confidence=0.5), "answer"),
    (
        "position-confidence-5",
        lambda k: Position(answer="keep", key_arguments=["a reason"], confidence=5),
        "confidence",
    ),
    (
        "opening-no-arguments",
        lambda k: Opening(reasoning="r", answer="keep", key_arguments=[], confidence=0.5),
        "key_arguments",
    ),
    (
        "verdict-confidence-string",
        lambda k: Verdict(rationale="ops won", assessments=[], decision="keep", confidence="high"),
        "confidence",
    ),
    ("plan-steps-int", lambda k: Plan(reasoning="r", steps=5), "steps"),
]

TOOLS: list[Case] = [
    ("rule-kind-bogus", lambda k: Rule("bogus"), "kind"),
    ("rule-checks-string", lambda k: Rule("allow", "x"), "checks"),
    ("rule-reason-int", lambda k: Rule("deny", (), 5), "reason"),
    ("policy-rules-int", lambda k: PermissionPolicy(rules=5), "rules"),
    ("policy-rule-string", lambda k: PermissionPolicy(rules={"run_python": "deny"}), "rules"),
    ("policy-approver-string", lambda k: PermissionPolicy(approver="yes"), "approver"),
    ("builtin-work-dir-int", lambda k: builtin_tools(5), "work_dir"),
    ("builtin-work-dir-blank", lambda k: builtin_tools("  "), "work_dir"),
    ("builtin-limits-dict", lambda k: builtin_tools("work", limits={"seconds": 1}), "limits"),
    ("from-function-int", lambda k: Tool.from_function(5), "function"),
    ("from-function-untyped", lambda k: Tool.from_function(lambda x: x), "annotation"),
]

CASES = {
    "RoleAgent": ROLE_AGENT,
    "roles": ROLES,
    "Reflection": REFLECTION,
    "Debate": DEBATE,
    "CodeDebate": CODE_DEBATE,
    "PlannerExecutor": PLANNER_EXECUTOR,
    "human": HUMAN,
    "TestCritic": TEST_CRITIC,
    "catalog": CATALOG,
    "schemas": SCHEMAS,
    "tools": TOOLS,
}
ROWS = [
    pytest.param(call, argument, id=f"{group}-{name}")
    for group, cases in CASES.items()
    for name, call, argument in cases
]


@pytest.fixture
def kit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # builtin_tools' work directory, and no project catalog of the user's
    model = ScriptedModel({name: [] for name in (*AGENTS, "writer_b", "c2")})
    with model:
        yield _kit(model)


@pytest.mark.parametrize(("call", "argument"), ROWS)
def test_a_bad_argument_is_refused_at_construction_in_one_line_naming_it(kit, call, argument):
    with pytest.raises(Exception) as caught:
        call(kit)
    error = caught.value
    assert isinstance(error, MootError | TypeError | ValueError), f"{type(error).__name__}: {error}"
    assert not isinstance(error, ValidationError | AttributeError | KeyError | IndexError), repr(error)
    message = str(error)
    assert message and "\n" not in message, message
    assert argument.lower() in message.lower(), message
    assert all(not client.calls for client in kit.model.clients.values()), "a model was called"
    assert not Path(os.environ["MOOT_STORE"]).exists(), "a run was recorded"


def test_the_table_covers_every_public_constructor_of_the_brief():
    covered = {group for group in CASES}
    assert covered >= {"RoleAgent", "Reflection", "Debate", "CodeDebate", "PlannerExecutor", "TestCritic"}
    assert len(ROWS) >= 140


# ------------------------------------------------------------ what the README implies is accepted
def test_a_role_by_name_and_a_model_spec_string_make_a_role_agent(kit):
    agent = RoleAgent("critic", "scripted:deterministic")
    assert agent.role == role("critic") and agent.name == "critic"
    assert agent.spec == ModelSpec.parse("scripted:deterministic")
    assert isinstance(agent.spec, ModelSpec)


async def test_agents_on_a_spec_string_run_a_reflection():
    team = Reflection(
        RoleAgent(role("generator"), "scripted:deterministic"),
        RoleAgent("critic", "scripted:deterministic"),
        stop=MaxRounds(1),
    )
    team.record = False
    result = await team.run(task="Write a haiku about tests.")
    assert result.stop_reason == "max rounds: 1 of 1 rounds done"
    assert result.answer and result.answer.startswith("generator draft")
    assert isinstance(result.rounds[0].critiques[0], Critique)


async def test_an_arbiter_by_name_is_the_catalogs_vote_or_its_model_arbiter_on_the_experts_model():
    experts = [RoleAgent(name, "scripted:deterministic") for name in ("architect", "ops")]
    voted = Debate(experts, "majority_vote", stop=MaxRounds(1))
    assert isinstance(voted.arbiter, MajorityVote)
    ruled = Debate(experts, "model_arbiter", stop=MaxRounds(1))
    assert isinstance(ruled.arbiter, RoleAgent)
    assert ruled.arbiter.role == load_arbiter("model_arbiter").role  # the arbiter role with the file's rubric
    assert ruled.arbiter.spec == experts[0].spec
    ruled.record = False
    result = await ruled.run(task="Split the billing module out, or keep it?")
    assert result.verdict_by == ruled.arbiter.name and not result.partial
    assert result.verdict.decided_by in ("architect", "ops") and len(result.verdict.rationale) >= 40


def test_an_arbiter_by_name_on_a_scripted_model_plays_the_arbiters_own_script():
    model = ScriptedModel({"architect": [], "ops": [], "arbiter": []})
    with model:
        experts = [RoleAgent(name, model) for name in ("architect", "ops")]
        team = Debate(experts, "model_arbiter")
    assert isinstance(team.arbiter, RoleAgent) and team.arbiter.spec == model.spec
    assert "arbiter" in model.clients


def test_one_feedback_point_may_be_named_alone():
    assert HumanInTheLoop("final").points == frozenset({"final"})
    assert HumanInTheLoop(["round", "final"]).points == frozenset({"round", "final"})


def test_good_schemas_and_roles_still_construct():
    assert Feedback(action="approve").action == "approve"
    assert Role("x", "", "a prompt", output_type=Opening).output_type is Opening
    made = custom_role("constructor_check_role", "You check constructors.", output_type=Critique)
    assert role("constructor_check_role") is made and issubclass(made.output_type or BaseModel, BaseModel)
