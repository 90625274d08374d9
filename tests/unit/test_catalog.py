"""The catalog: roles, teams, arbiters and scenarios as files, looked up project-first, listed, and refused
with one line (file, line, what is valid) and exit code 2 when they are wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from autogen_agentchat.base import Team
from typer.testing import CliRunner

from moot.arbiters import MajorityVote, WeightedVote, load_arbiter
from moot.arbiters import _arbiter_files as arbiter_files
from moot.catalog import _source
from moot.cli import app
from moot.conditions import ExpressionError, MaxRounds, parse_stop
from moot.errors import ConfigError
from moot.roles import RoleAgent, expert, role
from moot.roles import _registry as registry
from moot.scenario import Scenario
from moot.teams import CodeDebate, Debate, PlannerExecutor, Reflection, load_preset
from moot.testing import ScriptedModel
from moot.tools import Tool, builtin_tools
from tests.conftest import make_critique, make_position, make_verdict

OPS_AT_0_9 = """name: ops
description: Operations, with a hotter default temperature.
output: position
model: "@0.9"
persona: |
  You are the {{ name }} engineer. Argue from running it in production.
"""

SECURITY = """name: security
description: Threats, attack surface, secrets and data exposure.
output: position
persona: |
  You are the {{ name }} engineer on a review panel. You judge proposals by {{ focus }}.
vars:
  focus: their attack surface, how secrets are kept and what data could leak
"""


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """An empty project directory as the current directory, with fresh override notices."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MOOT_PATH", raising=False)
    monkeypatch.setattr(_source, "_NOTIFIED", set())
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ------------------------------------------------------------------ a role added by dropping one file
def test_a_security_expert_joins_a_debate_from_one_file_in_roles(project):
    write(project / "roles" / "security.yaml", SECURITY)
    experts = ("architect", "ops", "security")
    model = ScriptedModel({**{e: [make_position("keep")] for e in experts}, "arbiter": [make_verdict("keep")]}, "cat")
    with model:
        code, out, err = invoke(
            "run", "expert_panel", "--task", "Keep the monolith?", "--roles", ",".join(experts), "-m", "scripted:cat"
        )
    assert (code, err) == (0, ""), out
    assert "verdict by arbiter" in out and ": keep" in out
    persona = "You are the security engineer on a review panel. You judge proposals by their attack surface"
    assert persona in model.calls("security")[0].prompt_text  # the rendered persona reached the model
    assert persona not in model.calls("ops")[0].prompt_text
    assert "Rubric: weigh every ruling" in model.calls("arbiter")[0].prompt_text  # the model_arbiter's rubric


def test_a_yaml_scenario_runs_its_preset_on_its_task_with_its_options(project):
    model = ScriptedModel(
        {
            **{e: [make_position("replica")] for e in ("architect", "ops", "business")},
            "arbiter": [make_verdict("replica")],
        },
        "cat",
    )
    with model:
        code, out, _ = invoke("run", "orders_cache", "-m", "scripted:cat")
    assert code == 0, out
    request = model.calls("ops")[0].prompt_text
    assert "read-through cache (Redis)" in request and "must be one of: cache, replica, neither" in request


def test_a_task_file_is_the_task(project):
    write(project / "design.md", "Review DESIGN-DOC-42.")
    model = ScriptedModel({"generator": ["draft"], "critic": [make_critique(95)]}, "cat")
    with model:
        code, out, _ = invoke("run", "draft_review", "--task-file", "design.md", "-m", "scripted:cat")
    assert code == 0, out
    assert "DESIGN-DOC-42" in model.calls("generator")[0].prompt_text


