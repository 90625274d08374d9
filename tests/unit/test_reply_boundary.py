"""Model replies are outside text: every reply enters moot through RoleAgent's one call, made valid and bounded.

A lone surrogate (which an OpenAI-compatible endpoint can send as the JSON escape ``\\ud800``) once reached
the run store and the trace writer, which refuse it; a reply nested thousands of levels deep reached
``json.loads`` and ended the run in RecursionError. Here each is data: stored escaped, or a malformed reply
fed back like any other.
"""

from __future__ import annotations

import json

from moot import Critique
from moot.conditions import MaxRounds
from moot.roles._agent import MAX_REPLY_CHARS, MAX_REPLY_DEPTH, parse_structured
from moot.store import RunStore
from moot.testing import ScriptedModel
from tests.conftest import make_critique, make_reflection

TASK = "Write a haiku about caches."


async def test_a_lone_surrogate_in_a_reply_is_stored_escaped_and_the_run_finishes(tmp_path, monkeypatch):
    monkeypatch.setenv("MOOT_HOME", str(tmp_path))
    model = ScriptedModel({"generator": ["draft \ud800 one"], "critic": [make_critique(95)]})
    with model:
        team = make_reflection(model, MaxRounds(1))
        result = await team.run(task=TASK)
    assert result.latest_draft == "draft \\ud800 one"
    record = RunStore.default().list()[0]
    turns = RunStore.default().turns(record.id)
    assert any("\\ud800" in json.dumps(t.model_dump(mode="json"), ensure_ascii=False) for t in turns)


async def test_a_surrogate_escape_inside_a_structured_reply_becomes_valid_text():
    reply = json.dumps({**make_critique(80, "fix x").model_dump(), "reasoning": "bad \ud800 text"})
    critique = parse_structured(Critique, reply)
    critique.model_dump_json()  # would raise on a lone surrogate
    assert "\\ud800" in critique.reasoning


def test_a_reply_nested_past_the_bound_is_malformed_not_a_recursion_error():
    deep = "[" * 100_000 + "]" * 100_000
    reply = '{"reasoning": ' + deep + "}"
    try:
        parse_structured(Critique, reply)
    except ValueError as exc:
        assert f"deeper than {MAX_REPLY_DEPTH}" in str(exc)
    else:  # pragma: no cover - the assertion names the failure
        raise AssertionError("a 100,000-level reply was accepted")


async def test_a_flooding_reply_is_cut_to_the_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("MOOT_HOME", str(tmp_path))
    model = ScriptedModel({"generator": ["x" * (MAX_REPLY_CHARS + 10)], "critic": [make_critique(95)]})
    with model:
        result = await make_reflection(model, MaxRounds(1)).run(task=TASK)
    assert len(result.latest_draft) < MAX_REPLY_CHARS + 100
    assert result.latest_draft.endswith("[10 more characters]")


def test_a_sampled_draft_nested_past_the_parser_is_its_own_text_not_a_recursion_error():
    from moot.harness.arms._sampling import answer_from_draft

    deep = "[" * 100_000 + "]" * 100_000
    assert answer_from_draft(deep) == deep
    assert answer_from_draft('{"reasoning": "6 * 7", "answer": "42"}') == "42"
