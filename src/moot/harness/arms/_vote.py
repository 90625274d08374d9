"""Majority votes for self-consistency: over normalised short answers, or over programs' behaviour.

Programs rarely agree as text, so samples are grouped by what they *do*: each
runs on the docstring's example calls (inputs only, expected values unused)
in the sandbox, and samples that return the same outputs form one group
(execution-based agreement, as in MBR-exec / CodeT). The largest group wins;
its earliest sample is the answer. Samples that fail to load never win
while any sample loads. Without example calls, the vote falls back to the
programs' normalised syntax trees.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

from moot.arbiters import normalise_answer
from moot.harness.suites._items import CodeTask
from moot.programs import assemble_program, extract_code
from moot.sandbox import SandboxLimits, SandboxRunner, SandboxStatus, probe_signature, probe_test, run_in_thread

__all__ = ["Vote", "vote_answers", "vote_programs"]

_PROBE_LIMITS = SandboxLimits(wall_seconds=20, test_seconds=10, cpu_seconds=15, output_chars=50_000)
_BROKEN = "<broken>"


@dataclass(frozen=True)
class Vote:
    """The winning sample's index and how the votes fell."""

    winner: int
    groups: list[int] = field(default_factory=list)
    """Group sizes, largest first."""
    method: str = "answer"

    @property
    def metrics(self) -> dict[str, object]:
        return {"vote": self.method, "groups": self.groups, "top_votes": self.groups[0] if self.groups else 0}


def _plurality(keys: Sequence[str]) -> Vote:
    """Largest group of equal keys wins; ties go to the group seen first; broken keys win only when all are."""
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    eligible = [k for k in counts if k != _BROKEN] or list(counts)
    best = max(eligible, key=lambda k: (counts[k], -keys.index(k)))
    return Vote(keys.index(best), sorted(counts.values(), reverse=True))


def vote_answers(answers: Sequence[str]) -> Vote:
    """Plurality over normalised short answers (empty answers count as broken)."""
    if not answers:
        raise ValueError("no answers to vote on")
    return _plurality([normalise_answer(a) or _BROKEN for a in answers])


def _syntax_key(code: str) -> str:
    try:
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return _BROKEN


async def _behaviour(program: str, test: str, sandbox: SandboxRunner) -> str:
    result = await run_in_thread(sandbox, program, [test], _PROBE_LIMITS)
    if result.status is SandboxStatus.TOOL_FAULT:
        return _BROKEN
    return probe_signature(result) or _BROKEN


async def vote_programs(task: CodeTask, drafts: Sequence[str], sandbox: SandboxRunner) -> Vote:
    """Group drafts by their outputs on the task's probe calls (see module docstring)."""
    if not drafts:
        raise ValueError("no programs to vote on")
    if not task.probe_calls:
        keys = [_syntax_key(extract_code(d)[0]) for d in drafts]
        return Vote(_plurality(keys).winner, _plurality(keys).groups, "syntax")
    test = probe_test(task.probe_calls)
    keys = []
    for draft in drafts:  # one at a time: the sandbox is CPU-bound and the machine may be small
        keys.append(await _behaviour(assemble_program(task.stub, draft, task.entry_point), test, sandbox))
    vote = _plurality(keys)
    return Vote(vote.winner, vote.groups, "execution")