def test_the_plan_and_execute_preset_runs_and_shows_its_plan_and_audit_trail(project):
    from moot.roles import Plan, Step, ToolCall

    steps = [Step(action="print hi", tool="run_python", check="output_equals", expect="hi")]
    ran = ToolCall(reasoning="print it", tool="run_python", args={"code": "print('hi')", "tests": []})
    model = ScriptedModel({"planner": [Plan(reasoning="one step", steps=steps)], "executor": [ran]}, "cat")
    with model:
        code, out, _ = invoke("run", "plan_and_execute", "--task", "Print hi.", "-m", "scripted:cat")
    assert code == 0, out
    result = out.split("─ result ─", 1)[1]
    assert "PlannerExecutor · plan completed" in result
    assert "print hi" in result and "passed" in result
    assert "tool calls (audit trail)" in result and "run_python" in result and "allowed" in result


# ------------------------------------------------------------------ listing and overriding
def test_listings_name_each_entry_its_description_and_origin(project):
    write(project / "roles" / "security.yaml", SECURITY)
    code, out, _ = invoke("roles", "--json")
    listed = {r["name"]: r for r in json.loads(out)}
    assert code == 0
    assert listed["security"]["origin"] == str(project / "roles" / "security.yaml")
    assert listed["architect"] == {
        "name": "architect",
        "description": "Technical soundness and evolvability.",
        "origin": "built-in",
    }
    for command, names in [
        ("teams", {"draft_review", "expert_panel", "plan_and_execute"}),
        ("arbiters", {"majority_vote", "model_arbiter", "rounds_vote", "weighted_vote"}),
        ("scenarios", {"architecture_review", "code_review", "fix_with_tests", "orders_cache"}),
    ]:
        code, out, _ = invoke(command, "--json")
        assert code == 0 and {r["name"] for r in json.loads(out)} >= names
    code, out, _ = invoke("teams")
    assert "expert_panel" in out and "built-in" in out


def test_a_project_file_overrides_a_built_in_with_one_notice(project):
    write(project / "roles" / "ops.yaml", "name: ops\ndescription: Our ops.\noutput: position\npersona: OUR-OPS\n")
    code, _, err = invoke("roles")
    assert code == 0
    assert err == f"moot: note: role 'ops' from {project / 'roles' / 'ops.yaml'} overrides the built-in\n"
    assert role("ops").persona == "OUR-OPS"


def test_moot_path_directories_come_after_the_project_and_before_the_built_ins(project, tmp_path_factory, monkeypatch):
    shared = tmp_path_factory.mktemp("shared")
    write(shared / "roles" / "security.yaml", SECURITY)
    monkeypatch.setenv("MOOT_PATH", str(shared))
    assert role("security").description.startswith("Threats")
    write(project / "roles" / "security.yaml", SECURITY.replace("Threats", "Ours"))
    assert role("security").description.startswith("Ours")


def test_a_renamed_built_in_arbiter_still_answers_to_its_former_name_with_one_notice(project, monkeypatch, capsys):
    """llm_judge became model_arbiter: presets and stored runs (moot resume) that name the old one still work."""
    monkeypatch.setattr(arbiter_files, "_RENAMES_NOTED", set())
    assert load_arbiter("llm_judge") == load_arbiter("model_arbiter")
    write(project / "teams" / "panel.yaml", "name: panel\ndescription: x\ntopology: debate\nroles: [architect, ops]\n"
          "arbiter: llm_judge\n")  # fmt: skip
    assert load_preset("panel").arbiter == load_arbiter("model_arbiter")
    assert capsys.readouterr().err == "moot: note: arbiter 'llm_judge' is now called 'model_arbiter'\n"
    write(project / "arbiters" / "llm_judge.yaml", "name: llm_judge\ndescription: Ours.\nkind: majority_vote\n")
    assert load_arbiter("llm_judge").description == "Ours."  # a file that has the name is that file
    assert capsys.readouterr().err == ""


def test_a_role_registered_from_code_over_a_built_in_says_so(project, monkeypatch, capsys):
    monkeypatch.setattr(registry, "_ROLES", {})
    replaced = expert("ops", "You are our own ops engineer.")
    assert capsys.readouterr().err == "moot: note: role 'ops' from code overrides the built-in\n"
    assert role("ops") is replaced
    expert("ops", "again")
    assert capsys.readouterr().err == ""  # once per process


