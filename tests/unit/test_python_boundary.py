"""Python source from a model or a suite is parsed in moot's process only through ``moot.boundary.parse_python``.

CPython's parser answers hostile source with MemoryError ("too complex"), RecursionError or ValueError, not
only SyntaxError; each once escaped a caller that expected SyntaxError and ended a row or a run in a traceback.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moot.boundary import compile_python, parse_python, unparse_python
from moot.errors import ConfigError
from moot.sandbox import SandboxResult, SandboxStatus, program_of, task_helpers, validate_tests, without_scaffolding
from moot.teams._code_evidence import _behaviour

HOSTILE = [
    "-" * 100_000 + "1",
    "not " * 50_000 + "x",
    "lambda:" * 50_000 + "1",
    "~" * 100_000 + "1",
    "(" * 100_000,
    "[" * 5_000 + "]" * 5_000,
    "x" + ".y" * 200_000,
    "a\x00b",
    "def f(x):\n    return " + "-" * 100_000 + "x\nprint(f(1))\n",
    "x = 1\n" + "-" * 2_000 + "1\nprint(x)\n",  # parses, but too deep for the compiler and for ast.unparse
]
STUB = 'def f(x):\n    """Double it."""\n'


@pytest.mark.parametrize("source", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_source_is_a_syntax_error_or_a_tree_never_another_exception(source: str):
    try:
        tree = parse_python(source)
    except SyntaxError:
        return
    assert isinstance(unparse_python(tree), str | None)  # None when too deep for it: never an exception
    try:
        compile_python(source)
    except SyntaxError as exc:
        assert "nested too deeply" in str(exc)


@pytest.mark.parametrize("source", HOSTILE, ids=range(len(HOSTILE)))
def test_every_reader_of_a_models_program_takes_hostile_source(source: str):
    program = program_of(f"```python\n{source}\n```", STUB, "f")
    assert isinstance(program, str)
    assert isinstance(without_scaffolding(source), str)
    assert isinstance(_behaviour(source, SandboxResult(status=SandboxStatus.CONTENT_FAULT), probed=False), str)
    assert isinstance(task_helpers(source, "f"), str)


@pytest.mark.parametrize("source", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_test_is_refused_in_one_line(source: str):
    try:
        validate_tests([source])
    except ConfigError as exc:
        assert "\n" not in str(exc).split(": ", 1)[0]
        assert "is not valid Python" in str(exc)


@settings(max_examples=200, deadline=2000)
@given(st.text(alphabet=st.sampled_from(list("-~+(not )lambda:[]{}x1\n\x00'\"")), max_size=5000))
def test_random_source_only_ever_parses_or_is_a_syntax_error(source: str):
    try:
        tree = parse_python(source)
    except SyntaxError:
        return
    unparse_python(tree)
