"""Fix with tests: the generator fixes a buggy function, a critic that runs the tests verifies each attempt.

The critic is :class:`moot.roles.TestCritic`: no model judges the fix, the
tests do (in the sandbox). The loop ends when every test passes, or when the
budget (rounds or tokens) is spent: then the stop reason starts with
"budget spent" and the best attempt so far (most tests passed) is the answer.

Run:  moot run fix_with_tests                       (embedded offline model)
      python scenarios/fix_with_tests.py --model generator=local@0.2
"""

from __future__ import annotations

from typing import Any

from autogen_agentchat.base import TerminationCondition

from moot.cli import run_script
from moot.conditions import MaxRounds, ScoreThreshold, TokenBudget
from moot.roles import RoleAgent, TestCritic, role
from moot.scenario import RoleModels, Scenario
from moot.teams import Reflection, ReflectionResult

BUGGY = '''def median(values: list[float]) -> float:
    """Return the median of a non-empty list of numbers."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 0:
        return ordered[middle]
    return ordered[middle]
'''

TESTS = [
    "assert median([3, 1, 2]) == 2",
    "assert median([5]) == 5",
    "assert median([4, 1, 3, 2]) == 2.5",
    "assert median([1, 2]) == 1.5",
    "assert median([-1, -4, -2, -3]) == -2.5",
    "assert median([7, 7, 1, 9]) == 7",
]

TASK = f"""This Python function has a bug: for a list with an even number of values it returns the upper
middle value instead of the mean of the two middle values.

```python
{BUGGY}```

Fix the bug. Return the complete fixed function in one ```python code block."""

PASS_MARK = 100


def budget(threshold: int = PASS_MARK) -> TerminationCondition:
    """Good enough (every test passes), or the budget is spent (4 attempts or 12,000 tokens)."""
    return ScoreThreshold(threshold) | MaxRounds(4) | TokenBudget(12_000)


class FixWithTests(Reflection):
    """A Reflection whose stop reason says plainly whether the tests passed or the budget ran out."""

    threshold: int = PASS_MARK

    def _result(self, messages: list[Any], stop_reason: str, partial: bool) -> ReflectionResult:
        result = super()._result(messages, stop_reason, partial)
        best = result.best
        attempt = _attempt(best.round, best.critiques[0].score) if best is not None else "none was tested"
        if best is not None and (best.score or 0) >= self.threshold:
            result.stop_reason = f"all tests pass in round {best.round} ({stop_reason})"
        elif partial or self.waiting_for is not None:
            result.stop_reason = f"{stop_reason}; best attempt so far: {attempt}"
        else:
            result.stop_reason = f"budget spent ({stop_reason}); best attempt: {attempt}"
        return result


def _attempt(number: int, test_score: int) -> str:
    """The TestCritic's score is the share of tests passed (rounded down): recover the count."""
    passed = round(test_score * len(TESTS) / 100)
    return f"round {number}, {passed} of {len(TESTS)} tests passed"


def build_team(models: RoleModels, *, llm_critic: bool = False) -> FixWithTests:
    """The team; ``llm_critic=True`` adds an LLM reviewer after the test runner.

    A round's score is its lowest critic's: with the reviewer, 85 can only be
    reached when every test passes (5 of 6 scores 83) and the reviewer agrees.
    """
    critics: list[Any] = [TestCritic(TESTS, entry_points=["median"])]
    threshold = PASS_MARK
    if llm_critic:
        critics.append(RoleAgent(role("critic"), models.spec("critic")))
        threshold = 85
    team = FixWithTests(RoleAgent(role("generator"), models.spec("generator")), critics, stop=budget(threshold))
    team.threshold = threshold
    return team


def build(models: RoleModels) -> FixWithTests:
    return build_team(models)


SCENARIO = Scenario(
    name="fix_with_tests",
    description="the generator fixes a buggy median(); a critic that runs its tests verifies (reflection)",
    task=TASK,
    roles=("generator",),
    build=build,
)

if __name__ == "__main__":
    run_script(SCENARIO)