# ------------------------------------------------------------------ bad files: one line, file and line, exit 2
BAD = [
    (
        "roles/security.yaml",
        "name: security\ndescription: x\noutput: position\npersonna: hi\npersona: hi\n",
        "roles/security.yaml:4: unknown field 'personna'; "
        "valid fields: name, description, persona, output, model, vars",
    ),
    (
        "roles/security.yaml",
        "name: security\ndescription: x\noutput: positon\npersona: hi\n",
        "roles/security.yaml:3: output: input should be 'critique', 'position', 'verdict', 'plan' or 'text'",
    ),
    (
        "roles/security.yaml",
        "name: security\ndescription: x\noutput: position\npersona: |\n  You are {{ nme }}.\n",
        "roles/security.yaml:4: persona: 'nme' is undefined; variables: description, name",
    ),
    (
        "roles/security.yaml",
        "name: security\ndescription: x\npersona: |\n  fine\n  {% if x %} never closed\n",
        "roles/security.yaml:5: persona: template error: Unexpected end of template.",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: debate\nroles:\n  - architect\n  - securty\narbiter: majority_vote\n",
        "teams/panel.yaml:6: unknown role 'securty'; known roles: ",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: debate\nroles: [architect, ops]\narbiter: majority_vote\n"
        "termination: consensus | max_rounds(3 | token_budget(40000)\n",
        "teams/panel.yaml:6: termination: stop expression 'consensus | max_rounds(3 | token_budget(40000)', "
        "column 26: expected ',' or ')'",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: debate\nroles: [architect, ops]\narbiter: majority_vote\n"
        "termination: consensus | maxrounds(3)\n",
        "teams/panel.yaml:6: termination: stop expression 'consensus | maxrounds(3)', column 13: unknown condition "
        "'maxrounds'; conditions: consensus, cost_budget, max_rounds, max_steps",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: debate\nroles: [architect, ops]\narbiter: majority_vote\n"
        "termination: consensus | score_threshold(80)\n",
        "teams/panel.yaml:6: termination: score_threshold (waits for score) can never fire for a debate team, "
        "whose rounds report agreement; remove it, or stop on what it reports or on a limit, "
        "e.g. max_rounds(5) | token_budget(40000)",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: reflection\nroles: [generator, critic]\n"
        "termination: (consensus & max_rounds(2)) | no_improvement(2)\n",
        "teams/panel.yaml:5: termination: consensus (waits for agreement) can never fire for a reflection team, "
        "whose rounds report score;",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: debate\nroles: [architect, ops]\narbiter: majority_vot\n",
        "teams/panel.yaml:5: arbiter: unknown arbiter 'majority_vot'; "
        "available: majority_vote, model_arbiter, rounds_vote, weighted_vote",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: debate\nroles: [architect, ops]\narbiter: majority_vote\n"
        "options:\n  answer: [a, b]\n",
        "teams/panel.yaml:7: options: unknown option 'answer'; debate options: choices, answer_pattern, seed",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: reflection\nroles: [generator, critic]\n"
        "termination: max_rounds(2)\noptions:\n  revision: redo\n",
        "teams/panel.yaml:7: options: revision: Input should be 'continue' or 'fresh'; reflection options: revision",
    ),
    (
        "teams/panel.yaml",
        "name: panel\ndescription: x\ntopology: debate\nroles: [architect, ops\n",
        "teams/panel.yaml:5: not valid YAML: expected ',' or ']'",
    ),
    (
        "arbiters/fair.yaml",
        "name: fair\ndescription: x\nkind: majority_vote\nrubric: [be fair]\n",
        "arbiters/fair.yaml:4: rubric: only an llm arbiter takes one; majority_vote calls no model",
    ),
]


@pytest.mark.parametrize(("path", "text", "message"), BAD, ids=[m.split(": ", 1)[1][:40] for _, _, m in BAD])
def test_a_bad_catalog_file_is_one_line_naming_file_line_and_what_is_valid(project, path, text, message):
    write(project / path, text)
    kind = path.split("/")[0]
    args = {"roles": ["roles"], "teams": ["run", "panel", "--task", "x"], "arbiters": ["arbiters"]}[kind]
    code, out, err = invoke(*args)
    assert code == 2, out
    assert err.startswith(f"moot: error: {message}"), err
    assert err.count("\n") == 1 and "Traceback" not in err and out == ""


