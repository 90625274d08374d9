"""When a debater's changed answer is adopted: only when the change is argued.

An expert that changes its answer must have a reason the record can see, and
check it: it answered a claim of an expert who held the new answer (it met
the argument for it), and its own words this round derive the new answer (its
recomputation confirms it). Otherwise the previous answer stands and the new
one is kept in ``Position.proposed``: the flip is recorded, not adopted.
"Debate or Vote" (NeurIPS 2025): updates not biased towards correction make
the rounds a random walk; this rule is the bias. Measured on the tuning slice
(chain_sum, seed 7, 30 items, 0.5B model), of the changes made while answering
the new answer's holder without deriving it, 3 of 4 went from right to wrong;
of those derived without meeting the new answer's argument, 4 of 36 went
right to wrong and 2 wrong to right; of those with both, 5 of 19 went wrong to
right and none right to wrong.

"Derived" is read conservatively: a numeric answer must be a result in the
expert's own words (after "=", or a number its words state that the task
does not, e.g. "11752 - 8591 = 3161", not "= 484 + 229"), so a number copied
from the question does not count; any other
answer must be stated in its words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from moot.arbiters import normalise_answer
from moot.roles import Position

__all__ = ["derives", "settle_change"]

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_RESULT = re.compile(r"(?:=|\bis\b|\bequals\b)\s*(-?\d[\d,]*(?:\.\d+)?)(?![\d.,]*\s*[-+*/×÷^])")
"""A number that ends a computation: after "=" (or "is"), and not the first operand of the next expression."""


def _numbers(text: str, pattern: re.Pattern[str]) -> set[str]:
    found = pattern.findall(text)
    return {normalise_answer(n) for n in found}


def derives(words: str, answer: str, task: str) -> bool:
    """Whether ``words`` (the expert's own reasoning this round) arrive at ``answer``, beyond quoting ``task``."""
    normal = normalise_answer(answer)
    if not normal:
        return False
    if _NUMBER.fullmatch(answer.strip()):
        return normal in _numbers(words, _RESULT) or (
            normal in _numbers(words, _NUMBER) and normal not in _numbers(task, _NUMBER)
        )
    return re.search(rf"(?<!\w){re.escape(normal)}(?!\w)", normalise_answer(words)) is not None


def settle_change(position: Position, previous: Position, held: Mapping[str, str], task: str) -> Position:
    """``position`` as recorded: a changed answer is adopted when met and derived (module docstring), else it stays
    ``previous.answer`` and the new one is kept as ``proposed``. ``held``: each other expert's normalised answer
    in the previous round."""
    new = normalise_answer(position.answer)
    if new == normalise_answer(previous.answer):
        return position
    persuaded = position.responds_to is not None and held.get(position.responds_to) == new
    words = " ".join(filter(None, [position.reasoning, position.response, position.because]))
    if persuaded and derives(words, position.answer, task):
        return position
    return position.model_copy(update={"answer": previous.answer, "proposed": position.answer})
