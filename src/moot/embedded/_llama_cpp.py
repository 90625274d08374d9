"""Everything moot uses of llama-cpp-python, for the one version of it that moot supports.

``Llama`` runs a whole completion per call. The embedded engine drives the
context itself instead: it restores kept KV states, evaluates forced and
guessed tokens in batches and samples at chosen batch positions, for which
``Llama`` has no methods. This is the only module that imports llama-cpp-python
(or llguidance's bridge to it), and :class:`LoadedModel` the only object the
rest of the engine talks to.

It uses the package's public API wherever that does the job: ``Llama``'s
methods and attributes, and the C functions bound in ``llama_cpp.llama_cpp``
(KV memory, batches, decoding, saving and restoring a sequence's state, the
vocabulary). Two things have no public way, and are reached here only:

* the sampler chain, built by ``Llama._init_sampler`` with the parameters
  llama-cpp-python's own completions use. Its public ``Llama.sample`` builds a
  new chain for every token when none is set, which would restart the random
  stream and the grammar at each token;
* the model parameters of a load: ``Llama`` takes them from the module function
  ``llama_model_default_params`` and has no argument for ``use_extra_bufts``,
  which the AMX workaround turns off; so that function is swapped for one load
  (:func:`_without_extra_buffer_types`).

Another version may change any of these, so importing this module refuses every
llama-cpp-python but :data:`SUPPORTED_VERSION` (the one pyproject.toml pins),
before llama-cpp-python itself is imported.

The AMX workaround: a llama.cpp build compiled on a CPU with AMX (Intel
Sapphire Rapids and later) moves the weights into AMX tiles (one of its "extra
buffer types"). On the virtual machines moot is tested on that path crashes the
process with a segmentation fault on the first prompt of more than one token,
although the kernel grants the AMX permission. Loading without extra buffer
types keeps every matrix product on the AVX code paths: prompts evaluated at
~190 tokens/s on 2 cores for the embedded 0.5B model. Builds without AMX keep
llama.cpp's defaults.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.metadata
import json
import random
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from moot.errors import ModelUnavailableError

__all__ = [
    "LLAMA_CPP_VERSION",
    "SUPPORTED_VERSION",
    "LoadedModel",
    "LogitsMask",
    "Sampler",
    "build_has_amx",
    "check_version",
    "json_grammar",
    "load",
]

SUPPORTED_VERSION = "0.3.36"
"""The llama-cpp-python release this module is written against (pinned in pyproject.toml's ``local`` extra)."""


def check_version() -> None:
    """Refuse, in one line naming both, an installed llama-cpp-python other than :data:`SUPPORTED_VERSION`.

    Not installed at all is an ImportError (``PackageNotFoundError``), as importing it would be.
    """
    installed = importlib.metadata.version("llama-cpp-python")
    if installed != SUPPORTED_VERSION:
        raise ModelUnavailableError(
            f"the embedded model supports llama-cpp-python {SUPPORTED_VERSION} only, but {installed} is installed; "
            f"install the supported one: pip install 'llama-cpp-python=={SUPPORTED_VERSION}'"
        )


check_version()  # before the import: another version may fail on import already, less clearly

import llama_cpp  # noqa: E402
from llama_cpp import Llama, LlamaGrammar, LogitsProcessorList  # noqa: E402
from llama_cpp import llama_cpp as native  # noqa: E402
from llama_cpp.llama_chat_format import Jinja2ChatFormatter  # noqa: E402
from llama_cpp.llama_grammar import LLAMA_GRAMMAR_DEFAULT_ROOT, json_schema_to_gbnf  # noqa: E402
from llguidance import LLTokenizer  # noqa: E402
from llguidance.llamacpp import lltokenizer_from_vocab  # noqa: E402

LLAMA_CPP_VERSION: str = llama_cpp.__version__
"""The installed build's version, as llama-cpp-python reports it (part of where states are kept)."""

LogitsMask = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A logits processor: given the tokens so far and the logits, returns the logits with forbidden tokens at -inf."""

_SEQUENCE = 0
"""The context's one sequence: every KV cell, batch position and saved state belongs to it."""
_FIRST_SEED = native.LLAMA_DEFAULT_SEED
"""The seed a model is loaded with, from which the first reply without a seed draws its own (``Llama`` keeps
this for the ``seed=0`` moot loaded it with before, so the random streams are the same)."""
_DEFAULTS_LOCK = threading.Lock()


def json_grammar(schema: dict[str, Any]) -> str:
    """llama-cpp-python's GBNF grammar for a JSON schema (what ``LlamaGrammar.from_json_schema`` holds).

    Its converter raises ValueError, RuntimeError or AssertionError on what it cannot translate.
    """
    return json_schema_to_gbnf(json.dumps(schema))


@cache
def build_has_amx() -> bool:
    """Whether the installed llama.cpp CPU backend was compiled with AMX kernels."""
    library = Path(llama_cpp.__file__).parent / "lib" / "libggml-cpu.so"
    try:
        has_amx = ctypes.CDLL(str(library)).ggml_cpu_has_amx_int8
    except (OSError, AttributeError):
        return False
    return bool(has_amx())


def load(path: Path, *, n_ctx: int, threads: int) -> LoadedModel:
    """The GGUF model at ``path`` with a context of ``n_ctx`` tokens, decoding on ``threads`` threads.

    Without extra buffer types when the build has AMX kernels (see the module docstring).
    """
    settings: dict[str, Any] = {
        "n_ctx": n_ctx,
        "n_threads": threads,
        "n_threads_batch": threads,
        "verbose": False,
        "seed": _FIRST_SEED,
    }
    with _without_extra_buffer_types() if build_has_amx() else contextlib.nullcontext():
        return LoadedModel(Llama(model_path=str(path), **settings))


@contextlib.contextmanager
def _without_extra_buffer_types() -> Iterator[None]:
    """Swap ``llama_model_default_params``, where ``Llama`` takes its model parameters from (it has no argument
    for ``use_extra_bufts``), for the duration of one load; under a lock, since the swap is process-wide."""
    module = llama_cpp.llama.llama_cpp
    with _DEFAULTS_LOCK:
        original = module.llama_model_default_params

        def defaults() -> Any:
            params = original()
            params.use_extra_bufts = False
            return params

        module.llama_model_default_params = defaults
        try:
            yield
        finally:
            module.llama_model_default_params = original


class Sampler:
    """One reply's sampler chain: it draws a token from the logits at a position of the last batch."""

    def __init__(self, chain: Any, context: Any) -> None:
        self._chain = chain  # holds the chain, and the Python callback of its logits mask, while the reply lasts
        self._context = context

    def sample(self, index: int = -1) -> int:
        """The token drawn at ``index`` of the last batch (-1: its last position); the chain accepts it."""
        return native.llama_sampler_sample(self._chain.sampler, self._context, index)


class LoadedModel:
    """A loaded ``Llama`` and its context, driven batch by batch; calls must be serialised by the caller."""

    def __init__(self, llama: Llama) -> None:
        self.llama = llama
        """The model itself, for tests and benchmarks that look inside; the engine uses the methods below."""
        self._vocab = native.llama_model_get_vocab(llama.model)
        self._memory = native.llama_get_memory(llama.ctx)
        self._batch = native.llama_batch_init(llama.n_batch, 0, 1)
        weakref.finalize(self, native.llama_batch_free, self._batch)
        self._seed = _FIRST_SEED

    # ------------------------------------------------------------ the model
    @property
    def path(self) -> str:
        return self.llama.model_path

    def n_ctx(self) -> int:
        return self.llama.n_ctx()

    def n_vocab(self) -> int:
        return self.llama.n_vocab()

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return self.llama.tokenize(text, add_bos=add_bos, special=special)

    def detokenize(self, tokens: list[int]) -> bytes:
        return self.llama.detokenize(tokens)

    def is_end(self, token: int) -> bool:
        """Whether ``token`` ends generation (end of sequence or of turn)."""
        return native.llama_vocab_is_eog(self._vocab, token)

    def guidance_tokenizer(self) -> LLTokenizer:
        """The vocabulary as llguidance's tokenizer (about 1 s to build), ending at end of sequence or turn."""
        stops = sorted({native.llama_vocab_eos(self._vocab), native.llama_vocab_eot(self._vocab)} - {-1})
        with warnings.catch_warnings():  # it calls a llama.cpp function deprecated once per token (151k times)
            warnings.simplefilter("ignore", DeprecationWarning)
            return lltokenizer_from_vocab(self._vocab, n_vocab=self.n_vocab(), eos_token=stops)

    def chat_formatter(self) -> Jinja2ChatFormatter:
        """The model's own chat template, as llama-cpp-python applies it by default."""
        eos, bos = self.llama.token_eos(), self.llama.token_bos()
        return Jinja2ChatFormatter(
            template=self.llama.metadata["tokenizer.chat_template"],
            eos_token=self._token_text(eos) if eos != -1 else "",
            bos_token=self._token_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )

    def grammar_compiles(self, grammar: str) -> bool:
        """Whether llama.cpp accepts the GBNF ``grammar`` on this vocabulary.

        llama.cpp parses a grammar only when sampling starts, and a grammar it rejects there becomes a NULL
        sampler that crashes the process; so the grammar's sampler is built alone first, to find out.
        """
        sampler = native.llama_sampler_init_grammar(
            self._vocab, grammar.encode("utf-8"), LLAMA_GRAMMAR_DEFAULT_ROOT.encode("utf-8")
        )
        if not sampler:
            return False
        native.llama_sampler_free(sampler)
        return True

    def _token_text(self, token: int) -> str:
        return native.llama_vocab_get_text(self._vocab, token).decode("utf-8")

    # ------------------------------------------------------ the live context
    @property
    def n_tokens(self) -> int:
        """How many tokens the live context holds: ``live_tokens()``, whose KV cells are in the cache."""
        return self.llama.n_tokens

    @n_tokens.setter
    def n_tokens(self, value: int) -> None:
        self.llama.n_tokens = value

    def live_tokens(self) -> np.ndarray:
        return np.asarray(self.llama.input_ids[: self.llama.n_tokens], dtype=np.int32)

    def eval(self, tokens: Sequence[int]) -> None:
        """Evaluate ``tokens`` after the live ones (dropping every KV cell past those first), in batches."""
        self.llama.eval(tokens)

    def reset(self) -> None:
        """Forget the live tokens; their KV cells stay until evaluated over or cleared."""
        self.llama.reset()

    def clear_kv(self) -> None:
        """Drop every KV cell."""
        if self._memory is not None:
            native.llama_memory_clear(self._memory, True)

    def drop_kv_from(self, position: int) -> bool:
        """Drop the KV cells from ``position`` on; False if llama.cpp cannot drop part of them."""
        return native.llama_memory_seq_rm(self._memory, _SEQUENCE, position, -1)

    def decode(self, tokens: Sequence[int], *, logits_all: bool) -> int:
        """Evaluate ``tokens`` in one batch after the live tokens and record them; returns where the batch starts.

        Logits are computed for the batch's last token, or for each with ``logits_all``. ``n_tokens`` is left
        to the caller: it counts only the tokens a reply keeps.
        """
        count = len(tokens)
        if not 0 < count <= self.llama.n_batch:
            raise ValueError(f"a batch holds 1 to {self.llama.n_batch} tokens, not {count}")
        n_past = self.llama.n_tokens
        batch = self._batch
        batch.n_tokens = count
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = n_past + i
            batch.seq_id[i][0] = _SEQUENCE
            batch.n_seq_id[i] = 1
            batch.logits[i] = logits_all
        batch.logits[count - 1] = True
        status = native.llama_decode(self.llama.ctx, batch)
        if status != 0:
            raise RuntimeError(f"llama_decode returned {status}")
        self.llama.input_ids[n_past : n_past + count] = tokens
        return n_past

    # ---------------------------------------------------------------- states
    def state(self) -> bytes:
        """The live sequence's KV cells, as llama.cpp saves them (no logits: MiB, where ``Llama.save_state``
        copies its 300 MB logits buffer too)."""
        context = self.llama.ctx
        size = native.llama_state_seq_get_size(context, _SEQUENCE)
        buffer = (ctypes.c_uint8 * size)()
        written = native.llama_state_seq_get_data(context, buffer, size, _SEQUENCE)
        return ctypes.string_at(buffer, written)

    def load_state(self, tokens: np.ndarray, data: bytes) -> bool:
        """Make ``data`` (the KV cells after ``tokens``) the live context; False (and a reset) if llama.cpp refuses."""
        self.clear_kv()
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if native.llama_state_seq_set_data(self.llama.ctx, buffer, len(data), _SEQUENCE) == 0:
            self.llama.reset()
            return False
        count = len(tokens)
        self.llama.input_ids[:count] = tokens
        self.llama.n_tokens = count
        return True

    # -------------------------------------------------------------- sampling
    def sampler(
        self, temperature: float, seed: int | None, mask: LogitsMask | None = None, grammar: str | None = None
    ) -> Sampler:
        """The sampler of one reply, the chain llama-cpp-python's completions use: ``mask`` on the logits, the
        GBNF ``grammar``, then at ``temperature`` 0 the likeliest token, else top-k, top-p, min-p and a draw from
        the random stream of ``seed`` (without one, of a seed drawn from the previous reply's, as its
        completions do)."""
        self._seed = seed if seed is not None else random.Random(self._seed).randint(0, 2**32)
        self.llama.set_seed(self._seed)
        chain = self.llama._init_sampler(
            temp=temperature,
            logits_processor=LogitsProcessorList([mask]) if mask is not None else None,
            grammar=LlamaGrammar.from_string(grammar, verbose=False) if grammar is not None else None,
        )
        return Sampler(chain, self.llama.ctx)
