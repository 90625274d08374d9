"""Human in the loop: any moot team can pause for a person's feedback at configurable points.

Points (the same for every team):

* ``round``: after each completed round (a Reflection draft + critique, a
  debate round, a planner-executor step);
* ``final``: before the result is accepted, after the loop stopped and its
  closing turns ran (after the arbiter's verdict, on the final draft, on the
  completed plan).

At a point the team emits :class:`~moot.messages.HumanFeedbackRequested` and
asks its feedback source: a function of the request, or any :class:`~moot.human.Human`
(the one protocol for asking a person, shared with tool approvals; at a terminal,
``moot.display.ConsoleFeedback``). The answer (:class:`Feedback`) approves, rejects
with a comment, or stops the run. A rejection's comment is shown to every
agent turn of the next round (a team may also act on it, e.g. a
planner-executor re-plans); a rejection at ``final`` re-arms quality and round
stops so the team works on, while token and step budgets still hold.

With no feedback source (a non-interactive run), the run suspends: status
``suspended``, stop reason ``waiting for human feedback at <point>``. Resume
it later with a source attached (``team.human.feedback = ...; await
team.run()``, or ``team.resume(run_id)`` from the run store): the
unanswered request is asked first, nothing is repeated.

    team.human = HumanInTheLoop(["final"], feedback=lambda request: Feedback.reject("cite the source"))
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Literal, Protocol, runtime_checkable

from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from pydantic import Field

from moot.boundary import argument_error, checked_text
from moot.errors import ConfigError
from moot.human import CHOICES, Human, HumanQuestion, checked_human
from moot.messages import HumanFeedbackGiven, HumanFeedbackRequested, RoundCompleted
from moot.roles import OneLineModel
from moot.tracing import traced

__all__ = [
    "FINAL",
    "POINTS",
    "ROUND",
    "AnswerOnce",
    "CallbackFeedback",
    "Feedback",
    "HumanFeedback",
    "HumanFeedbackFrom",
    "HumanInTheLoop",
]

ROUND = "round"
FINAL = "final"
POINTS = (ROUND, FINAL)
_SUMMARY_CHARS = 4000

Message = BaseAgentEvent | BaseChatMessage


class Feedback(OneLineModel):
    """A person's answer at a feedback point (a bad field is refused in one line naming it)."""

    action: Literal["approve", "reject", "stop"]
    comment: str = Field(default="", max_length=2000)
    """For ``reject``: what to change (shown to the agents). For ``stop``: why."""
    by: str = "human"

    @classmethod
    def approve(cls, comment: str = "") -> Feedback:
        return cls(action="approve", comment=comment)

    @classmethod
    def reject(cls, comment: str) -> Feedback:
        return cls(action="reject", comment=comment)

    @classmethod
    def stop(cls, comment: str = "") -> Feedback:
        return cls(action="stop", comment=comment)


@runtime_checkable
class HumanFeedback(Protocol):
    """Where feedback comes from: a person at a console, a callback, a review queue. Any
    :class:`~moot.human.Human` serves too (``HumanInTheLoop`` asks it through :class:`HumanFeedbackFrom`)."""

    async def __call__(self, request: HumanFeedbackRequested) -> Feedback: ...


FeedbackCallback = Callable[[HumanFeedbackRequested], Feedback | Awaitable[Feedback]]


class CallbackFeedback:
    """Feedback from code: ``fn(request)`` returns or awaits a :class:`Feedback`."""

    def __init__(self, fn: FeedbackCallback, *, name: str = "callback") -> None:
        if not callable(fn):
            raise argument_error("CallbackFeedback", "fn", "a function of the request that returns a Feedback", fn)
        self.fn = fn
        self.name = checked_text(name, "CallbackFeedback", "name")

    async def __call__(self, request: HumanFeedbackRequested) -> Feedback:
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, Feedback):
            raise TypeError(f"feedback callback must return a moot.teams.Feedback, got {type(answer).__name__}")
        return answer


class HumanFeedbackFrom:
    """Feedback from a :class:`~moot.human.Human`: the feedback point is put to them as a question with the
    choices approve, reject and stop (one protocol for every question put to a person; ``moot.display``'s
    ``ConsoleFeedback`` is this one answered at a terminal)."""

    def __init__(self, human: Human) -> None:
        self.human = checked_human(human, "HumanFeedbackFrom")
        self.name = human.name

    async def __call__(self, request: HumanFeedbackRequested) -> Feedback:
        answer = await self.human.answer(feedback_question(request))
        return Feedback(action=answer.choice, comment=answer.comment, by=answer.by or self.name)


def feedback_question(request: HumanFeedbackRequested) -> HumanQuestion:
    """A feedback point as a person sees it: where the run paused (and why it stopped), and what to judge."""
    return HumanQuestion(
        title=request.to_text() + (f" ({request.stop_reason})" if request.stop_reason else ""),
        shown=request.summary or "(nothing to show)",
        prompt="approve, reject or stop?",
        kind="feedback",
        choices=CHOICES,
        subject=request,
    )


