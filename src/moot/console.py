"""Live rendering of a team's stream in the terminal (rich); results as ``_result_blocks.py`` describes them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from autogen_agentchat.base import TaskResult
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, MessageFactory, StructuredMessage
from pydantic import ValidationError
from rich.console import Console, Group
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from moot._describe import Description, Tone, describe
from moot._meter_text import meter_line, usd
from moot._result_blocks import draft_label
from moot.messages import (
    HumanFeedbackGiven,
    HumanFeedbackRequested,
    RoundCompleted,
    StepFinished,
    ToolExecuted,
    message_factory,
)
from moot.runview import RunView, TurnCalls, TurnView
from moot.store import RunRecord
from moot.teams import MootResult, ReflectionRound

__all__ = ["render_calls", "render_message", "render_result", "render_run", "runs_table"]


def render_message(console: Console, message: BaseAgentEvent | BaseChatMessage) -> None:
    """Print one streamed message: drafts as markdown, critiques, positions and verdicts as panels, rounds as rules."""
    described = describe(message.content) if isinstance(message, StructuredMessage) else None
    if isinstance(message, RoundCompleted):
        console.rule(Text(message.to_text(), style="dim"))
    elif described is not None:
        console.print(description_panel(message.source, described))
    elif isinstance(message, ToolExecuted | StepFinished | HumanFeedbackRequested | HumanFeedbackGiven):
        console.print(Text(message.to_text(), style="dim"))
    elif isinstance(message, BaseChatMessage):
        title = "task" if message.source == "user" else message.source
        console.print(Panel(Markdown(message.to_text()), title=title, title_align="left", border_style="cyan"))


_STYLES: dict[Tone, str] = {
    "plain": "",
    "dim": "dim",
    "good": "green",
    "warn": "yellow",
    "accent": "cyan",
    "info": "blue",
    "strong": "bold green",
}


def description_panel(source: str, described: Description) -> Panel:
    """A described result as a panel: the headline with bold labels, then its lines, each in its tone."""
    head: list[tuple[str, str]] = []
    for index, field in enumerate(described.head):
        head += [(("  " if index else "") + f"{field.label} ", "bold" if field.tone != "dim" else "dim")]
        head += [(field.value, _STYLES[field.tone])]
    body = [Text.assemble(*head), *(Text(line.text, style=_STYLES[line.tone]) for line in described.lines)]
    title = f"verdict ({source})" if described.kind == "verdict" else source
    return Panel(Group(*body), title=title, title_align="left", border_style=_STYLES[described.tone])


WIDE_RUNS_TABLE = 110
"""Terminal columns from which ``moot runs`` shows every column side by side."""


def runs_table(records: list[RunRecord], rounds: Mapping[str, int] | None = None, width: int = 200) -> Table:
    """Recent runs; ``rounds`` (completed rounds per run id) adds a rounds column.

    Run ids stay whole (they are copied into ``moot show`` / ``moot resume``). Below
    :data:`WIDE_RUNS_TABLE` columns the team, turns and start time are left out and the
    stop reason wraps under the id, so no column is squeezed to a few characters.
    """
    wide = width >= WIDE_RUNS_TABLE
    columns = ["id", "scenario", "team", "status", "stop reason", "rounds", "turns", "tokens", "started"]
    if not wide:
        columns = ["id", "scenario", "status", "rounds", "tokens"]
    if rounds is None:
        columns.remove("rounds")
    table = Table(title="runs (newest first)", show_edge=False)
    for column in columns:
        table.add_column(
            column, overflow="fold", no_wrap=wide and column == "id", min_width=32 if column == "id" else None
        )
    for r in records:
        reason = r.stop_reason or r.error or "-"
        cells = {
            "id": r.id if wide else Text.assemble(r.id, "\n", (reason, "dim")),
            "scenario": scenario_name(r),
            "team": r.team,
            "status": r.status,
            "stop reason": reason,
            "rounds": str((rounds or {}).get(r.id, 0)),
            "turns": str(r.turns),
            "tokens": _tokens_cell(r),
            "started": r.created_at[:19].replace("T", " "),
        }
        table.add_row(*(cells[c] for c in columns))
    return table


def _tokens_cell(r: RunRecord) -> str:
    """Logical tokens, and the run's cost when its prices are known."""
    cost = f" · {usd(r.tokens.cost)}" if r.tokens.cost else ""
    return f"{r.tokens.total_tokens}{cost}"


def catalog_table(kind: str, rows: list[tuple[str, str, str]]) -> Table:
    """A catalog listing (``moot roles`` ...): name, description, and where each entry comes from."""
    table = Table(title=kind, show_edge=False)
    for column in ("name", "description", "from"):
        table.add_column(column, overflow="fold", no_wrap=column == "name")
    for row in rows:
        table.add_row(*row)
    return table


def scenario_name(record: RunRecord) -> str:
    name = (record.scenario or "-").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if name.endswith((".py", ".yaml", ".yml")) else name


def render_result(console: Console, result: TaskResult) -> None:
    """Print the outcome as a notebook shows it (each result's ``blocks()``, see ``_result_blocks.py``), then
    the run's tokens and cost; a result from outside moot shows its stop reason."""
    console.rule("[bold]result")
    if not isinstance(result, MootResult):
        console.print(f"[bold]stop reason:[/] {result.stop_reason}")
        return
    console.print(result)  # MootResult.__rich__: its blocks, then its tokens and cost


def returned_label(result: Mapping[str, Any] | None) -> str | None:
    """What a stored run returned, from its result record; None when it holds no answer (a debate's verdict is
    shown on its own line)."""
    if not result or "best" not in result:
        return None
    best = ReflectionRound.model_validate(result["best"]) if result["best"] else None
    return draft_label(best.round if best else None, best.score if best else None)


