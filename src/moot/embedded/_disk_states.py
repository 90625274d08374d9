"""KV states of system prompts kept on disk, so a new process does not evaluate them again.

Every moot process starts its roles with the same few system prompts (the
debate rules, the arbiter's, the critic's, each with its schema), hundreds of
tokens each, whatever the task. The in-memory cache
(:mod:`moot.embedded._state_cache`) dies with the process, so each run paid
for them again on its first call per role. Here the state after a system
prompt is written once per model build and read back by later processes: a
few MiB per prompt, read in milliseconds where evaluating it takes seconds on
CPU.

Only system-prompt prefixes are stored (task text and replies stay in RAM):
they are shared by every run, so the folder stays small and its entries stay
useful. Files are written atomically and evicted least recently used beyond a
byte cap; a file that cannot be read is deleted and treated as a miss. The folder
is read as data moot may not have written: only regular files (no symlink) within
the cap are read, and a pair whose key is not its tokens' digest is ignored.

Not diskcache (a dependency already), although its ``Cache`` with a
``size_limit`` and the ``least-recently-used`` policy is a byte-capped LRU on
disk, for three reasons. Its layout is its own (a SQLite index, and files it
names itself), where this folder holds one ``<key>.tokens`` and one
``<key>.kv`` file per state, the key the first 32 hex digits of the tokens'
sha256, which earlier moot processes wrote and later ones read: moving would
drop every kept state. Its cap is not this cap: ``size_limit`` counts its
database too and is enforced by culling at most ``cull_limit`` (ten) entries
per ``set``, so the folder may stay above it, where here the states' own bytes
never exceed the cap after a ``put`` and a state larger than the cap is not
written at all. And a lookup is by the longest token prefix an entry shares
with the prompt, which needs every entry's tokens at hand, so this index would
be kept beside it anyway.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from moot.embedded._state_cache import common_prefix

__all__ = ["DiskStates"]

_TOKENS = ".tokens"
_KV = ".kv"


@dataclass(frozen=True)
class _Entry:
    key: str
    tokens: np.ndarray


class DiskStates:
    """A folder of (tokens, KV state) pairs, looked up by longest shared prefix, capped at ``capacity_bytes``."""

    def __init__(self, folder: Path, capacity_bytes: int) -> None:
        self.folder = folder
        self.capacity_bytes = capacity_bytes
        self._index: dict[str, _Entry] | None = None

    def best(self, prompt: list[int] | np.ndarray, better_than: int = 0) -> tuple[np.ndarray, bytes, int] | None:
        """The stored state sharing the longest prefix with ``prompt`` (tokens, data, shared), if longer."""
        tokens = np.asarray(prompt, dtype=np.int32)
        found: tuple[_Entry, int] | None = None
        for entry in self._entries().values():
            shared = common_prefix(entry.tokens, tokens)
            if shared > (found[1] if found else better_than):
                found = (entry, shared)
        if found is None:
            return None
        entry, shared = found
        if not self._plain(self.folder / f"{entry.key}{_KV}"):  # replaced since it was indexed
            self._forget(entry.key)
            return None
        try:
            data = (self.folder / f"{entry.key}{_KV}").read_bytes()
            os.utime(self.folder / f"{entry.key}{_KV}")
        except OSError:
            self._forget(entry.key)
            return None
        return entry.tokens, data, shared

    def put(self, tokens: list[int] | np.ndarray, data: bytes) -> bool:
        """Store one state (atomically); False when it alone exceeds the cap or the folder is not writable."""
        array = np.asarray(tokens, dtype=np.int32)
        if len(data) + array.nbytes > self.capacity_bytes:
            return False
        key = _key(array)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _write(self.folder / f"{key}{_KV}", data)  # the data first: an entry is its tokens file
            _write(self.folder / f"{key}{_TOKENS}", array.tobytes())
        except OSError:
            return False
        self._entries()[key] = _Entry(key, array)
        self._evict()
        return True

    def clear(self) -> None:
        for key in list(self._entries()):
            self._forget(key)

    @property
    def nbytes(self) -> int:
        return sum(size for _, size, _ in self._files())

    # ---------------------------------------------------------------- helpers
    def _entries(self) -> dict[str, _Entry]:
        if self._index is None:
            self._index = {}
            for path in sorted(self.folder.glob(f"*{_TOKENS}")) if self.folder.is_dir() else ():
                if not (self._plain(path) and self._plain(path.with_suffix(_KV))):
                    continue
                try:
                    tokens = np.frombuffer(path.read_bytes(), dtype=np.int32)
                except (OSError, ValueError):
                    continue
                if tokens.size and _key(tokens) == path.stem:  # a pair filed under another prompt's key is no entry
                    self._index[path.stem] = _Entry(path.stem, tokens)
        return self._index

    def _plain(self, path: Path) -> bool:
        """Whether ``path`` is a file this cache may read: regular (not a symlink, which could name a device or
        another folder's file) and within the cap (so reading it is bounded)."""
        try:
            return not path.is_symlink() and path.is_file() and path.stat().st_size <= self.capacity_bytes
        except OSError:
            return False

    def _files(self) -> list[tuple[float, int, str]]:
        """(last use, bytes, key) of every stored entry."""
        files = []
        for key in list(self._entries()):
            try:
                stat = (self.folder / f"{key}{_KV}").stat()
            except OSError:
                self._forget(key)
                continue
            files.append((stat.st_mtime, stat.st_size + self._entries()[key].tokens.nbytes, key))
        return files

    def _evict(self) -> None:
        files = sorted(self._files())
        total = sum(size for _, size, _ in files)
        for _, size, key in files:
            if total <= self.capacity_bytes:
                break
            self._forget(key)
            total -= size

    def _forget(self, key: str) -> None:
        if self._index is not None:
            self._index.pop(key, None)
        for suffix in (_TOKENS, _KV):
            (self.folder / f"{key}{suffix}").unlink(missing_ok=True)


def _key(tokens: np.ndarray) -> str:
    return hashlib.sha256(tokens.tobytes()).hexdigest()[:32]


def _write(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder, so a reader never sees half a state."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
