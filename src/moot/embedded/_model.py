"""The embedded model's engine: one llama.cpp context, shared by every client of it, at full speed.

What it adds to llama-cpp-python (each measured in bench/RESULTS.md, section "engine"):

* prompt reuse across roles: the KV state after each call is kept in a
  byte-capped LRU (:mod:`moot.embedded._state_cache`); a call restores the state
  that shares the longest prefix with its prompt and evaluates only the rest;
* prompt reuse across processes: the state after each system prompt is kept on
  disk (:mod:`moot.embedded._disk_states`), so a new run's first call per role
  starts after its system prompt;
* constrained decoding with llguidance (:mod:`moot.embedded._guided`) instead of
  llama.cpp's grammar sampler, which scans the whole vocabulary per token;
* several tokens per step (:mod:`moot.embedded._decode`): the grammar's forced
  tokens taken in one batch, and n-grams looked up in the prompt (which
  revisions and rebuttals copy) verified in one batch where this machine's
  batch costs make that pay (:mod:`moot.embedded._lookahead`);
* threads = physical cores, and a machine-wide lock around each call
  (:mod:`moot.embedded._machine_lock`), so concurrent processes take turns.

Calls are serialised: one ``Llama`` must not be used from two threads, and
AutoGen runs each call in an executor thread. llama-cpp-python itself is
reached only through :mod:`moot.embedded._llama_cpp`.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from moot.embedded._decode import Generation, evaluate_prompt, generate
from moot.embedded._disk_states import DiskStates
from moot.embedded._guided import GuidedJson
from moot.embedded._llama_cpp import json_grammar, load
from moot.embedded._lookahead import BatchCosts
from moot.embedded._machine_lock import MachineLock
from moot.embedded._settings import EngineSettings
from moot.embedded._state_cache import PrefixStateCache, common_prefix

__all__ = ["CONTEXT_TOKENS", "EmbeddedEngine", "EngineStats"]

CONTEXT_TOKENS = 8192
_SPOKEN_REPLIES = 64
"""Recent replies whose decoded tokens are kept (a few KiB each) for prompts that send them back."""


@dataclass
class EngineStats:
    """Counters since the engine started (or since ``reset_stats``)."""

    calls: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Prompt tokens whose KV came from the live context or a restored state instead of being evaluated."""
    completion_tokens: int = 0
    forced_tokens: int = 0
    """Tokens the grammar forced, evaluated in batches without a sampling step each."""
    guessed_tokens: int = 0
    """Tokens the decoder guessed ahead (looked up in the prompt or reply) and verified in a batch."""
    kept_guesses: int = 0
    restores: int = 0
    """States loaded (from memory or disk) instead of evaluating their tokens."""
    disk_restores: int = 0
    """Of those, system-prompt states read from disk (kept by an earlier process or call)."""
    seconds_restoring: float = 0.0
    seconds_saving: float = 0.0
    per_call: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=256))
    """The latest calls' prompt, cached and completion tokens and seconds (bounded: a process may run for days)."""


