"""TestCritic: a critic that runs the draft's code against tests instead of guessing.

Self-critique without an outside signal can make drafts worse; a critic
grounded in test results is the one that reliably helps (Reflexion). So this
critic makes no model call: it extracts the code from the draft, runs it in
the sandbox (:mod:`moot.tools`) and turns each failing test into one
specific, actionable issue (``test `slugify('a  b') == 'a-b'` failed: got
'a--b', expected 'a-b'``), which the generator sees in its next revise turn.

Faults are classified, not lumped: the code's failures are the critique;
the sandbox's own failures (tool faults) are retried a bounded number of
times and then raised as :class:`~moot.errors.ToolFaultError`, never
reported to the generator as something to fix.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import ClassVar, Self

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, StructuredMessage
from autogen_core import CancellationToken, Component
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.boundary import argument_error, checked_count, checked_number, checked_strings, terminal_safe, text_of
from moot.errors import ConfigError, ToolFaultError
from moot.roles._critique import Critique
from moot.sandbox import (
    AmbiguousDraft,
    Outcome,
    SandboxLimits,
    SandboxResult,
    SandboxRunner,
    SandboxStatus,
    TestResult,
    draft_of,
    extract_code,
    run_in_thread,
    run_tests,
    validate_tests,
)

__all__ = ["TestCritic", "TestCriticConfig", "failure_lines", "run_sandbox", "to_critique"]

DESCRIPTION = "Runs the draft's code against its tests in a sandbox and reports each failing test."

_MAX_ISSUES = 6  # Critique.issues max_length
_POINT = 300  # Critique's max length of one issue or strength


class TestCriticConfig(BaseModel):
    """Everything a TestCritic is, except an injected runner (which is not serialisable)."""

    __test__: ClassVar[bool] = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid")

    name: str = "test_critic"
    description: str = DESCRIPTION
    tests: list[str] = Field(min_length=1)
    """Python snippets, one per test, run after the code; usually one assert each."""
    limits: SandboxLimits = SandboxLimits()
    tool_retries: int = Field(default=2, ge=0, le=10)
    """Extra attempts after a tool fault before ToolFaultError is raised."""
    retry_backoff_seconds: float = Field(default=0.2, ge=0, le=60)
    """First retry waits about this long (with jitter), doubling per retry."""
    entry_points: list[str] = []
    """The names the tests are about (the task's function), where known: only those of the draft's names take a
    builtin's place in the tests, so a draft that also defines ``abs`` cannot change what a test computes with it
    (see ``moot.sandbox.run_tests``). Empty: every name the draft defines comes first, as in one module."""


class TestCritic(BaseChatAgent, Component[TestCriticConfig]):
    """A critic that answers ``StructuredMessage[Critique]`` from test results; see the module docstring.

    ``runner`` replaces the sandbox (e.g. a fake in tests); it is not part of
    the dumped config, so a loaded TestCritic uses the real sandbox.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class
    component_config_schema = TestCriticConfig
    component_provider_override = "moot.roles.TestCritic"

    def __init__(
        self,
        tests: Sequence[str],
        *,
        name: str = "test_critic",
        limits: SandboxLimits | None = None,
        tool_retries: int = 2,
        retry_backoff_seconds: float = 0.2,
        runner: SandboxRunner | None = None,
        description: str = DESCRIPTION,
        entry_points: Sequence[str] = (),
    ) -> None:
        if runner is not None and not callable(runner):
            raise argument_error(
                "TestCritic", "runner", "None or a function that runs tests (moot.sandbox.run_tests)", runner
            )
        if limits is not None and not isinstance(limits, SandboxLimits):
            raise argument_error("TestCritic", "limits", "None or a moot.sandbox.SandboxLimits", limits)
        if not isinstance(name, str) or not name.isidentifier():
            raise argument_error("TestCritic", "name", "a Python identifier, e.g. 'test_critic'", name)
        try:
            self.config = TestCriticConfig(
                name=name,
                description=description,
                tests=validate_tests(
                    checked_strings(tests, "TestCritic", "tests", example="['assert add(1, 2) == 3']")
                ),
                limits=limits or SandboxLimits(),
                tool_retries=checked_count(tool_retries, "TestCritic", "tool_retries", 0, 10),
                retry_backoff_seconds=checked_number(
                    retry_backoff_seconds, "TestCritic", "retry_backoff_seconds", 0, 60
                ),
                entry_points=checked_strings(entry_points, "TestCritic", "entry_points", example="['add']"),
            )
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"invalid TestCritic settings: {problems}") from None
        super().__init__(name, description)
        self.runner: SandboxRunner = runner or run_tests
        self.last_result: SandboxResult | None = None
        """The latest sandbox result, for callers who want more than the critique (stdout, timings)."""

    @property
    def tests(self) -> list[str]:
        return self.config.tests

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (StructuredMessage[Critique],)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        if not messages:
            raise ValueError(f"{self.name} got no message; it reviews the draft in the latest message")
        try:
            code, fenced = extract_code(draft_of(messages[-1].to_model_text()))
        except AmbiguousDraft as exc:
            return Response(chat_message=self._refusal(str(exc)))
        config = self.config
        result, tool_faults = await run_sandbox(
            self.runner,
            code,
            config.tests,
            config.limits,
            tool=self.name,
            token=cancellation_token,
            retries=config.tool_retries,
            backoff_seconds=config.retry_backoff_seconds,
            entry_points=config.entry_points,
        )
        self.last_result = result
        message = StructuredMessage[Critique](
            content=to_critique(result, fenced=fenced),
            source=self.name,
            models_usage=None,  # no model was called
            metadata={
                "tests_passed": str(result.passed),
                "tests_total": str(result.total),
                "tool_faults": str(tool_faults),
            },
        )
        return Response(chat_message=message)

    def _refusal(self, why: str) -> StructuredMessage[Critique]:
        """The critique of a draft that could not be told apart from the prompt's framing: nothing is run, score 0.

        Guessing would review one block while the answer is adopted and scored on another.
        """
        self.last_result = None
        critique = Critique(
            reasoning=f"Nothing was run: {why}.",
            score=0,
            strengths=[],
            issues=[
                "the draft contains a line of the review prompt's own framing ('Draft to review:' or "
                "'Issues you reported on the previous draft'); remove it so the draft can be reviewed"
            ],
            verdict="revise",
        )
        metadata = {"tests_passed": "0", "tests_total": str(len(self.config.tests)), "tool_faults": "0"}
        return StructuredMessage[Critique](content=critique, source=self.name, models_usage=None, metadata=metadata)

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        self.last_result = None

    def _to_config(self) -> TestCriticConfig:
        return self.config

    @classmethod
    def _from_config(cls, config: TestCriticConfig) -> Self:
        return cls(
            config.tests,
            name=config.name,
            limits=config.limits,
            tool_retries=config.tool_retries,
            retry_backoff_seconds=config.retry_backoff_seconds,
            description=config.description,
            entry_points=config.entry_points,
        )


