"""The loop every moot team shares, as one state machine: its phases, what moves it, and the run that drives it.

A run is in one phase at a time. The phase's step does its work (take in the
task, run one turn, wait for a human, run the closing turns, build the
result), hands each batch of messages back to be committed and streamed, and
ends with the :class:`Trigger` that names what happened. ``TRANSITIONS`` says
where each trigger leads, and nothing else moves the run: that table is the
loop's whole control flow. ``docs/architecture.md`` shows it as the diagram
:func:`diagram` draws, and a test keeps the two equal. A topology whose turns
are of several kinds keeps which comes next as a sub-machine of ``turns``,
written the same way (``_machine.py``; the planner-executor's is
``_plan_phases.py``).

A running phase is the run store's status ``running``; a run ends in one of
the terminal phases, each a status the store records (``finished``,
``partial``, ``suspended``, ``interrupted``, ``failed``). A later call
(``run()`` with no task, ``resume(run_id)``) starts again at ``intake``, which
continues at the feedback point a suspended run left unanswered.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Protocol

from autogen_agentchat.base import TaskResult, TerminationCondition
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StopMessage
from autogen_core import CancellationToken

from moot._redact import redact
from moot.errors import MalformedOutputError, ToolFaultError, TransientModelError
from moot.messages import HumanFeedbackGiven, HumanFeedbackRequested, RoundCompleted
from moot.store import RunStatus
from moot.teams._human import FINAL, ROUND, HumanInTheLoop, feedback_request, unanswered
from moot.teams._machine import edge, moved
from moot.teams._records import MootResult, failed_turn
from moot.tracing import TraceEvent, Tracer

__all__ = ["RUNNING", "TERMINAL", "TRANSITIONS", "RunLoop", "RunPhase", "RunStream", "Trigger", "diagram", "next_phase"]

Message = BaseAgentEvent | BaseChatMessage
MootFault = MalformedOutputError | ToolFaultError | TransientModelError
"""Faults that end a run with its best-so-far result marked partial, instead of an exception."""


class RunPhase(StrEnum):
    """Where a run is: a phase of the loop (status ``running``), or the status it ended with."""

    INTAKE = "intake"
    TURNS = "turns"
    ROUND_POINT = "round_point"
    CLOSING = "closing"
    FINAL_POINT = "final_point"
    RESULT = "result"
    FINISHED = "finished"
    PARTIAL = "partial"
    SUSPENDED = "suspended"
    INTERRUPTED = "interrupted"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL

    @property
    def status(self) -> RunStatus:
        """The run store's status of a run in this phase."""
        return RunStatus(self.value) if self.terminal else RunStatus.RUNNING


class Trigger(StrEnum):
    """What ends a phase's step; the value is how the diagram labels the transition."""

    START = "a new task, or a run continued between turns"
    PENDING_ROUND = "continued at its unanswered round point"
    PENDING_FINAL = "continued at its unanswered final point"
    BATCH = "one turn, no stop"
    ROUND_END = "a round completed, a human is asked"
    STOP = "a stop condition fired"
    DONE = "the topology finished"
    FAULT = "a turn failed for good (malformed output, tool fault, model out of retries)"
    APPROVE = "approved"
    REJECT = "rejected, the comment heads the next round"
    REARMED = "rejected, stop conditions re-armed"
    LIMIT_HOLDS = "rejected, but a budget still holds"
    HUMAN_STOP = "a human stopped the run"
    NO_HUMAN = "nobody to answer, so the run suspends"
    CLOSED = "closing turns done, no final point"
    ASK_FINAL = "closing turns done, a human is asked"
    COMPLETE = "the result is complete"
    PARTIAL = "a fault or a failed ruling left the result partial"
    WAITING = "the run waits for a human"
    CANCELLED = "cancelled, timed out, killed"
    ERROR = "any other exception"


_P, _T = RunPhase, Trigger
RUNNING = (_P.INTAKE, _P.TURNS, _P.ROUND_POINT, _P.CLOSING, _P.FINAL_POINT, _P.RESULT)
TERMINAL = frozenset({_P.FINISHED, _P.PARTIAL, _P.SUSPENDED, _P.INTERRUPTED, _P.FAILED})
TURN_PHASES = frozenset({_P.TURNS, _P.ROUND_POINT})
"""While the run is in these, the topology's turn generator stays open (a round point continues its turns)."""

