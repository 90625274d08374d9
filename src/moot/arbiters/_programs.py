"""ProgramVote: the ruling of a code debate, a choice among candidate programs by their evidence.

A ruling on code must pick a program that exists, never re-implement one
from a prose summary. The evidence decides, in this order:

1. visible tests passed (a candidate that does not load passes none);
2. votes: how many experts hold a candidate that behaves the same way
   (same outputs on the probe calls, or the same syntax tree when there
   are none), so adopting a candidate is a vote for it. A candidate whose
   behaviour was not observed (no probe output: it did not load, died, or
   flooded the probe's line out) behaves like no other candidate: two
   different programs that both hid their behaviour are not one group;
3. the earliest candidate, in the experts' order.

No model call, no position or verbosity bias. The hidden scoring tests are
never part of the evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["UNOBSERVED", "Candidate", "Evidence", "ProgramRuling", "ProgramVote", "same_behaviour"]

UNOBSERVED = "<no output>"
"""The behaviour of a program whose outputs on the probe calls were not observed (it printed none)."""


class Evidence(BaseModel):
    """A candidate's results on the visible tests (and its outputs on the probe calls)."""

    model_config = ConfigDict(extra="forbid")

    passed: int = 0
    total: int = 0
    failures: list[str] = []
    """One line per failing test, or the reason the code did not load."""
    behaviour: str = ""
    """Outputs on the probe calls (or the syntax tree's digest): equal behaviour, equal string. Empty or
    :data:`UNOBSERVED`: not observed, equal to no other candidate's (see :func:`same_behaviour`)."""

    @property
    def observed(self) -> bool:
        return bool(self.behaviour) and self.behaviour != UNOBSERVED

    @property
    def all_pass(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def summary(self) -> str:
        """One line for a prompt: the count, and the first failure when there is one."""
        if self.all_pass:
            return f"passes all {self.total} visible tests"
        head = f"passes {self.passed} of {self.total} visible tests"
        return f"{head}; first failure: {self.failures[0]}" if self.failures else head


class Candidate(BaseModel):
    """One program proposed in a code debate: who wrote it, when, from what, and how it fared."""

    model_config = ConfigDict(extra="forbid")

    id: str
    author: str
    round: int
    code: str
    origin: Literal["wrote", "fixed"] = "wrote"
    based_on: str | None = None
    """The candidate a fix started from."""
    evidence: Evidence = Evidence()


def same_behaviour(a: Candidate, b: Candidate) -> bool:
    """Whether ``a`` and ``b`` count as one behaviour: the same candidate, or both observed with equal outputs.

    A behaviour that was not observed is nobody's evidence of agreement: counted as one group, every program
    that hides its outputs (by dying, or by flooding the probe's line out) would vote with every other one.
    """
    if a.id == b.id:
        return True
    return a.evidence.observed and b.evidence.observed and a.evidence.behaviour == b.evidence.behaviour


class ProgramRuling(BaseModel):
    """Which candidate won, and the standings that decided it."""

    model_config = ConfigDict(extra="forbid")

    candidate: str
    rationale: str
    votes: dict[str, int] = Field(default_factory=dict)
    """Per candidate id: experts holding a candidate that behaves like it."""


class ProgramVote:
    """Picks among every candidate proposed, by evidence and then by the experts holding it (module docstring)."""

    name = "program_vote"

    def rule(self, candidates: Sequence[Candidate], held: Mapping[str, str]) -> ProgramRuling:
        """``candidates`` in the order proposed; ``held``: expert -> id of the candidate it holds now.

        A fix that made things worse does not cost the debate the program it
        started from: every candidate stays eligible, holders only add votes.
        """
        if not candidates:
            raise ValueError("ProgramVote needs at least one candidate")
        by_id = {c.id: c for c in candidates}
        holders = [(expert, by_id[cid]) for expert, cid in held.items() if cid in by_id]
        votes = {c.id: sum(same_behaviour(h, c) for _, h in holders) for c in candidates}
        order = {c.id: i for i, c in enumerate(candidates)}
        best = max(candidates, key=lambda c: (c.evidence.passed, votes[c.id], -order[c.id]))
        backers = [e for e, c in holders if same_behaviour(c, best)]
        rationale = (
            f"{best.id} by {best.author} {best.evidence.summary()}, the most of any of {len(candidates)} candidates; "
            f"{len(backers)} of {len(held)} experts hold a program that behaves the same"
            + (f" ({', '.join(backers)})." if backers else ".")
        )
        return ProgramRuling(candidate=best.id, rationale=rationale, votes=votes)
