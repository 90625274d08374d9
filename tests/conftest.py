"""Shared builders for team tests: critiques and a generator/critic Reflection on a scripted model."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from autogen_agentchat.base import TerminationCondition

from moot import Critique, Reflection, RoleAgent, role
from moot.testing import ScriptedModel


def make_critique(score: int, *issues: str) -> Critique:
    """A valid critique: 'accept' when no issues are given, else 'revise' with those issues."""
    return Critique(
        reasoning=f"checked against the task; score {score}",
        score=score,
        strengths=["readable"],
        issues=list(issues),
        verdict="revise" if issues else "accept",
    )


def make_reflection(model: ScriptedModel, stop: TerminationCondition, *, critic_retries: int = 2) -> Reflection:
    """Agents named 'generator' and 'critic', built from the model's spec (call inside ``with model:``)."""
    return Reflection(
        RoleAgent(role("generator"), model.spec),
        RoleAgent(role("critic"), model.spec, max_parse_retries=critic_retries),
        stop=stop,
    )


@pytest.fixture
def critique() -> Callable[..., Critique]:
    return make_critique


@pytest.fixture
def reflection() -> Callable[..., Reflection]:
    return make_reflection
