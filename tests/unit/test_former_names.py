"""Each public name renamed so a concept has one name (docs/architecture.md, Names) still works under its former
spelling, with a DeprecationWarning that names the new one; the new spelling works without one."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from moot import Debate, RoleAgent, role
from moot.arbiters import MajorityVote
from moot.conditions import MaxRounds
from moot.models import ModelSpec
from moot.roles import Opening, RoleModels, parse_model_options, with_choices, with_options
from moot.scenario import Scenario, load_scenario
from moot.teams import load_preset
from moot.testing import ScriptedModel

EXPERTS = ("architect", "ops")


def _experts(model: ScriptedModel) -> list[RoleAgent]:
    return [RoleAgent(role(name), model.spec) for name in EXPERTS]


def _no_warning(make):
    """``make()``, failing the test if it warns of a deprecation."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        return make()


def test_a_debates_closed_answer_set_is_its_choices_and_options_still_sets_it():
    with ScriptedModel({name: [] for name in EXPERTS}) as model:
        new = _no_warning(lambda: Debate(_experts(model), MajorityVote(), stop=MaxRounds(1), choices=("a", "b")))
        with pytest.warns(DeprecationWarning, match=r"Debate\(options=\.\.\.\) .* now called choices="):
            old = Debate(_experts(model), MajorityVote(), stop=MaxRounds(1), options=("a", "b"))
        with pytest.warns(DeprecationWarning, match=r"Debate\.options is deprecated; it is now called Debate\.choices"):
            read = old.options
        with pytest.raises(TypeError, match="give only choices="):
            Debate(_experts(model), MajorityVote(), options=("a", "b"), choices=("a", "b"))
    assert new.choices == old.choices == read == ("a", "b")
    assert new.dump_component().config["options"] == ["a", "b"]  # saved components keep their key


def test_a_refusal_of_a_value_given_under_the_former_keyword_says_it_was_given_so():
    with ScriptedModel({name: [] for name in EXPERTS}) as model, pytest.warns(DeprecationWarning):
        with pytest.raises(ValueError, match=r"^choices must be .* \(given as options=\)$"):
            Debate(_experts(model), MajorityVote(), options=("a",))


def test_a_scenarios_defaults_are_its_scenario_defaults_and_role_defaults_still_sets_them():
    def build(models):
        return None

    new = _no_warning(lambda: Scenario("s", "d", "t", ("critic",), build, scenario_defaults={"critic": "@0.2"}))
    with pytest.warns(DeprecationWarning, match=r"Scenario\(role_defaults=\.\.\.\) .* now called scenario_defaults="):
        old = Scenario("s", "d", "t", ("critic",), build, role_defaults={"critic": "@0.2"})
    with pytest.warns(DeprecationWarning, match=r"Scenario\.role_defaults .* now called Scenario\.scenario_defaults"):
        read = old.role_defaults
    assert new == old and read == {"critic": "@0.2"}
    assert str(old.models(["local"]).spec("critic")) == "local@0.2"


def test_role_models_name_the_scenarios_layer_scenario_defaults_and_defaults_still_sets_it():
    layer = {"ops": ModelSpec.parse("@0.7")}
    base = ModelSpec.parse("local")
    new = _no_warning(lambda: RoleModels(base, scenario_defaults=layer))
    with pytest.warns(DeprecationWarning, match=r"RoleModels\(defaults=\.\.\.\) .* now called scenario_defaults="):
        old = RoleModels(base, defaults=layer)
    with pytest.warns(DeprecationWarning, match=r"RoleModels\.defaults .* now called RoleModels\.scenario_defaults"):
        read = old.defaults
    assert new == old and read == layer and str(old.spec("ops")) == "local@0.7"


def test_with_options_is_with_choices_under_its_former_name():
    new = _no_warning(lambda: with_choices(Opening, "answer", ("yes", "no")))
    with pytest.warns(DeprecationWarning, match="with_options is deprecated; it is now called with_choices"):
        old = with_options(Opening, "answer", ("yes", "no"))
    assert old is new  # the one cached schema


def test_a_debate_presets_answers_option_is_now_choices_and_the_former_key_still_loads(tmp_path: Path):
    preset = load_preset("expert_panel")
    assert _no_warning(lambda: preset.with_options({"choices": ["a", "b"]})).options.choices == ["a", "b"]
    with pytest.warns(DeprecationWarning, match="a debate's answers: option is deprecated; it is now called choices:"):
        assert preset.with_options({"answers": ["a", "b"]}).options.choices == ["a", "b"]
    with pytest.raises(ValueError, match="give the closed answer set once, as choices:"):
        preset.with_options({"answers": ["a", "b"], "choices": ["a", "b"]})
    scenario = tmp_path / "old.yaml"
    scenario.write_text("name: old\ndescription: d\nteam: expert_panel\ntask: t\noptions:\n  answers: [x, y]\n")
    with pytest.warns(DeprecationWarning, match="now called choices:"):
        assert load_scenario(str(scenario)).preset.options.choices == ["x", "y"]


def test_the_model_options_a_scenario_reads_are_model_options_and_options_still_passes_them():
    scenario = Scenario("s", "d", "t", ("critic",), lambda models: None)
    new = _no_warning(lambda: scenario.models(model_options=["local@0.3"]))
    with pytest.warns(DeprecationWarning, match=r"models\(options=\.\.\.\) .* now called model_options="):
        old = scenario.models(options=["local@0.3"])
    with pytest.warns(DeprecationWarning, match=r"parse_model_options\(options=\.\.\.\) .* now called model_options="):
        parsed = parse_model_options(options=["local@0.3"], roles=["critic"])
    assert new == old == parsed
