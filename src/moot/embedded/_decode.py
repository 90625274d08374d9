"""The decode loop: one token per step, or several when the next tokens are known or cheaply guessed.

Replies often copy their input: a revision repeats most of its draft, a
rebuttal quotes the positions it answers, and JSON keys are forced by the
schema. Tokens the grammar forces are taken without asking the sampler and
evaluated in one batch that computes logits for its last position only (the
forced text is the same; only how it is split into tokens is the grammar's
canonical one). Other guesses (the continuation of the latest n-gram seen
earlier in the prompt or reply) are evaluated with the step's token in one
batch and kept while the sampler itself picks them, in order; they are made
only where they pay on this machine (:mod:`moot.embedded._lookahead`). Every
token kept that way is the one the sampler drew at its position, from the
same distribution and random stream.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from moot.embedded._guided import JsonMask
from moot.embedded._llama_cpp import LoadedModel, Sampler
from moot.embedded._lookahead import MAX_GUESS, BatchCosts, NgramLookup
from moot.embedded._settings import DEFAULT_BATCH_COSTS
from moot.embedded._state_cache import common_prefix

__all__ = ["Generation", "evaluate_prompt", "generate"]


@dataclass
class Generation:
    tokens: list[int]
    finish_reason: Literal["stop", "length"]
    reused_prompt_tokens: int = 0
    """Prompt tokens whose KV cells were already in the context (live or restored), so not evaluated."""
    forced: int = 0
    """Tokens the grammar forced, taken in batches without sampling."""
    guessed: int = 0
    kept: int = 0


def generate(
    model: LoadedModel,
    prompt: list[int],
    *,
    max_tokens: int,
    temperature: float,
    seed: int | None,
    mask: JsonMask | None = None,
    grammar: str | None = None,
    lookahead: bool = True,
    costs: BatchCosts | None = None,
) -> Generation:
    """Decode a reply to ``prompt`` (whose prefix may already be in the KV cache) until an end token or the cap.

    ``grammar`` is GBNF (llama.cpp's grammar sampler); ``mask`` is llguidance's. ``costs`` decide whether a guess
    is worth it: the engine's table (shared across calls), by default the fixed table of the engine settings.
    """
    reused = evaluate_prompt(model, prompt)
    sampler = model.sampler(temperature, seed, mask=mask, grammar=grammar)
    costs = costs if costs is not None else BatchCosts.table(dict(DEFAULT_BATCH_COSTS))
    guesser = NgramLookup(prompt) if lookahead else None
    reply: list[int] = []
    result = Generation(reply, "length", reused)
    token = sampler.sample(-1)
    while True:
        if model.is_end(token):
            result.finish_reason = "stop"
            return result
        reply.append(token)
        if guesser is not None:
            guesser.append(token)
        budget = max_tokens - len(reply)
        if budget <= 0:
            return result
        forced = _forced(mask, reply, budget - 1, model) if guesser is not None else []
        if forced:
            token = _take_forced(model, sampler, token, forced, reply, guesser)
            result.forced += len(forced)
            continue
        guesses = guesser.propose(budget - 1, costs) if guesser is not None and budget > 1 else []
        token, kept = _step(model, sampler, token, guesses, reply, guesser, max_tokens, costs)
        result.guessed += len(guesses)
        result.kept += kept
        if guesser is not None:
            guesser.learn(len(guesses), kept)
        if token is None:
            return result


def evaluate_prompt(model: LoadedModel, prompt: list[int]) -> int:
    """Keep the KV cells the prompt shares with the live context; evaluate the rest (at least its last token).

    Returns how many prompt tokens were kept rather than evaluated.
    """
    shared = common_prefix(model.live_tokens(), np.asarray(prompt, np.int32))
    reuse = min(shared, len(prompt) - 1)
    if not model.drop_kv_from(reuse):
        reuse = 0
        model.clear_kv()
    model.n_tokens = reuse
    model.eval(prompt[reuse:])
    return reuse


def _forced(mask: JsonMask | None, reply: list[int], budget: int, model: LoadedModel) -> list[int]:
    """The tokens the grammar forces next (at most ``budget``, none past an end token)."""
    if mask is None or budget <= 0:
        return []
    forced = mask.forced_after(reply)[: min(MAX_GUESS, budget)]
    for index, token in enumerate(forced):
        if model.is_end(token):
            return forced[:index]
    return forced


def _take_forced(
    model: LoadedModel, sampler: Sampler, token: int, forced: list[int], reply: list[int], guesser: NgramLookup
) -> int:
    """Evaluate ``token`` and the forced tokens in one batch (logits for the last only); sample the next."""
    batch = [token, *forced]
    model.n_tokens = model.decode(batch, logits_all=False) + len(batch)
    for forced_token in forced:
        reply.append(forced_token)
        guesser.append(forced_token)
    return sampler.sample(-1)


def _step(
    model: LoadedModel,
    sampler: Sampler,
    token: int,
    guesses: list[int],
    reply: list[int],
    guesser: NgramLookup | None,
    max_tokens: int,
    costs: BatchCosts,
) -> tuple[int | None, int]:
    """Evaluate ``token`` plus the guesses in one batch; keep guesses while the sampler agrees.

    Returns the next token to emit (None once the cap is reached) and how many guesses were kept.
    """
    batch = [token, *guesses]
    started = time.perf_counter()
    model.n_tokens = model.decode(batch, logits_all=bool(guesses)) + 1
    costs.observe(len(batch), time.perf_counter() - started)
    kept = 0
    for index, guess in enumerate([*guesses, None]):
        drawn = sampler.sample(index if guesses else -1)
        if guess is None or drawn != guess or model.is_end(drawn):
            break
        kept += 1
        model.n_tokens += 1
        reply.append(drawn)
        if guesser is not None:
            guesser.append(drawn)
        if len(reply) >= max_tokens:
            drawn = None
            break
    if guesses:
        model.drop_kv_from(model.n_tokens)
    return drawn, kept
