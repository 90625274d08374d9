"""Any AutoGen model client wherever a model is named: a spec holds its component config (``component:...``).

The clients here are AutoGen's own ``ReplayChatCompletionClient`` and a user's own Component defined below
(:class:`ScriptComponent`, a moot script behind AutoGen's component interface): no network, no embedded model.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

import pytest
import yaml
from autogen_core import Component
from autogen_core.models import CreateResult, ModelInfo, UserMessage
from autogen_ext.models.openai import OpenAIChatCompletionClient
from autogen_ext.models.replay import ReplayChatCompletionClient
from pydantic import BaseModel
from typer.testing import CliRunner

from moot import ModelSpec
from moot.cli import app
from moot.errors import ConfigError
from moot.harness import CompareRequest, run_comparison
from moot.harness.jobs._calls import CallCache, ClientFactory, EndpointLimits, endpoint_of, spec_label
from moot.models import DelegatingClient, Meter, RetryingClient
from moot.models._deterministic import DeterministicModel
from moot.models._request import Request
from moot.models._scripted import find_script
from moot.roles import RoleModels, parse_model_options, role_models
from moot.roles._role_files import load_role_file
from tests.unit.test_harness_support import PromptModel, arithmetic, write_sums

REPLAY = "autogen_ext.models.replay.ReplayChatCompletionClient"
SCRIPTED_INFO: ModelInfo = ModelSpec.parse("scripted:deterministic").client("x").model_info


class ScriptConfig(BaseModel):
    script: str = "deterministic"
    """A registered script's name (``scripted:NAME``)."""
    agent: str = "agent"
    """Whose part of the script the client plays."""
    temperature: float | None = None
    model_info: dict[str, Any] | None = None


class ScriptComponent(DelegatingClient, Component[ScriptConfig]):
    """A user's own AutoGen Component model client: a moot script behind it, every build and call counted."""

    component_type = "model"
    component_config_schema = ScriptConfig
    built: ClassVar[list[ScriptConfig]] = []
    calls: ClassVar[int] = 0

    def __init__(self, config: ScriptConfig) -> None:
        script = find_script(config.script) or DeterministicModel()
        super().__init__(script.client(config.agent))
        self.config = config
        ScriptComponent.built.append(config)

    async def _complete(self, request: Request) -> CreateResult:
        ScriptComponent.calls += 1
        return await super()._complete(request)

    @property
    def model_info(self) -> ModelInfo:
        return self.config.model_info or self.inner.model_info  # type: ignore[return-value]

    def _to_config(self) -> ScriptConfig:
        return self.config

    @classmethod
    def _from_config(cls, config: ScriptConfig) -> ScriptComponent:
        return cls(config)


OWN = f"{ScriptComponent.__module__}.ScriptComponent"


def own(**config: Any) -> dict[str, Any]:
    return {"provider": OWN, "config": config}


@pytest.fixture(autouse=True)
def _counted():
    ScriptComponent.built, ScriptComponent.calls = [], 0
    yield


def replay(*replies: str) -> dict[str, Any]:
    return ReplayChatCompletionClient(list(replies)).dump_component().model_dump(mode="json")


# ------------------------------------------------------------------ spec forms
def test_a_component_config_is_a_spec_inline_from_a_file_or_from_the_client_itself(tmp_path):
    config = replay("hi")
    inline = ModelSpec.parse(config)
    assert inline.effective_provider == "component" and json.loads(inline.component or "") == config
    as_json = tmp_path / "client.json"
    as_json.write_text(json.dumps(config))
    as_yaml = tmp_path / "client.yaml"
    as_yaml.write_text(yaml.safe_dump(config))
    from_text = ModelSpec.parse("component:" + json.dumps(config))
    client = ReplayChatCompletionClient(["hi"])
    assert ModelSpec.parse(f"component:{as_json}") == ModelSpec.parse(f"component:{as_yaml}") == inline
    assert ModelSpec.parse(f"@{as_json}") == inline and ModelSpec.parse(f"@{as_yaml}@0.5") == inline.resolve("@0.5")
    assert ModelSpec.parse("@0.5") == ModelSpec(temperature=0.5)  # a temperature names no file
    assert from_text == ModelSpec.from_component(client) == ModelSpec.from_component(client.dump_component()) == inline
    assert len({inline, from_text}) == 1  # a frozen value: hashes like any spec


