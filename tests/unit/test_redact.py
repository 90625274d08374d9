"""Credentials never reach the run store, the traces or the terminal through an error text."""

from __future__ import annotations

import asyncio

import pytest

from moot._redact import redact
from moot.conditions import MaxRounds
from moot.store import RunStore
from moot.testing import ScriptedModel
from tests.conftest import make_reflection

KEY = "sk-proj-Abc123Def456Ghi789Jkl"


@pytest.mark.parametrize(
    "text",
    [
        f"Error code: 401 - {{'error': {{'message': 'Incorrect API key provided: {KEY}.'}}}}",
        "request failed: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig",
        'provider said {"api_key": "hunter2hunter2"}',
        "GET /v1/models?key=AIzaSyA-1234567890abcdef failed",
    ],
)
def test_credentials_in_error_texts_are_redacted(text):
    cleaned = redact(text)
    for secret in (KEY, "eyJhbGciOiJIUzI1NiJ9", "hunter2hunter2", "AIzaSyA-1234567890abcdef"):
        assert secret not in cleaned
    assert "[redacted]" in cleaned


def test_the_value_of_a_secret_environment_variable_is_redacted_wherever_it_appears(monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "plain-looking-value-42")
    assert redact("echoed back: plain-looking-value-42 (401)") == "echoed back: [redacted] (401)"
    assert redact("nothing secret here") == "nothing secret here"


def test_a_provider_error_that_echoes_the_key_is_stored_and_raised_without_it():
    error = PermissionError(f"Error code: 401 - Incorrect API key provided: {KEY}")
    model = ScriptedModel({"generator": [error], "critic": []})
    with model:
        team = make_reflection(model, MaxRounds(1))
        with pytest.raises(PermissionError):
            asyncio.run(team.run(task="Write slugify."))
    record = RunStore.default().get(team.run_id)
    assert record.status == "failed"
    assert KEY not in (record.error or "") and "[redacted]" in (record.error or "")
