"""What each team's result shows, described once as document blocks (``blocks.py``).

``result_blocks`` dispatches on the result's type: the function that describes each team's
result is registered here on that result's class, so the results stay plain data and never
import this package. The blocks are written as HTML and Markdown for Jupyter and as rich renderables
for the terminal (``_result_forms.py``), so a notebook and ``moot run`` show the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import singledispatch

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StructuredMessage

from moot.display._describe import describe
from moot.display.blocks import Block, Fold, Heading, Note, Table
from moot.messages import RoundCompleted
from moot.models import Meter
from moot.roles import Position
from moot.teams import (
    CodeChoice,
    CodeDebateResult,
    DebateResult,
    MootResult,
    PlannerExecutorResult,
    ReflectionResult,
    Usage,
)

__all__ = [
    "code_debate_blocks",
    "debate_blocks",
    "draft_label",
    "plan_blocks",
    "reflection_blocks",
    "result_blocks",
    "transcript_rows",
    "usage_table",
]

PREVIEW = 110


# ----------------------------------------------------------------- contents
@singledispatch
def result_blocks(result: MootResult) -> list[Block]:
    """What a result shows; this is any team's result whose type registered nothing: its stop reason,
    tokens and transcript."""
    blocks = _opening(type(result).__name__, result)
    return [*blocks, usage_table(result.usage), _transcript(result.messages)]


@result_blocks.register(ReflectionResult)
def reflection_blocks(result: ReflectionResult) -> list[Block]:
    best = result.best
    blocks = _opening(
        f"Reflection · {len(result.rounds)} round(s)", result, "the run ended on a fault; the answer is the best so far"
    )
    rows = tuple(
        (
            str(r.round),
            _num(r.score),
            ", ".join(f"{c.verdict} ({c.score})" for c in r.critiques) or "-",
            "; ".join(r.issues) or "-",
            str(sum(r.usage.values(), Meter()).tokens),
        )
        for r in result.rounds
    )
    blocks.append(Table("scores per round", ("round", "score", "verdicts", "issues", "tokens"), rows))
    if result.answer is not None:
        blocks.append(Fold(draft_label(best.round if best else None, best.score if best else None), result.answer))
    return [*blocks, usage_table(result.usage), _transcript(result.messages)]


@result_blocks.register(PlannerExecutorResult)
def plan_blocks(result: PlannerExecutorResult) -> list[Block]:
    """A planner-executor's plan with each step's status, and the audit trail of its tool calls."""
    state = "completed" if result.completed else "incomplete"
    blocks = _opening(f"PlannerExecutor · plan {state}", result)
    steps = tuple((str(s.number), s.action, s.status) for s in result.plan)
    blocks.append(Table(f"plan (revised {result.revisions}x)", ("#", "step", "status"), steps))
    calls = tuple((r.tool, _preview(json.dumps(r.args)), r.decision, "yes" if r.ok else "no") for r in result.audit)
    blocks.append(Table("tool calls (audit trail)", ("tool", "arguments", "decision", "ok"), calls))
    return [*blocks, usage_table(result.usage), _transcript(result.messages)]


@result_blocks.register(CodeDebateResult)
def code_debate_blocks(result: CodeDebateResult) -> list[Block]:
    """A code debate: every candidate with its visible-test evidence, each round's moves, and the ruling."""
    blocks = _opening(f"Code debate · {len(result.rounds)} round(s)", result)
    candidates = tuple(
        (
            c.id,
            c.author,
            str(c.round),
            _origin(c.origin, c.based_on),
            _preview(c.evidence.summary()),
        )
        for c in result.candidates
    )
    blocks.append(Table("candidates", ("id", "author", "round", "origin", "visible tests"), candidates))
    experts = list(dict.fromkeys(e for r in result.rounds for e in r.choices))
    moves = [(e, *(_move(r.choices[e]) if e in r.choices else "-" for r in result.rounds)) for e in experts]
    blocks.append(Table("moves per round", ("expert", *(f"round {r.round}" for r in result.rounds)), tuple(moves)))
    if result.ruling is None:
        blocks.append(Note("ruling", "none (no candidate to rule on)"))
    else:
        blocks += [Note("chosen", result.ruling.candidate), Note("rationale", result.ruling.rationale)]
    if result.answer is not None:
        blocks.append(Fold("chosen program", result.answer))
    return [*blocks, usage_table(result.usage), _transcript(result.messages)]


def _move(choice: CodeChoice) -> str:
    """What an expert did in a round: wrote or fixed a program, or kept its own (a rejected fix said so)."""
    move = f"{choice.action} {choice.holds}"
    return f"{move} ({choice.fixed} rejected)" if choice.fixed and choice.fixed != choice.holds else move


