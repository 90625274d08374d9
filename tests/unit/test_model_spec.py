"""ModelSpec: the string form, its round trip, layering with resolve(), and the errors it raises."""

from __future__ import annotations

import pytest
from autogen_ext.models.openai import OpenAIChatCompletionClient
from pydantic import ValidationError

from moot import ConfigError, ModelSpec, ModelUnavailableError

QWEN = "openai:Qwen/Qwen2.5-7B-Instruct@0.2?base_url=http://127.0.0.1:8000/v1&seed=3"


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("local", {"provider": "local"}),
        ("local@0.7", {"provider": "local", "temperature": 0.7}),
        ("openai:gpt-4o-mini", {"provider": "openai", "model": "gpt-4o-mini"}),
        (
            QWEN,
            {
                "provider": "openai",
                "model": "Qwen/Qwen2.5-7B-Instruct",
                "temperature": 0.2,
                "base_url": "http://127.0.0.1:8000/v1",
                "seed": 3,
            },
        ),
        ("@0.9", {"temperature": 0.9}),
        ("openai:llama3:8b@0.5", {"provider": "openai", "model": "llama3:8b", "temperature": 0.5}),
        (
            "  local?max_tokens=64&api_key_env=MY_KEY ",
            {"provider": "local", "max_tokens": 64, "api_key_env": "MY_KEY"},
        ),
    ],
)
def test_parse_string_form(text, fields):
    spec = ModelSpec.parse(text)
    assert spec.model_dump(exclude_none=True) == fields
    assert ModelSpec.parse(str(spec)) == spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("local", "local"),
        ("local@0.70", "local@0.7"),
        ("local@1.0", "local@1"),
        ("local@0.1234567", "local@0.1234567"),
        ("@0.9", "@0.9"),
        ("openai:llama3:8b@0.5", "openai:llama3:8b@0.5"),
        (QWEN, "openai:Qwen/Qwen2.5-7B-Instruct@0.2?seed=3&base_url=http://127.0.0.1:8000/v1"),
    ],
)
def test_str_is_the_canonical_string_form(text, expected):
    assert str(ModelSpec.parse(text)) == expected


@pytest.mark.parametrize(
    "spec",
    [
        ModelSpec(provider="local", temperature=1.0),
        ModelSpec(provider="local", temperature=0.1234567),
        ModelSpec(provider="openai", model="m", base_url="http://h:1/v1?x=1&y=2", max_tokens=9, api_key_env="K"),
        ModelSpec(provider="scripted", model="default", seed=0),
    ],
)
def test_str_round_trips_built_specs(spec):
    assert ModelSpec.parse(str(spec)) == spec


def test_query_temperature_overrides_the_at_form():
    assert ModelSpec.parse("local@0.1?temperature=0.4").temperature == 0.4


def test_resolve_overlays_non_none_fields():
    base = ModelSpec.parse("openai:gpt-4o-mini@0.7?seed=3&api_key_env=MY_KEY")
    resolved = base.resolve(ModelSpec.parse("@0.2?max_tokens=50"))
    assert resolved == ModelSpec(
        provider="openai", model="gpt-4o-mini", temperature=0.2, seed=3, max_tokens=50, api_key_env="MY_KEY"
    )


def test_resolve_with_none_or_empty_override_is_identity():
    base = ModelSpec.parse(QWEN)
    assert base.resolve(None) is base
    assert base.resolve(ModelSpec()) == base


def test_resolve_same_provider_keeps_endpoint_fields():
    base = ModelSpec.parse(QWEN)
    resolved = base.resolve(ModelSpec(provider="openai", model="other"))
    assert resolved.model == "other"
    assert resolved.base_url == "http://127.0.0.1:8000/v1"


def test_resolve_provider_switch_drops_endpoint_fields_but_keeps_sampling():
    base = ModelSpec.parse("openai:gpt-4o-mini@0.7?seed=3&max_tokens=99&base_url=http://h/v1&api_key_env=K")
    resolved = base.resolve(ModelSpec(provider="local"))
    assert resolved == ModelSpec(provider="local", temperature=0.7, seed=3, max_tokens=99)


