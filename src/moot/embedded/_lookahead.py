"""What the decoder guesses ahead, and whether a guess pays on this machine.

A guess of k tokens is checked by evaluating k + 1 tokens in one batch, with
the logits of every position. What that batch costs against a single token
depends on the CPU: a batch of nine has taken about twice one token on one
2-core machine, and six times one token (30 ms against 180 ms) on a 2-core
AMD EPYC, where always guessing saved no time at all on a debate. So a guess
is made only when the tokens it is expected to keep pay for the bigger batch,
by a table of batch costs (:class:`BatchCosts`).

The table is fixed by default (the engine settings' ``batch_costs``): a batch
is evaluated with other arithmetic than one step (its logits differ in the
last bits), so whether a guess is made changes which token a near tie goes to.
Decisions taken from timings measured as the decoder runs made the same greedy
prompt give different replies from one process to the next, following the
machine's load; with a fixed table a reply depends on the prompt alone. Costs
measured live (``BatchCosts()``) remain an engine setting for speed alone.

Tokens the grammar forces (JSON keys and separators) are not guesses: the
decoder takes them without asking the sampler and evaluates them in a batch
that computes logits only for its last position, which is cheaper than one
step per token on every CPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MAX_GUESS", "BatchCosts", "NgramLookup", "worth_guessing"]

MAX_GUESS = 12
_SMOOTHING = 0.2
"""Weight of a new timing in a running mean: recent enough to follow the machine's load."""
_PRIOR_SLOPE = 1 / 8
"""Until a batch is timed, each token beyond the first is assumed to cost an eighth of a step (nine cost two)."""


@dataclass
class BatchCosts:
    """Seconds of a decode of n tokens with every position's logits (n = 1 is a plain step): a running mean of
    the timings observed, or, when ``fixed``, a table that timings never change."""

    seconds: dict[int, float] = field(default_factory=dict)
    fixed: bool = False

    @classmethod
    def table(cls, ratios: Mapping[int, float]) -> BatchCosts:
        """A fixed table: each batch size's cost against one step (sizes between and beyond are interpolated)."""
        return cls({1: 1.0, **{size: ratio for size, ratio in ratios.items() if size > 1}}, fixed=True)

    def observe(self, size: int, seconds: float) -> None:
        if self.fixed:
            return
        known = self.seconds.get(size)
        self.seconds[size] = seconds if known is None else known + _SMOOTHING * (seconds - known)

    def ratio(self, size: int) -> float:
        """Cost of a batch of ``size`` against one token; an optimistic guess (nine cost two) until measured.

        Unmeasured sizes are interpolated linearly between the nearest measured ones, so a machine where
        batches are dear stops guessing after one measurement instead of trying every size first.
        """
        single = self.seconds.get(1)
        if size <= 1 or not single:
            return 1.0
        known = [(1, 1.0), *sorted((n, s / single) for n, s in self.seconds.items() if n > 1)]
        sizes, ratios = [n for n, _ in known], [r for _, r in known]
        if size <= sizes[-1]:
            return float(np.interp(size, sizes, ratios))
        # Beyond the largest measured size: extend the last segment (the prior's slope if only one is known).
        slope = (ratios[-1] - ratios[-2]) / (sizes[-1] - sizes[-2]) if len(known) > 1 else _PRIOR_SLOPE
        return ratios[-1] + slope * (size - sizes[-1])


def worth_guessing(guess: list[int], acceptance: float, costs: BatchCosts) -> list[int]:
    """The prefix of ``guess`` with the most expected tokens per second, or [] if no guess beats one step.

    With each guessed token kept with probability ``acceptance`` given the ones before it were, a batch of
    ``1 + k`` tokens yields ``1 + a + ... + a**k`` tokens for ``ratio(1 + k)`` steps' time.
    """
    best, best_rate, expected = 0, 1.0, 1.0
    for k in range(1, len(guess) + 1):
        expected += acceptance**k
        rate = expected / costs.ratio(k + 1)
        if rate > best_rate:
            best, best_rate = k, rate
    return guess[:best]


class NgramLookup:
    """Guesses the next tokens from the latest earlier occurrence of the current n-gram (prompt lookup)."""

    def __init__(self, tokens: list[int], sizes: tuple[int, ...] = (4, 3, 2), acceptance: float = 0.6) -> None:
        self.tokens: list[int] = []
        self.sizes = sizes
        self._last: dict[tuple[int, ...], int] = {}
        self.limit = 4
        self.acceptance = acceptance
        """Running share of guessed tokens kept (given the ones before were): how much the next guess is worth."""
        self._withheld: int | None = None
        for token in tokens:
            self.append(token)

    def append(self, token: int) -> None:
        """Add a token; index the n-grams that end just before it (their continuation is now known)."""
        if self._withheld is not None:  # a guess not worth a batch, scored for free against what came
            self._observe(int(token == self._withheld), 1)
            self._withheld = None
        self.tokens.append(token)
        end = len(self.tokens) - 1
        for n in self.sizes:
            if end >= n:
                self._last[tuple(self.tokens[end - n : end])] = end

    def propose(self, budget: int, costs: BatchCosts) -> list[int]:
        """The guess worth checking now (maybe []); a withheld guess is still scored by the next token."""
        candidate = self.guess(budget)
        chosen = worth_guessing(candidate, self.acceptance, costs)
        self._withheld = candidate[0] if candidate and not chosen else None
        return chosen

    def guess(self, budget: int) -> list[int]:
        for n in self.sizes:
            start = self._last.get(tuple(self.tokens[-n:])) if len(self.tokens) >= n else None
            if start is not None:
                return self.tokens[start : start + min(self.limit, budget)]
        return []

    def learn(self, guessed: int, kept: int) -> None:
        """Follow how often guesses are kept: the guess length doubles after a fully kept guess and halves
        after a mostly rejected one, and the acceptance moves toward this guess's."""
        if not guessed:
            return
        self._observe(kept, min(guessed, kept + 1))  # the sampler judged the kept ones and the first rejected
        if kept == guessed:
            self.limit = min(MAX_GUESS, self.limit * 2)
        elif kept < guessed // 2:
            self.limit = max(1, self.limit // 2)

    def _observe(self, kept: int, checked: int) -> None:
        self.acceptance += _SMOOTHING * (kept / checked - self.acceptance)