def test_a_component_spec_is_named_by_class_and_digest_and_takes_sampling_layers(tmp_path):
    spec = ModelSpec.parse(replay("hi"))
    other = ModelSpec.parse(replay("bye"))
    label = str(spec)
    assert label.startswith("component:ReplayChatCompletionClient#") and len(label.split("#")[1]) == 12
    assert str(other) != label and spec_label(spec) == label
    hotter = spec.resolve(ModelSpec.parse("@0.9?seed=3"))
    assert hotter.component == spec.component and str(hotter) == f"{label}@0.9?seed=3"
    (tmp_path / "c.json").write_text(json.dumps(replay("hi")))
    assert ModelSpec.parse(f"component:{tmp_path / 'c.json'}@0.9?seed=3") == hotter
    assert spec.resolve(ModelSpec.parse("scripted:deterministic")).component is None  # another provider: dropped
    assert ModelSpec.model_validate_json(hotter.model_dump_json()) == hotter
    with pytest.raises(ConfigError, match=r"names a client component by its digest .* cannot be loaded"):
        ModelSpec.parse(label)  # what runs and results record is never loaded back


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"config": {}}, r'^client component names no "provider" \(the client class'),
        ({"provider": 3, "config": {}}, r'"provider" must name a class as module\.Class'),
        ({"provider": "a.B"}, r'"config" must be a mapping'),
        ({"provider": "a.B", "config": {}, "colour": 1}, r"unknown key 'colour'; valid keys: provider, component_type"),
        ({"provider": "a.B", "config": {"api_key": "**********"}}, r"config\.api_key is '\*\*\*\*\*\*\*\*\*\*'"),
        ({"provider": "a.B", "config": {"when": __import__("datetime").date(2024, 1, 1)}}, r"is not plain JSON data"),
        ({"provider": "a.B", "config": {"x": "y" * 300_000}}, r"holds [\d,]+ bytes; at most 256,000"),
    ],
)
def test_a_bad_component_config_is_one_line(given, message):
    with pytest.raises(ConfigError, match=message) as refused:
        ModelSpec.parse(given)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("component", r"the component provider needs the client's config: component:PATH\.json"),
        ("component:", r"name the client's config after 'component:'"),
        ("component:missing.json", r"cannot read client component file missing\.json: No such file"),
        ("component:client.txt", r"a client component file must end in \.json, \.yaml, \.yml"),
        ("component:{not json", r"the inline client component is not valid JSON"),
        ("client.json", r"unknown provider 'client\.json'.*given as component:client\.json"),
        ('component:{"provider": "a.B", "config": {}}?model=x', r"unknown parameter 'model'"),
    ],
)
def test_a_bad_component_spec_string_is_one_line(text, message):
    with pytest.raises(ConfigError, match=message) as refused:
        ModelSpec.parse(text)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"provider": "no_such_module_here.Client", "config": {}}, r"cannot import no_such_module_here .*installed\?"),
        ({"provider": "autogen_ext.models.no_such.Client", "config": {}}, r"pip install 'autogen-ext\[no-such\]'"),
        ({"provider": "autogen_ext.models.replay.NoSuchClient", "config": {}}, r"has no NoSuchClient"),
        ({"provider": "collections.OrderedDict", "config": {}}, r"is not an AutoGen model client: it is a class, but"),
        ({"provider": "json.dumps", "config": {}}, r"is not an AutoGen model client: it is a function, not a class"),
        ({"provider": REPLAY, "config": {"chat_completions": 3}}, r"config\.chat_completions: Input should be"),
        ({"provider": "OpenAIChatCompletionClient", "config": {}}, r"config\.model: Field required; valid fields: "),
    ],
)
def test_a_component_that_cannot_be_built_is_refused_in_one_line_by_check_before_any_build(given, message):
    spec = ModelSpec.parse(given)  # parsing imports nothing
    with pytest.raises(ConfigError, match=message) as refused:
        spec.check()
    assert "\n" not in str(refused.value) and str(refused.value).startswith("client component ")
    with pytest.raises(ConfigError, match=message):
        spec.client()


def test_a_client_local_class_cannot_be_named_by_its_config():
    class Local(ScriptComponent):
        pass

    with pytest.raises(ConfigError, match=r"^Local cannot be named by its component config .*local class") as refused:
        ModelSpec.from_component(Local(ScriptConfig()))
    assert "\n" not in str(refused.value)


