"""Live rendering of a team's stream in the terminal (rich)."""

from __future__ import annotations

from autogen_agentchat.base import TaskResult
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StructuredMessage
from rich.console import Console, Group
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from moot.arbiters import Verdict
from moot.messages import RoundCompleted
from moot.roles import Critique, Position
from moot.store import RunRecord
from moot.teams import DebateResult, ReflectionResult
from moot.teams._records import Usage

__all__ = ["render_message", "render_result"]


def render_message(console: Console, message: BaseAgentEvent | BaseChatMessage) -> None:
    """Print one streamed message: drafts as markdown, critiques as a short table, rounds as rules."""
    if isinstance(message, RoundCompleted):
        console.rule(Text(message.to_text(), style="dim"))
    elif isinstance(message, StructuredMessage) and isinstance(message.content, Critique):
        console.print(_critique_panel(message.source, message.content))
    elif isinstance(message, StructuredMessage) and isinstance(message.content, Position):
        console.print(_position_panel(message.source, message.content))
    elif isinstance(message, StructuredMessage) and isinstance(message.content, Verdict):
        console.print(_verdict_panel(message.source, message.content))
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


def _position_panel(source: str, position: Position) -> Panel:
    head = Text.assemble(
        ("answer ", "bold"), (position.answer, "cyan"), (f"  confidence {position.confidence:.2f}", "dim")
    )
    body = [head, Text(position.reasoning, style="dim")]
    body += [Text(f"+ {a}", style="green") for a in position.key_arguments]
    body += [Text(f"= agrees: {a}", style="blue") for a in position.agreements]
    body += [Text(f"x rebuts: {r}", style="yellow") for r in position.rebuttals]
    body.append(Text(f"would change mind: {position.would_change_mind}", style="dim"))
    return Panel(Group(*body), title=source, title_align="left", border_style="blue")


def _verdict_panel(source: str, verdict: Verdict) -> Panel:
    head = Text.assemble(
        ("decision ", "bold"), (verdict.decision, "bold green"), (f"  confidence {verdict.confidence:.2f}", "dim")
    )
    body = [head, Text(verdict.rationale)]
    body += [Text(f"{a.expert}: {a.assessment}", style="dim") for a in verdict.assessments]
    body += [Text(f"dissent: {d}", style="yellow") for d in verdict.dissent]
    return Panel(Group(*body), title=f"verdict ({source})", title_align="left", border_style="green")


def runs_table(records: list[RunRecord]) -> Table:
    table = Table(title="runs (newest first)", show_edge=False)
    for column in ("id", "scenario", "team", "status", "stop reason", "turns", "tokens", "started"):
        table.add_column(column, overflow="fold")
    for r in records:
        scenario = (r.scenario or "-").rsplit("/", 1)[-1].removesuffix(".py")
        table.add_row(
            r.id,
            scenario,
            r.team,
            r.status,
            r.stop_reason or "-",
            str(r.turns),
            str(r.prompt_tokens + r.completion_tokens),
            r.created_at[:19].replace("T", " "),
        )
    return table


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
    """Print the outcome: stop reason, then what this kind of team produced, then tokens per agent."""
    console.rule("[bold]result")
    console.print(f"[bold]stop reason:[/] {result.stop_reason}")
    if isinstance(result, ReflectionResult):
        _reflection_result(console, result)
    elif isinstance(result, DebateResult):
        _debate_result(console, result)


def _reflection_result(console: Console, result: ReflectionResult) -> None:
    scores = ", ".join("-" if s is None else f"{s:g}" for s in result.scores)
    console.print(f"[bold]rounds:[/] {len(result.rounds)}   [bold]scores:[/] {scores}")
    if result.partial:
        console.print("[bold red]partial result:[/] the run ended on a fault; best answer so far below")
    best = result.best
    label = (
        f"best draft (round {best.round}, score {best.score:g})"
        if best and best.score is not None
        else ("latest draft (unscored)")
    )
    if result.answer is not None:
        console.print(Panel(Markdown(result.answer), title=label, title_align="left", border_style="green"))
    console.print(usage_table(result.usage))


def _debate_result(console: Console, result: DebateResult) -> None:
    table = Table(title="positions per round", show_edge=False)
    table.add_column("expert")
    for record in result.rounds:
        table.add_column(f"round {record.round}")
    for name in result.rounds[0].positions if result.rounds else {}:
        table.add_row(name, *(r.positions[name].answer if name in r.positions else "-" for r in result.rounds))
    console.print(table)
    if result.metrics is not None:
        m = result.metrics
        agreement = ", ".join(f"{a:.2f}" for a in m.agreement_per_round)
        flips = sum(len(v) for v in m.flips.values())
        console.print(
            f"[bold]agreement per round:[/] {agreement}   [bold]answer flips:[/] {flips}   "
            f"[bold]first-round distinct answers:[/] {m.first_round_diversity}"
        )
    if result.partial:
        console.print("[bold red]partial result:[/] the run ended on a fault")
    if result.verdict is not None:
        console.print(
            f"[bold]verdict[/] by {result.verdict_by} (positions shown as {', '.join(result.arbiter_order)}): "
            f"[bold green]{result.verdict.decision}[/]"
        )
    console.print(usage_table(result.usage))
