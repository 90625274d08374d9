"""MootTeam: the AutoGen ``Team`` contract shared by every moot topology.

A topology only writes ``_turns()``: an async generator that performs one
agent turn at a time and yields the messages it produced. This base owns
everything around it: task intake, the run's records and checkpoints, state
save/load, the "one run at a time" guard; the loop itself (termination,
feedback points, faults, streaming, the best-so-far result on any stop) is
the state machine in ``_loop.py``.

The turn loop is resumable because topologies keep their progress in a state
object that advances only *after* a turn's message is recorded: a turn that
crashed mid-flight is simply redone on the next run, never skipped.
"""

from __future__ import annotations

import asyncio
import uuid
from abc import abstractmethod
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, ClassVar

from autogen_agentchat.base import ChatAgent, TaskResult, Team, TerminationCondition
from autogen_agentchat.messages import BaseChatMessage, TextMessage
from autogen_core import CancellationToken, ComponentModel
from pydantic import BaseModel

from moot.conditions import bounded_stop
from moot.errors import ConfigError, MalformedOutputError
from moot.messages import HumanFeedbackGiven, message_factory
from moot.roles import RoleAgent
from moot.store import RunInfo, RunStatus, TeamHooks
from moot.teams._human import HumanInTheLoop, default_summary, with_human_note
from moot.teams._loop import Message, MootFault, RunLoop
from moot.teams._records import MootResult, account
from moot.tracing import Tracer, TraceSink, default_trace_dir, traced

__all__ = ["Message", "MootFault", "MootTeam", "Task", "checked_experts", "loaded_stop"]

Task = str | BaseChatMessage | Sequence[BaseChatMessage] | None


class MootTeam(Team):
    """Base for moot teams; see the module docstring for the division of labour."""

    _state_type: ClassVar[type[BaseModel]]
    """The topology's state class: a versioned model holding ``task`` and every bit of progress (see the module
    docstring); a new task starts a fresh one."""
    _derived_state: ClassVar[Mapping[str, Callable[[Sequence[Message]], Any]]] = {}
    """State fields left out of checkpoints, each with how ``load_state`` rebuilds it from the transcript."""
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
        self.state: Any = self._state_type()
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
    def _start(self, task: str) -> None:
        """Begin a new task: forget the previous one's progress."""
        self.state = self._state_type(task=task)

    def _has_task(self) -> bool:
        """Whether there is a task to continue when ``run()`` is called without one."""
        return self.state.task is not None

    def _forget(self) -> None:
        """Drop all task progress (used by reset)."""
        self.state = self._state_type()

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
        """Account for a turn that failed for good (malformed output, a broken tool, a model out of retries):
        a malformed reply's attempts count as parse failures in the state."""
        if isinstance(error, MalformedOutputError):
            self.state.parse_failures += error.attempts

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
        """Take the task, record the run's start, and drive it through the loop's state machine (``_loop``)."""
        if self._running:
            raise ValueError(f"team {self.name!r} is already running; it cannot run twice concurrently")
        self._running = True
        try:
            token = cancellation_token or CancellationToken()
            task_messages = self._task_messages(task)
            await self._begin_run(resumed=not task_messages)
            assert self.run_id is not None
            tracer = self.tracer or Tracer.default(default_trace_dir(self.store_path))
            tracer.sinks.extend(s for s in self.trace_sinks if s not in tracer.sinks)
            run = RunLoop(self, token, tracer, task_messages, output_task_messages)
            async for item in run.stream(self.run_id):
                yield item
        finally:
            self._running = False

    def _final_result(self, messages: list[Message], stop_reason: str, partial: bool) -> MootResult:
        """The topology's result, accounted over the whole transcript, and tagged with its run when recorded."""
        result = self._result(messages, stop_reason, partial)
        account(result, self.transcript)
        result.run_id = self.run_id if self.record or self.hooks else None
        return result

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
        stop = self._stop_component()
        dumped = stop.model_dump(mode="json") if stop is not None else None
        return {"team": type(self).__name__, "stop": dumped, "models": info.models, "options": info.options}

    def _stop_component(self) -> ComponentModel | None:
        """The stop conditions as a component: a topology's config and a run's config save them alike."""
        return self._stop.dump_component() if self._stop is not None else None

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
        for name, rebuild in self._derived_state.items():
            if not getattr(self.state, name):  # checkpoints of an older state version carried it themselves
                setattr(self.state, name, rebuild(self.transcript))
        await self._replay_into_stop()

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

    def _task_messages(self, task: Task) -> list[BaseChatMessage]:
        """A new task's messages, its progress started afresh; none when the run continues the task it has."""
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


def checked_experts(experts: Sequence[ChatAgent], team: str, most: int | None = None) -> list[ChatAgent]:
    """The experts of a debate-like team: at least two (at most ``most``), with distinct names; else ConfigError."""
    names = [e.name for e in experts]
    if len(experts) < 2 or (most is not None and len(experts) > most):
        bounds = f"2 to {most}" if most is not None else "at least two"
        raise ConfigError(f"a {team} needs {bounds} experts, got {len(experts)}: {', '.join(names) or 'none'}")
    if len(set(names)) != len(names):
        raise ConfigError(f"expert names must be unique, got {', '.join(names)}")
    return list(experts)


def loaded_stop(config: ComponentModel | None) -> TerminationCondition | None:
    """The stop conditions a topology's config saved (``_stop_component``), loaded; None when it saved none."""
    return TerminationCondition.load_component(config) if config else None
