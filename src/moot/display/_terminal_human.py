"""Asking a person at a terminal: the terminal side of the one protocol in ``moot.human``.

:class:`TerminalHuman` is a :class:`~moot.human.Human` that shows a question in a panel and reads the answer
with rich's prompts; one object answers both a team's feedback points and tool approvals. ``ConsoleFeedback``
and ``ConsoleApprover`` are the same terminal behind the two older interfaces (a feedback source and an
approver), as ``moot run`` uses them. rich's prompt module is imported when a question is asked, not when
``moot`` is imported.
"""

from __future__ import annotations

import asyncio
from typing import IO, Any

from moot.boundary import TerminalConsole, argument_error, checked_text
from moot.human import HumanAnswer, HumanChoice, HumanQuestion
from moot.teams import HumanFeedbackFrom
from moot.tools import HumanApprover

__all__ = ["ConsoleApprover", "ConsoleFeedback", "TerminalHuman"]

_SILENT_REJECTION = "the reviewer rejected this without a comment; improve it"
"""What the agents are told when a reviewer rejects work without saying why: a rejection always says something."""


def _check_terminal(where: str, console: object, stdin: object) -> None:
    """A console that can print and a stdin that can be read, else one line naming the argument."""
    if console is not None and not callable(getattr(console, "print", None)):
        raise argument_error(where, "console", "None or a rich Console", console)
    if stdin is not None and not callable(getattr(stdin, "readline", None)):
        raise argument_error(where, "stdin", "None or a text file to read answers from", stdin)


class TerminalHuman:
    """A person at a terminal: shows what to judge in a panel, then asks for a choice and a comment.

    ``stdin`` defaults to the terminal; give a file to script it. The prompts run in a thread so the event loop
    is not blocked while the person reads.
    """

    def __init__(self, console: Any = None, stdin: IO[str] | None = None, *, name: str = "human") -> None:
        _check_terminal("TerminalHuman", console, stdin)
        self.console = console or TerminalConsole()
        self.stdin = stdin
        self.name = checked_text(name, "TerminalHuman", "name")

    async def answer(self, question: HumanQuestion) -> HumanAnswer:
        return await asyncio.to_thread(self._answer_now, question)

    def _answer_now(self, question: HumanQuestion) -> HumanAnswer:
        from rich.markup import escape
        from rich.panel import Panel
        from rich.text import Text

        approval = question.kind == "approval"
        shown = Text(question.shown)  # a model's draft or arguments: shown, never read as markup
        border = "red" if approval else "none"
        self.console.print(Panel(shown, title=escape(question.title), title_align="left", border_style=border))
        return self._yes_or_no(question) if approval else self._review(question)

    def _yes_or_no(self, question: HumanQuestion) -> HumanAnswer:
        """An approval: yes or no, then an optional reason."""
        from rich.prompt import Confirm, Prompt

        approved = Confirm.ask(question.prompt, console=self.console, stream=self.stdin)
        reason = Prompt.ask("reason (optional)", default="", console=self.console, stream=self.stdin)
        return HumanAnswer("approve" if approved else "reject", reason.strip(), self.name)

    def _review(self, question: HumanQuestion) -> HumanAnswer:
        """Feedback: one of the question's choices by its first letter (the first is the default), then a
        comment, which a rejection needs."""
        from rich.prompt import Prompt

        by_letter: dict[str, HumanChoice] = {choice[0]: choice for choice in question.choices}
        letter = Prompt.ask(
            question.prompt,
            choices=list(by_letter),
            default=next(iter(by_letter)),
            console=self.console,
            stream=self.stdin,
        )
        choice = by_letter[letter]
        label = "what should change?" if choice == "reject" else "comment (optional)"
        comment = Prompt.ask(label, default="", console=self.console, stream=self.stdin).strip()
        if choice == "reject" and not comment:
            comment = _SILENT_REJECTION
        return HumanAnswer(choice, comment, self.name)


class ConsoleFeedback(HumanFeedbackFrom):
    """Feedback from a person at a terminal (a :class:`TerminalHuman`): approve, reject or stop, and a comment."""

    def __init__(self, console: Any = None, stdin: IO[str] | None = None, *, name: str = "human") -> None:
        _check_terminal("ConsoleFeedback", console, stdin)
        super().__init__(TerminalHuman(console, stdin, name=checked_text(name, "ConsoleFeedback", "name")))


class ConsoleApprover(HumanApprover):
    """Approval from a person at a terminal (a :class:`TerminalHuman`): yes or no, with an optional reason."""

    def __init__(self, console: Any = None, stdin: IO[str] | None = None, *, name: str = "console") -> None:
        _check_terminal("ConsoleApprover", console, stdin)
        super().__init__(TerminalHuman(console, stdin, name=checked_text(name, "ConsoleApprover", "name")))
