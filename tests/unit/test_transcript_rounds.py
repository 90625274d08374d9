"""One rule numbers the rounds of a transcript, for ``moot show`` and for the teams' rebuilt state."""

from __future__ import annotations

from autogen_agentchat.messages import StructuredMessage, TextMessage

from moot.messages import ROUND, RoundCompleted, messages_by_round, round_numbers
from tests.conftest import make_critique


def test_a_message_is_in_the_round_it_names_else_the_current_one():
    marks = [
        ("task", None),
        ("draft", 1),
        ("", None),  # a critique names no round: the current one
        (ROUND, 1),
        ("", None),  # after round 1 closed: round 2
        ("draft", 2),
        ("draft", 4),  # a named round moves the current one
        ("", None),
        ("verdict", None),
    ]
    assert round_numbers(marks) == [None, 1, 1, 1, 2, 2, 4, 4, None]


def test_messages_by_round_groups_a_team_transcript_without_task_or_verdict():
    critique = make_critique(55, "no type hints")
    transcript = [
        TextMessage(content="Write add.", source="user"),
        TextMessage(content="def add", source="generator", metadata={"moot_kind": "draft", "round": "1"}),
        StructuredMessage(content=critique, source="critic"),
        RoundCompleted(round=1, source="reflection"),
        TextMessage(content="def add(a, b)", source="generator", metadata={"moot_kind": "draft", "round": "2"}),
        TextMessage(content="keep", source="arbiter", metadata={"moot_kind": "verdict"}),
    ]
    grouped = messages_by_round(transcript)
    assert {n: [m.source for m in ms] for n, ms in grouped.items()} == {
        1: ["generator", "critic", "reflection"],
        2: ["generator"],
    }
