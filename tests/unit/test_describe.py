"""Results are described once (``display/_describe.py``, ``display/blocks.py``): every renderer shows the same
description."""

from __future__ import annotations

import html
import re
from collections import Counter

import pytest
from autogen_agentchat.messages import StructuredMessage
from pydantic import BaseModel
from rich.console import Console

from moot.arbiters import ExpertAssessment, Verdict
from moot.display import render_message
from moot.display._describe import describe, describe_data
from moot.display._result_blocks import transcript_rows
from moot.display._run_view import _structured_text
from moot.harness.reports._render import markdown, page
from moot.harness.reports._report import ArmSummary, PairSummary, Report
from moot.roles import Critique, Position

CRITIQUE = Critique(
    reasoning="The function works for ints.",
    score=55,
    strengths=["short and clear"],
    issues=["no type hints"],
    verdict="revise",
)
POSITION = Position(
    reasoning="One service is simpler.",
    claim="ops: split scales better",
    response="load is flat, scale is not the problem",
    answer="keep",
    because="a single deploy",
    key_arguments=["one deploy"],
    confidence=0.7,
)
VERDICT = Verdict(
    rationale="ops argued best for keep",
    assessments=[ExpertAssessment(expert="ops", assessment="strongest case")],
    decision="keep",
    dissent=["architect still wants a split"],
    confidence=0.8,
)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _console_text(content: BaseModel) -> str:
    console = Console(width=200, record=True, color_system=None)
    render_message(console, StructuredMessage[type(content)](content=content, source="someone"))  # type: ignore[misc]
    return _flat(re.sub(r"[│╭╮╰╯─]", " ", console.export_text()))


@pytest.mark.parametrize("content", [CRITIQUE, POSITION, VERDICT], ids=["critique", "position", "verdict"])
def test_console_show_and_repr_all_render_every_part_of_the_one_description(content: BaseModel):
    described = describe(content)
    assert described is not None
    shown = describe_data(described.kind, content.model_dump(mode="json"))
    assert shown == described  # stored JSON is described the same as the live result
    views = {
        "console": _console_text(content),
        "moot show": _flat(_structured_text(described.kind, content.model_dump(mode="json"))),
        "repr": _flat(transcript_rows([StructuredMessage[type(content)](content=content, source="x")])[0][2]),  # type: ignore[misc]
    }
    parts = [f"{f.label} {f.value}" for f in described.head] + [_flat(line.text) for line in described.lines]
    for view, text in views.items():
        for part in parts:
            assert part in text, (view, part)


def test_an_unknown_kind_or_bad_data_is_not_described():
    assert describe_data("draft", {"text": "x"}) is None
    assert describe_data("critique", {"score": "high"}) is None
    assert describe("plain text") is None


# ---------------------------------------------------------- compare report
def _arm(label: str, accuracy: float, tokens: float) -> ArmSummary:
    return ArmSummary(
        label=label, name=label, settings={"k": 3}, n=10, errors=1, accuracy=accuracy, ci_low=accuracy - 0.12,
        ci_high=accuracy + 0.08, mean_tokens=tokens, mean_billed_tokens=tokens / 2, mean_calls=4.5,
        mean_billed_calls=2.25, mean_cost_usd=0.0123, mean_wall_seconds=7.5, total_wall_seconds=75.0,
        accuracy_per_1k_tokens=accuracy / (tokens / 1000), mean_rounds=2.0, parse_failures=1, partial=0,
        oracle_gaps=2, mean_flips=0.4, mean_first_round_diversity=1.7, signals={"argued flips": 3.0},
    )  # fmt: skip


REPORT = Report(
    suite="gsm8k-mini", description="Grade-school arithmetic", items=10, models={"default": "scripted:x"},
    arms=[_arm("single", 0.6, 1234.0), _arm("debate", 0.8, 5678.0)],
    pairs=[PairSummary(a="single", b="debate", n=9, difference=-0.2, ci_low=-0.45, ci_high=0.05, test="McNemar",
                       p_value=0.0312, p_holm=0.0312, a_only=1, b_only=3)],
    binary=True, matched_k=None, computed=20, reused=0, failed=0, run_calls=90, run_billed_calls=45,
    run_tokens=69120, run_billed_tokens=34560, generated_at="2025-01-02T03:04:05+00:00",
)  # fmt: skip
NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?%?|\$\d+(?:\.\d+)?")


def test_markdown_and_html_reports_hold_the_same_numbers_and_words():
    md = markdown(REPORT)
    body = page(REPORT).split("<body>", 1)[1].split("</body>", 1)[0]
    text = html.unescape(re.sub(r"<[^>]+>", " ", body))
    md_numbers, html_numbers = Counter(NUMBER.findall(md)), Counter(NUMBER.findall(text))
    assert md_numbers == html_numbers
    for expected in ("60.0%", "80.0%", "1,234", "5,678", "-20.0 pts", "0.031", "1 / 3", "$0.0123", "10 (+1 failed)"):
        assert expected in md and expected in text, expected
    assert _flat(re.sub(r"[|#*\-]", " ", md)).count("Only one arm") == 0
    words = lambda s: Counter(re.findall(r"[A-Za-z]{4,}", s))  # noqa: E731
    assert words(re.sub(r"!\[.*?\]\(.*?\)", "", md)) == words(text)  # an image's alt is an attribute in HTML


@pytest.mark.parametrize("kind", ["reflection", "debate"])
async def test_the_renderable_of_a_result_is_what_moot_run_prints(kind):
    """``rich.print(result)`` dumps the whole dataclass (hundreds of lines of fields): ``result_renderable``
    shows a result as the terminal does, once (moot run prints it the same way)."""
    from moot import ModelSpec, Reflection, RoleAgent, role
    from moot.conditions import MaxRounds
    from moot.display import render_result, result_renderable
    from moot.teams import Debate

    spec = ModelSpec.parse("scripted:deterministic")
    if kind == "reflection":
        team = Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec), stop=MaxRounds(2))
    else:
        experts = [RoleAgent(role(n), spec) for n in ("architect", "ops")]
        team = Debate(experts, RoleAgent(role("arbiter"), spec), stop=MaxRounds(1))
    result = await team.run(task="Sum a list.")
    printed, shown = Console(width=100, record=True), Console(width=100, record=True)
    printed.print(result_renderable(result))
    render_result(shown, result)
    text = printed.export_text()
    assert "\nstop reason: max rounds: " in text and "tokens: " in text.splitlines()[-1]
    assert "messages=[" not in text and "TaskResult(" not in text and len(text.splitlines()) < 60
    assert shown.export_text().split("\n", 1)[1] == text  # moot run's: its rule line, then the same lines
