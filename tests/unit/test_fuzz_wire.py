"""Random and adversarial bytes as messages from the sandbox's processes into moot's: data or a clean error.

The readers are the channel's framing (``Channel``, ``Frame``), the value decoder (``decode``), the end-of-load
report (``load_report``) and the assembly of a run's reports into a result (``assemble``). Whatever a process
the code ran in or spoke to sends, each ends in data or in its own one-line error (``WireError``,
``ProtocolBreach``, a tool or content fault in the result), never another exception, and in bounded time.
"""

from __future__ import annotations

import json
import socket
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moot.sandbox import SandboxLimits, SandboxStatus
from moot.sandbox._records import ChildExit, ProtocolBreach, assemble, load_report
from moot.sandbox._wire import Channel, Frame, WireError, decode, encode, frame

FUZZ = settings(max_examples=300, deadline=2_000, suppress_health_check=[HealthCheck.too_slow])

_json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
_TAGS = ["ref", "float", "int", "bytes", "bytearray", "tuple", "set", "frozenset", "dict", "complex", "bogus"]
tagged = st.builds(
    lambda tag, v: {"~": tag, "v": v}, st.sampled_from(_TAGS), json_values | st.text(alphabet="-0123456789abcdefx_ ")
)
wire_values = st.recursive(json_values | tagged, lambda inner: st.lists(inner, max_size=4), max_leaves=20)

ADVERSARIAL = [
    b"", b"\n", b"\t\n", b"\xff\xfe\n", b"\x00" * 50 + b"\n", b"[" * 5000 + b"\n", b'{"a":' * 3000 + b"\n",
    b'{"id": 1, "ok": 1' + b"0" * 5000 + b"}\n", b'{"~body": 5}\t{}\n', b'{"~body": ["x"]}\n',
    b'{"~body": ["x"]}\t{"y": 1}\n', b'{"a": 1}\t{"a": 2}\n', b'{"ok": "\\ud800"}\n', b'{"ok": NaN}\n',
]  # fmt: skip


def _reader(chunks: list[bytes]) -> list[object]:
    """Every message a channel yields from ``chunks``, or the WireError that stops it."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        for chunk in chunks:
            theirs.sendall(chunk)
        theirs.shutdown(socket.SHUT_WR)
        channel, out = Channel(ours.fileno(), limit=1 << 16), []
        while True:
            try:
                out.append(channel.recv())
            except WireError as exc:
                return [*out, exc]


@FUZZ
@given(st.lists(st.binary(max_size=300) | st.sampled_from(ADVERSARIAL), max_size=6))
def test_a_channel_yields_messages_or_a_wire_error_for_any_bytes(chunks):
    started = time.monotonic()
    out = _reader(chunks)
    assert isinstance(out[-1], WireError) and all(type(m) is dict for m in out[:-1])
    assert time.monotonic() - started < 2


@FUZZ
@given(st.binary(max_size=400) | st.sampled_from(ADVERSARIAL))
def test_a_frame_gives_its_head_and_message_or_a_wire_error(raw):
    line = Frame(raw)
    for read in (line.head, line.fields, line.message):
        try:
            read()
        except WireError:
            pass


@FUZZ
@given(wire_values)
def test_decoding_any_value_gives_plain_data_or_a_wire_error(data):
    try:
        decode(data, lambda ref: ("ref", ref.get("id")))
    except WireError as exc:
        assert str(exc) and "\n" not in str(exc)


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.frozensets(st.integers(), max_size=4),
    max_leaves=15,
)


@FUZZ
@given(plain | st.integers(min_value=-(10**6000), max_value=10**6000))
def test_plain_data_crosses_the_wire_exactly(value):
    """The control: what is plain data arrives equal, ints past the 4,300-digit conversion limit included."""
    line = frame({"ok": encode(value, lambda v: {"~": "ref"})})
    assert decode(Frame(line).message()["ok"], lambda r: r) == value


def test_a_huge_int_on_the_wire_is_bounded_and_linear():
    started = time.monotonic()
    big = 3**200_000  # 95,425 digits: within the bound
    assert decode(Frame(frame({"v": encode(big, None)})).message()["v"], None) == big
    for payload in ("f" * 90_000, "1_0", "0x10", " 10", "-", "", "G"):
        try:
            decode({"~": "int", "v": payload}, None)
        except WireError:
            continue
        raise AssertionError(payload)
    assert time.monotonic() - started < 2


reports = st.dictionaries(
    st.sampled_from(
        [
            "event",
            "step",
            "index",
            "outcome",
            "message",
            "error_type",
            "where",
            "traceback",
            "seconds",
            "isolation",
            "exports",
            "error",
        ]
    ),
    json_values | st.sampled_from(["ready", "begin", "end", "done", "harness_error", "load", "test", "passed"]),
    max_size=8,
)


@FUZZ
@given(reports)
def test_a_load_report_is_a_record_or_a_protocol_breach(message):
    try:
        record, exports = load_report(message)
    except ProtocolBreach as exc:
        assert "\n" not in str(exc)
        return
    json.dumps(record).encode("utf-8")
    assert isinstance(exports, dict)


@FUZZ
@given(st.lists(reports, max_size=6), st.integers(min_value=-20, max_value=300), st.booleans(), st.text(max_size=50))
def test_any_reports_assemble_into_a_result_that_can_be_written(records, code, timed_out, stderr):
    result = assemble(records, ChildExit(code, timed_out), ["assert f(1) == 3"], SandboxLimits(), "", stderr, 0.1)
    assert result.status in set(SandboxStatus)
    result.model_dump_json().encode("utf-8")  # every text valid: a lone surrogate escaped, never a write error


def test_a_process_cannot_make_the_reader_hold_more_than_its_line_limit():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.setblocking(False)
        channel = Channel(ours.fileno(), limit=1 << 12)
        try:
            theirs.send(b"x" * 10_000)
        except BlockingIOError:
            pass
        try:
            while True:
                channel.fill()
                channel.take()
        except WireError:
            pass
        assert len(channel._buffer) <= (1 << 12) + (1 << 16)
