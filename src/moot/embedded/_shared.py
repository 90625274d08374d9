"""The process's embedded engines: one per model file and settings, loaded on first use and shared by every client.

A second ``Llama`` would hold a second copy of the weights and contend for the
same cores; so every client of the embedded model in a process talks to the one
engine for its settings, whose calls are serialised.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from moot._extras import require
from moot.embedded._settings import EngineSettings
from moot.embedded._weights import cache_dir
from moot.errors import ModelUnavailableError

if TYPE_CHECKING:
    from moot.embedded._model import EmbeddedEngine

__all__ = ["lock_path", "require_installed", "shared_engine", "states_dir"]

_ENGINES: dict[tuple[Path, EngineSettings], EmbeddedEngine] = {}
_ENGINES_LOCK = threading.Lock()


def lock_path() -> Path:
    """The machine-wide lock file that makes embedded-model calls of different processes take turns."""
    return cache_dir() / "embedded-model.lock"


def states_dir(path: Path) -> Path:
    """Where system-prompt states of the model at ``path`` are kept: one folder per model and llama.cpp build,
    since a state is only valid for the weights and the KV layout that wrote it."""
    from moot.embedded._llama_cpp import LLAMA_CPP_VERSION

    return cache_dir() / "states" / f"{path.stem}-llama-cpp-{LLAMA_CPP_VERSION}"


def shared_engine(path: Path, settings: EngineSettings | None = None) -> EmbeddedEngine:
    """The process's engine for ``path`` and ``settings`` (from the environment by default), loaded once."""
    require_installed()
    from moot.embedded._model import EmbeddedEngine

    settings = settings or EngineSettings.from_env()
    with _ENGINES_LOCK:
        key = (path, settings)
        if key not in _ENGINES:
            _ENGINES[key] = EmbeddedEngine(path, settings, lock_path(), states_dir(path))
        return _ENGINES[key]


def require_installed() -> None:
    """Refuse with the install command, or the llama-cpp-python version moot supports, before anything is loaded
    or assembled."""
    require("local", "the embedded model", ModelUnavailableError)
    importlib.import_module("moot.embedded._llama_cpp")  # refuses any llama-cpp-python but the supported one
