"""Role -> model is one rule (``RoleModels.spec``): scenarios and the comparison harness resolve alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.catalog import _source
from moot.harness import RowContext
from moot.harness.arms._context import MODEL_ROLES
from moot.harness.jobs._calls import ClientFactory, EndpointLimits
from moot.models import ModelSpec
from moot.roles import RoleModels, built_in_role, parse_model_options
from moot.scenario import Scenario

OPTIONS = ["scripted:base?seed=1", "expert=@0.3", "expert_2=scripted:other", "generator=@0.1"]


@pytest.fixture
def hot_critic(tmp_path: Path, monkeypatch) -> None:
    """A project whose critic role file asks for temperature 0.9 (a role's own default layer)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MOOT_PATH", raising=False)
    monkeypatch.setattr(_source, "_NOTIFIED", set())
    built_in = (Path(_source.BUILT_IN) / "roles" / "critic.yaml").read_text()
    (tmp_path / "roles").mkdir()
    (tmp_path / "roles" / "critic.yaml").write_text(built_in + 'model: "@0.9"\n')
    assert built_in_role("critic").model is None


def _context(models: RoleModels) -> RowContext:
    return RowContext(models, ClientFactory(EndpointLimits(1), None))


def test_a_scenario_and_a_row_context_give_every_role_the_same_spec(hot_critic):
    scenario = Scenario(
        "s", "a scenario", "task", ("generator", "critic"), lambda models: None,  # type: ignore[arg-type,return-value]
        scenario_defaults={"critic": "?max_tokens=50", "generator": "@0.5"},
    )  # fmt: skip
    models = scenario.models(["scripted:base", "generator=@0.1"])
    for name in scenario.roles:
        assert _context(models).spec(name) == models.spec(name)
    assert str(models.spec("critic")) == "scripted:base@0.9?max_tokens=50"  # role file, then scenario
    assert str(models.spec("generator")) == "scripted:base@0.1"  # --model wins over the scenario's @0.5


def test_the_harness_reads_role_defaults_and_families_by_the_same_rule(hot_critic):
    models = parse_model_options(OPTIONS, MODEL_ROLES, scenario_defaults={"judge": ModelSpec.parse("?max_tokens=9")})
    ctx = _context(models)
    assert {name: ctx.spec(name) for name in MODEL_ROLES} == {name: models.spec(name) for name in MODEL_ROLES}
    assert str(models.spec("critic")) == "scripted:base@0.9?seed=1"
    assert str(models.spec("judge")) == "scripted:base?seed=1&max_tokens=9"
    assert str(models.spec("expert_1")) == "scripted:base@0.3?seed=1"
    assert str(models.spec("expert_2")) == "scripted:other@0.3?seed=1"  # the family's layer, then its own


def test_layers_apply_lowest_first_whatever_sets_them():
    models = RoleModels(
        base=ModelSpec.parse("scripted:base@0.2"),
        overrides={"ops": ModelSpec.parse("@1.0")},
        scenario_defaults={"ops": ModelSpec.parse("@0.7?max_tokens=5")},
        role_defaults={"ops": ModelSpec.parse("@0.4?seed=3")},
    )
    assert str(models.spec("ops")) == "scripted:base@1?seed=3&max_tokens=5"
    assert models.spec("architect") == models.base
