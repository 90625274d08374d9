"""MootTeam: the AutoGen ``Team`` contract shared by every moot topology.

A topology writes ``_turns()`` (an async generator that performs one agent
turn at a time and yields the messages it produced), ``_result()``,
``_agents()`` and its ``_state_type``, and overrides the optional hooks below
where it differs (docs/architecture.md, "What a topology writes", lists them
all). This base owns everything around it: task intake, the run's records and checkpoints, state
save/load, the "one run at a time" guard; the loop itself (termination,
feedback points, faults, streaming, the best-so-far result on any stop) is
the state machine in ``_loop.py``.

The turn loop is resumable because topologies keep their progress in a state
object that advances only *after* a turn's message is recorded: a turn that
crashed mid-flight is simply redone on the next run, never skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
import warnings
from abc import abstractmethod
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, ClassVar

from autogen_agentchat.base import ChatAgent, TaskResult, Team, TerminationCondition
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, MessageFactory, TextMessage
from autogen_agentchat.teams import BaseGroupChat
from autogen_core import CancellationToken, ComponentModel
from pydantic import BaseModel, ValidationError

from moot.conditions import UnstoredStopWarning, as_stop, bounded_stop, stored_stop, unstored_parts
from moot.errors import ConfigError, MalformedOutputError
from moot.messages import HumanFeedbackGiven, message_factory
from moot.roles import RoleAgent
from moot.store import RunInfo, RunStatus, TeamHooks
from moot.teams._human import HumanInTheLoop, default_summary, with_human_note
from moot.teams._loop import Message, MootFault, RunLoop, RunStream
from moot.teams._records import MootResult, account
from moot.tools import Approver
from moot.tracing import Tracer, TraceSink, default_trace_dir, traced

__all__ = ["Message", "MessageTypes", "MootFault", "MootTeam", "Stop", "Task", "checked_experts", "loaded_stop"]

Task = str | BaseChatMessage | Sequence[BaseChatMessage] | None
Stop = TerminationCondition | str | None
"""A team's stop: a condition, a stop expression (``"max_rounds(3) | token_budget(40000)"``), or None."""
MessageTypes = Sequence[type[BaseAgentEvent | BaseChatMessage]] | None
"""Message types beyond AutoGen's and moot's that tasks and saved states may hold (AutoGen's
``custom_message_types``)."""