class AnswerOnce:
    """Answers the next request with ``feedback`` (given ahead, e.g. ``moot resume ID --approve``), then hands
    later requests to ``then``, a feedback source or a Human (None: a later pause suspends the run again)."""

    def __init__(self, human: HumanInTheLoop, feedback: Feedback, then: HumanFeedback | Human | None = None) -> None:
        if not isinstance(human, HumanInTheLoop):
            raise argument_error("AnswerOnce", "human", "the team's HumanInTheLoop (team.human)", human)
        if not isinstance(feedback, Feedback):
            raise argument_error("AnswerOnce", "feedback", "a Feedback, e.g. Feedback.approve()", feedback)
        if then is not None and not callable(then) and not isinstance(then, Human):
            raise argument_error("AnswerOnce", "then", "None or a feedback source (a function of the request)", then)
        self.human, self.given, self.then = human, feedback, then

    async def __call__(self, request: HumanFeedbackRequested) -> Feedback:
        self.human.feedback = self.then
        return self.given


class HumanInTheLoop:
    """Which points a team pauses at, and who answers (None: the run suspends there)."""

    def __init__(
        self, points: Iterable[str] | str = (), feedback: HumanFeedback | Human | FeedbackCallback | None = None
    ) -> None:
        chosen = _points(points)
        unknown = sorted(chosen - set(POINTS))
        if unknown:
            raise ConfigError(f"unknown feedback point(s) {', '.join(unknown)}; known points: {', '.join(POINTS)}")
        self.points = chosen
        self.feedback = feedback

    @property
    def feedback(self) -> HumanFeedback | None:
        """Who answers; a plain (sync or async) function is wrapped in CallbackFeedback, a Human in
        HumanFeedbackFrom."""
        return self._feedback

    @feedback.setter
    def feedback(self, source: HumanFeedback | Human | FeedbackCallback | None) -> None:
        self._feedback: HumanFeedback | None = _feedback_source(source)

    def wants(self, point: str) -> bool:
        return point in self.points

    async def ask(self, request: HumanFeedbackRequested) -> Feedback:
        assert self._feedback is not None
        with traced("turn", "human", point=request.point) as span:
            feedback = await self._feedback(request)
            if span is not None:
                span.output = f"{feedback.action}: {feedback.comment}"
            return feedback


def _feedback_source(source: object) -> HumanFeedback | None:
    """``source`` as a feedback source: a Human is asked questions, a plain function is called with the request."""
    if isinstance(source, Human) and not isinstance(source, HumanFeedbackFrom):
        return HumanFeedbackFrom(source)
    if source is not None and not callable(source):
        valid = (
            "None, a function of the request that returns a Feedback, or a Human (e.g. moot.display.TerminalHuman())"
        )
        raise argument_error("HumanInTheLoop", "feedback", valid, source)
    if source is None or isinstance(source, (CallbackFeedback, HumanFeedbackFrom, AnswerOnce)):
        return source  # type: ignore[return-value]
    return CallbackFeedback(source)  # type: ignore[arg-type]


def _points(points: object) -> frozenset[str]:
    """The feedback points: one point's name, or several; a string is one point, not its letters."""
    if isinstance(points, str):
        return frozenset([points])
    if not isinstance(points, Iterable) or isinstance(points, Mapping):
        raise argument_error(
            "HumanInTheLoop", "points", f"feedback points, e.g. ['round', 'final'] ({', '.join(POINTS)})", points
        )
    chosen = list(points)
    stray = next((p for p in chosen if not isinstance(p, str)), None)
    if stray is not None:
        raise argument_error("HumanInTheLoop", "points", f"names of feedback points ({', '.join(POINTS)})", stray)
    return frozenset(chosen)


# ------------------------------------------------------------------ what the loop needs
def unanswered(transcript: Sequence[Message]) -> HumanFeedbackRequested | None:
    """The request a suspended run is waiting on: the transcript's last message, if it is one."""
    last = transcript[-1] if transcript else None
    return last if isinstance(last, HumanFeedbackRequested) else None


def human_note(transcript: Sequence[Message]) -> str | None:
    """The comment of a rejection given since the last completed round: agents see it until the next one."""
    for message in reversed(transcript):
        if isinstance(message, RoundCompleted):
            return None
        if isinstance(message, HumanFeedbackGiven) and message.action == "reject" and message.comment:
            return message.comment
    return None


def with_human_note(prompt: str, transcript: Sequence[Message]) -> str:
    """The prompt headed by a human reviewer's pending comment, if any (ahead of it: drafts stay last)."""
    note = human_note(transcript)
    if note is None:
        return prompt
    return f"A human reviewer rejected the previous result and said:\n{note}\nTake this into account.\n\n{prompt}"


def default_summary(transcript: Sequence[Message]) -> str:
    """The latest two chat messages (e.g. a draft and its critique, or a verdict), for the human to judge."""
    chats = [m for m in transcript if isinstance(m, BaseChatMessage) and m.source != "user"][-2:]
    text = "\n\n".join(f"[{m.source}]\n{m.to_text()}" for m in chats)
    return text if len(text) <= _SUMMARY_CHARS else "…" + text[-_SUMMARY_CHARS:]


def feedback_request(
    team: str, point: str, summary: str, *, round: int | None = None, stop_reason: str | None = None
) -> HumanFeedbackRequested:
    return HumanFeedbackRequested(source=team, point=point, round=round, stop_reason=stop_reason, summary=summary)