def test_resolve_provider_switch_takes_the_overrides_endpoint():
    base = ModelSpec.parse("local@0.7")
    resolved = base.resolve(ModelSpec.parse("openai:gpt-4o-mini"))
    assert resolved == ModelSpec(provider="openai", model="gpt-4o-mini", temperature=0.7)


def test_effective_defaults():
    assert ModelSpec().effective_provider == "local"
    assert ModelSpec().effective_max_tokens == 1024
    assert ModelSpec(max_tokens=10).effective_max_tokens == 10


def test_spec_is_frozen():
    spec = ModelSpec.parse("local")
    with pytest.raises(ValidationError, match="frozen"):
        spec.temperature = 0.5  # type: ignore[misc]


def test_spec_forbids_extra_fields_in_one_line_naming_the_valid_ones():
    with pytest.raises(ConfigError) as refused:
        ModelSpec(provider="local", colour="red")  # type: ignore[call-arg]
    assert str(refused.value).startswith("bad model spec: unknown field 'colour'; valid fields: provider, model,")
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty model spec; form: PROVIDER[:MODEL]"),
        ("   ", "empty model spec"),
        ("gemini:pro", "unknown provider 'gemini'; valid providers: local, openai, scripted"),
        ("local@hot", "temperature must be a number, got 'hot'"),
        ("local@nan", "temperature must be finite, got 'nan'"),
        ("local@3", "temperature: Input should be less than or equal to 2"),
        ("local@-0.1", "temperature: Input should be greater than or equal to 0"),
        (
            "local?colour=red",
            "unknown parameter 'colour'; valid parameters: seed, max_tokens, timeout, base_url, api_key_env, price_in, "
            "price_out, response_format, temperature",
        ),
        ("local?seed=x", "seed must be an integer, got 'x'"),
        ("local?seed", "parameters must be key=value pairs"),
        ("local?max_tokens=0", "max_tokens: Input should be greater than 0"),
        ("openai:", "empty model name after ':'"),
        ("openai:m?api_key_env=1BAD", "api_key_env: String should match pattern"),
    ],
)
def test_bad_specs_raise_config_error_saying_what_is_valid(text, message):
    with pytest.raises(ConfigError) as info:
        ModelSpec.parse(text)
    assert message in str(info.value)
    if text.strip():
        assert repr(text) in str(info.value)


def test_openai_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelUnavailableError, match=r"needs an API key in \$OPENAI_API_KEY"):
        ModelSpec.parse("openai:gpt-4o-mini").client()


def test_openai_missing_named_key_names_that_variable(monkeypatch):
    monkeypatch.delenv("MOOT_TEST_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    with pytest.raises(ModelUnavailableError, match=r"\$MOOT_TEST_KEY"):
        ModelSpec.parse("openai:gpt-4o-mini?api_key_env=MOOT_TEST_KEY").client()


def test_openai_with_key_builds_client_with_sampling_settings(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    client = ModelSpec.parse("openai:gpt-4o-mini@0.3?seed=4").client()
    config = client.inner.dump_component().config  # moot's RetryingClient owns retries around the SDK client
    assert (config["model"], config["temperature"], config["seed"]) == ("gpt-4o-mini", 0.3, 4)
    assert (config["max_tokens"], config["max_retries"]) == (1024, 0)


def test_self_hosted_endpoint_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = ModelSpec.parse(QWEN).client()
    sdk = client.inner.inner  # the retry layer, then the served model's schema layer (see test_served.py)
    assert isinstance(sdk, OpenAIChatCompletionClient)
    assert sdk.dump_component().config["base_url"] == "http://127.0.0.1:8000/v1"
    assert client.model_info["function_calling"] is False


def test_unknown_openai_model_without_base_url_is_a_config_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ConfigError, match=r"add \?base_url="):
        ModelSpec.parse("openai:my-own-model").client()


def test_openai_spec_without_model_is_a_config_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(ConfigError, match=r"names no model; use e\.g\. openai:gpt-4o-mini"):
        ModelSpec.parse("openai").client()


def test_local_spec_with_unknown_model_names_the_embedded_one():
    with pytest.raises(ModelUnavailableError) as info:
        ModelSpec.parse("local:tiny-llama").client()
    assert "unknown local model 'tiny-llama'" in str(info.value)
    assert "'qwen2.5-coder-0.5b-instruct-q4_k_m'" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "openai:gpt-4o-mini",
        "openai:gpt-4o@0.7?seed=3",
        QWEN,
        QWEN + "&response_format=json_object",
        QWEN + "&response_format=json_schema",
        "scripted:deterministic",
    ],
)
def test_client_info_is_what_the_built_client_reports(monkeypatch, text):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    spec = ModelSpec.parse(text)
    assert spec.client_info() == spec.client().model_info


