"""Reading a file moot did not write: at most a bound of bytes, whatever the file claims to be.

``Path.read_text`` trusts the file: a FIFO, ``/dev/zero`` or a file that grows while it is read costs
memory without end, and a size from ``stat`` is only what the file said a moment before. Here the read
itself stops one byte past the bound, so the bound holds for anything that can be opened.
"""

from __future__ import annotations

from pathlib import Path

from moot.errors import ConfigError

__all__ = ["read_bounded"]


def read_bounded(path: Path, what: str, max_bytes: int) -> bytes:
    """The bytes of ``path``, refused in one line past ``max_bytes`` or when it cannot be read."""
    try:
        with path.open("rb") as source:
            data = source.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise ConfigError(f"{what} {path} holds more than {max_bytes:,} bytes; at most that many are read")
    return data
