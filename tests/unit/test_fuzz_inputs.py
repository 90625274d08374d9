"""Every reader of outside input moot owns, driven with random and adversarial bytes: it gives data or a one-line
ConfigError, never a traceback, never unbounded time or memory. Plus the attacks each bound was built for."""

from __future__ import annotations

import asyncio
import io
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moot.boundary import DataBounds, load_json, load_yaml, terminal_safe, text_of
from moot.boundary._terminal import TerminalConsole
from moot.errors import ConfigError
from moot.harness.suites._examples import docstring_examples
from moot.harness.suites._files import file_suite
from moot.harness.suites._selectors import parse_spec

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ANY_TEXT = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=300)
NASTY = st.sampled_from(["[", "{", "-", "&a ", "*a", '"', "\\", "\\ud800", "\x1b", "\x00", "\n", ":", "- ", "!!"])
ADVERSARIAL = st.lists(st.one_of(NASTY, ANY_TEXT), max_size=40).map("".join)


def _suite(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    file_suite(path, parse_spec(str(path), what="suite", forms="file"), str(path))


# ------------------------------------------------------------------ properties
@FUZZ
@given(st.one_of(st.binary(max_size=300), ANY_TEXT))
def test_text_of_always_encodes(value):
    text_of(value).encode("utf-8")


@FUZZ
@given(ANY_TEXT)
def test_terminal_safe_leaves_no_control_bidi_or_surrogate(value):
    assert RAW.search(terminal_safe(value)) is None


@FUZZ
@given(st.one_of(st.binary(max_size=400), ADVERSARIAL))
def test_load_json_gives_data_or_one_line_error(data):
    try:
        load_json(data, "fuzz", DataBounds(max_bytes=10_000, max_depth=16))
    except ConfigError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(st.one_of(st.binary(max_size=400), ADVERSARIAL))
def test_load_yaml_gives_data_or_one_line_error(data):
    try:
        load_yaml(data, "fuzz", DataBounds(max_bytes=10_000, max_depth=16, max_nodes=2_000))
    except ConfigError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(st.one_of(st.binary(max_size=400), ADVERSARIAL), st.sampled_from(["s.jsonl", "s.yaml"]))
def test_suite_files_give_items_or_one_line_error(tmp_path, data, name):
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    try:
        _suite(tmp_path, name, raw)
    except ConfigError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(ADVERSARIAL)
def test_docstring_examples_never_raise(line):
    docstring_examples(f'def f(x):\n    """\n    f(1) ==> {line}\n    >>> f(2)\n    {line}\n    """\n', "f")


@FUZZ
@given(ADVERSARIAL)
def test_the_terminal_renderer_prints_no_raw_control(value):
    buffer = io.StringIO()
    TerminalConsole(file=buffer, color_system=None, width=50).print(value)
    assert RAW.search(buffer.getvalue()) is None


# ------------------------------------------------------------------ the attacks
@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("deep.jsonl", b'{"input": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n", "nested"),
        ("deep.yaml", b"- " + b"[" * 50_000 + b"]" * 50_000, "nested"),
        (
            "bomb.yaml",
            (
                "a: &a [x,x,x,x,x,x,x,x,x]\n"
                + "".join(
                    f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
                )
            ).encode(),
            "expands to more than",
        ),
        ("bad.jsonl", b'{"input": "\xff"}\n', "not UTF-8"),
    ],
)
def test_suite_file_attacks_are_one_line_errors(tmp_path, name, data, message):
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=message) as caught:
        _suite(tmp_path, name, data)
    assert "\n" not in str(caught.value)
    assert time.perf_counter() - start < 5


def test_a_surrogate_in_a_suite_file_is_escaped(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"input": "q \\ud800", "answer": "a"}\n')
    suite = file_suite(path, parse_spec(str(path), what="suite", forms="file"), str(path))
    suite.items[0].task.encode("utf-8")


def test_a_100_kb_docstring_line_costs_no_minutes():
    """It was quadratic: every prefix of the line was parsed (8 kB took 10 s)."""
    for line in ("f(1) ==> " + "(1+" * 33_000, "f(1) ==> " + "a b " * 25_000, "For x = 1" + " " * 100_000 + "y"):
        start = time.perf_counter()
        docstring_examples(f'def f(x):\n    """\n    {line}\n    """\n', "f")
        assert time.perf_counter() - start < 2


def test_a_megabyte_of_hard_example_lines_stays_bounded():
    line = "    f(1) ==> " + "-" * 970 + "1\n"
    start = time.perf_counter()
    docstring_examples('def f(x):\n    """\n' + line * 1000 + '    """\n', "f")
    assert time.perf_counter() - start < 5


def test_examples_are_still_found_after_prose():
    found = docstring_examples('def f(x):\n    """\n    f(5) ==> [1, 5] # because\n    f(2) = 3 since 1+2\n"""', "f")
    assert [(e.call, e.expected) for e in found] == [("f(5)", "[1, 5] # because"), ("f(2)", "3")]


def test_a_gym_answer_cannot_exhaust_moot_memory():
    pytest.importorskip("reasoning_gym")
    import reasoning_gym

    from moot.harness.suites._gym import GymEntry, GymScore

    dataset = reasoning_gym.create_dataset("basic_arithmetic", size=2, seed=1)
    scorer = GymScore(GymEntry("basic_arithmetic", 2, 1, (), 0), dataset[0]["answer"])
    long = asyncio.run(scorer.score(None, "-" * 100_000 + "1", None))  # type: ignore[arg-type]
    assert long.value == 0.0 and "at most" in long.detail
    right = asyncio.run(scorer.score(None, dataset[0]["answer"], None))  # type: ignore[arg-type]
    assert right.value == 1.0
    nested = asyncio.run(scorer.score(None, "-" * 9_999 + "1", None))  # type: ignore[arg-type]
    assert nested.value == 0.0