# -------------------------------------------------------------------- clients
async def test_the_client_is_built_from_its_config_and_wrapped_in_the_retry_layer():
    spec = ModelSpec.parse(replay("first", "second"))
    client = spec.client()
    assert isinstance(client, RetryingClient) and isinstance(client.inner, ReplayChatCompletionClient)
    assert client.deadline == 120.0 and client.model == str(spec)
    result = await client.create([UserMessage(content="hi", source="user")])
    assert result.content == "first"


def test_sampling_layers_go_into_the_configs_fields_and_the_sdk_does_not_retry(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = OpenAIChatCompletionClient(model="gpt-4o-mini").dump_component().model_dump(mode="json")
    config["config"].pop("api_key", None)
    spec = ModelSpec.parse(config).resolve(ModelSpec.parse("@0.4?seed=7&max_tokens=99"))
    built = spec.client()
    assert isinstance(built, RetryingClient) and isinstance(built.inner, OpenAIChatCompletionClient)
    args = built.inner._create_args  # AutoGen's create arguments, baked from the config
    assert (args["temperature"], args["seed"], args["max_tokens"]) == (0.4, 7, 99)
    assert built.inner._client.max_retries == 0  # moot's retry layer is the only one


def test_a_sampling_layer_the_client_has_no_field_for_is_said_once(caplog):
    spec = ModelSpec.parse(own()).resolve(ModelSpec.parse("?seed=5"))
    with caplog.at_level(logging.WARNING):
        spec.client()
        spec.client()
    said = [r.getMessage() for r in caplog.records if "seed" in r.getMessage()]
    assert said == ["moot: warning: ScriptComponent has no seed setting; the spec's seed=5 is not applied "
                    "(set it in the client's config)"]  # fmt: skip
    assert [c.temperature for c in ScriptComponent.built] == [None, None]
    ModelSpec.parse(own()).resolve(ModelSpec.parse("@0.3")).client()
    assert ScriptComponent.built[-1].temperature == 0.3


def test_a_config_stating_its_model_info_is_asked_without_building_the_client():
    spec = ModelSpec.parse(own(model_info=dict(SCRIPTED_INFO)))
    assert spec.client_info() == SCRIPTED_INFO and ScriptComponent.built == []
    assert ModelSpec.parse(own()).client_info() == SCRIPTED_INFO and len(ScriptComponent.built) == 1


def test_a_refused_key_names_the_component_and_where_its_key_is():
    from moot.models import refusal

    class Unauthorized(Exception):
        status_code = 401

    class Refusing(ReplayChatCompletionClient):
        async def create(self, *args: Any, **kwargs: Any) -> CreateResult:
            raise Unauthorized("bad key")

    spec = ModelSpec.parse(replay("x"))
    client = RetryingClient(Refusing(["x"]), model=str(spec), credentials="$ANTHROPIC_API_KEY")
    with pytest.raises(Unauthorized) as raised:
        asyncio.run(client.create([UserMessage(content="hi", source="user")]))
    assert refusal(raised.value) == (
        f"model {spec} refused the API key (401 unauthorized): bad key; check $ANTHROPIC_API_KEY"
    )
    assert "OPENAI_API_KEY" not in (refusal(Unauthorized("x")) or "")


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ({"provider": "autogen_ext.models.anthropic.AnthropicChatCompletionClient", "config": {"model": "c"}},
         "$ANTHROPIC_API_KEY"),
        ({"provider": "OpenAIChatCompletionClient", "config": {"model": "m", "api_key": "sk-x"}},
         "the api_key in the config of OpenAIChatCompletionClient#"),
        ({"provider": OWN, "config": {}}, "the key ScriptComponent reads"),
    ],
)  # fmt: skip
def test_each_component_names_where_its_key_is(config, where):
    from moot.models._component import component_credentials

    assert component_credentials(ModelSpec.parse(config)).startswith(where)


# ----------------------------------------------------------------- where named
def test_a_role_file_names_a_component_inline(tmp_path):
    path = tmp_path / "oracle.yaml"
    path.write_text(yaml.safe_dump({
        "name": "oracle", "description": "answers from a replay", "persona": "You answer.",
        "model": {"provider": REPLAY, "config": {"chat_completions": ["yes"]}},
    }))  # fmt: skip
    made = load_role_file(path)
    assert made.model is not None and made.model.effective_provider == "component"
    assert json.loads(made.model.component or "")["config"] == {"chat_completions": ["yes"]}
    bad = tmp_path / "broken.yaml"
    bad.write_text(yaml.safe_dump({"name": "broken", "description": "d", "persona": "p", "model": {"config": {}}}))
    with pytest.raises(ConfigError, match=r'model: client component names no "provider"'):
        load_role_file(bad)