# ------------------------------------------------------------------ moot show
def render_run(console: Console, view: RunView) -> None:
    """A stored run: header, the transcript as it streamed, the rounds, the tokens per round, the stop."""
    run = view.run
    console.rule(f"[bold]run {run.id}")
    console.print(
        f"[bold]team:[/] {run.team}   [bold]scenario:[/] {scenario_name(run)}   [bold]status:[/] {run.status}   "
        f"[bold]started:[/] {run.created_at[:19].replace('T', ' ')}"
    )
    if run.models:
        console.print("[bold]models:[/] " + ", ".join(f"{role}={spec}" for role, spec in run.models.items()))
    factory = message_factory()
    for turn in view.turns:
        _render_turn(console, factory, turn)
    console.rule("[bold]summary")
    console.print(rounds_table(view))
    console.print(round_tokens_table(view))
    console.print(meter_line(run.tokens))
    if view.verdict is not None:
        console.print(f"[bold]verdict[/] by {view.verdict['by']}: [bold green]{view.verdict.get('decision')}[/]")
    if (returned := returned_label(run.result)) is not None:
        console.print(f"[bold]returned:[/] the {returned}")
    console.print(f"[bold]status:[/] {run.status}   [bold]stop reason:[/] {run.stop_reason or run.error or '-'}")


def _render_turn(console: Console, factory: MessageFactory, turn: TurnView) -> None:
    try:
        message = factory.create(turn.payload)
    except (ValueError, ValidationError):
        console.print(Panel(Text(turn.text), title=f"{turn.source} ({turn.kind})", title_align="left"))
        return
    render_message(console, message)


def rounds_table(view: RunView) -> Table:
    """Per round: the score (reflection) or agreement (debate), each critic's verdict, each expert's answer."""
    has_score = any(r.score is not None for r in view.rounds)
    has_agreement = any(r.agreement is not None for r in view.rounds)
    table = Table(title="rounds", show_edge=False)
    table.add_column("round", justify="right")
    if has_score:
        table.add_column("score", justify="right")
    if has_agreement:
        table.add_column("agreement", justify="right")
    table.add_column("verdicts / answers")
    for r in view.rounds:
        cells = [str(r.round) + ("" if r.complete else " (open)")]
        if has_score:
            cells.append("-" if r.score is None else f"{r.score:g}")
        if has_agreement:
            cells.append("-" if r.agreement is None else f"{r.agreement:.2f}")
        picks = [f"{a}: {v} ({r.scores[a]:g})" for a, v in r.verdicts.items()]
        picks += [f"{a}: {answer}" for a, answer in r.answers.items()]
        cells.append(", ".join(picks) or "-")
        table.add_row(*cells)
    return table


def round_tokens_table(view: RunView) -> Table:
    """Tokens per agent per round, then the turns after the rounds (an arbiter's ruling), then the total."""
    table = Table(title="tokens per round", show_edge=False)
    for column in ("round", "agent", "prompt", "completion", "total"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    rows = [(str(r.round), agent, t) for r in view.rounds for agent, t in r.tokens.items()]
    rows += [("verdict", agent, t) for agent, t in view.closing_tokens.items()]
    for label, agent, t in rows:
        table.add_row(label, agent, str(t.prompt_tokens), str(t.completion_tokens), str(t.total_tokens))
    run = view.run
    table.add_section()
    total = run.tokens
    table.add_row("all", "", str(total.prompt_tokens), str(total.completion_tokens), str(total.total_tokens))
    return table


def render_calls(console: Console, run_id: str, turns: list[TurnCalls]) -> None:
    """Every model call of a run, under its turn: the exact messages sent, then the reply."""
    console.rule(f"[bold]model calls of run {run_id}")
    for group in turns:
        where = f"turn {group.step_id.rsplit(':', 1)[-1]}" if group.step_id else "outside a turn"
        where += f" · round {group.round}" if group.round is not None else ""
        console.rule(Text(f"{where} · {group.agent} · {len(group.calls)} call(s)", style="bold cyan"))
        for index, call in enumerate(group.calls, 1):
            console.print(
                f"[bold]call {index}[/] [dim]({call.agent}, {call.seconds:.2f}s)[/]   "
                f"prompt {call.prompt_tokens} · completion {call.completion_tokens} tokens"
            )
            console.print(Text(sampling_line(call.attributes), style="dim"))
            for message in call.messages:
                console.print(_prompt_panel(message))
            console.print(Panel(Text(call.output or ""), title="reply", title_align="left", border_style="green"))


def sampling_line(attributes: Mapping[str, Any]) -> str:
    """The settings a call ran with, as its trace event recorded them (older traces have none)."""
    if "model" not in attributes:
        return "settings: not recorded"
    temperature = attributes.get("temperature")
    parts = [
        f"model {attributes['model']}",
        f"temperature {'server default' if temperature is None else temperature}",
        f"seed {attributes.get('seed', '-')}",
        f"max_tokens {attributes.get('max_tokens', '-')}",
    ]
    if attributes.get("cached"):
        parts.append("cache hit")
    if attributes.get("finish_reason") == "length":
        parts.append("cut off at max_tokens")
    return "settings: " + " · ".join(parts)


def _prompt_panel(message: dict[str, Any]) -> Panel:
    kind = str(message.get("type", "message")).removesuffix("Message").lower() or "message"
    source = f" ({message['source']})" if message.get("source") else ""
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, indent=2)
    return Panel(Text(text), title=f"{kind}{source}", title_align="left", border_style="dim")
