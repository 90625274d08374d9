"""How results look in Jupyter: ``_repr_html_`` / ``_repr_markdown_`` of ReflectionResult and DebateResult.

A result is described once as document blocks (``_blocks.py``: headings, notes,
tables, collapsible text); its writers turn the blocks into HTML and into
Markdown, so both show the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StructuredMessage

from moot._blocks import Block, Fold, Heading, Note, Table, to_html
from moot._describe import describe
from moot.messages import RoundCompleted
from moot.roles import Position

if TYPE_CHECKING:
    from moot.teams import DebateResult, ReflectionResult, Usage

__all__ = ["debate_blocks", "html_result", "reflection_blocks", "transcript_rows"]

PREVIEW = 110


# ----------------------------------------------------------------- contents
def reflection_blocks(result: ReflectionResult) -> list[Block]:
    best = result.best
    blocks: list[Block] = [
        Heading(f"Reflection · {len(result.rounds)} round(s)"),
        Note("stop reason", result.stop_reason or "-"),
    ]
    if result.partial:
        blocks.append(Note("partial result", "the run ended on a fault; the answer is the best so far", alert=True))
    rows = tuple(
        (
            str(r.round),
            _num(r.score),
            ", ".join(f"{c.verdict} ({c.score})" for c in r.critiques) or "-",
            "; ".join(r.issues) or "-",
            str(sum(u.prompt_tokens + u.completion_tokens for u in r.usage.values())),
        )
        for r in result.rounds
    )
    blocks.append(Table("scores per round", ("round", "score", "verdicts", "issues", "tokens"), rows))
    if best is not None and best.score is not None:
        blocks.append(Note("best", f"round {best.round}, score {best.score:g}"))
    if result.answer is not None:
        label = "best draft" if best is not None else "latest draft (unscored)"
        blocks.append(Fold(label, result.answer))
    return [*blocks, _usage_table(result.usage), _transcript(result.messages)]


def debate_blocks(result: DebateResult) -> list[Block]:
    blocks: list[Block] = [
        Heading(f"Debate · {len(result.rounds)} round(s)"),
        Note("stop reason", result.stop_reason or "-"),
    ]
    if result.partial:
        blocks.append(Note("partial result", "the run ended on a fault", alert=True))
    experts = list(dict.fromkeys(n for r in result.rounds for n in r.positions))
    rows = [(name, *(_position(r.positions.get(name)) for r in result.rounds)) for name in experts]
    rows.append(("agreement", *(f"{r.agreement:.2f}" for r in result.rounds)))
    header = ("expert", *(f"round {r.round}" for r in result.rounds))
    blocks.append(Table("positions per round", header, tuple(rows)))
    blocks += _verdict_blocks(result)
    return [*blocks, _usage_table(result.usage), _transcript(result.messages)]


def _verdict_blocks(result: DebateResult) -> list[Block]:
    verdict = result.verdict
    if verdict is None:
        return [Note("verdict", "none (no positions to rule on)")]
    blocks: list[Block] = [
        Note("verdict", f"{verdict.decision} (by {result.verdict_by}, confidence {verdict.confidence:.2f})"),
        Note("rationale", verdict.rationale),
    ]
    if verdict.dissent:
        blocks.append(Note("dissent", "; ".join(verdict.dissent)))
    if result.metrics is not None:
        m = result.metrics
        flips = sum(len(v) for v in m.flips.values())
        text = f"first-round distinct answers {m.first_round_diversity}, answer flips {flips}"
        if m.final_matches_first_majority is not None:
            text += f", verdict keeps the first-round majority: {'yes' if m.final_matches_first_majority else 'no'}"
        blocks.append(Note("conformity", text))
    return blocks


def _position(position: Position | None) -> str:
    return "-" if position is None else f"{position.answer} ({position.confidence:.2f})"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _usage_table(usage: Usage) -> Table:
    rows = tuple(
        (agent, str(u.prompt_tokens), str(u.completion_tokens), str(u.prompt_tokens + u.completion_tokens))
        for agent, u in usage.items()
    )
    total = (
        "total",
        str(sum(u.prompt_tokens for u in usage.values())),
        str(sum(u.completion_tokens for u in usage.values())),
        str(sum(u.prompt_tokens + u.completion_tokens for u in usage.values())),
    )
    return Table("tokens", ("agent", "prompt", "completion", "total"), (*rows, total))


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


def html_result(blocks: Sequence[Block]) -> str:
    """A result's blocks as the HTML a notebook shows."""
    return '<div class="moot-result">\n' + to_html(blocks) + "\n</div>"
