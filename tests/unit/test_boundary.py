"""moot.boundary directly: decoding, clipping, terminal safety, bounded JSON and YAML."""

from __future__ import annotations

import time

import pytest

from moot.boundary import DataBounds, clip, json_depth, load_json, load_yaml, one_line, terminal_safe, text_of
from moot.errors import ConfigError

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_text_of_escapes_what_cannot_be_encoded():
    assert text_of(b"ok \xff\xfe") == "ok \\xff\\xfe"
    assert text_of("lone \ud800") == "lone \\ud800"
    assert text_of("fine") == "fine"
    assert text_of("x" * 10, limit=4) == "xxxx… [6 more characters]"


def test_clip_says_how_much_was_left_out():
    assert clip("abc", 3) == "abc"
    assert clip("abcdef", 2) == "ab… [4 more characters]"


def test_terminal_safe_shows_controls_keeps_newlines_and_tabs():
    assert terminal_safe("a\x1b[2Jb\x00\x9b\u202e\n\t") == "a\\x1b[2Jb\\x00\\x9b\\u202e\n\t"


def test_one_line_is_one_safe_line():
    assert one_line("a\n\x1b]0;t\x07\tb", 100) == "a \\x1b]0;t\\x07 b"


def test_json_depth_skips_strings_and_escaped_quotes():
    assert json_depth('[["[[[", {"a": [1]}]]') == 4
    assert json_depth('"[[[[') == 0
    assert json_depth(r'["\"[", ["]"]]') == 2


def test_json_depth_is_linear_on_escaped_quotes():
    """It was quadratic: every unclosed string was scanned again from each quote (40 kB took 6 s)."""
    text = '"' + '\\"' * 400_000
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_json(text, "t")
    assert time.perf_counter() - start < 2


def test_load_json_refuses_depth_size_and_non_finite_in_one_line():
    for data, message in [
        ("[" * 100 + "]" * 100, "nested 100 levels"),
        ("1" * 2_000_000, "bytes"),
        ("NaN", "not a number JSON allows"),
        ("1" * 5000, "not valid JSON"),
        (b"\xff", "not UTF-8"),
    ]:
        with pytest.raises(ConfigError, match=message) as caught:
            load_json(data, "t")
        assert "\n" not in str(caught.value)


def test_loaded_strings_are_always_encodable():
    data = load_json(r'{"k\ud800": ["\udfff"]}', "t")
    assert data == {"k\\ud800": ["\\udfff"]}
    assert load_yaml(r'a: "\ud800"', "t") == {"a": "\\ud800"}


def test_a_yaml_alias_bomb_is_refused_before_it_is_built():
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="expands to more than"):
        load_yaml(ALIAS_BOMB, "bomb")
    assert time.perf_counter() - start < 2


def test_deep_yaml_is_refused_in_one_line():
    for text in ("[" * 5000 + "]" * 5000, "- " * 200 + "x"):
        with pytest.raises(ConfigError, match="nested") as caught:
            load_yaml(text, "deep", DataBounds(max_depth=32))
        assert "\n" not in str(caught.value)


def test_yaml_that_is_not_yaml_is_one_line():
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_yaml("a: [\n", "t")