TRANSITIONS: Mapping[tuple[RunPhase, Trigger], RunPhase] = {
    (_P.INTAKE, _T.START): _P.TURNS,
    (_P.INTAKE, _T.PENDING_ROUND): _P.ROUND_POINT,
    (_P.INTAKE, _T.PENDING_FINAL): _P.FINAL_POINT,
    (_P.TURNS, _T.BATCH): _P.TURNS,
    (_P.TURNS, _T.ROUND_END): _P.ROUND_POINT,
    (_P.TURNS, _T.STOP): _P.CLOSING,
    (_P.TURNS, _T.DONE): _P.CLOSING,
    (_P.TURNS, _T.FAULT): _P.CLOSING,
    (_P.ROUND_POINT, _T.APPROVE): _P.TURNS,
    (_P.ROUND_POINT, _T.REJECT): _P.TURNS,
    (_P.ROUND_POINT, _T.HUMAN_STOP): _P.CLOSING,
    (_P.ROUND_POINT, _T.NO_HUMAN): _P.RESULT,
    (_P.CLOSING, _T.ASK_FINAL): _P.FINAL_POINT,
    (_P.CLOSING, _T.CLOSED): _P.RESULT,
    (_P.FINAL_POINT, _T.APPROVE): _P.RESULT,
    (_P.FINAL_POINT, _T.REARMED): _P.TURNS,
    (_P.FINAL_POINT, _T.LIMIT_HOLDS): _P.RESULT,
    (_P.FINAL_POINT, _T.HUMAN_STOP): _P.RESULT,
    (_P.FINAL_POINT, _T.NO_HUMAN): _P.RESULT,
    (_P.RESULT, _T.COMPLETE): _P.FINISHED,
    (_P.RESULT, _T.PARTIAL): _P.PARTIAL,
    (_P.RESULT, _T.WAITING): _P.SUSPENDED,
    **{(phase, _T.CANCELLED): _P.INTERRUPTED for phase in RUNNING},
    **{(phase, _T.ERROR): _P.FAILED for phase in RUNNING},
}
"""Every transition of a run: (phase, trigger) -> the next phase. No terminal phase has one."""


def next_phase(phase: RunPhase, trigger: Trigger) -> RunPhase:
    """The phase ``trigger`` leads to from ``phase``; a pair the table lacks is a bug in a step."""
    return moved("the loop", TRANSITIONS, phase, trigger)


def diagram() -> str:
    """The table as a mermaid state diagram: the running phases inside ``running``, the endings outside it.

    Every running phase can be cancelled or fail, so those two edges are drawn once, from ``running``.
    """
    inside = [f"        {edge(a, b, t)}" for (a, t), b in TRANSITIONS.items() if not b.terminal]
    endings = {(t, b): None for (a, t), b in TRANSITIONS.items() if b.terminal}
    return "\n".join(
        [
            "stateDiagram-v2",
            "    [*] --> running: run(task), or run() / resume(run_id) to continue",
            "    state running {",
            f"        [*] --> {_P.INTAKE}",
            *inside,
            f"        {_P.RESULT} --> [*]",
            "    }",
            *(f"    {edge('running', b, t)}" for t, b in endings),
            *(f"    {phase} --> [*]" for phase in RunPhase if phase.terminal),
        ]
    )


# ---------------------------------------------------------------------------------------------- the run
class LoopTeam(Protocol):
    """What the loop needs from its team: the topology's hooks, the human, the stop conditions, the records."""

    name: str
    transcript: list[Message]
    human: HumanInTheLoop
    waiting_for: str | None
    _stop: TerminationCondition | None

    def _turns(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]: ...
    def _closing(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]: ...
    def _done_reason(self) -> str: ...
    def _feedback_summary(self) -> str: ...
    def _on_human_feedback(self, feedback: HumanFeedbackGiven) -> None: ...
    def _on_fault(self, error: MootFault) -> None: ...
    def _final_result(self, messages: list[Message], stop_reason: str, partial: bool) -> MootResult: ...
    async def _commit(self, batch: Sequence[Message]) -> None: ...
    async def _end_run(
        self, run_id: str, status: RunStatus, stop_reason: str | None, result: Mapping[str, Any] | None
    ) -> None: ...