def test_client_info_needs_no_key_and_refuses_a_spec_the_client_would(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert ModelSpec.parse("openai:gpt-4o-mini").client_info()["structured_output"] is True
    with pytest.raises(ConfigError, match=r"add \?base_url="):
        ModelSpec.parse("openai:my-own-model").client_info()
    with pytest.raises(ConfigError, match="names no model"):
        ModelSpec.parse("openai").client_info()


def test_the_embedded_models_info_loads_nothing(monkeypatch):
    from moot.models import _providers
    from moot.models._embedded_client import EMBEDDED_MODEL_INFO

    monkeypatch.setattr(_providers, "shared_engine", lambda *a: pytest.fail("the engine was loaded"))
    assert ModelSpec.parse("local@0.7?seed=1").client_info() == EMBEDDED_MODEL_INFO


# ------------------------------------------------------------ one-line refusals
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: ModelSpec(temperature=5),
            "bad model spec: temperature: Input should be less than or equal to 2, got 5",
        ),
        (
            lambda: ModelSpec(temperature=-0.1),
            "bad model spec: temperature: Input should be greater than or equal to 0",
        ),
        (lambda: ModelSpec(seed="x"), "bad model spec: seed: Input should be a valid integer"),
        (lambda: ModelSpec(max_tokens=0), "bad model spec: max_tokens: Input should be greater than 0, got 0"),
        (lambda: ModelSpec(timeout=7200), "bad model spec: timeout: Input should be less than or equal to 3600"),
        (lambda: ModelSpec(provider=123), "bad model spec: provider: Input should be a valid string, got 123"),
        (
            lambda: ModelSpec(provider="nope"),
            "bad model spec: provider: unknown provider 'nope'; valid providers: local",
        ),
        (lambda: ModelSpec(model=""), "bad model spec: model: String should have at least 1 character"),
        (lambda: ModelSpec(base_url="localhost:8000"), "bad model spec: base_url: must be an http(s) URL with a host"),
        (lambda: ModelSpec(api_key_env="1KEY"), "bad model spec: api_key_env: String should match pattern"),
        (lambda: ModelSpec(response_format="xml"), "bad model spec: response_format: Input should be 'json_schema'"),
        (lambda: ModelSpec(price_in=float("nan")), "bad model spec: price_in: Input should be greater than or equal"),
        (lambda: ModelSpec(component=5), "bad model spec: component: client component must be a mapping, got int"),
        (lambda: ModelSpec(provider="component"), "bad model spec: the component provider needs the client's config"),
        (lambda: ModelSpec("local", seed=1), "ModelSpec takes a spec string or fields by name, not both"),
        (lambda: ModelSpec.model_validate({"temperature": 3}), "bad model spec: temperature: Input should be less"),
        (
            lambda: ModelSpec.model_validate_json('{"seed": "x"}'),
            "bad model spec: seed: Input should be a valid integer",
        ),
        (lambda: ModelSpec.parse(123), "a model spec is a string (PROVIDER[:MODEL]"),
        (lambda: ModelSpec.parse(None), "or a client component mapping, not NoneType"),
        (lambda: ModelSpec.parse(b"local"), "or a client component mapping, not bytes"),
        (lambda: ModelSpec.parse("local").resolve(7), "or a client component mapping, not int"),
        (lambda: ModelSpec.parse("openai:m?seed=1&seed=2"), "parameter 'seed' is given twice; give it once"),
    ],
)
def test_every_bad_spec_input_is_one_config_error_line_naming_the_field(make, message):
    with pytest.raises(ConfigError) as refused:
        make()
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_a_spec_string_is_taken_by_the_constructor_and_by_resolve():
    assert ModelSpec("openai:gpt-4o-mini@0.2") == ModelSpec.parse("openai:gpt-4o-mini@0.2")
    assert ModelSpec.parse("local").resolve("@0.9?seed=4") == ModelSpec.parse("local@0.9?seed=4")