def test_a_yaml_scenario_naming_a_missing_team_points_at_its_line(project):
    write(project / "scenarios" / "mine.yaml", "name: mine\ndescription: x\ntask: t\nteam: expert_pannel\n")
    code, _, err = invoke("run", "mine")
    assert code == 2
    assert err.startswith("moot: error: scenarios/mine.yaml:4: team: unknown team preset 'expert_pannel'; available:")


def test_a_preset_without_a_task_asks_for_one(project):
    code, _, err = invoke("run", "expert_panel")
    assert (code, err) == (
        2,
        "moot: error: expert_panel has no task of its own; give --task TEXT or --task-file PATH\n",
    )


# ------------------------------------------------------------------ stop expressions
def test_a_stop_expression_builds_the_conditions_it_names():
    stop = parse_stop("(score_threshold(85) & max_rounds(2)) | no_progress | token_budget(40_000)")
    assert (
        stop.dump_component()
        == (
            (parse_stop("score_threshold(85)") & MaxRounds(2))
            | parse_stop("no_progress(1)")
            | parse_stop("token_budget(40000)")
        ).dump_component()
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("max_rounds(3, 4)", "column 1: max_rounds takes (rounds)"),
        ("max_rounds(0)", "column 1: max_rounds: MaxRounds(rounds=0): input should be greater than 0"),
        ("consensus |", "column 12: expected a condition, found the end"),
        ("consensus ) max_rounds(2)", "column 11: expected '|', '&' or the end, found ')'"),
        ("__import__('os')", "column 1: unknown condition '__import__'"),
    ],
)
def test_a_stop_expression_that_does_not_parse_names_the_column(text, problem):
    with pytest.raises(ExpressionError) as caught:
        parse_stop(text)
    assert problem in str(caught.value)


# ------------------------------------------------------------------ components
def shout(text: str) -> str:
    """Upper-case the text (a tool from a module-level function: saved by its import path)."""
    return text.upper()


def idle(*agents: str) -> ScriptedModel:
    """A scripted model the agents are built on but never called (any call fails the test)."""
    return ScriptedModel({agent: [] for agent in agents})


def round_trip(team: Team) -> None:
    dumped = team.dump_component()
    loaded = Team.load_component(json.loads(dumped.model_dump_json()))
    assert type(loaded) is type(team)
    assert loaded.dump_component() == dumped


def test_every_team_round_trips_as_a_component(tmp_path):
    model = idle("architect", "ops", "arbiter", "generator", "critic", "a", "b", "planner", "executor")
    spec = model.spec
    with model:
        experts = [RoleAgent(role(n), spec) for n in ("architect", "ops")]
        for arbiter in (RoleAgent(role("arbiter"), spec), MajorityVote(), WeightedVote()):
            round_trip(Debate(experts, arbiter, choices=["a", "b"], stop=parse_stop("consensus | max_rounds(2)")))
        round_trip(Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec)))
        round_trip(Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec), revision="fresh"))
        round_trip(CodeDebate([RoleAgent(role("generator"), spec, name=n) for n in ("a", "b")], ["assert True"]))
        planner, executor = RoleAgent(role("planner"), spec), RoleAgent(role("executor"), spec)
        round_trip(PlannerExecutor(planner, executor, tools=[*builtin_tools(tmp_path), Tool.from_function(shout)]))


def test_a_planner_executor_with_a_tool_that_is_not_data_cannot_be_saved(tmp_path):
    def local(text: str) -> str:
        return text

    model = idle("planner", "executor")
    with model:
        team = PlannerExecutor(
            RoleAgent(role("planner"), model.spec), RoleAgent(role("executor"), model.spec), tools=[local]
        )
        with pytest.raises(ValueError, match=r"tools local \(it is defined inside a function, where an import"):
            team.dump_component()


