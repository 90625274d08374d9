"""Roles and prompts the arms add to moot's built-in ones (short, so they live in code, not package data)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from moot.roles import Position, Role, expert, register_role, with_choices, with_pattern

__all__ = ["SHORT_DEBATER", "SOLVER", "ShortAnswer", "anchor_position", "solver"]


class ShortAnswer(BaseModel):
    """A reasoned short answer; reasoning first so the answer follows from it (see Critique)."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(max_length=1500)
    answer: str = Field(min_length=1, max_length=300)


SOLVER = register_role(
    Role(
        "solver",
        "Solves a question step by step and gives a short final answer.",
        "You solve problems carefully. In reasoning, work step by step and check each step. In answer, give "
        "only the final answer, in exactly the format the question asks for: no units, no explanation. "
        "When you receive a critique, fix every issue it lists and answer again.",
        ShortAnswer,
    )
)

SHORT_DEBATER = expert(
    "solver_expert",
    "You are a careful problem solver on a panel. Work the problem yourself and check each step; "
    "put only the final answer in `answer`, in the format the question asks for.",
    description="Debates a question with a short answer.",
)


@cache
def solver(choices: tuple[str, ...] = (), pattern: str | None = None) -> Role:
    """The solver, its answer constrained to ``choices`` when the item has a closed answer set, else to the
    item's answer ``pattern`` (on the embedded model a grammar, elsewhere a validation error fed back)."""
    if choices:
        return replace(SOLVER, output_type=with_choices(ShortAnswer, "answer", choices))
    if pattern is not None:
        return replace(SOLVER, output_type=with_pattern(ShortAnswer, "answer", pattern))
    return SOLVER


_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def anchor_position(reply: ShortAnswer) -> Position:
    """A solver's answer as a debate opening (``debate?anchor=single``, ``opening=solver``).

    The key arguments are the reasoning's last three sentences that state something (where the computation
    reaches its result), so the others rebut the solver's own words. A single call states no confidence:
    the others are shown none for it (see :class:`moot.teams.Debate`'s ``openings``), and round 1's vote
    weighs it as full (1.0), as every given opening (``opening=solver``): the default the sampled experts have to
    out-vote, it takes round 1's ties by the one tie rule (``moot.arbiters.TIE_RULE``: the expert listed first).
    Only the end of a long reasoning is kept: it is where the result is, and no expert is shown it.
    """
    sentences = [s.strip() for s in _SENTENCES.split(reply.reasoning) if 3 <= len(s.strip()) <= 200]
    stated = [s for s in sentences if len(s.split()) >= 2][-3:] or [f"working the task gives {reply.answer}"]
    cap = Position.model_fields["reasoning"].metadata[0].max_length
    return Position(reasoning=reply.reasoning[-cap:], answer=reply.answer, key_arguments=stated, confidence=1.0)