def test_a_scenario_names_a_component_inline_for_one_role(tmp_path):
    from moot.scenario import load_scenario

    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump({
        "name": "panel", "description": "a panel", "team": "expert_panel", "task": "Decide.",
        "models": {"architect": {"provider": REPLAY, "config": {"chat_completions": ["yes"]}}},
    }))  # fmt: skip
    models = load_scenario(str(path)).models([])
    assert models.spec("architect") == ModelSpec.parse({"provider": REPLAY, "config": {"chat_completions": ["yes"]}})
    assert models.spec("ops").effective_provider == "local"
    assert (
        load_scenario(str(path)).models(["architect=scripted:deterministic"]).spec("architect").provider == "scripted"
    )


def test_python_gives_a_component_wherever_it_gives_a_model():
    config = replay("hi")
    assert role_models(config, ["critic"]).spec("critic") == ModelSpec.parse(config)
    assert role_models("scripted:deterministic", ["critic"]).spec("critic") == ModelSpec.parse("scripted:deterministic")
    per_role = role_models({"critic": config}, ["critic", "generator"])
    assert per_role.spec("critic").effective_provider == "component" and per_role.spec("generator").provider == "local"
    with pytest.raises(ConfigError, match=r"models: unknown role 'judge'; roles here: critic"):
        role_models({"judge": config}, ["critic"])


def test_a_preset_is_built_on_a_component_for_every_role_or_for_one():
    from moot.teams import load_preset

    preset = load_preset("expert_panel")
    everyone = preset.build(replay("x"))
    label = str(ModelSpec.parse(replay("x")))
    assert set(everyone._model_specs().values()) == {label}
    assert all(isinstance(a.model_client, RetryingClient) for a in everyone._agents() if hasattr(a, "model_client"))
    one = preset.build({"architect": replay("x")})._model_specs()
    assert one["architect"] == label and one["ops"] == "local"


def test_model_options_take_a_component_file_for_all_roles_or_one(tmp_path):
    path = tmp_path / "client.json"
    path.write_text(json.dumps(replay("hi")))
    models = parse_model_options([f"component:{path}", "critic=scripted:deterministic"], ["generator", "critic"])
    assert isinstance(models, RoleModels) and models.spec("generator") == ModelSpec.parse(replay("hi"))
    assert models.spec("critic").effective_provider == "scripted"


def test_run_with_a_component_file_from_the_command_line(tmp_path):
    """``moot run --model component:client.json``: a user's own client plays every role, under moot's layers."""
    path = tmp_path / "client.json"
    path.write_text(json.dumps(own(script="deterministic")))
    result = CliRunner().invoke(app, ["run", "architecture_review", "--model", f"component:{path}"])
    assert result.exit_code == 0, result.output
    assert ScriptComponent.calls > 0 and ScriptComponent.built
    bad = CliRunner().invoke(app, ["run", "architecture_review", "--model", f"component:{tmp_path / 'none.json'}"])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "cannot read client component file" in bad.stderr


# ------------------------------------------------------------ queues and caches
def test_only_the_embedded_model_shares_one_queue():
    config = replay("hi")
    endpoints = [
        endpoint_of(ModelSpec.parse(text))
        for text in (
            "local", "local@0.9", "openai:gpt-4o-mini", "openai:qwen?base_url=http://127.0.0.1:8000/v1",
            "openai:qwen?base_url=http://127.0.0.1:9000/v1", "scripted:a", "scripted:b",
        )
    ]  # fmt: skip
    endpoints += [endpoint_of(ModelSpec.parse(config))]
    endpoints += [endpoint_of(ModelSpec.parse({"provider": "OllamaChatCompletionClient",
                                               "config": {"model": "m", "host": "http://gpu:11434"}}))]  # fmt: skip
    assert endpoints[:2] == ["local", "local"] and len(set(endpoints)) == len(endpoints) - 1
    assert endpoints[-2:] == [f"component:{REPLAY}", "component:http://gpu:11434"]


