"""The embedded model: Qwen2.5-Coder-0.5B on llama.cpp, offline, the default model of every role.

Its weights (``_weights``: found among the installed ``[local]`` packages,
checked, assembled once), its settings (``_settings``: the ``MOOT_LOCAL_*``
variables) and the engine that runs it (``_model``: prompt states kept in
memory and on disk, constrained decoding with llguidance, several tokens per
step, a machine-wide lock). Everything that touches llama-cpp-python below its
public API is in one module, ``_llama_cpp``, which refuses any version of it
but the one moot supports.

Importing this package loads no llama.cpp: the ``[local]`` extra is optional,
so the engine's classes (``EmbeddedEngine``, ``EngineStats``) are imported on
first access, and :func:`shared_engine` refuses with the install command
where the extra is missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from moot.embedded._settings import GRAMMARS, EngineSettings, physical_cores
from moot.embedded._shared import lock_path, require_installed, shared_engine, states_dir
from moot.embedded._weights import (
    DEFAULT_MODEL,
    GGUF_SHA256,
    cache_dir,
    local_model_identity,
    model_path,
)

if TYPE_CHECKING:
    from moot.embedded._model import CONTEXT_TOKENS, EmbeddedEngine, EngineStats

__all__ = [
    "CONTEXT_TOKENS",
    "DEFAULT_MODEL",
    "GGUF_SHA256",
    "GRAMMARS",
    "EmbeddedEngine",
    "EngineSettings",
    "EngineStats",
    "cache_dir",
    "local_model_identity",
    "lock_path",
    "model_path",
    "physical_cores",
    "require_installed",
    "shared_engine",
    "states_dir",
]

_NEEDS_LLAMA_CPP = frozenset({"CONTEXT_TOKENS", "EmbeddedEngine", "EngineStats"})


def __getattr__(name: str) -> Any:
    """The engine's names, imported (with llama.cpp) only when first used."""
    if name in _NEEDS_LLAMA_CPP:
        return getattr(importlib.import_module("moot.embedded._model"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