class EmbeddedEngine:
    """A llama.cpp model with a prompt-state cache and fast constrained decoding; calls are serialised."""

    def __init__(self, path: Path, settings: EngineSettings, lock_path: Path, states_path: Path) -> None:
        self.settings = settings
        self._model = load(path, n_ctx=CONTEXT_TOKENS, threads=settings.effective_threads)
        self._lock = threading.Lock()
        self._machine = MachineLock(lock_path) if settings.machine_lock else None
        self._states = PrefixStateCache(settings.state_cache_bytes) if settings.state_cache_bytes else None
        self._disk = DiskStates(states_path, settings.disk_state_bytes) if settings.disk_state_bytes else None
        self._formatter = self._model.chat_formatter()
        self._spoken: dict[str, list[int]] = {}
        self._guided: GuidedJson | None = None
        self._batch_costs = (
            BatchCosts.table(dict(settings.batch_costs)) if settings.batch_costs is not None else BatchCosts()
        )
        self.stats = EngineStats()

    # ------------------------------------------------------------------ calls
    def create_chat_completion(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
        stream: bool = False,
    ) -> dict[str, Any]:
        """An OpenAI-shaped chat completion (what AutoGen's llama.cpp client reads), plus cached-token usage."""
        if stream:
            raise ValueError("the embedded engine answers in one piece; stream=True is not supported")
        prompt = self.prompt_tokens(messages)
        schema = (response_format or {}).get("schema")
        system = self.system_prompt_length(messages, prompt) if self._disk is not None else 0
        with self._lock, self._machine or contextlib.nullcontext():
            started = time.perf_counter()
            self._restore_best(prompt)
            evaluated = self._reuse_system_prompt(prompt[:system])
            generation = generate(
                self._model,
                prompt,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                lookahead=self.settings.lookahead,
                costs=self._batch_costs,
                **(self._constraint(schema, len(prompt)) if schema is not None else {}),
            )
            seconds = time.perf_counter() - started
            self._remember()
            text = self._model.detokenize(generation.tokens).decode("utf-8", errors="ignore")
            self._keep_spoken(text, generation.tokens)
        generation.reused_prompt_tokens -= evaluated  # evaluated here, before generate saw them as kept
        return self._chat_response(text, generation, len(prompt), seconds)

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> list[int]:
        """The tokens the model's chat template renders ``messages`` to: what a call evaluates.

        An assistant message holding one of this engine's recent replies is given the tokens that reply was
        decoded as, not its text tokenized again: a model writes some text as tokens the tokenizer would
        merge differently (a revision's prompt matched its draft's kept state for 433 of 590 tokens), and
        only the decoded tokens continue the state kept after that reply.
        """
        formatted = self._formatter(messages=messages)
        text, bos = formatted.prompt, not formatted.added_special
        tokens: list[int] = []
        done = 0  # characters of ``text`` already in ``tokens``
        for index, message in enumerate(messages):
            content = message.get("content")
            spoken = self._spoken.get(content) if message.get("role") == "assistant" and content else None
            if spoken is None:
                continue
            head = self._formatter(messages=messages[:index]).prompt  # ends where the reply was decoded
            if len(head) < done or not text.startswith(head + content):
                continue
            piece = text[done : len(head)].encode("utf-8")
            tokens += self._model.tokenize(piece, add_bos=bos and not done, special=True)
            tokens += spoken
            done = len(head) + len(content)
        return tokens + self._model.tokenize(text[done:].encode("utf-8"), add_bos=bos and not done, special=True)

    def reply_tokens(self, text: str) -> list[int]:
        """The tokens a recent reply was decoded as (``text`` tokenized if it is not one)."""
        return list(self._spoken.get(text) or self._model.tokenize(text.encode("utf-8"), add_bos=False))

    def system_prompt_length(self, messages: list[dict[str, Any]], prompt: list[int]) -> int:
        """How many of ``prompt``'s tokens render its leading system message (0 without one)."""
        if not messages or messages[0].get("role") != "system":
            return 0
        alone = np.asarray(self.prompt_tokens(messages[:1]), dtype=np.int32)
        return common_prefix(alone, np.asarray(prompt, dtype=np.int32))

    def tokenize(self, data: bytes) -> list[int]:
        with self._lock:
            return self._model.tokenize(data)

    def n_ctx(self) -> int:
        return self._model.n_ctx()

    def reset_stats(self) -> None:
        self.stats = EngineStats()

    def forget_states(self, disk: bool = False) -> None:
        """Drop every kept state and the live context: the next call evaluates its prompt from scratch.

        ``disk`` also deletes the system-prompt states kept on disk for later processes.
        """
        with self._lock:
            if self._states is not None:
                self._states.clear()
            if disk and self._disk is not None:
                self._disk.clear()
            self._model.reset()
            self._model.clear_kv()

    @property
    def state_cache_bytes(self) -> int:
        """Bytes held by kept states now (0 when the cache is off)."""
        return self._states.nbytes if self._states is not None else 0

    # --------------------------------------------------------------- grammars
    def grammar_compiles(self, schema: dict[str, Any]) -> bool:
        """Whether the configured grammar backend accepts ``schema`` on the real vocabulary.

        llama.cpp parses a grammar only when sampling starts, and a grammar it
        rejects there crashes the process; so it is tried on the real
        vocabulary first. llguidance validates up front.
        """
        if self.settings.grammar == "llguidance":
            try:
                self._guidance().grammar(schema)
            except ValueError:
                return False
            return True
        try:
            grammar = json_grammar(schema)
        except (ValueError, RuntimeError, AssertionError):  # its converter asserts on what it cannot translate
            return False
        with self._lock:
            return self._model.grammar_compiles(grammar)

    def _constraint(self, schema: dict[str, Any], prompt_length: int) -> dict[str, Any]:
        if self.settings.grammar == "llguidance":
            return {"mask": self._guidance().mask(schema, prompt_length)}
        return {"grammar": json_grammar(schema)}

    def _guidance(self) -> GuidedJson:
        if self._guided is None:
            self._guided = GuidedJson(self._model.guidance_tokenizer(), self._model.n_vocab())
        return self._guided

    # ----------------------------------------------------------- state cache
    def _restore_best(self, prompt: list[int]) -> None:
        """Load the kept state that shares more of ``prompt`` than the live context does, if any."""
        if self._states is None:
            return
        live = common_prefix(self._model.live_tokens(), np.asarray(prompt, dtype=np.int32))
        found = self._states.best(prompt, better_than=live)
        if found is not None:
            self._load(found[0].tokens, found[0].data)

    def _reuse_system_prompt(self, system: list[int]) -> int:
        """Start from the disk's state of this system prompt, or evaluate it and keep it there.

        Returns how many tokens were evaluated here (they are not cache hits).
        """
        if self._disk is None or not system:
            return 0
        live = common_prefix(self._model.live_tokens(), np.asarray(system, dtype=np.int32))
        if live >= len(system):
            return 0
        found = self._disk.best(system, better_than=live)
        if found is not None and self._load(found[0], found[1]):
            live = found[2]
            self.stats.disk_restores += 1
            if live >= len(system):
                return 0
        kept = evaluate_prompt(self._model, system)
        started = time.perf_counter()
        self._disk.put(system, self._model.state())
        self.stats.seconds_saving += time.perf_counter() - started
        return len(system) - kept

    def _load(self, tokens: np.ndarray, data: bytes) -> bool:
        """Make ``data`` (the KV cells after ``tokens``) the live context; False (and a reset) if llama.cpp refuses."""
        started = time.perf_counter()
        if not self._model.load_state(tokens, data):
            return False
        self.stats.restores += 1
        self.stats.seconds_restoring += time.perf_counter() - started
        return True

    def _keep_spoken(self, text: str, tokens: list[int]) -> None:
        """Remember how ``text`` was decoded, for a later prompt that sends it back (the oldest forgotten)."""
        self._spoken.pop(text, None)
        self._spoken[text] = list(tokens)
        while len(self._spoken) > _SPOKEN_REPLIES:
            del self._spoken[next(iter(self._spoken))]

    def _remember(self) -> None:
        """Keep the live state (prompt plus reply) for a later call that starts the same way."""
        if self._states is None or self._model.n_tokens == 0:
            return
        started = time.perf_counter()
        self._states.put(self._model.live_tokens(), self._model.state())
        self.stats.seconds_saving += time.perf_counter() - started

    # ---------------------------------------------------------------- helpers
    def _chat_response(self, text: str, generation: Generation, prompt_tokens: int, seconds: float) -> dict[str, Any]:
        completion_tokens = len(generation.tokens)
        cached = generation.reused_prompt_tokens
        stats = self.stats
        stats.calls += 1
        stats.prompt_tokens += prompt_tokens
        stats.cached_prompt_tokens += cached
        stats.completion_tokens += completion_tokens
        stats.forced_tokens += generation.forced
        stats.guessed_tokens += generation.guessed
        stats.kept_guesses += generation.kept
        stats.per_call.append(
            {"prompt": prompt_tokens, "cached": cached, "completion": completion_tokens, "s": round(seconds, 3)}
        )
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self._model.path,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": generation.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
