"""The fix_with_tests scenario on scripted generators: tests pass, or the budget is spent with the best attempt."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from moot.cli import app
from moot.models import ModelSpec
from moot.scenario import RoleModels, load_scenario
from moot.testing import ScriptedModel
from tests.conftest import make_critique

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = load_scenario(str(ROOT / "scenarios" / "fix_with_tests.py"))
MODULE = SCENARIO.build.__module__

BUGGY = "Here is the function:\n```python\n" + SCENARIO.task.split("```python\n")[1].split("```")[0] + "```"
FIXED = """Fixed:
```python
def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 0:
        return (ordered[middle - 1] + ordered[middle]) / 2
    return ordered[middle]
```"""
HALF_FIXED = """```python
def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 0 and len(ordered) > 2:
        return (ordered[middle - 1] + ordered[middle]) / 2
    return ordered[middle]
```"""


def models(model: ScriptedModel) -> RoleModels:
    return RoleModels(base=model.spec)


async def test_the_loop_ends_when_every_test_passes():
    model = ScriptedModel({"generator": [BUGGY, FIXED]})
    with model:
        result = await SCENARIO.build(models(model)).run(task=SCENARIO.task)
    assert result.stop_reason == "all tests pass in round 2 (quality threshold: score 100 >= 100 in round 2)"
    assert result.scores == [50, 100]
    assert result.answer == FIXED
    revise = model.calls("generator")[1].messages[-1].content
    assert "- test `median([4, 1, 3, 2]) == 2.5` failed: got 3, expected 2.5" in revise
    assert "- test `median([1, 2]) == 1.5` failed: got 2, expected 1.5" in revise


async def test_when_the_budget_is_spent_the_result_says_so_and_keeps_the_best_attempt():
    model = ScriptedModel({"generator": [BUGGY, HALF_FIXED, "I cannot do this.", BUGGY]})
    with model:
        result = await SCENARIO.build(models(model)).run(task=SCENARIO.task)
    # HALF_FIXED misses the two-value case only.
    assert result.scores == [50, 83, 0, 50]
    assert result.stop_reason == (
        "budget spent (max rounds: 4 of 4 rounds done); best attempt: round 2, 5 of 6 tests passed"
    )
    assert result.best.round == 2 and result.answer == HALF_FIXED


async def test_a_token_budget_also_ends_it_as_budget_spent():
    long_answer = BUGGY + "\n" + "explanation " * 12_000
    model = ScriptedModel({"generator": [long_answer]})
    with model:
        result = await SCENARIO.build(models(model)).run(task=SCENARIO.task)
    assert result.stop_reason.startswith("budget spent (token budget: ")
    assert result.stop_reason.endswith("best attempt: none was tested")
    assert result.answer == long_answer  # the latest draft, unscored


async def test_an_llm_critic_can_follow_the_test_runner():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fix_with_tests_module", ROOT / "scenarios" / "fix_with_tests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = ScriptedModel(
        {"generator": [FIXED, FIXED], "critic": [make_critique(70, "no docstring"), make_critique(90)]}
    )
    with model:
        team = module.build_team(models(model), llm_critic=True)
        result = await team.run(task=SCENARIO.task)
    assert [c.score for c in result.rounds[0].critiques] == [100, 70]
    assert result.stop_reason == "all tests pass in round 2 (quality threshold: score 90 >= 85 in round 2)"


def test_moot_run_prints_the_outcome(tmp_path, monkeypatch):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generator": [BUGGY, FIXED]}))
    monkeypatch.chdir(ROOT)
    outcome = CliRunner().invoke(app, ["run", "fix_with_tests", "--model", f"scripted:{script}"])
    assert outcome.exit_code == 0, outcome.stdout
    assert "stop reason: all tests pass in round 2" in outcome.stdout
    assert "Reflection · 2 round(s)" in outcome.stdout and "scores per round" in outcome.stdout
    assert "best draft (round 2, score 100)" in outcome.stdout


def test_the_scenario_uses_the_embedded_model_by_default():
    assert SCENARIO.roles == ("generator",)
    assert RoleModels().spec("generator") == ModelSpec().resolve(None)
    assert MODULE.startswith("moot_scenario_fix_with_tests")
