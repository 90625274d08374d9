"""How sampling arms pick one answer: a plurality over short answers, and two ways to pick among programs.

Programs rarely agree as text, so each sample is run once in the sandbox on the
visible tests and the docstring's example calls (the evidence a code debate
gets, from the one owner of it: :func:`moot.teams.program_evidence`), and
samples whose outputs on the example calls agree form one behaviour group
(execution-based agreement, as in MBR-exec / CodeT). The two ways differ
only in what comes first:

* ``vote``, self-consistency's: the largest behaviour group wins (consensus
  first), ties to the group passing more visible tests, then the earliest;
* ``tests``, best-of-k's: the most visible tests passed wins (the tests filter
  first, as in CodeT and AlphaCode), ties to the larger behaviour group, then
  the earliest: exactly the program vote a code debate rules with.

Samples that fail to load never win while any sample loads. Without example
calls, behaviour is the visible-test outcomes plus the syntax tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from moot.arbiters import Candidate, Evidence, ProgramVote, normalise_answer
from moot.harness.suites._items import CodeTask
from moot.sandbox import SandboxLimits, SandboxRunner
from moot.teams import NO_OUTPUT, program_evidence

__all__ = ["PickedBy", "Vote", "select_programs", "vote_answers"]

_PROBE_LIMITS = SandboxLimits(wall_seconds=20, test_seconds=10, cpu_seconds=15, output_chars=50_000)
_BROKEN = "<broken>"
PickedBy = Literal["vote", "tests"]
"""How a sampling arm picks one of its samples: their vote, or the visible tests (code). (Not a report's
``Selection``, the variant chosen on a folder's own rows.)"""


@dataclass(frozen=True)
class Vote:
    """The winning sample's index and how the votes fell."""

    winner: int
    groups: list[int] = field(default_factory=list)
    """Group sizes, largest first."""
    method: str = "answer"
    passed: list[int] = field(default_factory=list)
    """Programs: visible tests each sample passed."""
    tied: int | None = None
    """Short answers: how many answers tied for the most votes (1: no tie decided the vote)."""

    @property
    def metrics(self) -> dict[str, object]:
        found: dict[str, object] = {
            "vote": self.method,
            "groups": self.groups,
            "top_votes": max(self.groups, default=0),
        }
        if self.passed:
            found["visible_passed"] = self.passed
        if self.tied is not None:
            found["tied_answers"] = self.tied
            found["decided_by_tie"] = self.tied > 1
        return found


def _plurality(keys: Sequence[str]) -> Vote:
    """Largest group of equal keys wins; a tie goes to the tied answer of the sample listed first (the rule every
    vote shares, :data:`moot.arbiters.TIE_RULE`: never how an answer is spelled); broken keys win only when all
    are."""
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    eligible = [k for k in counts if k != _BROKEN] or list(counts)
    top = max(counts[k] for k in eligible)
    tied = [k for k in eligible if counts[k] == top]  # (in the order first seen)
    return Vote(keys.index(tied[0]), sorted(counts.values(), reverse=True), tied=len(tied))


def vote_answers(answers: Sequence[str]) -> Vote:
    """Plurality over normalised short answers (empty answers count as broken)."""
    if not answers:
        raise ValueError("no answers to vote on")
    return _plurality([normalise_answer(a) or _BROKEN for a in answers])


def _agree(a: Evidence, b: Evidence) -> bool:
    """One behaviour only where both were observed (:attr:`Evidence.observed`) with equal outputs: samples whose
    outputs were never seen (no output, a flooded probe line) are no evidence of agreeing with anyone."""
    return a.observed and b.observed and a.behaviour == b.behaviour


def _group_sizes(evidence: Sequence[Evidence]) -> list[int]:
    counts: dict[str, int] = {}
    for index, e in enumerate(evidence):
        key = e.behaviour if e.observed else f"unobserved #{index}"
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts.values(), reverse=True)


def _by_consensus(evidence: Sequence[Evidence]) -> int:
    """The largest behaviour group of samples that load, then more visible tests, then the earliest."""
    loads = [i for i, e in enumerate(evidence) if e.behaviour != NO_OUTPUT] or list(range(len(evidence)))
    size = {i: 1 + sum(_agree(evidence[j], evidence[i]) for j in loads if j != i) for i in loads}
    return max(loads, key=lambda i: (size[i], evidence[i].passed, -i))


async def select_programs(task: CodeTask, drafts: Sequence[str], sandbox: SandboxRunner, how: PickedBy) -> Vote:
    """Pick one draft on the evidence (see module docstring)."""
    if not drafts:
        raise ValueError("no programs to choose from")
    evidence = []
    for draft in drafts:  # one at a time: the sandbox is CPU-bound and the machine may be small
        evidence.append(
            await program_evidence(
                draft, task.visible_tests, runner=sandbox, limits=_PROBE_LIMITS, stub=task.stub,
                entry_point=task.entry_point, probe_calls=task.probe_calls, tool="sample sandbox",
            )
        )  # fmt: skip
    if how == "vote":
        winner = _by_consensus(evidence)
    else:
        candidates = [
            Candidate(id=str(i), author=f"sample_{i}", round=1, code="", evidence=e) for i, e in enumerate(evidence)
        ]
        held = {c.author: c.id for c in candidates}
        winner = int(ProgramVote().rule(candidates, held).candidate)
    return Vote(winner, _group_sizes(evidence), f"execution, {how} first", [e.passed for e in evidence])
