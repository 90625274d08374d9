"""Over-long text fields are cut back to a sentence end, never in the middle of one."""

from __future__ import annotations

import json
from collections import deque

import pytest
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken

from moot.arbiters import Verdict
from moot.errors import MalformedOutputError
from moot.roles import Critique, RoleAgent, role
from moot.roles._agent import parse_structured
from moot.roles._fit import fit_text_lengths
from moot.testing import ScriptedClient

SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "maxLength": 40},
        "points": {"type": "array", "items": {"type": "string", "maxLength": 20}},
        "inner": {"$ref": "#/$defs/Inner"},
    },
    "$defs": {"Inner": {"type": "object", "properties": {"why": {"type": "string", "maxLength": 12}}}},
}


def test_a_string_filling_its_cap_is_cut_back_to_its_last_sentence():
    cut_by_the_grammar = "First point here. Second one is cut of"  # 38 chars, at a 38-char cap
    assert fit_text_lengths(cut_by_the_grammar, {"maxLength": 38}) == "First point here."
    over = "It works. It also handles the empty case well and more."
    assert fit_text_lengths({"text": over}, SCHEMA) == {"text": "It works."}


def test_strings_under_their_cap_or_without_a_sentence_end_stay_as_they_are():
    assert fit_text_lengths({"text": "Short. Fine"}, SCHEMA) == {"text": "Short. Fine"}
    run_on = "x" * 60
    assert fit_text_lengths({"text": run_on}, SCHEMA) == {"text": run_on}  # validation will judge it
    ends_exactly = "A sentence of exactly forty characters.."
    assert fit_text_lengths({"text": ends_exactly}, SCHEMA) == {"text": ends_exactly}


def test_array_items_and_referenced_objects_are_fitted_too():
    data = {"points": ["Ok. But then it goes on", "fine"], "inner": {"why": "Because. And so on"}, "extra": "kept"}
    assert fit_text_lengths(data, SCHEMA) == {
        "points": ["Ok.", "fine"],
        "inner": {"why": "Because."},
        "extra": "kept",
    }


def test_a_critique_whose_reasoning_hit_its_cap_parses_with_whole_sentences():
    reasoning = ("The draft handles spaces. " * 40)[:800]
    reply = (
        '{"reasoning": "' + reasoning + '", "score": 40, "strengths": ["clear"], '
        '"issues": ["no handling of punctuation", "no tests"], "verdict": "revise"}'
    )
    critique = parse_structured(Critique, reply)
    assert isinstance(critique, Critique)
    assert critique.reasoning.endswith("spaces.") and len(critique.reasoning) < 800


def test_verdict_assessments_are_fitted_inside_their_objects():
    long = "Strong case. " * 30
    reply = {
        "rationale": "ops wins.",
        "assessments": [{"expert": "ops", "assessment": long}],
        "decision": "keep",
        "dissent": [],
        "confidence": 0.7,
    }
    verdict = parse_structured(Verdict, json.dumps(reply))
    assert verdict.assessments[0].assessment.endswith("case.")


class CutOff(ScriptedClient):
    """A model whose every reply stopped at the token cap."""

    async def create(self, messages, **kwargs):
        result = await super().create(messages, **kwargs)
        return result.model_copy(update={"finish_reason": "length"})


async def test_a_reply_cut_at_max_tokens_says_so_instead_of_blaming_the_json():
    client = CutOff(deque(['{"reasoning": "The draft is'] * 3), agent="critic")
    agent = RoleAgent(role("critic"), client)
    with pytest.raises(MalformedOutputError) as caught:
        await agent.on_messages([TextMessage(content="Review this.", source="user")], CancellationToken())
    assert "stopped at the client's max_tokens cap before it was complete" in caught.value.last_error
    feedback = client.calls[-1].messages[-1].content
    assert "max_tokens cap" in feedback


def test_a_cut_never_ends_on_an_enumeration_marker():
    from moot.roles._fit import _to_sentence

    text = "We weigh two concerns:\n\n1. **Load**: it deploys often. That risks outages.\n\n2. **Cost**: the team is sm"
    assert (
        _to_sentence(text, len(text)) == "We weigh two concerns:\n\n1. **Load**: it deploys often. That risks outages."
    )


def test_an_argument_repeated_counts_once():
    from moot.roles import Opening

    opening = Opening(
        reasoning="r", answer="split", key_arguments=["Billing shares 6 tables", "billing  shares 6 tables."[:-1]],
        confidence=0.5,
    )  # fmt: skip
    assert opening.key_arguments == ["Billing shares 6 tables"]
