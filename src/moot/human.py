"""Asking a person: the one protocol every part of moot speaks when a decision needs a human.

A tool call that needs approval (``moot.tools``) and a team's feedback point (``moot.teams``) both put a
:class:`HumanQuestion` to a :class:`Human` and get a :class:`HumanAnswer` back, so one answerer serves both:
a person at a terminal (``moot.display.TerminalHuman``), code (:class:`CallbackHuman`), a review queue of
your own (any object with a ``name`` and an async ``answer``).

    person = CallbackHuman(lambda question: "approve")
    team.human = HumanInTheLoop(["final"], feedback=person)
    team.policy.approver = person

No terminal code lives here: how a question looks on a screen is decided in ``moot.display``, so the engine
that asks never imports a prompt library.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from moot.boundary import argument_error, checked_choice, checked_text

__all__ = ["CHOICES", "CallbackHuman", "Human", "HumanAnswer", "HumanChoice", "HumanQuestion", "checked_human"]

HumanChoice = Literal["approve", "reject", "stop"]
CHOICES: tuple[HumanChoice, ...] = ("approve", "reject", "stop")
"""What a person may answer: go on, do it differently (the comment says how), or stop the run."""


@dataclass(frozen=True)
class HumanQuestion:
    """What a person is asked: one line naming the decision, what to judge, and the choices they have."""

    title: str
    """One line naming the decision, e.g. ``approve tool call: write_file``."""
    shown: str = ""
    """What to judge (a draft, a tool call's arguments): outside text, so shown as text and never read as markup."""
    prompt: str = "approve?"
    """The question itself, e.g. ``run it?``."""
    kind: Literal["approval", "feedback"] = "approval"
    """``approval``: a gate before an action (yes or no, with an optional reason); ``feedback``: a review of work
    done, where a rejection's comment says what to change."""
    choices: tuple[HumanChoice, ...] = ("approve", "reject")
    subject: object = None
    """The engine's own request (an ``ApprovalRequest``, a ``HumanFeedbackRequested``), for answerers in code."""


@dataclass(frozen=True)
class HumanAnswer:
    """A person's answer: a choice, an optional comment (a reason, or what to change), and who gave it."""

    choice: HumanChoice
    comment: str = ""
    by: str = ""

    def __post_init__(self) -> None:
        """An answer from a user's code is checked where it is made: a bad field is one line naming it."""
        checked_choice(self.choice, "HumanAnswer", "choice", CHOICES)
        checked_text(self.comment, "HumanAnswer", "comment", empty=True)
        checked_text(self.by, "HumanAnswer", "by", empty=True)

    @property
    def approved(self) -> bool:
        return self.choice == "approve"


@runtime_checkable
class Human(Protocol):
    """Who answers a question put to a person: a terminal, a callback, a review queue."""

    name: str

    async def answer(self, question: HumanQuestion) -> HumanAnswer: ...


def checked_human(value: object, owner: str) -> Human:
    """``value`` as the :class:`Human` an adapter of ``owner`` asks, or the one-line error naming what is valid (the
    same check wherever a question is put to a person: feedback points, tool approvals)."""
    if not isinstance(value, Human):
        raise argument_error(owner, "human", "a Human (a name and an async answer(question))", value)
    return value


HumanCallback = Callable[[HumanQuestion], HumanAnswer | str | bool | Awaitable[HumanAnswer | str | bool]]


class CallbackHuman:
    """A person played by code: ``fn(question)`` returns (or awaits) a :class:`HumanAnswer`, a choice's name, or a
    bool (True: approve, False: reject)."""

    def __init__(self, fn: HumanCallback, *, name: str = "callback") -> None:
        if not callable(fn):
            raise argument_error("CallbackHuman", "fn", "a function of the question that returns an answer", fn)
        self.fn = fn
        self.name = checked_text(name, "CallbackHuman", "name")

    async def answer(self, question: HumanQuestion) -> HumanAnswer:
        given = self.fn(question)
        if inspect.isawaitable(given):
            given = await given
        return _as_answer(given, self.name)


def _as_answer(given: object, by: str) -> HumanAnswer:
    """A callback's return value as an answer; ``by`` fills an answer that does not say who gave it."""
    if isinstance(given, HumanAnswer):
        return given if given.by else HumanAnswer(given.choice, given.comment, by)
    if isinstance(given, bool):
        return HumanAnswer("approve" if given else "reject", by=by)
    if isinstance(given, str):
        return HumanAnswer(checked_choice(given, "CallbackHuman", "answer", CHOICES), by=by)  # type: ignore[arg-type]
    raise TypeError(
        f"a CallbackHuman's function must return a HumanAnswer, a choice or a bool, got {type(given).__name__}"
    )