class MootTeam(Team):
    """Base for moot teams; see the module docstring for the division of labour."""

    _state_type: ClassVar[type[BaseModel]]
    """The topology's state class: a versioned model holding ``task`` and every bit of progress (see the module
    docstring); a new task starts a fresh one."""
    _derived_state: ClassVar[Mapping[str, Callable[[Sequence[Message]], Any]]] = {}
    """State fields left out of checkpoints, each with how ``load_state`` rebuilds it from the transcript."""
    _signals: ClassVar[frozenset[str]] = frozenset()
    """The values this team's rounds report (``score``, ``agreement``): what its stop conditions may wait for."""

    def __init__(self, name: str, description: str, stop: Stop, *, custom_message_types: MessageTypes = None) -> None:
        self._name = name
        self._description = description
        self._stop = bounded_stop(as_stop(stop), type(self).__name__, self._signals) if stop is not None else None
        self._unstored_warned = False
        self.custom_message_types: list[type[BaseAgentEvent | BaseChatMessage]] = _checked_types(custom_message_types)
        """As AutoGen's ``custom_message_types``: the types (``StructuredMessage[MyTask]``) a task may hold besides
        AutoGen's and moot's own, so that a run's saved state, holding its task, can be loaded again."""
        self._running = False
        self._left_behind: asyncio.Task[None] | None = None
        """An abandoned stream being closed (see ``RunStream``): the next run waits for it to be recorded."""
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

    async def _agent_turn(
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

    def ask_approvals_of(self, approver: Approver) -> None:
        """Tool calls this team's permission policy holds for approval go to ``approver`` unless the policy already
        has one (``moot run`` passes the terminal's, at a terminal). A team that calls no tools has nothing to
        approve and ignores it: the default."""

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

    def run_stream(
        self,
        *,
        task: Task = None,
        cancellation_token: CancellationToken | None = None,
        output_task_messages: bool = True,
    ) -> AsyncGenerator[Message | TaskResult, None]:
        """Take the task, record the run's start, and drive it through the loop's state machine (``_loop``).

        A caller may leave the stream early (``break``, ``aclose()``, dropping it, a cancelled task): the run is
        then recorded as interrupted, its lease released, and the team can run again (see ``RunStream``).
        """
        return RunStream(self._run_body(task, cancellation_token, output_task_messages), self._abandon)

    async def _run_body(
        self,
        task: Task,
        cancellation_token: CancellationToken | None,
        output_task_messages: bool,
        *,
        held: bool = False,
    ) -> AsyncGenerator[Message | TaskResult, None]:
        """The run itself; ``held``: the caller (``resume_stream``) has already claimed the team."""
        if not held:
            await self._claim()
        try:
            token = cancellation_token or CancellationToken()
            task_messages = self._task_messages(task)
            await self._begin_run(resumed=not task_messages)
            assert self.run_id is not None
            tracer = self.tracer or Tracer.default(default_trace_dir(self.store_path))
            tracer.sinks.extend(s for s in self.trace_sinks if s not in tracer.sinks)
            run = RunLoop(self, token, tracer, task_messages, output_task_messages)
            async with contextlib.aclosing(run.stream(self.run_id)) as stream:
                async for item in stream:
                    yield item
        finally:
            self._running = False

    async def _settle(self) -> None:
        """Wait until a stream dropped unfinished has been recorded and has let the team go."""
        closing, self._left_behind = self._left_behind, None
        if closing is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(closing)

    async def _claim(self) -> None:
        """Mark the team running: once a stream left early has been recorded, refused while a run is live."""
        await self._settle()
        if self._running:
            raise ValueError(f"team {self.name!r} is already running; it cannot run twice concurrently")
        self._running = True

    def _abandon(self, close: asyncio.Task[None]) -> None:
        """A stream was dropped unfinished: ``close`` records it; the next run waits for that."""
        self._left_behind = close

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
        force, self._force_resume = self._force_resume, False
        if not self.hooks:
            return  # nothing records the run: no config to keep, and no stop condition to store
        info = RunInfo(team=self.name, task=self._task_text(), **self.run_info)
        info.models = info.models or self._model_specs()
        info.config, info.force = self._run_config(info), force
        for hook in self.hooks:
            await hook.on_run_start(self.run_id, info, resumed)

    def _model_specs(self) -> dict[str, str]:
        """Each agent's model spec, for a run started from code (the CLI records the specs by role itself)."""
        return {a.name: str(a.spec) for a in self._agents() if isinstance(a, RoleAgent) and a.spec is not None}

    def _run_config(self, info: RunInfo) -> dict[str, Any]:
        """What a resumption must keep: the team's kind, its stop conditions, the models and options it ran with.

        A stop condition with no component config (``FunctionalTermination``, a user's own class) is recorded by
        its class (``moot.conditions.stored_stop``), and the team says once that resuming needs it again."""
        stop = stored_stop(self._stop) if self._stop is not None else None
        self._warn_unstored()
        return {"team": type(self).__name__, "stop": stop, "models": info.models, "options": info.options}

    def _warn_unstored(self) -> None:
        """Warn once per team that a recorded run's stop condition could not be stored with it."""
        missing = unstored_parts(self._stop) if self._stop is not None and not self._unstored_warned else []
        if missing:
            self._unstored_warned = True
            warnings.warn(
                f"stop condition {', '.join(missing)} cannot be stored with the run (it has no component config); "
                "to resume the run, build the team in Python with the same condition and call team.resume(run_id)",
                UnstoredStopWarning,
                stacklevel=2,
            )

    def _stop_component(self) -> ComponentModel | None:
        """The stop conditions as a component, for a topology's config (``dump_component``): as with AutoGen's
        teams, a condition that cannot be dumped makes the team's dump fail."""
        return self._stop.dump_component() if self._stop is not None else None

    async def _end_run(
        self, run_id: str, status: RunStatus, stop_reason: str | None, result: Mapping[str, Any] | None
    ) -> None:
        """Tell the hooks how run ``run_id`` ended (the loop names its own run: the team may have begun another)."""
        for hook in self.hooks:
            await hook.on_run_end(run_id, status, stop_reason, result)

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
        """Take a state ``save_state`` wrote (or a run's checkpoint); anything else is one ConfigError line, and
        the team is left as it was."""
        await self._settle()
        if self._running:
            raise ValueError(f"team {self.name!r} is running; its state cannot be loaded now")
        await self._load(state)

    async def _load(self, state: Mapping[str, Any]) -> None:
        loaded, transcript = self._restored(state)
        self.transcript = transcript
        self.state = loaded
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

    def resume_stream(self, run_id: str, *, force: bool = False) -> AsyncGenerator[Message | TaskResult, None]:
        """Stream the continuation of a stored run (see ``resume``); it may be left early as ``run_stream``."""
        return RunStream(self._resume_body(run_id, force), self._abandon)

    async def _resume_body(self, run_id: str, force: bool) -> AsyncGenerator[Message | TaskResult, None]:
        from moot.store import RunStore, resumable_state

        await self._claim()
        try:
            await self._load(resumable_state(RunStore.shared(self.store_path), run_id))
        except BaseException:
            self._running = False
            raise
        self.run_id, self._force_resume = run_id, force
        async with contextlib.aclosing(self._run_body(None, None, True, held=True)) as stream:
            async for item in stream:
                yield item

    def _restored(self, state: object) -> tuple[Any, list[Message]]:
        """``state`` as this team's state and transcript, checked whole before the team takes any of it."""
        kind = type(self.state)
        what = f"load_state of a {type(self).__name__} takes what its save_state() returned"
        if not isinstance(state, Mapping):
            raise ConfigError(f"{what}, a dict; got {type(state).__name__}")
        unknown = sorted(str(k) for k in state if k not in kind.model_fields)
        expected = kind.model_fields["type"].default if "type" in kind.model_fields else None
        if unknown or (expected is not None and state.get("type") != expected):
            found = f"unknown keys {', '.join(unknown)}" if unknown else f"type {state.get('type')!r}"
            raise ConfigError(f"{what} (type {expected!r}); this state has {found}")
        try:
            loaded = kind.model_validate(state)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the state"
            raise ConfigError(f"{what}; {where}: {first['msg']}") from None
        factory = self._message_factory()
        try:
            transcript: list[Message] = [factory.create(m) for m in loaded.messages]
        except (ValueError, TypeError, ValidationError) as exc:
            raise ConfigError(
                f"{what}; a saved message cannot be rebuilt ({str(exc).splitlines()[0]}): a team given a task of "
                "your own message type needs it again, as custom_message_types=[...]"
            ) from None
        loaded.messages = []
        for name, rebuild in self._derived_state.items():
            if not getattr(loaded, name):  # checkpoints of an older state version carried it themselves
                setattr(loaded, name, rebuild(transcript))
        return loaded, transcript

    def _message_factory(self) -> MessageFactory:
        """AutoGen's and moot's message types, and this team's ``custom_message_types``."""
        factory = message_factory()
        for message_type in self.custom_message_types:
            if not factory.is_registered(message_type):
                factory.register(message_type)
        return factory

    def _task_messages(self, task: Task) -> list[BaseChatMessage]:
        """A new task's messages, its progress started afresh; none when the run continues the task it has.

        Checked as AutoGen's teams check a task, before any turn: an empty list, a list holding something other
        than a chat message, or a message of a type the team cannot restore is a ValueError.
        """
        if task is None:
            if not self._has_task():
                raise ValueError("no task given and no task to continue; pass task='...'")
            return []
        messages = self._checked_task(task)
        self.transcript = []
        self._start("\n\n".join(m.to_model_text() for m in messages))
        return messages

    def _checked_task(self, task: object) -> list[BaseChatMessage]:
        """``task`` as messages; ValueError (AutoGen's words) for a task AutoGen's teams refuse."""
        if isinstance(task, str):
            return [TextMessage(content=task, source="user")]
        if isinstance(task, BaseChatMessage):
            messages = [task]
        elif isinstance(task, Sequence):
            if not task:
                raise ValueError("Task list cannot be empty.")
            if not all(isinstance(m, BaseChatMessage) for m in task):
                found = ", ".join(sorted({type(m).__name__ for m in task if not isinstance(m, BaseChatMessage)}))
                raise ValueError(f"All messages in task list must be valid BaseChatMessage types; found {found}")
            messages = list(task)
        else:
            raise ValueError(
                f"Task must be a string, a BaseChatMessage, or a list of BaseChatMessage; got {type(task).__name__}"
            )
        factory = self._message_factory()
        for message in messages:
            if not factory.is_registered(type(message)):
                raise ValueError(
                    f"Message type {type(message)} is not registered with the message factory. Please register it "
                    "with the message factory by adding it to the custom_message_types list when creating the team."
                )
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
        await self._settle()
        if self._running:
            raise ValueError(f"team {self.name!r} is running; it cannot be reset now")
        self.transcript = []
        if self._stop is not None:
            await self._stop.reset()
        self._forget()


BaseGroupChat.register(MootTeam)
"""AutoGen's loaders take a team where they ask for a group chat (``TeamTool.load_component`` loads its team as a
``BaseGroupChat``): a moot team is declared one, as an ABC's virtual subclass. Nothing of AutoGen's classes
changes; ``isinstance(team, BaseGroupChat)`` holds for moot's teams, which have none of its private machinery."""


def _checked_types(types: MessageTypes) -> list[type[BaseAgentEvent | BaseChatMessage]]:
    """``custom_message_types`` as AutoGen takes them: message classes; anything else is one ConfigError line."""
    if types is None:
        return []
    if isinstance(types, str | type) or not isinstance(types, Sequence):
        raise ConfigError(
            f"custom_message_types must be a list of message classes, got {types!r}, e.g. "
            "custom_message_types=[StructuredMessage[MyTask]]"
        )
    bad = [t for t in types if not (isinstance(t, type) and issubclass(t, BaseAgentEvent | BaseChatMessage))]
    if bad:
        raise ConfigError(
            f"custom_message_types holds {bad[0]!r}, which is not a message class (a subclass of BaseChatMessage "
            "or BaseAgentEvent), e.g. StructuredMessage[MyTask]"
        )
    return list(types)


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