Step = AsyncGenerator[list[Message] | Trigger, None]
"""A phase's step: the batches it asks to commit, in order, then the trigger that ends it."""


class RunLoop:
    """One run of a team through the state machine: what the run has done so far, and one step per phase."""

    def __init__(
        self,
        team: LoopTeam,
        token: CancellationToken,
        tracer: Tracer,
        task_messages: list[BaseChatMessage],
        output_task_messages: bool,
    ) -> None:
        self.team, self.token, self.tracer = team, token, tracer
        self.task_messages, self.output_task_messages = task_messages, output_task_messages
        self.phase = RunPhase.INTAKE
        self.produced: list[Message] = []
        """The messages this run committed and streamed: the result's messages."""
        self.run_id = ""
        """The run this loop drives (set by ``stream``): what it records its ending under."""
        self.stop_reason: str | None = None
        self.partial = False
        """A turn failed for good: the result is the best so far."""
        self.human_stopped = False
        self.suspended_at: str | None = None
        self.request: HumanFeedbackRequested | None = None
        """The feedback point the run is at (or continues at)."""
        self.turns: AsyncGenerator[list[Message], None] | None = None
        self.round_start = 0.0
        self.result: MootResult | None = None
        self._steps: dict[RunPhase, Callable[[], Step]] = {
            _P.INTAKE: self._intake,
            _P.TURNS: self._turn,
            _P.ROUND_POINT: self._feedback_point,
            _P.CLOSING: self._closing,
            _P.FINAL_POINT: self._feedback_point,
            _P.RESULT: self._result,
        }

    async def stream(self, run_id: str) -> AsyncGenerator[Message | TaskResult, None]:
        """Step to a terminal phase under one ``run`` span, streaming each message as it is committed; record
        how the run ended, then yield the result. An exception ends it interrupted or failed, and propagates."""
        resumed, self.run_id = not self.task_messages, run_id
        with self.tracer.activate(run_id), self.tracer.span("run", self.team.name, resumed=resumed) as span:
            try:
                while not self.phase.terminal:
                    async with contextlib.aclosing(self._steps[self.phase]()) as step:
                        async for item in step:
                            if isinstance(item, Trigger):
                                await self._move(item)
                                continue
                            await self._emit(item)
                            for message in item:
                                yield message
            except (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit):
                await self._abort(_T.CANCELLED, "the run was interrupted")
                raise
            except Exception as exc:
                await self._abort(_T.ERROR, redact(f"{type(exc).__name__}: {exc}"))
                raise
            result = await self._end()
            span.attributes["stop_reason"] = result.stop_reason or ""
            _add_tokens(span, result.messages)
            yield result

    # ---------------------------------------------------------------- the steps, one per running phase
    async def _intake(self) -> Step:
        """A new task's messages come first; a continued run picks up at its unanswered feedback point, if any."""
        if self.task_messages and self.output_task_messages:
            yield self.task_messages
        elif self.task_messages:
            await self.team._commit(self.task_messages)  # recorded, but not among the result's messages
        self.request = unanswered(self.team.transcript)
        self.team.waiting_for = None
        if self.request is None:
            yield _T.START
        elif self.request.point == FINAL:
            self.stop_reason = self.request.stop_reason
            yield _T.PENDING_FINAL
        else:
            yield _T.PENDING_ROUND

    async def _turn(self) -> Step:
        """One turn: its batch is committed whole, then traced and checked, so a stop never splits a turn."""
        try:
            batch = await self._next_batch()
        except (MalformedOutputError, ToolFaultError, TransientModelError) as fault:
            for item in self._faulted(fault):
                yield item
            return
        if batch is None:
            yield _T.DONE
            return
        yield batch
        self.round_start = _trace_round(self.tracer, batch, self.produced, self.round_start)
        trigger = await self._after(batch)
        if trigger is _T.ROUND_END and self.request is not None:
            yield [self.request]
        yield trigger

    async def _feedback_point(self) -> Step:
        """Paused at a round or final point: the human's answer, or a suspension when nobody can answer."""
        given = await self._ask_human()
        if given is None:
            yield _T.NO_HUMAN
            return
        yield [given]
        self.team._on_human_feedback(given)
        yield await self._answered(given)

    async def _closing(self) -> Step:
        """The turns that follow whatever stopped the turns (a verdict); then the final point, if it is asked."""
        async for batch in self.team._closing(self.token):
            yield batch
        if self.partial or self.human_stopped or not self.team.human.wants(FINAL):
            yield _T.CLOSED
            return
        reason = self.stop_reason or self.team._done_reason()
        self.request = feedback_request(self.team.name, FINAL, self.team._feedback_summary(), stop_reason=reason)
        yield [self.request]
        yield _T.ASK_FINAL

    async def _result(self) -> Step:
        """The result, built from the topology's state; the run's status follows from it."""
        stop = self.team._stop
        if stop is not None and stop.terminated:  # as AutoGen's teams: a stop that fired is reset, so the next
            await stop.reset()  # run() has a fresh budget; one cut short by a fault counts on
        self.team.waiting_for = self.suspended_at
        reason = self.stop_reason or self.team._done_reason()
        self.result = self.team._final_result(self.produced, reason, self.partial)
        if self.suspended_at is not None:
            yield _T.WAITING
        else:
            yield _T.PARTIAL if self.result.partial else _T.COMPLETE

    # ---------------------------------------------------------------- what the steps share
    async def _move(self, trigger: Trigger) -> None:
        self.phase = next_phase(self.phase, trigger)
        if self.phase not in TURN_PHASES:
            await self._close_turns()

    async def _emit(self, batch: Sequence[Message]) -> None:
        await self.team._commit(batch)
        self.produced.extend(batch)

    async def _next_batch(self) -> list[Message] | None:
        """The topology's next turn; entering the turns opens its generator, which continues from its state."""
        if self.turns is None:
            self.turns, self.round_start = self.team._turns(self.token), time.time()
        return await _next_turn(self.turns, self.token)

    async def _close_turns(self) -> None:
        turns, self.turns = self.turns, None
        if turns is not None:
            await turns.aclose()

    def _faulted(self, fault: MootFault) -> list[list[Message] | Trigger]:
        """A turn failed for good: the turns end and the result is partial; a malformed turn's spend is kept."""
        self.team._on_fault(fault)
        self.stop_reason, self.partial = redact(f"error: {fault}"), True
        failed = failed_turn(fault) if isinstance(fault, MalformedOutputError) else None
        return [[failed], _T.FAULT] if failed is not None else [_T.FAULT]

    async def _after(self, batch: Sequence[Message]) -> Trigger:
        """What a committed batch leads to: a stop, a completed round a human is asked about, or the next turn."""
        stop = await self.team._stop(batch) if self.team._stop is not None else None
        if stop is not None:
            return self._stopped(stop)
        done = _completed_round(batch)
        if done is None or not self.team.human.wants(ROUND):
            return _T.BATCH
        self.request = feedback_request(self.team.name, ROUND, self.team._feedback_summary(), round=done.round)
        return _T.ROUND_END

    def _stopped(self, stop: StopMessage) -> Trigger:
        self.stop_reason = stop.content
        with self.tracer.span("termination", stop.source, reason=stop.content):
            pass
        return _T.STOP

    async def _ask_human(self) -> HumanFeedbackGiven | None:
        """The human's answer to the current request; None when nobody can answer (the run suspends there)."""
        request = self.request
        assert request is not None
        if self.team.human.feedback is None:
            self.suspended_at = request.point
            self.stop_reason = f"waiting for human feedback at {request.point}"
            return None
        feedback = await self.team.human.ask(request)
        return HumanFeedbackGiven(
            source=feedback.by, point=request.point, action=feedback.action, comment=feedback.comment
        )

    async def _answered(self, given: HumanFeedbackGiven) -> Trigger:
        if given.action == "stop":
            self.human_stopped = True
            self.stop_reason = f"stopped by {given.source} at {given.point}" + (
                f": {given.comment}" if given.comment else ""
            )
            return _T.HUMAN_STOP
        if given.action == "approve":
            return _T.APPROVE
        return _T.REJECT if self.phase is _P.ROUND_POINT else await self._rearm()

    async def _rearm(self) -> Trigger:
        """A rejected result: the conditions start over from the transcript without its rounds, so quality and
        round stops let the team go on while token and step budgets still hold."""
        stop = self.team._stop
        if stop is None:
            fired = None
        else:
            await stop.reset()
            fired = await stop([m for m in self.team.transcript if not isinstance(m, RoundCompleted)])
        if fired is None:
            self.stop_reason = None
            return _T.REARMED
        self.stop_reason = f"{fired.content} (a human rejected the result, but this limit still holds)"
        return _T.LIMIT_HOLDS

    async def _end(self) -> MootResult:
        """Record the ending the machine reached, with the result (its messages are in the store as turns)."""
        assert self.result is not None
        summary = self.result.model_dump(mode="json", exclude={"messages"})
        await self.team._end_run(self.run_id, self.phase.status, self.result.stop_reason, summary)
        return self.result

    async def _abort(self, trigger: Trigger, reason: str) -> None:
        """An exception ends the run: the turns close, and the run is recorded interrupted or failed."""
        await self._close_turns()
        self.phase = next_phase(self.phase, trigger)
        await self.team._end_run(self.run_id, self.phase.status, reason, None)


