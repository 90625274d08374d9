"""`moot run` end to end on a scripted model, and every bad-input case: one line, exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moot.cli import app
from tests.conftest import make_critique

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    critiques = [make_critique(60, "handle empty input", "add type hints").model_dump(), make_critique(92).model_dump()]
    path.write_text(
        json.dumps({"generator": ["def slugify(t): ...", "def slugify(t: str) -> str: ..."], "critic": critiques})
    )
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_run_prints_the_transcript_and_the_result(script, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = invoke("run", "code_review", "--model", f"scripted:{script}")
    assert code == 0
    assert "handle empty input" in out and "score 92" in out
    assert "stop reason: quality threshold: score 92 >= 85 in round 2" in out
    assert "Reflection · 2 round(s)" in out and "scores per round" in out
    assert "best draft (round 2, score 92)" in out


def test_a_scenario_can_be_given_by_path(script, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ./scenarios here: the path must be enough
    code, out, _ = invoke("run", str(ROOT / "scenarios" / "code_review.py"), "-m", f"scripted:{script}")
    assert code == 0, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["code_revie"], "moot: error: unknown scenario 'code_revie'; available: architecture_review, code_review"),
        (["missing.py"], "moot: error: scenario file 'missing.py' does not exist"),
        (
            ["code_review", "-m", "opnai:x"],
            "moot: error: bad model spec 'opnai:x': unknown provider 'opnai'; valid providers: local, openai, scripted",
        ),
        (["code_review", "-m", "local@hot"], "moot: error: bad model spec 'local@hot': temperature must be a number"),
        (
            ["code_review", "-m", "archtect=local"],
            "moot: error: --model 'archtect=local': unknown role 'archtect'; roles here: generator, critic",
        ),
        (["code_review", "-m", "local", "-m", "local@0.5"], "moot: error: --model 'local@0.5': a base model is"),
        (
            ["code_review", "-m", "openai:gpt-4o-mini"],
            "moot: error: model openai:gpt-4o-mini needs an API key in $OPENAI_API_KEY, which is not set",
        ),
        (["code_review", "-m", "scripted:nobody"], "moot: error: no scripted model named 'nobody'"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, err = invoke("run", *args)
    assert code == 2
    assert err.startswith(message)
    assert err.count("\n") == 1
    assert out == ""  # nothing half-written: no transcript was started


def test_a_scenario_file_without_scenario_is_refused(tmp_path):
    bad = tmp_path / "empty.py"
    bad.write_text("X = 1\n")
    code, _, err = invoke("run", str(bad))
    assert code == 2
    assert err.strip() == f"moot: error: scenario file {bad} must define SCENARIO = moot.scenario.Scenario(...)"


def test_scenario_defaults_sit_between_the_base_and_the_users_overrides():
    from moot.scenario import Scenario

    scenario = Scenario(
        "s", "d", "t", ("critic", "generator"), build=lambda m: None, scenario_defaults={"critic": "@0.1"}
    )
    models = scenario.models(["local?seed=3", "generator=@0.9"])
    assert str(models.spec("critic")) == "local@0.1?seed=3"  # the scenario's default over the base
    assert str(models.spec("generator")) == "local@0.9?seed=3"
    assert str(scenario.models(["critic=@0.5"]).spec("critic")) == "local@0.5"  # the user's --model wins


def test_a_scenario_file_with_a_syntax_error_is_refused_with_its_line(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("SCENARIO = (\n")
    code, out, err = invoke("run", str(bad))
    assert (code, out) == (2, "")
    assert err.strip().startswith(f"moot: error: scenario file {bad} has a syntax error at line 1:")
