"""Constrained JSON decoding with llguidance: the token mask in microseconds, not a scan of the vocabulary.

llama.cpp's own grammar sampler checks every one of the ~151k candidate tokens
against the grammar at every step, which halves generation speed, and it
unrolls ``maxLength`` into one rule per character. llguidance (a Rust library
with binary wheels on PyPI) walks a token trie instead and computes the
mask in well under a millisecond; moot applies it to the logits before
llama.cpp samples, so sampling itself is unchanged.

String length bounds stay in the grammar (llguidance checks them in its
lexer, without llama.cpp's rule per character), so a small model cannot
ramble inside one string until ``max_tokens`` and leave broken JSON; a string
the bound closed mid-sentence is cut back to a sentence end afterwards
(``moot.roles._fit``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import llguidance
import llguidance.numpy as llg_numpy
import numpy as np

__all__ = ["GuidedJson", "JsonMask"]

# One line, a space after each separator: '{"a": "b", "c": 1}', the form the model writes under
# llama.cpp's grammar. Free whitespace cost tokens for nothing (pretty-printed replies ran ~10%
# longer, and runs of 24 spaces appeared between fields) and left every separator to the sampler;
# fixed separators are forced, so the decoder batches them with the next key. Separators without
# spaces ('{"a":"b"}') push the small model off that form: it began copying its prompt.
_JSON_OPTIONS = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


class GuidedJson:
    """llguidance for one model: its tokenizer (built once) and each schema's grammar."""

    def __init__(self, tokenizer: llguidance.LLTokenizer, n_vocab: int) -> None:
        self.n_vocab = n_vocab
        self._tokenizer = tokenizer
        self._grammars: dict[str, str] = {}

    def grammar(self, schema: dict[str, Any]) -> str:
        """The checked llguidance grammar for ``schema``; ValueError naming the problem if it cannot be built."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            grammar = llguidance.LLMatcher.grammar_from_json_schema(schema, defaults=_JSON_OPTIONS)
            failed, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grammar, self._tokenizer)
            if failed:
                raise ValueError(f"no grammar can be built for this schema: {'; '.join(messages)}")
            self._grammars[key] = grammar
        return self._grammars[key]

    def mask(self, schema: dict[str, Any], prompt_length: int) -> JsonMask:
        return JsonMask(llguidance.LLMatcher(self._tokenizer, self.grammar(schema)), self.n_vocab, prompt_length)


class JsonMask:
    """A llama-cpp-python logits processor: tokens the grammar forbids get -inf.

    It is called before each sampled token with every token evaluated so far;
    the ones after the prompt are the reply, fed to the matcher as they come.
    """

    def __init__(self, matcher: llguidance.LLMatcher, n_vocab: int, prompt_length: int) -> None:
        self._matcher = matcher
        self._n_vocab = n_vocab
        self._prompt_length = prompt_length
        self._seen = prompt_length
        self._bits = llg_numpy.allocate_token_bitmask(1, n_vocab)

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        self._consume(input_ids[self._seen :])
        llg_numpy.fill_next_token_bitmask(self._matcher, self._bits)
        allowed = np.unpackbits(self._bits.view(np.uint8), bitorder="little", count=self._n_vocab)
        scores[allowed == 0] = -np.inf
        return scores

    def forced_after(self, reply: list[int]) -> list[int]:
        """The tokens the grammar forces after ``reply`` (JSON keys and punctuation), for the decoder to batch."""
        self._consume(reply[self._seen - self._prompt_length :])
        if self._matcher.is_stopped():
            return []
        return list(self._matcher.compute_ff_tokens())

    def _consume(self, tokens: Sequence[int] | np.ndarray) -> None:
        for token in tokens:
            if not self._matcher.consume_token(int(token)):
                raise RuntimeError(f"constrained decoding lost its grammar: {self._matcher.get_error()}")
        self._seen += len(tokens)