class RunStream(AsyncGenerator[Message | TaskResult, None]):
    """A team's ``run_stream()``: its run, as an async generator a caller may leave at any point.

    ``break`` out of ``async for`` and ``aclose()`` close the run at once: it is recorded as interrupted (and can
    be resumed), its lease in the store is released, and the team can run again. A stream merely dropped
    unfinished (no ``aclose``) is closed the same way, by a task started as it is collected; ``abandoned`` hands
    that task to the team, whose next run waits for it, so that run never meets the lease of the one left behind.
    """

    def __init__(
        self, body: AsyncGenerator[Message | TaskResult, None], abandoned: Callable[[asyncio.Task[None]], None]
    ):
        self._body, self._abandoned = body, abandoned
        self._started = False

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Message | TaskResult:
        self._started = True
        return await self._body.__anext__()

    async def asend(self, value: None) -> Message | TaskResult:
        self._started = True
        return await self._body.asend(value)

    async def athrow(self, *args: Any) -> Message | TaskResult:
        return await self._body.athrow(*args)

    async def aclose(self) -> None:
        await self._body.aclose()

    def __del__(self) -> None:
        if not self._started or self._body.ag_frame is None:  # never begun, or already over
            return
        with contextlib.suppress(RuntimeError):  # no loop running (interpreter exit): asyncio's own hook closes it
            self._abandoned(asyncio.get_running_loop().create_task(_closed(self._body)))


