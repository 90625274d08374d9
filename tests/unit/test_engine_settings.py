"""Engine settings from the environment, and the thread count chosen for the machine."""

from __future__ import annotations

import os

import pytest

from moot.embedded._settings import (
    DEFAULT_BATCH_COSTS,
    DEFAULT_DISK_STATES_MB,
    DEFAULT_STATE_CACHE_MB,
    EngineSettings,
    format_batch_costs,
    parse_batch_costs,
    physical_cores,
)
from moot.errors import ConfigError

VARIABLES = (*EngineSettings().to_env(), "MOOT_LOCAL_THREADS")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_defaults_are_the_fast_paths():
    settings = EngineSettings.from_env()
    assert settings.grammar == "llguidance"
    assert settings.state_cache_bytes == DEFAULT_STATE_CACHE_MB << 20
    assert settings.disk_state_bytes == DEFAULT_DISK_STATES_MB << 20
    assert settings.machine_lock is True
    assert settings.effective_threads == physical_cores()


def test_each_setting_switches_by_its_variable(monkeypatch):
    monkeypatch.setenv("MOOT_LOCAL_GRAMMAR", "llama")
    monkeypatch.setenv("MOOT_LOCAL_STATE_CACHE_MB", "0")
    monkeypatch.setenv("MOOT_LOCAL_THREADS", "3")
    monkeypatch.setenv("MOOT_LOCAL_MACHINE_LOCK", "0")
    monkeypatch.setenv("MOOT_LOCAL_DISK_STATES_MB", "16")
    monkeypatch.setenv("MOOT_LOCAL_BATCH_COSTS", "9=3,3=1.5")
    settings = EngineSettings(
        grammar="llama",
        state_cache_bytes=0,
        disk_state_bytes=16 << 20,
        threads=3,
        machine_lock=False,
        batch_costs=((3, 1.5), (9, 3.0)),
    )
    assert EngineSettings.from_env() == settings
    for name, value in settings.to_env().items():
        monkeypatch.setenv(name, value)
    assert EngineSettings.from_env() == settings  # a child process gets the same settings


def test_batch_costs_are_a_fixed_table_by_default_and_measured_only_when_asked():
    """A fixed table keeps a greedy reply a function of its prompt (see moot.embedded._lookahead)."""
    assert EngineSettings.from_env().batch_costs == DEFAULT_BATCH_COSTS
    measured = EngineSettings(batch_costs=None)
    assert measured.to_env()["MOOT_LOCAL_BATCH_COSTS"] == "measured"
    assert parse_batch_costs("measured") is None
    assert parse_batch_costs(format_batch_costs(DEFAULT_BATCH_COSTS)) == DEFAULT_BATCH_COSTS


def test_legacy_is_what_moot_did_before():
    legacy = EngineSettings.legacy()
    assert (legacy.grammar, legacy.state_cache_bytes, legacy.disk_state_bytes) == ("llama", 0, 0)
    assert legacy.threads == max(1, min(4, os.cpu_count() or 1))


@pytest.mark.parametrize(
    ("name", "value", "valid"),
    [
        ("MOOT_LOCAL_GRAMMAR", "outlines", "valid: llguidance, llama"),
        ("MOOT_LOCAL_STATE_CACHE_MB", "-1", "an integer >= 0"),
        ("MOOT_LOCAL_STATE_CACHE_MB", "lots", "an integer >= 0"),
        ("MOOT_LOCAL_DISK_STATES_MB", "-5", "an integer >= 0"),
        ("MOOT_LOCAL_THREADS", "0", "an integer >= 1"),
        ("MOOT_LOCAL_MACHINE_LOCK", "yes", "valid: 0 or 1"),
        ("MOOT_LOCAL_BATCH_COSTS", "fast", "SIZE=RATIO pairs"),
        ("MOOT_LOCAL_BATCH_COSTS", "1=2", "sizes of 2 or more"),
        ("MOOT_LOCAL_BATCH_COSTS", "3=0.5", "ratios of 1 or more"),
        ("MOOT_LOCAL_BATCH_COSTS", "3=1.5,3=2", "distinct"),
        ("MOOT_LOCAL_BATCH_COSTS", "3=nan", "ratios of 1 or more"),
    ],
)
def test_a_bad_value_is_one_line_naming_what_is_valid(monkeypatch, name, value, valid):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        EngineSettings.from_env()
    message = str(caught.value)
    assert "\n" not in message and name in message and valid in message


def _cpu(root, index, package, core):
    topology = root / f"cpu{index}" / "topology"
    topology.mkdir(parents=True)
    (topology / "physical_package_id").write_text(f"{package}\n")
    (topology / "core_id").write_text(f"{core}\n")


def test_smt_siblings_count_once(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1, 2, 3})
    for index, (package, core) in enumerate([(0, 0), (0, 1), (0, 0), (0, 1)]):  # two cores, two threads each
        _cpu(tmp_path, index, package, core)
    assert physical_cores(tmp_path) == 2


def test_only_the_cpus_this_process_may_use_count(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {1})
    for index, (package, core) in enumerate([(0, 0), (0, 1), (1, 0)]):
        _cpu(tmp_path, index, package, core)
    assert physical_cores(tmp_path) == 1


def test_without_a_readable_topology_the_usable_cpus_count(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1, 2})
    assert physical_cores(tmp_path) == 3
