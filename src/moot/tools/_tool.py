"""Tools an agent may call: a name, a description, a pydantic argument model and an async function.

A tool knows nothing about permissions: :class:`moot.tools.ToolBox` checks
every call against a :class:`moot.tools.PermissionPolicy` before it runs.
``side_effects`` marks tools that change something outside moot (files,
network, a shell); the policy asks for approval before running those unless
told otherwise.

Built-in tools: ``run_python`` (the sandbox: no network, no files kept, a
clean environment), ``read_file`` and ``write_file`` confined to one work
directory.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from moot.boundary import argument_error, clip, text_of
from moot.errors import ConfigError, ToolFaultError
from moot.sandbox import SandboxLimits, SandboxRunner, SandboxStatus, run_in_thread, run_tests

__all__ = [
    "ReadFileArgs",
    "RunPythonArgs",
    "Tool",
    "ToolError",
    "ToolSource",
    "WriteFileArgs",
    "builtin_tools",
    "read_file_tool",
    "run_python_tool",
    "write_file_tool",
]

ToolFunction = Callable[[Any], Awaitable[str]]
"""Takes the validated argument model, returns the output text the agent sees."""

_READ_CHARS = 20_000
_WRITE_CHARS = 200_000


class ToolError(Exception):
    """The call was understood but could not be carried out (a missing file, a failing program).

    Its message goes back to the agent as the result of the call; it never ends the run.
    """


class ToolSource(BaseModel):
    """How to make a tool again from JSON, so a team with tools round-trips as a component.

    Either a built-in by name (``run_python`` with its sandbox limits, or a
    file tool with its work directory) or an importable function
    (``package.module:name``, made a tool as :meth:`Tool.from_function` does).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    builtin: Literal["run_python", "read_file", "write_file"] | None = None
    work_dir: str | None = None
    limits: SandboxLimits | None = None
    function: str | None = None
    side_effects: bool = False

    def build(self) -> Tool:
        if self.function is not None:
            return Tool.from_function(_import_function(self.function), side_effects=self.side_effects)
        if self.builtin == "run_python":
            return run_python_tool(self.limits)
        if self.builtin in ("read_file", "write_file") and self.work_dir is not None:
            return (read_file_tool if self.builtin == "read_file" else write_file_tool)(self.work_dir)
        raise ConfigError(f"tool source {self.model_dump(exclude_none=True)} names no tool; give builtin or function")


def _import_function(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    try:
        found: Any = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        raise ConfigError(f"cannot import tool function {path!r}; expected 'package.module:function'") from None
    if not callable(found):
        raise ConfigError(f"tool function {path!r} is not callable")
    return found  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Tool:
    """One callable capability. ``fn`` receives an instance of ``args`` and returns the output text."""

    name: str
    description: str
    args: type[BaseModel]
    fn: ToolFunction
    side_effects: bool = False
    source: ToolSource | None = field(default=None, compare=False)
    """How to make this tool again (None: it cannot be saved, e.g. a closure)."""
    unsaved_because: str = field(default="made from a function moot cannot name", compare=False)
    """Why a tool without a ``source`` cannot be saved, for the error that refuses to save it."""

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ConfigError(f"bad tool name {self.name!r}; use letters, digits and '_' (e.g. 'write_file')")
        if not callable(self.fn):
            raise ConfigError(f"tool {self.name!r}: fn must be a function of the argument model, got {self.fn!r}")
        if not inspect.iscoroutinefunction(self.fn):  # a plain function runs in a thread, as AutoGen's tools do
            function = self.fn

            async def in_thread(args: Any) -> str:
                return await asyncio.to_thread(function, args)

            object.__setattr__(self, "fn", in_thread)

    @classmethod
    def from_function(cls, function: Callable[..., Any], *, side_effects: bool = False) -> Tool:
        """A tool from a typed function (sync or async): its name, its docstring's first line, its parameters.

        ``def add(a: int, b: int) -> int`` becomes ``add(a: integer, b: integer)``; the result is shown as text.
        """
        if not callable(function):
            raise argument_error("Tool.from_function", "function", "a function or other callable", function)
        name = getattr(function, "__name__", "")
        parameters = inspect.signature(function).parameters.values()
        missing = [p.name for p in parameters if p.annotation is inspect.Parameter.empty]
        if missing or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
            raise ConfigError(
                f"tool function {name!r} needs a type annotation on every named parameter "
                f"(missing on: {', '.join(missing) or '*args/**kwargs'}), e.g. def add(a: int, b: int) -> int"
            )
        fields: dict[str, Any] = {
            p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default) for p in parameters
        }
        args = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)
        description = (inspect.getdoc(function) or name).strip().splitlines()[0]

        async def call(values: BaseModel) -> str:
            result = function(**values.model_dump())
            return str(await result if inspect.isawaitable(result) else result)

        why = _not_importable(function)
        path = f"{function.__module__}:{function.__qualname__}"
        source = ToolSource(function=path, side_effects=side_effects) if why is None else None
        return cls(name, description, args, call, side_effects, source, why or "")

    def signature(self) -> str:
        """``write_file(path: string, content: string)``: how prompts show the tool."""
        properties = self.args.model_json_schema().get("properties", {})
        params = ", ".join(f"{name}: {_kind(prop)}" for name, prop in properties.items())
        return f"{self.name}({params})"