def test_a_registered_provider_gets_its_own_queue_not_the_embedded_models():
    from moot.models import register_provider, unregister_provider

    register_provider("myserver", lambda spec, agent: ReplayChatCompletionClient(["x"]))
    try:
        assert endpoint_of(ModelSpec.parse("myserver:big?base_url=http://10.0.0.2/v1")) == (
            "myserver:http://10.0.0.2/v1"
        )
        assert endpoint_of(ModelSpec.parse("myserver:small")) == "myserver:small"
    finally:
        unregister_provider("myserver")


async def test_calls_to_different_endpoints_do_not_wait_for_each_other():
    """One call in flight per endpoint: a component call is not held behind a slow embedded-model call."""
    limits = EndpointLimits(1)
    slow = ModelSpec.parse("local")
    fast = ModelSpec.parse(replay("fast"))
    held = asyncio.Event()

    async def hold() -> None:
        async with limits(endpoint_of(slow)):
            held.set()
            await asyncio.sleep(10)

    holder = asyncio.create_task(hold())
    await held.wait()
    factory = ClientFactory(limits, None)
    client = factory.client(fast, "critic", Meter())
    result = await asyncio.wait_for(client.create([UserMessage(content="hi", source="user")]), 2)
    assert result.content == "fast"
    holder.cancel()


@pytest.mark.parametrize("states_its_info", [True, False])
async def test_a_component_call_replays_from_the_cache_without_building_the_client(tmp_path, states_its_info):
    """The client's model_info is kept with its calls, so a replay builds nothing even for a config without one."""
    info = {"model_info": dict(SCRIPTED_INFO)} if states_its_info else {}
    spec = ModelSpec.parse(own(agent="critic", **info))
    cache = CallCache(tmp_path / "cache")
    factory = ClientFactory(EndpointLimits(2), cache)
    message = [UserMessage(content="What is 1 + 2?", source="user")]
    first = await factory.client(spec, "critic", Meter()).create(message)
    assert ScriptComponent.calls == 1 and len(ScriptComponent.built) == 1
    cache.close()

    from moot.harness.jobs._calls import CacheOnly

    replayed = ClientFactory(EndpointLimits(2), CallCache(tmp_path / "cache"), CacheOnly())
    meter = Meter()
    again = await replayed.client(spec, "critic", meter).create(message)
    assert again.content == first.content and meter.billed_calls == 0
    assert ScriptComponent.calls == 1 and len(ScriptComponent.built) == 1  # no call, and nothing built


def test_a_compare_row_keyed_by_a_component_replays_from_the_cache(tmp_path):
    sums = write_sums(tmp_path / "sums.jsonl", 3)
    script = PromptModel("component-sums", arithmetic()).register()
    try:
        generator = own(script="component-sums", agent="solver")  # no model_info: the cache keeps it
        models = [script.spec, "generator=component:" + json.dumps(generator)]
        out = tmp_path / "out"
        first = asyncio.run(run_comparison(CompareRequest(suite=str(sums), arms=["single"], models=models, out=out)))
        assert first.computed == 3 and first.failed == 0 and ScriptComponent.calls == 3
        assert {row.score for row in first.rows} == {1.0}
        built, script.calls = len(ScriptComponent.built), 0
        replay_options = CompareRequest(
            suite=str(sums), arms=["single"], models=models, out=out, rerun=True, cache_only=True
        )
        again = asyncio.run(run_comparison(replay_options))
        assert again.replayed == 3 and again.missed == 0 and again.meter.billed_calls == 0
        assert ScriptComponent.calls == 3 and len(ScriptComponent.built) == built and script.calls == 0
        assert [r.answer for r in again.rows] == [r.answer for r in first.rows]
    finally:
        script.unregister()


def test_a_rows_model_identity_names_the_component_by_its_label_and_endpoint_never_its_settings():
    """Each compare row records what answered; for a client component that is its label (whose digest covers the
    whole config) and the server it calls, not 'None default model', and no setting such as a key."""
    from moot.harness.jobs._provenance import model_identity

    def served(model: str) -> ModelSpec:
        config = {"model": model, "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-secret-value"}
        return ModelSpec.parse({"provider": "autogen_ext.models.openai.OpenAIChatCompletionClient", "config": config})

    identity = model_identity(served("qwen"))
    assert identity.startswith("component:OpenAIChatCompletionClient#")
    assert "http://127.0.0.1:9/v1" in identity and "sk-secret" not in identity
    assert model_identity(served("qwen2")) != identity
