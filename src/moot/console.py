"""Live rendering of a team's stream in the terminal (rich)."""

from __future__ import annotations

from autogen_agentchat.base import TaskResult
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StructuredMessage
from rich.console import Console, Group
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from moot.messages import RoundCompleted
from moot.roles import Critique
from moot.teams import ReflectionResult
from moot.teams._records import Usage

__all__ = ["render_message", "render_result"]


def render_message(console: Console, message: BaseAgentEvent | BaseChatMessage) -> None:
    """Print one streamed message: drafts as markdown, critiques as a short table, rounds as rules."""
    if isinstance(message, RoundCompleted):
        console.rule(Text(message.to_text(), style="dim"))
    elif isinstance(message, StructuredMessage) and isinstance(message.content, Critique):
        console.print(_critique_panel(message.source, message.content))
    elif isinstance(message, BaseChatMessage):
        title = "task" if message.source == "user" else message.source
        console.print(Panel(Markdown(message.to_text()), title=title, title_align="left", border_style="cyan"))


def _critique_panel(source: str, critique: Critique) -> Panel:
    style = "green" if critique.verdict == "accept" else "yellow"
    head = Text.assemble(
        ("score ", "bold"), (str(critique.score), style), ("  verdict ", "bold"), (critique.verdict, style)
    )
    body = [head, Text(critique.reasoning, style="dim")]
    body += [Text(f"+ {s}", style="green") for s in critique.strengths]
    body += [Text(f"- {i}", style="yellow") for i in critique.issues]
    return Panel(Group(*body), title=source, title_align="left", border_style=style)


def usage_table(usage: Usage) -> Table:
    table = Table(title="tokens", show_edge=False)
    for column in ("agent", "prompt", "completion", "total"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for agent, used in usage.items():
        table.add_row(
            agent,
            str(used.prompt_tokens),
            str(used.completion_tokens),
            str(used.prompt_tokens + used.completion_tokens),
        )
    return table


def render_result(console: Console, result: TaskResult) -> None:
    """Print the outcome: stop reason, rounds, best answer, tokens per agent."""
    console.rule("[bold]result")
    console.print(f"[bold]stop reason:[/] {result.stop_reason}")
    if isinstance(result, ReflectionResult):
        scores = ", ".join("-" if s is None else f"{s:g}" for s in result.scores)
        console.print(f"[bold]rounds:[/] {len(result.rounds)}   [bold]scores:[/] {scores}")
        if result.partial:
            console.print("[bold red]partial result:[/] the run ended on a fault; best answer so far below")
        label = (
            f"best draft (round {result.best.round}, score {result.best.score:g})"
            if result.best and result.best.score is not None
            else "latest draft (unscored)"
        )
        if result.answer is not None:
            console.print(Panel(Markdown(result.answer), title=label, title_align="left", border_style="green"))
        console.print(usage_table(result.usage))