def test_a_tool_defined_in_the_running_script_is_refused_with_the_rule_it_breaks(tmp_path):
    """A top-level function of the script being run (or of a notebook) lives in __main__, which a loader cannot
    import: the refusal says so, instead of asking for the module-level function it already is."""
    script = write(
        tmp_path / "team.py",
        """
from moot import ModelSpec, RoleAgent, role
from moot.teams import PlannerExecutor

def shout(text: str) -> str:
    return text.upper()

spec = ModelSpec.parse("scripted:deterministic")
team = PlannerExecutor(RoleAgent(role("planner"), spec), RoleAgent(role("executor"), spec), tools=[shout])
try:
    team.dump_component()
except ValueError as exc:
    print(exc)
""",
    )
    printed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert printed.startswith("tools shout (it is defined in the script being run or in a notebook (__main__)")
    assert "define it at the top level of a module you import" in printed and "module-level" not in printed


def test_a_preset_is_an_autogen_component_config(project):
    model = idle("architect", "ops", "business", "arbiter", "planner", "executor")
    with model:
        config = load_preset("expert_panel").component(lambda name: model.spec)
        team = Team.load_component(config)
    assert config.provider == "moot.teams.Debate"
    assert isinstance(team, Debate)
    assert [e.name for e in team.experts] == ["architect", "ops", "business"]
    assert team.arbiter.role.system_prompt.endswith("answered in the rationale.")  # the model_arbiter's rubric
    expected = parse_stop("consensus | no_progress(1) | max_rounds(3) | token_budget(40000)")
    assert config.config["stop"] == expected.dump_component().model_dump(exclude_none=True)
    voted = load_preset("expert_panel").with_parts(arbiter="weighted_vote")
    with model:
        assert isinstance(voted.build(lambda name: model.spec).arbiter, WeightedVote)
        planner = load_preset("plan_and_execute").component(lambda name: model.spec)
    assert [t["builtin"] for t in planner.config["tools"]] == ["run_python", "read_file", "write_file"]


def test_each_topology_is_one_class_that_a_preset_file_names(tmp_path, monkeypatch):
    from pydantic import ValidationError

    from moot.teams._presets import TeamFile
    from moot.teams._topologies import TOPOLOGIES, topology_names

    monkeypatch.chdir(tmp_path)  # plan_and_execute's file tools make their work directory here
    # a preset file names exactly the topologies in TOPOLOGIES (no plugin is installed here), and no other
    assert tuple(topology_names()) == tuple(TOPOLOGIES)
    with pytest.raises(ValidationError, match=f"valid topologies: {', '.join(TOPOLOGIES)}"):
        TeamFile(name="x", description="x", topology="other", roles=[])
    model = idle("generator", "critic", "architect", "ops", "business", "arbiter", "planner", "executor")
    with model:
        for preset in (load_preset(name) for name in ("draft_review", "expert_panel", "plan_and_execute")):
            kind = TOPOLOGIES[preset.topology]
            assert preset.kind is kind and isinstance(preset.options, kind.options) and kind.name == preset.topology
            assert type(preset.build(model.spec)) is kind.team


def test_a_code_debate_preset_names_its_topology_and_its_tests(project):
    """CodeDebate is a topology like the others: a preset file names it, with the visible tests as options."""
    coder = "description: writes programs\noutput: text\npersona: You write one Python function.\n"
    write(project / "roles" / "coder_a.yaml", "name: coder_a\n" + coder)
    write(project / "roles" / "coder_b.yaml", "name: coder_b\n" + coder)
    write(project / "teams" / "coders.yaml", "name: coders\ndescription: x\ntopology: code_debate\n"
          "roles: [coder_a, coder_b]\noptions:\n  tests: ['assert add(1, 2) == 3']\n  entry_point: add\n")  # fmt: skip
    model = idle("coder_a", "coder_b")
    with model:
        team = load_preset("coders").build(model.spec)
    assert isinstance(team, CodeDebate) and team.tests == ["assert add(1, 2) == 3"] and team.entry_point == "add"
    write(project / "teams" / "untested.yaml", "name: untested\ndescription: x\ntopology: code_debate\n"
          "roles: [coder_a, coder_b]\n")  # fmt: skip
    with pytest.raises(ConfigError, match=r"options: .*tests"):
        load_preset("untested")


