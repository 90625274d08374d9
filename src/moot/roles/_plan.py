"""The planner's and executor's structured answers: Plan (of Steps), ToolCall and StepResult.

Reasoning first, bounded strings (see Critique). A step's success check is
machine-checkable where possible: ``tool_ok`` (the call ran and succeeded),
``output_contains`` / ``output_equals`` (a predicate on the call's output,
against ``expect``); only ``judge`` leaves it to the executor, which then
answers a StepResult about the call's output.

The executor picks one tool call per step as structured output (tool name
plus JSON arguments) rather than native function calling, which small local
models lack. :func:`tool_call_type` narrows the schema to the team's tools, so
on the embedded model the grammar only admits real tool names and argument
shapes.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from moot.roles._arguments import OneLineModel

__all__ = ["CHECKS", "Plan", "Step", "StepResult", "ToolCall", "plan_type", "tool_call_type"]

CheckKind = Literal["tool_ok", "output_contains", "output_equals", "judge"]
CHECKS: tuple[str, ...] = ("tool_ok", "output_contains", "output_equals", "judge")


class Step(OneLineModel):
    """One step of a plan: one tool call and how to tell it worked."""

    model_config = ConfigDict(extra="forbid")

    action: str = Field(min_length=3, max_length=300, description="What this step does, concretely.")
    tool: str = Field(min_length=1, max_length=40, description="The tool this step calls.")
    check: CheckKind = Field(description="How success is decided.")
    expect: str = Field(default="", max_length=200, description="Text the output must contain or equal.")

    @model_validator(mode="after")
    def _expectation_given(self) -> Step:
        if self.check in ("output_contains", "output_equals") and not self.expect.strip():
            raise ValueError(f"check {self.check!r} needs the expected text in 'expect'")
        return self


class Plan(OneLineModel):
    """The planner's plan: steps in order (moot numbers them)."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=800, description="How the task breaks down, briefly.")
    steps: list[Step] = Field(min_length=1, max_length=8)


class ToolCall(OneLineModel):
    """The executor's action for one step: exactly one tool call."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=600, description="Why this call performs the step.")
    tool: str = Field(min_length=1, max_length=40)
    args: dict[str, Any] = Field(default_factory=dict)


class StepResult(OneLineModel):
    """The executor's judgement of a step whose check is ``judge``: did the call's output do the step?"""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=600, description="Compare the output with what the step had to achieve.")
    success: bool
    summary: str = Field(min_length=1, max_length=300, description="What the step achieved, or why it failed.")


@cache
def tool_call_type(tools: tuple[tuple[str, type[BaseModel]], ...]) -> type[ToolCall]:
    """ToolCall whose ``tool`` is one of the names and whose ``args`` fit one of the argument models."""
    names = tuple(name for name, _ in tools)
    if not names:
        return ToolCall
    choice: Any = Literal.__getitem__(names)  # type: ignore[attr-defined]
    models = tuple(model for _, model in tools)
    args: Any = models[0] if len(models) == 1 else Union.__getitem__(models)  # type: ignore[attr-defined]
    model: type[ToolCall] = create_model(  # type: ignore[call-overload]
        "ToolCall", __base__=ToolCall, tool=(choice, ...), args=(args, ...)
    )
    return model


@cache
def plan_type(names: tuple[str, ...]) -> type[Plan]:
    """Plan whose steps may only name the given tools."""
    if not names:
        return Plan
    choice: Any = Literal.__getitem__(names)  # type: ignore[attr-defined]
    step: Any = create_model("Step", __base__=Step, tool=(choice, ...))  # type: ignore[call-overload]
    model: type[Plan] = create_model(  # type: ignore[call-overload]
        "Plan", __base__=Plan, steps=(list[step], Field(min_length=1, max_length=8))
    )
    return model