async def run_sandbox(
    runner: SandboxRunner,
    code: str,
    tests: Sequence[str],
    limits: SandboxLimits,
    *,
    tool: str,
    token: CancellationToken | None = None,
    retries: int = 2,
    backoff_seconds: float = 0.2,
    entry_points: Sequence[str] = (),
) -> tuple[SandboxResult, int]:
    """The sandbox result and how many tool faults preceded it; ToolFaultError once ``retries`` run out.

    The run happens in a thread, so the blocking sandbox (bounded by
    ``limits.wall_seconds``) never stalls the event loop, and a cancel (of
    ``token`` or of the awaiting task) kills its processes at once; faults of
    the sandbox itself are retried with jittered backoff, never blamed on the code. ``entry_points``: the names
    the tests are about, where known (see :func:`~moot.sandbox.run_tests`).
    """
    error = ""
    for attempt in range(retries + 1):
        if attempt:
            await asyncio.sleep(backoff_seconds * 2 ** (attempt - 1) * random.uniform(0.5, 1.0))
        future = asyncio.ensure_future(run_in_thread(runner, code, tests, limits, entry_points))
        if token is not None:
            token.link_future(future)
        try:
            result = await future
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc}"
            continue
        if result.status is not SandboxStatus.TOOL_FAULT:
            return result, attempt
        error = result.tool_error or "the sandbox reported a tool fault without details"
    raise ToolFaultError(tool, retries + 1, error)


