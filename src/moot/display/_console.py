"""Live rendering of a team's stream in the terminal (rich): each message as it arrives, then the result.

Critiques, positions and verdicts show as ``_describe.py`` describes them; the result as
``_result_blocks.py`` describes it, so ``moot run`` and a notebook show the same thing.
"""

from __future__ import annotations

from autogen_agentchat.base import TaskResult
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StructuredMessage
from rich.console import Console, Group
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from moot.display._describe import Description, Tone, describe
from moot.display._result_forms import result_renderable
from moot.messages import HumanFeedbackGiven, HumanFeedbackRequested, RoundCompleted, StepFinished, ToolExecuted
from moot.teams import MootResult

__all__ = ["description_panel", "render_message", "render_result"]


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


def render_result(console: Console, result: TaskResult) -> None:
    """Print the outcome as a notebook shows it (its blocks, see ``_result_blocks.py``), then the run's tokens
    and cost; a result from outside moot shows its stop reason."""
    console.rule("[bold]result")
    if not isinstance(result, MootResult):
        console.print(f"[bold]stop reason:[/] {escape(str(result.stop_reason))}")
        return
    console.print(result_renderable(result))