def _opening(title: str, result: MootResult, partial: str = "the run ended on a fault") -> list[Block]:
    """The heading and stop reason every result starts with, and the warning when it is partial."""
    blocks: list[Block] = [Heading(title), Note("stop reason", result.stop_reason or "-")]
    if result.partial:
        blocks.append(Note("partial result", partial, alert=True))
    return blocks


def _origin(origin: str, based_on: str | None) -> str:
    return f"{origin} from {based_on}" if based_on else origin


def draft_label(best_round: int | None, score: float | None) -> str:
    """Which draft a reflection returns: the best-scoring one (the same words live and in ``moot show``)."""
    if best_round is not None and score is not None:
        return f"best draft (round {best_round}, score {score:g})"
    return "latest draft (unscored)"


@result_blocks.register(DebateResult)
def debate_blocks(result: DebateResult) -> list[Block]:
    blocks = _opening(f"Debate · {len(result.rounds)} round(s)", result)
    experts = list(dict.fromkeys(n for r in result.rounds for n in r.positions))
    rows = [(name, *(_position(r.positions.get(name)) for r in result.rounds)) for name in experts]
    rows.append(("agreement", *(f"{r.agreement:.2f}" for r in result.rounds)))
    header = ("expert", *(f"round {r.round}" for r in result.rounds))
    blocks.append(Table("positions per round", header, tuple(rows)))
    blocks += _verdict_blocks(result)
    return [*blocks, usage_table(result.usage), _transcript(result.messages)]


def _verdict_blocks(result: DebateResult) -> list[Block]:
    verdict = result.verdict
    if verdict is None:
        return [Note("verdict", "none (no positions to rule on)")]
    blocks: list[Block] = [
        Note(_verdict_label(result), verdict.decision),
        Note("confidence", f"{verdict.confidence:.2f}"),
        Note("rationale", verdict.rationale),
    ]
    if verdict.decided_by:
        blocks.append(Note("decided by", f"{verdict.decided_by}'s argument"))
    if verdict.dissent:
        blocks.append(Note("dissent", "; ".join(verdict.dissent)))
    if result.metrics is not None:
        m = result.metrics
        text = f"first-round distinct answers {m.first_round_diversity}, {m.changes_summary()}"
        if m.final_matches_first_round_vote is not None:
            kept = "yes" if m.final_matches_first_round_vote else "no"
            text += f", verdict keeps the first-round vote ({m.first_round_vote}): {kept}"
        blocks.append(Note("rounds", text))
    return blocks


def _verdict_label(result: DebateResult) -> str:
    """Who ruled, and in which order the positions were put to them (the order can sway a model arbiter)."""
    shown = f" (positions shown as {', '.join(result.arbiter_order)})" if result.arbiter_order else ""
    return f"verdict by {result.verdict_by}{shown}"


def _position(position: Position | None) -> str:
    return "-" if position is None else f"{position.answer} ({position.confidence:.2f})"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def usage_table(usage: Usage) -> Table:
    """Tokens per agent, then the total."""
    rows = tuple((agent, str(u.prompt_tokens), str(u.completion_tokens), str(u.tokens)) for agent, u in usage.items())
    total = sum(usage.values(), Meter())
    totals = ("total", str(total.prompt_tokens), str(total.completion_tokens), str(total.tokens))
    return Table("tokens", ("agent", "prompt", "completion", "total"), (*rows, totals))


def transcript_rows(messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> list[tuple[str, str, str]]:
    """(speaker, what, one-line preview) per message."""
    return [_row(m) for m in messages]


def _row(message: BaseAgentEvent | BaseChatMessage) -> tuple[str, str, str]:
    if isinstance(message, RoundCompleted):
        return (message.source, "round", message.to_text())
    what, text = _describe(message)
    if "round" in message.metadata:
        what += f" (round {message.metadata['round']})"
    return (message.source, what, text)


def _describe(message: BaseAgentEvent | BaseChatMessage) -> tuple[str, str]:
    described = describe(message.content) if isinstance(message, StructuredMessage) else None
    if described is not None:
        return described.kind, described.summary()
    kind = message.metadata.get("moot_kind") or ("task" if message.source == "user" else type(message).__name__)
    return kind, message.to_text()


def _transcript(messages: Sequence[BaseAgentEvent | BaseChatMessage]) -> Table:
    rows = tuple((s, w, _preview(t)) for s, w, t in transcript_rows(messages))
    return Table(f"transcript ({len(rows)} messages)", ("speaker", "what", "text"), rows, folded=True)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"
