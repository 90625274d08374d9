"""MootTeam: the AutoGen ``Team`` contract shared by every moot topology.

A topology only writes ``_turns()``: an async generator that performs one
agent turn at a time and yields the messages it produced. This base owns
everything around it: task intake, termination (conditions see each new
message exactly once), streaming, the best-so-far result on any stop,
malformed-output faults, state save/load, and the "one run at a time" guard.

The turn loop is resumable because topologies keep their progress in a state
object that advances only *after* a turn's message is recorded: a turn that
crashed mid-flight is simply redone on the next run, never skipped.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from abc import abstractmethod
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, ClassVar

from autogen_agentchat.base import ChatAgent, TaskResult, Team, TerminationCondition
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, StopMessage, TextMessage
from autogen_core import CancellationToken
from pydantic import BaseModel

from moot._redact import redact
from moot.conditions import bounded_stop
from moot.errors import ConfigError, MalformedOutputError, ToolFaultError, TransientModelError
from moot.hooks import RunInfo, TeamHooks
from moot.messages import HumanFeedbackGiven, HumanFeedbackRequested, RoundCompleted, message_factory
from moot.roles import RoleAgent
from moot.store import RunStatus
from moot.teams._human import (
    FINAL,
    ROUND,
    HumanInTheLoop,
    LoopControl,
    default_summary,
    feedback_request,
    unanswered,
    with_human_note,
)
from moot.teams._records import MootResult, account, failed_turn
from moot.tracing import TraceEvent, Tracer, TraceSink, default_trace_dir, traced

Message = BaseAgentEvent | BaseChatMessage
MootFault = MalformedOutputError | ToolFaultError | TransientModelError
"""Faults that end a run with its best-so-far result marked partial, instead of an exception."""
Task = str | BaseChatMessage | Sequence[BaseChatMessage] | None


class MootTeam(Team):
    """Base for moot teams; see the module docstring for the division of labour."""

    _derived_state: ClassVar[frozenset[str]] = frozenset()
    """State fields rebuilt from the transcript (by ``_derive``) on ``load_state``: left out of checkpoints."""
    _signals: ClassVar[frozenset[str]] = frozenset()
    """The values this team's rounds report (``score``, ``agreement``): what its stop conditions may wait for."""

    def __init__(self, name: str, description: str, stop: TerminationCondition | None) -> None:
        self._name = name
        self._description = description
        self._stop = bounded_stop(stop, type(self).__name__, self._signals) if stop is not None else None
        self._running = False
        self._paused = asyncio.Event()
        self._paused.set()
        self.transcript: list[Message] = []
        self.state: Any = None
        self.run_id: str | None = None
        """The current run's id; also its trace id."""
        self.hooks: list[TeamHooks] = []
        self.record = True
        """Record runs in the run store (``$MOOT_STORE`` or ``store_path``); False turns it off."""
        self.store_path: str | None = None
        self.tracer: Tracer | None = None
        """None: a JSONL file per run (next to the store) plus OpenTelemetry export."""
        self.trace_sinks: list[TraceSink] = []
        """Extra sinks (TraceSink protocol) every run also reports to."""
        self.run_info: dict[str, Any] = {}
        """Extra run metadata (scenario, models, options) stored with each run, e.g. by the CLI."""
        self.human = HumanInTheLoop()
        """Where the team pauses for human feedback and who answers (see HumanInTheLoop); nowhere by default."""
        self.waiting_for: str | None = None
        """The feedback point the last run suspended at, waiting for a human; None otherwise."""
        self._force_resume = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    # ------------------------------------------------------------ topology API
    @abstractmethod
    def _start(self, task: str) -> None:
        """Begin a new task: forget the previous one's progress."""

    @abstractmethod
    def _has_task(self) -> bool:
        """Whether there is a task to continue when ``run()`` is called without one."""

    @abstractmethod
    def _turns(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        """Run turns forever (or until the topology itself is done), yielding each turn's messages.

        A batch is recorded whole before the conditions see it, so a turn's
        message and the event it completes (e.g. a round) are never split by a stop.
        """

    async def _ask(
        self,
        agent: ChatAgent,
        prompt: str,
        token: CancellationToken,
        output_type: type[BaseModel] | None = None,
        history: Sequence[BaseChatMessage] = (),
        closing: str = "",
    ) -> BaseChatMessage:
        """One agent turn, traced as a ``turn`` span (the parent of its model calls).

        ``history`` is the exchange the request continues (an earlier request and the agent's reply to it);
        ``closing`` the request's last lines, those that differ per agent (a RoleAgent puts them after the
        reply's schema, so the text before them is shared).
        """
        step_id = f"{self.run_id}:{len(self.transcript)}"
        with traced("turn", agent.name, step_id=step_id) as span:
            text = with_human_note(prompt, self.transcript)
            if isinstance(agent, RoleAgent):
                messages = [*history, TextMessage(content=text, source="user")]
                response = await agent.respond(messages, token, output_type, closing)
            else:
                request = "\n\n".join(filter(None, [text, closing]))
                response = await agent.on_messages([*history, TextMessage(content=request, source="user")], token)
            message = response.chat_message
            if span is not None and message.models_usage is not None:
                span.prompt_tokens = message.models_usage.prompt_tokens
                span.completion_tokens = message.models_usage.completion_tokens
            return message

    @abstractmethod
    def _agents(self) -> list[ChatAgent]:
        """The team's agents: whose model specs a run records."""

    def _on_fault(self, error: MootFault) -> None:
        """Account for a turn that failed for good: malformed output, a broken tool, a model out of retries."""

    async def _closing(self, token: CancellationToken) -> AsyncGenerator[list[Message], None]:
        """Turns that run after the loop stopped, whatever stopped it (a debate's verdict)."""
        for _ in ():
            yield []

    def _done_reason(self) -> str:
        """Stop reason when ``_turns`` ends by itself rather than by a condition."""
        return "the team finished its work"

    def _feedback_summary(self) -> str:
        """What a human is shown at a feedback point; the default is the latest two chat messages."""
        return default_summary(self.transcript)

    def _on_human_feedback(self, feedback: HumanFeedbackGiven) -> None:
        """React to a human's answer beyond the default (a rejection's comment heads the next round's prompts)."""

    @abstractmethod
    def _result(self, messages: list[Message], stop_reason: str, partial: bool) -> MootResult:
        """Build the final result (a TaskResult subclass) with best-so-far, scores and usage."""

    # ------------------------------------------------------------- running
    async def run(
        self,
        *,
        task: Task = None,
        cancellation_token: CancellationToken | None = None,
        output_task_messages: bool = True,
    ) -> TaskResult:
        result: TaskResult | None = None
        async for item in self.run_stream(
            task=task, cancellation_token=cancellation_token, output_task_messages=output_task_messages
        ):
            if isinstance(item, TaskResult):
                result = item
        assert result is not None
        return result

    async def run_stream(
        self,
        *,
        task: Task = None,
        cancellation_token: CancellationToken | None = None,
        output_task_messages: bool = True,
    ) -> AsyncGenerator[Message | TaskResult, None]:
        if self._running:
            raise ValueError(f"team {self.name!r} is already running; it cannot run twice concurrently")
        self._running = True
        try:
            async for item in self._run(task, cancellation_token or CancellationToken(), output_task_messages):
                yield item
        finally:
            self._running = False

    async def _run(
        self, task: Task, token: CancellationToken, output_task_messages: bool
    ) -> AsyncGenerator[Message | TaskResult, None]:
        task_messages = self._intake(task)
        await self._begin_run(resumed=not task_messages)
        produced: list[Message] = list(task_messages) if output_task_messages else []
        assert self.run_id is not None
        tracer = self.tracer or Tracer.default(default_trace_dir(self.store_path))
        tracer.sinks.extend(s for s in self.trace_sinks if s not in tracer.sinks)
        with tracer.activate(self.run_id), tracer.span("run", self.name, resumed=not task_messages) as run_span:
            async for item in self._traced_run(task_messages, produced, token, tracer):
                if isinstance(item, TaskResult):
                    run_span.attributes["stop_reason"] = item.stop_reason or ""
                    _add_tokens(run_span, item.messages)
                yield item

    async def _traced_run(
        self, task_messages: list[BaseChatMessage], produced: list[Message], token: CancellationToken, tracer: Tracer
    ) -> AsyncGenerator[Message | TaskResult, None]:
        status, stop_reason = RunStatus.FAILED, "the run raised an exception"
        try:
            if task_messages:
                await self._commit(task_messages)
                for message in produced:
                    yield message
            result = None
            async for item in self._loop(token, produced, tracer):
                if isinstance(item, TaskResult):
                    result = item
                else:
                    yield item
            assert result is not None
            status = RunStatus.PARTIAL if getattr(result, "partial", False) else RunStatus.FINISHED
            status = RunStatus.SUSPENDED if self.waiting_for is not None else status
            stop_reason = result.stop_reason
            await self._end_run(status, stop_reason, _summary(result))
            yield result
        except (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit):
            await self._end_run(RunStatus.INTERRUPTED, "the run was interrupted", None)
            raise
        except Exception as exc:
            await self._end_run(status, redact(f"{type(exc).__name__}: {exc}"), None)
            raise

    async def _loop(
        self, token: CancellationToken, produced: list[Message], tracer: Tracer
    ) -> AsyncGenerator[Message | TaskResult, None]:
        ctl = LoopControl(pending=unanswered(self.transcript))
        self.waiting_for = None
        while not ctl.finished:
            if ctl.pending is None or ctl.pending.point != FINAL:
                async for item in self._segment(token, produced, tracer, ctl):
                    yield item
            async for item in self._final_point(produced, ctl):
                yield item
        if self._stop is not None and self._stop.terminated:  # as AutoGen's teams: a stop that fired is reset,
            await self._stop.reset()  # so the next run() has a fresh budget; one cut short by a fault counts on
        self.waiting_for = ctl.suspended_at
        result = self._result(produced, ctl.stop_reason or self._done_reason(), ctl.partial)
        account(result, self.transcript)
        result.run_id = self.run_id if self.record or self.hooks else None
        yield result

    async def _segment(
        self, token: CancellationToken, produced: list[Message], tracer: Tracer, ctl: LoopControl
    ) -> AsyncGenerator[Message, None]:
        """Turns until a condition, the topology or a human stops them; then the closing turns."""
        pending = ctl.take_pending()
        if pending is not None:  # a suspended run continues: its unanswered round pause comes first
            async for item in self._pause(pending, produced, ctl, fresh=False):
                yield item
        if ctl.running:
            async for item in self._turn_loop(token, produced, tracer, ctl):
                yield item
        if ctl.suspended_at is None:
            async for batch in self._closing(token):
                await self._emit(batch, produced)
                for message in batch:
                    yield message

    async def _turn_loop(
        self, token: CancellationToken, produced: list[Message], tracer: Tracer, ctl: LoopControl
    ) -> AsyncGenerator[Message, None]:
        turns = self._turns(token)
        round_start = time.time()
        try:
            while (batch := await _next_turn(turns, token)) is not None:
                await self._emit(batch, produced)
                for message in batch:
                    yield message
                round_start = _trace_round(tracer, batch, produced, round_start)
                stop = await self._check_stop(batch)
                if stop is not None:
                    ctl.stop_reason = stop.content
                    with tracer.span("termination", stop.source, reason=stop.content):
                        pass
                    break
                done = next((m for m in batch if isinstance(m, RoundCompleted)), None)
                if done is not None and self.human.wants(ROUND):
                    request = feedback_request(self.name, ROUND, self._feedback_summary(), round=done.round)
                    async for item in self._pause(request, produced, ctl):
                        yield item
                    if not ctl.running:
                        break
        except (MalformedOutputError, ToolFaultError, TransientModelError) as exc:
            self._on_fault(exc)
            ctl.stop_reason, ctl.partial = redact(f"error: {exc}"), True
            failed = failed_turn(exc) if isinstance(exc, MalformedOutputError) else None
            if failed is not None:
                await self._emit([failed], produced)
                yield failed
        finally:
            await turns.aclose()

    async def _final_point(self, produced: list[Message], ctl: LoopControl) -> AsyncGenerator[Message, None]:
        """Before the result is accepted: the ``final`` feedback point. A rejection runs more turns."""
        ctl.finished = True
        pending = ctl.take_pending()
        if pending is None and (not self.human.wants(FINAL) or not ctl.running or ctl.partial):
            return
        if pending is not None:
            ctl.stop_reason = ctl.stop_reason or pending.stop_reason
        request = pending or feedback_request(
            self.name, FINAL, self._feedback_summary(), stop_reason=ctl.stop_reason or self._done_reason()
        )
        async for item in self._pause(request, produced, ctl, fresh=pending is None):
            yield item
        if ctl.rejected:
            limit = await self._rearm_stop()
            if limit is None:
                ctl.next_segment()
            else:
                ctl.stop_reason = f"{limit} (a human rejected the result, but this limit still holds)"

    async def _pause(
        self, request: HumanFeedbackRequested, produced: list[Message], ctl: LoopControl, *, fresh: bool = True
    ) -> AsyncGenerator[Message, None]:
        """Wait for a human at a feedback point; with nobody to ask, suspend the run there."""
        if fresh:
            await self._emit([request], produced)
            yield request
        if self.human.feedback is None:
            ctl.suspend(request.point)
            return
        feedback = await self.human.ask(request)
        given = HumanFeedbackGiven(
            source=feedback.by, point=request.point, action=feedback.action, comment=feedback.comment
        )
        await self._emit([given], produced)
        yield given
        self._on_human_feedback(given)
        ctl.apply(given)

    async def _rearm_stop(self) -> str | None:
        """After a rejection: conditions start over from the transcript without its rounds, so quality and
        round stops let the team go on while token and step budgets still hold. Returns a limit that holds."""
        if self._stop is None:
            return None
        await self._stop.reset()
        fired = await self._stop([m for m in self.transcript if not isinstance(m, RoundCompleted)])
        return fired.content if fired is not None else None

    async def _emit(self, batch: Sequence[Message], produced: list[Message]) -> None:
        await self._commit(batch)
        produced.extend(batch)

    async def _commit(self, batch: Sequence[Message]) -> None:
        """Append a turn to the transcript and checkpoint it through the hooks, before anyone sees it."""
        await self._paused.wait()
        seq = len(self.transcript)
        self.transcript.extend(batch)
        if self.hooks and self.run_id is not None:
            dumps = [m.dump() for m in batch]
            state = self._checkpoint()
            for hook in self.hooks:
                await hook.on_batch(self.run_id, seq, dumps, state)

    # ------------------------------------------------------------ run records
    async def _begin_run(self, resumed: bool) -> None:
        if not resumed or self.run_id is None:
            self.run_id, resumed = uuid.uuid4().hex, False
        if self.record and not self.hooks:
            from moot.store import RunRecorder, RunStore

            self.hooks.append(RunRecorder(RunStore.shared(self.store_path)))
        info = RunInfo(team=self.name, task=self._task_text(), **self.run_info)
        info.models = info.models or self._model_specs()
        info.config, info.force = self._run_config(info), self._force_resume
        self._force_resume = False
        for hook in self.hooks:
            await hook.on_run_start(self.run_id, info, resumed)

    def _model_specs(self) -> dict[str, str]:
        """Each agent's model spec, for a run started from code (the CLI records the specs by role itself)."""
        return {a.name: str(a.spec) for a in self._agents() if isinstance(a, RoleAgent) and a.spec is not None}

    def _run_config(self, info: RunInfo) -> dict[str, Any]:
        """What a resumption must keep: the team's kind, its stop conditions, the models and options it ran with."""
        stop = self._stop.dump_component().model_dump(mode="json") if self._stop is not None else None
        return {"team": type(self).__name__, "stop": stop, "models": info.models, "options": info.options}

    async def _end_run(self, status: RunStatus, stop_reason: str | None, result: Mapping[str, Any] | None) -> None:
        if self.run_id is None:
            return
        for hook in self.hooks:
            await hook.on_run_end(self.run_id, status, stop_reason, result)

    def _checkpoint(self) -> dict[str, Any]:
        """The team state without the transcript (the store keeps that as turns) or what is derived from it.

        A checkpoint is written after every turn, so it must not grow with the
        run: fields in ``_derived_state`` are rebuilt from the transcript by
        ``load_state`` instead of being re-serialised each turn.
        """
        state = self.state.model_dump(mode="json", exclude={"messages", *self._derived_state})
        state["messages"] = []
        return state

    def _task_text(self) -> str:
        return self.state.task or ""

    async def save_state(self) -> Mapping[str, Any]:
        state = self._checkpoint()
        state["messages"] = [m.dump() for m in self.transcript]
        return state

    async def load_state(self, state: Mapping[str, Any]) -> None:
        loaded = type(self.state).model_validate(state)
        factory = message_factory()
        self.transcript = [factory.create(m) for m in loaded.messages]
        loaded.messages = []
        self.state = loaded
        for name in self._derived_state:
            if not getattr(self.state, name):  # checkpoints of an older state version carried it themselves
                setattr(self.state, name, self._derive(name))
        await self._replay_into_stop()

    def _derive(self, name: str) -> Any:
        """Rebuild the state field ``name`` (one of ``_derived_state``) from ``self.transcript``."""
        raise NotImplementedError(f"{type(self).__name__} declares {name!r} derived but cannot rebuild it")

    async def resume(  # type: ignore[override]
        self, run_id: str | None = None, *, force: bool = False
    ) -> TaskResult | None:
        """Without ``run_id``: AutoGen's resume-after-pause. With it: continue a stored run to its end.

        The run continues from its last checkpoint: the turn that was in flight
        when the process died is redone, and no finished turn is repeated.
        Refused while another live process drives the run, and when the team's
        stop conditions, models or options differ from the run's (``force`` overrides that).
        """
        if run_id is None:
            self._paused.set()
            return None
        result: TaskResult | None = None
        async for item in self.resume_stream(run_id, force=force):
            if isinstance(item, TaskResult):
                result = item
        return result

    async def resume_stream(self, run_id: str, *, force: bool = False) -> AsyncGenerator[Message | TaskResult, None]:
        """Stream the continuation of a stored run (see ``resume``)."""
        from moot.store import RunStore, resumable_state

        state = resumable_state(RunStore.shared(self.store_path), run_id)
        await self.load_state(state)
        self.run_id, self._force_resume = run_id, force
        async for item in self.run_stream():
            yield item

    def _intake(self, task: Task) -> list[BaseChatMessage]:
        if task is None:
            if not self._has_task():
                raise ValueError("no task given and no task to continue; pass task='...'")
            return []
        messages = (
            [TextMessage(content=task, source="user")]
            if isinstance(task, str)
            else ([task] if isinstance(task, BaseChatMessage) else list(task))
        )
        self.transcript = []
        self._start("\n\n".join(m.to_model_text() for m in messages))
        return messages

    async def _check_stop(self, messages: Sequence[Message]) -> StopMessage | None:
        if self._stop is None:
            return None
        return await self._stop(messages)

    async def _replay_into_stop(self) -> None:
        """Rebuild the conditions' state from the transcript after ``load_state``."""
        if self._stop is not None:
            await self._stop.reset()
            if self.transcript and await self._stop(self.transcript) is not None:
                # The saved run had already stopped; a live team resets its conditions after every run,
                # and a fired condition would raise TerminatedException on the next run's first check.
                await self._stop.reset()

    # ------------------------------------------------------ pause / resume / reset
    async def pause(self) -> None:
        """Hold the run before its next turn (the turn in flight finishes)."""
        self._paused.clear()

    async def reset(self) -> None:
        if self._running:
            raise ValueError(f"team {self.name!r} is running; it cannot be reset now")
        self.transcript = []
        if self._stop is not None:
            await self._stop.reset()
        self._forget()

    @abstractmethod
    def _forget(self) -> None:
        """Drop all task progress (used by reset)."""


def checked_experts(experts: Sequence[ChatAgent], team: str, most: int | None = None) -> list[ChatAgent]:
    """The experts of a debate-like team: at least two (at most ``most``), with distinct names; else ConfigError."""
    names = [e.name for e in experts]
    if len(experts) < 2 or (most is not None and len(experts) > most):
        bounds = f"2 to {most}" if most is not None else "at least two"
        raise ConfigError(f"a {team} needs {bounds} experts, got {len(experts)}: {', '.join(names) or 'none'}")
    if len(set(names)) != len(names):
        raise ConfigError(f"expert names must be unique, got {', '.join(names)}")
    return list(experts)


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


def _summary(result: TaskResult) -> dict[str, Any]:
    """The result without its messages (the store has them as turns)."""
    return result.model_dump(mode="json", exclude={"messages"})


def _add_tokens(span: TraceEvent, messages: Sequence[Message]) -> None:
    for message in messages:
        if message.models_usage is not None:
            span.prompt_tokens += message.models_usage.prompt_tokens
            span.completion_tokens += message.models_usage.completion_tokens


def _trace_round(tracer: Tracer, batch: Sequence[Message], produced: Sequence[Message], start: float) -> float:
    """Emit a ``round`` event when a batch completes a round; return when the next round starts."""
    done = next((m for m in batch if isinstance(m, RoundCompleted)), None)
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
