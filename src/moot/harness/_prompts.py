"""Roles and prompts the arms add to moot's built-in ones (short, so they live in code, not package data)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from moot.roles import Role, expert, register_role

__all__ = ["CODE_DEBATER", "IMPLEMENT", "SHORT_DEBATER", "SOLVER", "ShortAnswer", "code_debate_task"]


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

CODE_DEBATER = expert(
    "code_expert",
    "You are a senior Python engineer on a panel deciding how to implement a function correctly: the "
    "algorithm, and the edge cases its docstring and examples imply. In `answer`, state the algorithm in "
    "one or two sentences; in `key_arguments`, the edge cases and pitfalls that matter.",
    description="Debates how to implement a function.",
)


def code_debate_task(task: str) -> str:
    return "Decide how to implement this function correctly. Answer with the algorithm, not the code.\n\n" + task


IMPLEMENT = (
    "{task}\n\nA panel of engineers debated the approach. Their ruling:\n{decision}\n\nRationale:\n{rationale}\n"
    "{dissent}\nWrite the complete function following the ruling where it is right."
)