def test_a_preset_is_built_on_one_spec_as_on_the_command_line(project):
    """``component(spec)`` and ``build(spec)`` take a ModelSpec (``--model SPEC``) as well as a function of the
    role name (``--model ROLE=SPEC`` for each role); a role file's own model layer applies to both, as it does
    in ``moot run``."""
    write(project / "roles" / "ops.yaml", OPS_AT_0_9)
    preset = load_preset("expert_panel")
    model = idle("architect", "ops", "business", "arbiter")
    with model:
        by_spec = preset.component(model.spec)
        by_function = preset.component(lambda name: model.spec)
        built = {
            "spec": preset.build(model.spec),
            "function": preset.build(lambda name: model.spec),
        }
    assert by_spec == by_function and by_spec.provider == "moot.teams.Debate"
    cli = Scenario.from_preset(preset).models([str(model.spec)])
    for how, team in built.items():
        specs = {agent.name: agent.spec for agent in [*team.experts, team.arbiter]}
        assert specs == {name: cli.spec(name) for name in specs}, how
        assert specs["ops"].temperature == 0.9 and specs["architect"].temperature is None, how


def test_a_reflection_team_file_chooses_fresh_revisions(project):
    write(project / "teams" / "redraft.yaml", "name: redraft\ndescription: x\ntopology: reflection\n"
          "roles: [generator, critic]\ntermination: max_rounds(3)\noptions:\n  revision: fresh\n")  # fmt: skip
    model = idle("generator", "critic")
    with model:
        team = load_preset("redraft").build(model.spec)
    assert isinstance(team, Reflection) and team.revision == "fresh"


def test_a_preset_refuses_models_it_cannot_read():
    preset = load_preset("expert_panel")
    with pytest.raises(TypeError, match=r"models: give .*; not int"):
        preset.build(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="models: got int for role 'architect'"):
        preset.build(lambda name: 3)  # type: ignore[arg-type, return-value]


# ------------------------------------------------------------------ the weighted vote
async def test_the_weighted_vote_lets_one_sure_expert_outvote_two_unsure_ones():
    positions = [
        ("architect", make_position("split", confidence=0.95)),
        ("ops", make_position("keep", confidence=0.3)),
        ("business", make_position("Keep.", confidence=0.4)),
    ]
    verdict = await WeightedVote().rule("t", positions)
    assert verdict.decision == "split"
    assert verdict.confidence == pytest.approx(0.95 / 1.65)
    assert verdict.rationale == "1 of 3 experts answered 'split' (summed confidence 0.95 of 1.65): architect."
    assert (await MajorityVote().rule("t", positions)).decision == "keep"


def test_a_composed_run_resumes_with_the_same_roles_and_arbiter(project):
    write(project / "roles" / "security.yaml", SECURITY)
    answers = {"architect": "split", "ops": "keep", "security": "defer"}  # no consensus: round 1 pauses
    model = ScriptedModel({name: [make_position(a)] for name, a in answers.items()}, "cat")
    with model:
        args = ["--roles", "architect,ops,security", "--arbiter", "weighted_vote", "--pause-at", "round"]
        code, out, _ = invoke("run", "expert_panel", "--task", "Split?", *args, "-m", "scripted:cat")
        assert code == 3 and "suspended: waiting for feedback at round" in out, out  # 3: partial or suspended
        # The team is built again as composed (a 'business' expert would have no script: exit 2); with nobody
        # at the terminal to answer the round's pause, the run waits there again.
        code, out, err = invoke("resume", "--last")
        assert (code, err) == (3, ""), out
        assert "resuming run" in out and "suspended: waiting for feedback at round" in out