def _not_importable(function: Callable[..., Any]) -> str | None:
    """Why a saved config could not find ``function`` again by importing it as ``module:qualname`` (None: it
    can). A tool is saved by that name, not by value, so loading a config runs no code the config carries."""
    qualname, module = getattr(function, "__qualname__", ""), getattr(function, "__module__", None)
    if "<lambda>" in qualname:
        return "it is a lambda, which has no name to import"
    if "<locals>" in qualname:
        return "it is defined inside a function, where an import cannot reach it"
    if module in (None, "__main__"):
        return "it is defined in the script being run or in a notebook (__main__), which a loader cannot import"
    return None


def _kind(prop: dict[str, Any]) -> str:
    if "type" in prop:
        kind = str(prop["type"])
        return f"list of {_kind(prop['items'])}" if kind == "array" and "items" in prop else kind
    if "anyOf" in prop:
        return " | ".join(_kind(p) for p in prop["anyOf"])
    return "value"


# ------------------------------------------------------------------ run_python
class RunPythonArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(min_length=1, max_length=20_000, description="A Python program; what it prints is the output.")
    tests: list[str] = Field(
        default_factory=list, max_length=20, description="Optional asserts run after the code; all must pass."
    )


def run_python_tool(
    limits: SandboxLimits | None = None, *, runner: SandboxRunner | None = None, tool_retries: int = 2
) -> Tool:
    """Run Python in the sandbox. The call fails (a ToolError) when the code raises or a test fails.

    The sandbox's own failures are retried ``tool_retries`` times, then raised
    as :class:`~moot.errors.ToolFaultError`: a broken tool is not the agent's fault.
    """
    run = runner or run_tests
    chosen = limits or SandboxLimits()

    async def run_python(args: RunPythonArgs) -> str:
        tests = args.tests or ["pass"]
        error = ""
        for _ in range(tool_retries + 1):
            result = await run_in_thread(run, args.code, tests, chosen)
            if result.status is not SandboxStatus.TOOL_FAULT:
                break
            error = result.tool_error or "the sandbox failed without details"
        else:
            raise ToolFaultError("run_python", tool_retries + 1, error)
        output = result.stdout.strip()
        if result.status is SandboxStatus.PASSED:
            tested = f"\n[{result.passed} of {result.total} tests passed]" if args.tests else ""
            return (output or "(no output)") + tested
        load = result.load
        if load is not None and load.outcome.value != "passed":
            raise ToolError(
                f"the code failed: {load.error_type or load.outcome.value}: {load.message}\n{output}".strip()
            )
        failed = "; ".join(f"`{t.label}` {t.outcome.value}: {t.message}" for t in result.failures)
        raise ToolError(f"{len(result.failures)} of {result.total} tests failed: {failed}\n{output}".strip())

    # A custom runner or retry count is not data: such a tool cannot be saved.
    source = ToolSource(builtin="run_python", limits=limits) if runner is None and tool_retries == 2 else None
    description = "Run a Python program in a sandbox and return what it prints."
    why = "it was given its own sandbox runner or retry count, which are code, not data"
    return Tool("run_python", description, RunPythonArgs, run_python, source=source, unsaved_because=why)


# ------------------------------------------------------------------ files in a work directory
class ReadFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=300, description="Relative to the work directory.")


class WriteFileArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, max_length=300, description="Relative to the work directory.")
    content: str = Field(max_length=_WRITE_CHARS)


def confined(root: Path, path: str) -> Path:
    """``path`` resolved inside ``root`` (symlinks followed), or ToolError when it would leave it."""
    base = root.resolve()
    target = (base / path).resolve()
    if not target.is_relative_to(base):
        raise ToolError(f"path {path!r} is outside the work directory; use a relative path such as 'notes.txt'")
    return target


def read_file_tool(root: str | os.PathLike[str]) -> Tool:
    base = Path(root)

    async def read_file(args: ReadFileArgs) -> str:
        target = confined(base, args.path)
        if not target.is_file():
            raise ToolError(f"no file {args.path!r} in the work directory")
        with target.open("rb") as source:  # at most what is shown (in UTF-8, 4 bytes a character): a file may be huge
            head = source.read(4 * _READ_CHARS + 1)
        return clip(text_of(head), _READ_CHARS)

    source = ToolSource(builtin="read_file", work_dir=str(root))
    return Tool("read_file", "Read a text file from the work directory.", ReadFileArgs, read_file, source=source)


def write_file_tool(root: str | os.PathLike[str]) -> Tool:
    base = Path(root)

    async def write_file(args: WriteFileArgs) -> str:
        target = confined(base, args.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args.content, encoding="utf-8")
        return f"wrote {len(args.content)} characters to {args.path}"

    source = ToolSource(builtin="write_file", work_dir=str(root))
    description = "Write a text file in the work directory."
    return Tool("write_file", description, WriteFileArgs, write_file, side_effects=True, source=source)


def builtin_tools(work_dir: str | os.PathLike[str], limits: SandboxLimits | None = None) -> list[Tool]:
    """``run_python``, ``read_file`` and ``write_file`` (files confined to ``work_dir``, created if missing)."""
    if not isinstance(work_dir, str | os.PathLike) or not str(work_dir).strip():
        raise argument_error("builtin_tools", "work_dir", "a folder path (str or Path)", work_dir)
    if limits is not None and not isinstance(limits, SandboxLimits):
        raise argument_error("builtin_tools", "limits", "a SandboxLimits or None", limits)
    Path(work_dir).mkdir(parents=True, exist_ok=True)
    return [run_python_tool(limits), read_file_tool(work_dir), write_file_tool(work_dir)]
