"""The decode loop: one token per step, or several when a cheap guess of the next tokens is right.

Replies often copy their input: a revision repeats most of its draft, a
rebuttal quotes the positions it answers, and JSON keys are forced by the
schema. Each step guesses the next tokens (the grammar's forced tokens, else
the continuation of the latest n-gram seen earlier in the prompt or reply),
evaluates the step's token and the guesses in one batch, and keeps the
guesses the sampler itself picks, in order. On CPU a batch of nine tokens
costs about twice a single one, so the guess length adapts to how often
guesses were kept. Sampling is unchanged: every kept token is the one the
sampler drew at its position, from the same distribution and random stream.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from llama_cpp import Llama, LlamaGrammar, LogitsProcessorList
from llama_cpp import llama_cpp as native

from moot.models._guided import JsonMask
from moot.models._state_cache import common_prefix

__all__ = ["Generation", "NgramLookup", "evaluate_prompt", "generate"]

MAX_GUESS = 12


@dataclass
class Generation:
    tokens: list[int]
    finish_reason: Literal["stop", "length"]
    reused_prompt_tokens: int = 0
    """Prompt tokens whose KV cells were already in the context (live or restored), so not evaluated."""
    guessed: int = 0
    kept: int = 0


class NgramLookup:
    """Guesses the next tokens from the latest earlier occurrence of the current n-gram (prompt lookup)."""

    def __init__(self, tokens: list[int], sizes: tuple[int, ...] = (4, 3, 2)) -> None:
        self.tokens: list[int] = []
        self.sizes = sizes
        self._last: dict[tuple[int, ...], int] = {}
        self.limit = 4
        for token in tokens:
            self.append(token)

    def append(self, token: int) -> None:
        """Add a token; index the n-grams that end just before it (their continuation is now known)."""
        self.tokens.append(token)
        end = len(self.tokens) - 1
        for n in self.sizes:
            if end >= n:
                self._last[tuple(self.tokens[end - n : end])] = end

    def guess(self, budget: int) -> list[int]:
        for n in self.sizes:
            start = self._last.get(tuple(self.tokens[-n:])) if len(self.tokens) >= n else None
            if start is not None:
                return self.tokens[start : start + min(self.limit, budget)]
        return []

    def learn(self, guessed: int, kept: int) -> None:
        """Grow the guess length after a fully kept guess, shrink it after a rejected one."""
        if guessed and kept == guessed:
            self.limit = min(MAX_GUESS, self.limit * 2)
        elif kept < guessed // 2:
            self.limit = max(1, self.limit // 2)


def generate(
    llm: Llama,
    prompt: list[int],
    *,
    max_tokens: int,
    temperature: float,
    seed: int | None,
    mask: JsonMask | None = None,
    grammar: LlamaGrammar | None = None,
    lookahead: bool = True,
) -> Generation:
    """Decode a reply to ``prompt`` (whose prefix may already be in the KV cache) until an end token or the cap."""
    reused = evaluate_prompt(llm, prompt)
    llm.set_seed(seed if seed is not None else random.Random(llm._seed).randint(0, 2**32))
    sampler = llm._init_sampler(
        temp=temperature, logits_processor=LogitsProcessorList([mask]) if mask else None, grammar=grammar
    )
    vocab = llm._model.vocab
    guesser = NgramLookup(prompt) if lookahead else None
    reply: list[int] = []
    result = Generation(reply, "length", reused)
    token = sampler.sample(llm._ctx, -1)
    while True:
        if native.llama_vocab_is_eog(vocab, token):
            result.finish_reason = "stop"
            return result
        reply.append(token)
        if guesser is not None:
            guesser.append(token)
        if len(reply) >= max_tokens:
            return result
        guesses = _guesses(guesser, mask, reply, max_tokens - len(reply)) if lookahead else []
        token, kept = _step(llm, sampler, token, guesses, reply, guesser, vocab, max_tokens)
        result.guessed += len(guesses)
        result.kept += kept
        if guesser is not None:
            guesser.learn(len(guesses), kept)
        if token is None:
            return result


def evaluate_prompt(llm: Llama, prompt: list[int]) -> int:
    """Keep the KV cells the prompt shares with the live context; evaluate the rest (at least its last token).

    Returns how many prompt tokens were kept rather than evaluated.
    """
    shared = common_prefix(np.asarray(llm.input_ids[: llm.n_tokens], dtype=np.int32), np.asarray(prompt, np.int32))
    reuse = min(shared, len(prompt) - 1)
    if not llm._ctx.kv_cache_seq_rm(-1, reuse, -1):
        reuse = 0
        llm._ctx.kv_cache_clear()
    llm.n_tokens = reuse
    llm.eval(prompt[reuse:])
    return reuse


def _guesses(guesser: NgramLookup | None, mask: JsonMask | None, reply: list[int], budget: int) -> list[int]:
    if budget <= 1:
        return []
    forced = mask.forced_after(reply) if mask is not None else []
    if forced:
        return forced[: min(MAX_GUESS, budget - 1)]
    return guesser.guess(budget - 1) if guesser is not None else []


def _step(
    llm: Llama,
    sampler: Any,
    token: int,
    guesses: list[int],
    reply: list[int],
    guesser: NgramLookup | None,
    vocab: Any,
    max_tokens: int,
) -> tuple[int | None, int]:
    """Evaluate ``token`` plus the guesses in one batch; keep guesses while the sampler agrees.

    Returns the next token to emit (None once the cap is reached) and how many guesses were kept.
    """
    batch = [token, *guesses]
    n_past = llm.n_tokens
    llm._batch.set_batch(batch=batch, n_past=n_past, logits_all=bool(guesses))
    llm._ctx.decode(llm._batch)
    llm.input_ids[n_past : n_past + len(batch)] = batch
    llm.n_tokens = n_past + 1
    kept = 0
    for index, guess in enumerate([*guesses, None]):
        drawn = sampler.sample(llm._ctx, index if guesses else -1)
        if guess is None or drawn != guess or native.llama_vocab_is_eog(vocab, drawn):
            break
        kept += 1
        llm.n_tokens += 1
        reply.append(drawn)
        if guesser is not None:
            guesser.append(drawn)
        if len(reply) >= max_tokens:
            drawn = None
            break
    if guesses:
        llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
    return drawn, kept
