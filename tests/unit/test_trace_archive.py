"""A comparison's traces in one xz file: appended a row at a time, a torn last stream read up to its tear, a damaged
file refused in one line."""

from __future__ import annotations

import lzma

import pytest

from moot.errors import ConfigError
from moot.tracing import JsonlSink, TraceArchive, TraceEvent


def event(trace_id: str, n: int) -> TraceEvent:
    return TraceEvent(kind="turn", name=f"turn {n}", trace_id=trace_id, span_id=f"{n:016x}", start=n, end=n + 0.5)


def jsonl(tmp_path, trace_id: str, count: int) -> dict[str, str]:
    """A run's trace as JsonlSink writes it: file name -> text."""
    sink = JsonlSink(tmp_path / "scratch")
    for n in range(count):
        sink.emit(event(trace_id, n))
    return {sink.path(trace_id).name: sink.path(trace_id).read_text(encoding="utf-8")}


def test_rows_appended_one_stream_each_read_back_as_written(tmp_path):
    archive = TraceArchive(tmp_path / "traces.jsonl.xz")
    archive.append(jsonl(tmp_path, "a" * 32, 3) | jsonl(tmp_path, "b" * 32, 2))
    archive.append(jsonl(tmp_path, "c" * 32, 4))
    archive.append({})  # a row that traced nothing writes nothing
    data = archive.path.read_bytes()
    assert data.count(b"\xfd7zXZ\x00") == 2  # one xz stream per row
    assert lzma.decompress(data).count(b"\n") == 9  # the format's own reader sees one JSONL file
    assert archive.scan("b" * 32).events == [event("b" * 32, n) for n in range(2)]
    every = archive.scan()
    assert [e.trace_id[0] for e in every.events] == list("aaabbcccc") and not every.unreadable
    assert TraceArchive(tmp_path / "none.jsonl.xz").scan().events == []


def test_a_stream_cut_short_by_a_kill_keeps_every_stream_before_it(tmp_path):
    archive = TraceArchive(tmp_path / "traces.jsonl.xz")
    archive.append(jsonl(tmp_path, "a" * 32, 3))
    whole = archive.path.stat().st_size
    archive.append(jsonl(tmp_path, "b" * 32, 50))
    with archive.path.open("r+b") as torn:
        torn.truncate(whole + 40)
    scan = archive.scan()
    assert scan.events == [event("a" * 32, n) for n in range(3)]
    assert len(scan.unreadable) == 1 and "cut short" in scan.unreadable[0]


@pytest.mark.parametrize("damage", ["flip", "garbage"])
def test_a_damaged_file_is_refused_in_one_line(tmp_path, damage):
    archive = TraceArchive(tmp_path / "traces.jsonl.xz")
    archive.append(jsonl(tmp_path, "a" * 32, 20))
    data = bytearray(archive.path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF  # a tampered byte: the stream's checksum or structure no longer holds
    else:
        data[:] = b"not xz at all\n" + bytes(data)
    archive.path.write_bytes(bytes(data))
    with pytest.raises(ConfigError) as refused:
        archive.scan()
    message = str(refused.value)
    assert "\n" not in message and str(archive.path) in message and "damaged" in message
