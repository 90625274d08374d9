"""Many runs' traces in one compressed file: what a comparison keeps, one xz stream appended per finished row.

A results folder is committed and cloned with its evidence, and one JSONL file per run made thousands of files
(tools that read a tree whole refuse such a tree). So a comparison keeps its traces in one ``traces.jsonl.xz``:

* the file is a sequence of complete xz streams (the format allows it: ``xz -dc`` reads them as one), each the
  JSONL lines of one finished row's runs; a row's stream is written with one ``write`` after the row is done and
  before its result is recorded, so a killed process loses no stream already written, and a row whose result
  was recorded always has its traces;
* a stream cut short at the end of the file (a process killed while writing it) is skipped, with a note in
  :attr:`~moot.tracing.TraceScan.unreadable` like a torn line of a JSONL trace (its checksum was never written);
  damage anywhere (bytes that are no xz, a failed checksum) is refused as a whole in one line: a tampered file is
  not read in part;
* a line is read as a :class:`~moot.tracing.TraceEvent` like any trace line: one that is not is noted, never
  trusted; a stream is decompressed a bounded piece at a time and refused past a bound far above what moot
  writes, so a crafted one cannot fill memory.
"""

from __future__ import annotations

import lzma
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from moot.boundary import one_line
from moot.errors import ConfigError
from moot.tracing._sinks import TraceScan, _scan_line

__all__ = ["TRACES_FILE", "TraceArchive"]

TRACES_FILE = "traces.jsonl.xz"
_PIECE = 1 << 20
"""Decompressed bytes read at a time."""
_MAX_STREAM = 1_000_000_000
"""Decompressed bytes one stream may hold: a whole folder's traces compacted into one are far fewer."""
_MAX_LINE = 64_000_000
"""Far above any trace event moot writes (a model call's whole prompt); a longer line is no trace of moot's."""


class TraceArchive:
    """One compressed file of many runs' JSONL traces: see the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, traces: Mapping[str, str]) -> None:
        """Append runs' traces (file name -> JSONL text, as :class:`~moot.tracing.JsonlSink` wrote them) as one
        stream, in name order; nothing when there are none."""
        text = "".join(t if t.endswith("\n") else t + "\n" for _, t in sorted(traces.items()) if t)
        if not text:
            return
        data = lzma.compress(text.encode("utf-8"), format=lzma.FORMAT_XZ, preset=6)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())

    def scan(self, trace_id: str | None = None) -> TraceScan:
        """The events of every run (or of run ``trace_id``) in file order, and a note per line or torn stream that
        could not be read; ConfigError, one line, when the file is damaged before its end."""
        scan = TraceScan()
        if not self.path.exists():
            return scan
        for number, raw in enumerate(self._lines(scan), 1):
            if raw.strip() and (trace_id is None or trace_id.encode() in raw):
                _scan_line(scan, number, raw)
        if trace_id is not None:
            scan.events = [e for e in scan.events if e.trace_id == trace_id]
        return scan

    def _lines(self, scan: TraceScan) -> Iterator[bytes]:
        pending = b""
        for piece in self._pieces(scan):
            pending += piece
            *lines, pending = pending.split(b"\n")
            if len(pending) > _MAX_LINE:
                raise ConfigError(f"trace file {self.path} has a line over {_MAX_LINE:,} bytes; no trace of moot's has")
            yield from lines
        if pending:
            yield pending

    def _pieces(self, scan: TraceScan) -> Iterator[bytes]:
        """The decompressed bytes of every complete stream; a stream cut short at the end gives none (its checksum
        was never written, so nothing in it can be trusted)."""
        data = self.path.read_bytes()
        start = 0
        while start < len(data):
            stream = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
            pieces = self._stream(stream, data, start)
            if not stream.eof:
                scan.unreadable.append(f"bytes {start:,}-{len(data):,}: a stream cut short (a run killed mid-write)")
                return
            yield from pieces
            start = len(data) - len(stream.unused_data)

    def _stream(self, stream: lzma.LZMADecompressor, data: bytes, start: int) -> list[bytes]:
        """One stream's decompressed bytes, a bounded piece at a time; ConfigError when they are damaged or more
        than any row of traces."""
        pieces, size = [], 0
        try:
            pieces.append(stream.decompress(data[start:], max_length=_PIECE))
            while not stream.eof and not stream.needs_input:
                pieces.append(stream.decompress(b"", max_length=_PIECE))
                size += len(pieces[-1])
                if size > _MAX_STREAM:
                    raise ConfigError(
                        f"trace file {self.path}: a stream at byte {start:,} holds over {_MAX_STREAM:,} "
                        "bytes; no trace file of moot's does"
                    )
        except lzma.LZMAError as exc:
            raise ConfigError(
                f"trace file {self.path} is damaged at byte {start:,} ({one_line(str(exc), 80)}); "
                "it is not a file of xz streams as moot writes them"
            ) from None
        return pieces
