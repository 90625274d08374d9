"""Load a GGUF model with llama.cpp, avoiding its AMX weight layout.

A llama.cpp build compiled on a CPU with AMX (Intel Sapphire Rapids and
later) moves the weights into AMX tiles (one of its "extra buffer types").
On the virtual machines moot is tested on that path crashes the process with
a segmentation fault on the first prompt of more than one token, although
the kernel grants the AMX permission. Loading without extra buffer types
keeps every matrix product on the AVX code paths: prompts evaluated at ~190
tokens/s on 2 cores for the embedded 0.5B model. Builds without AMX keep
llama.cpp's defaults.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import llama_cpp
from llama_cpp import Llama

__all__ = ["build_has_amx", "load_llama"]

_DEFAULTS_LOCK = threading.Lock()


@cache
def build_has_amx() -> bool:
    """Whether the installed llama.cpp CPU backend was compiled with AMX kernels."""
    library = Path(llama_cpp.__file__).parent / "lib" / "libggml-cpu.so"
    try:
        has_amx = ctypes.CDLL(str(library)).ggml_cpu_has_amx_int8
    except (OSError, AttributeError):
        return False
    return bool(has_amx())


def load_llama(path: Path, **kwargs: Any) -> Llama:
    """``Llama(model_path=path, **kwargs)``, without extra buffer types when the build has AMX kernels."""
    if not build_has_amx():
        return Llama(model_path=str(path), **kwargs)
    with _without_extra_buffer_types():
        return Llama(model_path=str(path), **kwargs)


@contextlib.contextmanager
def _without_extra_buffer_types() -> Iterator[None]:
    """llama-cpp-python takes its model parameters from ``llama_model_default_params`` and has no switch for them."""
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
