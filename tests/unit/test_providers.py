"""Spec -> client is one table owned by ``moot.models``; the scripted provider needs no test helper module."""

from __future__ import annotations

import subprocess
import sys

import pytest
from autogen_core.models import ChatCompletionClient

from moot.errors import ConfigError
from moot.models import (
    DeterministicModel,
    ModelSpec,
    RetryingClient,
    ScriptedClient,
    ScriptedModel,
    provider_names,
    register_provider,
    registered_scripts,
    unregister_provider,
)
from moot.models._spec import NETWORK_TIMEOUT


def test_importing_models_does_not_import_the_test_helpers():
    probe = "import sys, moot.models, moot.cli; print('moot.testing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_built_in_providers_are_registered():
    assert provider_names()[:3] == ("local", "openai", "scripted")


def test_a_registered_provider_parses_builds_and_checks_through_the_table():
    built: list[tuple[str, str | None]] = []
    checked: list[str] = []

    def build(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
        built.append((str(spec), agent))
        return ScriptedModel({"writer": ["hi"]}).client("writer")

    register_provider("echo", build, lambda spec: checked.append(str(spec)))
    try:
        spec = ModelSpec.parse("echo:small@0.5")
        spec.check()
        client = spec.client("writer")
        assert isinstance(client, RetryingClient) and isinstance(client.inner, ScriptedClient)
        assert built == [("echo:small@0.5", "writer")] and checked == ["echo:small@0.5"]
        # It calls a server as far as moot knows: an unknown price, and the network deadline on every call.
        assert (spec.cost(1000, 1000), spec.effective_timeout) == (None, NETWORK_TIMEOUT)
        assert client.deadline == NETWORK_TIMEOUT
        register_provider("echo", build, runs_here=True)  # registered again, as a model run in this process
        assert (spec.cost(1000, 1000), spec.effective_timeout) == (0.0, None)
    finally:
        unregister_provider("echo")
    with pytest.raises(ConfigError, match="unknown provider 'echo'; valid providers: local, openai, scripted"):
        ModelSpec.parse("echo:small")


def test_a_new_provider_queues_apart_from_the_embedded_model_and_retries_by_its_own_rule():
    """A provider says where its calls queue and which faults are worth retrying; left unsaid, its calls queue per
    server (never in the embedded model's queue) and faults classify by the generic rule."""

    class Busy(Exception):
        pass

    def build(spec: ModelSpec, agent: str | None) -> ChatCompletionClient:
        return ScriptedModel({"writer": ["hi"]}).client("writer")

    register_provider("echo", build)
    try:
        spec = ModelSpec.parse("echo:small")
        assert spec.endpoint == "echo:small" != ModelSpec.parse("local").endpoint
        generic = spec.client("writer")
        assert isinstance(generic, RetryingClient)
        assert generic.transient(Busy()) is None and generic.transient(TimeoutError()) == "timeout"
        register_provider("echo", build, transient=lambda exc: "server_error" if isinstance(exc, Busy) else None)
        own = spec.client("writer")
        assert isinstance(own, RetryingClient)
        assert own.transient(Busy()) == "server_error" and own.transient(TimeoutError()) is None
    finally:
        unregister_provider("echo")


def test_a_provider_name_must_be_a_spec_word():
    with pytest.raises(ConfigError, match="bad provider name 'Echo:x'"):
        register_provider("Echo:x", lambda spec, agent: ScriptedModel({}).client(agent))


def test_scripted_deterministic_is_built_in_and_a_registered_one_replaces_it():
    client = ModelSpec.parse("scripted:deterministic").client("critic")
    assert isinstance(client, ScriptedClient)
    slow = DeterministicModel(delay=0.5).register()
    try:
        assert registered_scripts()["deterministic"] is slow
    finally:
        slow.unregister()
    assert "deterministic" not in registered_scripts()


def test_an_unknown_script_names_what_is_registered():
    with ScriptedModel({"a": []}, name="known"):
        with pytest.raises(ConfigError, match=r"no scripted model named 'missing'; registered: .*deterministic, known"):
            ModelSpec.parse("scripted:missing").check()
