"""``moot show`` in the terminal: a stored run replayed as it streamed, its rounds and tokens, its model calls."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from autogen_agentchat.messages import MessageFactory
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from moot.display._console import render_message
from moot.display._meter_text import meter_line
from moot.display._model_calls import TurnCalls
from moot.display._result_blocks import draft_label
from moot.display._run_view import RunView, TurnView
from moot.display._tables import scenario_name
from moot.messages import message_factory
from moot.teams import ReflectionRound

__all__ = ["render_calls", "render_run", "returned_label", "round_tokens_table", "rounds_table", "sampling_line"]


def returned_label(result: Mapping[str, Any] | None) -> str | None:
    """What a stored run returned, from its result record; None when it holds no answer (a debate's verdict is
    shown on its own line)."""
    if not result or "best" not in result:
        return None
    best = ReflectionRound.model_validate(result["best"]) if result["best"] else None
    return draft_label(best.round if best else None, best.score if best else None)


def render_run(console: Console, view: RunView) -> None:
    """A stored run: header, the transcript as it streamed, the rounds, the tokens per round, the stop."""
    run = view.run
    console.rule(f"[bold]run {escape(run.id)}")
    console.print(
        f"[bold]team:[/] {escape(run.team)}   [bold]scenario:[/] {escape(scenario_name(run))}   "
        f"[bold]status:[/] {run.status}   [bold]started:[/] {escape(run.created_at[:19].replace('T', ' '))}"
    )
    if run.models:
        console.print("[bold]models:[/] " + escape(", ".join(f"{role}={spec}" for role, spec in run.models.items())))
    factory = message_factory()
    for turn in view.turns:
        _render_turn(console, factory, turn)
    console.rule("[bold]summary")
    console.print(rounds_table(view))
    console.print(round_tokens_table(view))
    console.print(meter_line(run.tokens))
    if view.verdict is not None:
        by, decision = escape(str(view.verdict["by"])), escape(str(view.verdict.get("decision")))
        console.print(f"[bold]verdict[/] by {by}: [bold green]{decision}[/]")
    if (returned := returned_label(run.result)) is not None:
        console.print(f"[bold]returned:[/] the {escape(returned)}")
    reason = escape(run.stop_reason or run.error or "-")
    console.print(f"[bold]status:[/] {run.status}   [bold]stop reason:[/] {reason}")


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
    console.rule(f"[bold]model calls of run {escape(run_id)}")
    for group in turns:
        where = f"turn {group.step_id.rsplit(':', 1)[-1]}" if group.step_id else "outside a turn"
        where += f" · round {group.round}" if group.round is not None else ""
        console.rule(Text(f"{where} · {group.agent} · {len(group.calls)} call(s)", style="bold cyan"))
        for index, call in enumerate(group.calls, 1):
            console.print(
                f"[bold]call {index}[/] [dim]({escape(call.agent)}, {call.seconds:.2f}s)[/]   "
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