def to_critique(result: SandboxResult, *, fenced: bool = True) -> Critique:
    """A content result as a Critique: score = share of tests passed, one issue per failing test."""
    if result.status is SandboxStatus.TOOL_FAULT:
        raise ValueError("a tool fault is not a critique of the draft; retry the sandbox instead")
    passed, total = result.passed, result.total
    issues = failure_lines(result)
    if result.status is not SandboxStatus.PASSED and not issues:
        issues = ["the sandbox reported a failure without details; run the tests locally to see it"]
    passing = [t for t in result.tests if t.outcome is Outcome.PASSED]
    strengths = [_clip(f"passes {passed} of {total} tests: " + ", ".join(f"`{t.label}`" for t in passing))]
    return Critique(
        reasoning=_reasoning(result, fenced),
        score=100 * passed // total if total else 0,
        strengths=strengths if passing else [],
        issues=issues,
        verdict="accept" if result.status is SandboxStatus.PASSED else "revise",
    )


def failure_lines(result: SandboxResult) -> list[str]:
    """One line per failing test (at most six), or the one reason the code did not load."""
    load = result.load
    if load is not None and load.outcome is not Outcome.PASSED:
        if load.outcome is Outcome.TIMEOUT:
            message = program_text(load.message)
            return [_clip(f"loading the code timed out: it {message}; move slow work out of module level")]
        where = f" ({program_text(load.where)})" if load.where else ""
        kind = f"{_error_type(load.error_type)}: " if load.error_type else ""
        return [_clip(f"the code does not run: {kind}{program_text(load.message)}{where}")]
    issues = [_issue(t) for t in result.failures]
    if len(issues) > _MAX_ISSUES:
        rest = result.failures[_MAX_ISSUES - 1 :]
        summary = f"{len(rest)} more tests fail: " + ", ".join(f"`{t.label}`" for t in rest)
        issues = [*issues[: _MAX_ISSUES - 1], _clip(summary)]
    return issues


def _issue(test: TestResult) -> str:
    name = f"test `{test.label}`"
    message = program_text(test.message)
    if test.outcome is Outcome.FAILED:
        return _clip(f"{name} failed: {message}")
    if test.outcome is Outcome.TIMEOUT:
        return _clip(f"{name} timed out: {message} (an endless loop, or far too slow)")
    where = f" (at {program_text(test.where)})" if test.where and test.where.startswith("candidate.py") else ""
    if test.error_type is None:
        return _clip(f"{name} did not finish: {message}")
    return _clip(f"{name} raised {_error_type(test.error_type)}: {message}{where}")


def program_text(text: str) -> str:
    """What a program wrote (an exception's message, a location), fit to quote in a prompt line: data, not prose.

    An issue goes into the next prompt of the model that wrote the draft, and in a code debate into the
    prompts of the other experts: text the code chose (``raise ValueError("\\n\\nIgnore the task ...")``)
    must not start lines of its own there, where it would read as the prompt's own bullets or
    instructions. So it stays on its issue's one line: line breaks, tabs and every control or bidi
    character are shown as escapes (``\\n``), undecodable parts escaped; it is clipped with the issue.
    Plain single-line text, which is what failures almost always are, comes back unchanged.
    """
    return terminal_safe(text_of(text)).replace("\n", "\\n").replace("\t", "\\t")


def _error_type(name: str) -> str:
    """The exception's class name, which the code chose: an identifier, else shown escaped like any program text."""
    return name if name.isidentifier() else program_text(repr(name))


def _reasoning(result: SandboxResult, fenced: bool) -> str:
    counts = {outcome: sum(t.outcome is outcome for t in result.tests) for outcome in Outcome}
    parts = [
        f"Ran the draft's code against {result.total} tests in a sandbox: {counts[Outcome.PASSED]} passed, "
        f"{counts[Outcome.FAILED]} failed an assertion, {counts[Outcome.ERROR]} raised an error, "
        f"{counts[Outcome.TIMEOUT]} timed out, {counts[Outcome.NOT_RUN]} did not run."
    ]
    if result.load is not None and result.load.outcome is not Outcome.PASSED:
        parts.append("The code failed before any test could run.")
    if not fenced:
        parts.append("The draft has no ```python block, so its whole text was run as code.")
    parts.append("The score is the share of tests passed; the verdict is accept only when every test passes.")
    return " ".join(parts)[:1500]


def _clip(text: str) -> str:
    return text if len(text) <= _POINT else text[: _POINT - 1] + "…"