async def _closed(body: AsyncGenerator[Any, None]) -> None:
    with contextlib.suppress(Exception):
        await body.aclose()


async def _next_turn(turns: AsyncGenerator[list[Message], None], token: CancellationToken) -> list[Message] | None:
    """The next turn's messages (None when the topology is done), as a task the cancellation token cancels.

    As AutoGen's own teams do: ``token.cancel()`` or cancelling the task that
    runs the team ends the run at once with ``CancelledError``, even when the
    turn in flight never yields (a cached or scripted reply); the run is
    recorded as interrupted and can be resumed.
    """
    step = asyncio.ensure_future(anext(turns))
    token.link_future(step)
    try:
        return await step
    except StopAsyncIteration:
        return None


def _completed_round(batch: Sequence[Message]) -> RoundCompleted | None:
    return next((m for m in batch if isinstance(m, RoundCompleted)), None)


def _add_tokens(span: TraceEvent, messages: Sequence[Message]) -> None:
    for message in messages:
        if message.models_usage is not None:
            span.prompt_tokens += message.models_usage.prompt_tokens
            span.completion_tokens += message.models_usage.completion_tokens


def _trace_round(tracer: Tracer, batch: Sequence[Message], produced: Sequence[Message], start: float) -> float:
    """Emit a ``round`` event when a batch completes a round; return when the next round starts."""
    done = _completed_round(batch)
    if done is None:
        return start
    with tracer.span("round", f"round {done.round}", round=done.round) as span:
        span.start = start
        _add_tokens(span, [m for m in produced if m.created_at.timestamp() >= start])
        if done.score is not None:
            span.attributes["score"] = done.score
        if done.agreement is not None:
            span.attributes["agreement"] = done.agreement
    return time.time()
