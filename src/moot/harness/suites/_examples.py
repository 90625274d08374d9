"""Examples from a function's docstring, as visible tests and as probe calls.

HumanEval's hidden tests score the answer and are never shown to an arm. What
an arm may use is what a programmer would: the examples in the docstring.
They come in several styles (``>>> f(x)`` doctests, ``f(x) ==> y``, ``For lst
= [1, 2] the output should be 3``); each is turned into an ``assert`` and kept
only if it compiles. Probe calls are the same calls without expected values.
"""

from __future__ import annotations

import ast
import doctest
import re
from dataclasses import dataclass

__all__ = ["Example", "docstring_examples"]

_SEPARATORS = re.compile(r"\s*(?:==>|==|=>|=|➞|->|#\s*=>|#\s*returns?|returns?|should return)\s*")
_FOR_FORM = re.compile(
    r"^\s*(?:\"\"\"|\'\'\')?\s*for\s+(?P<args>\w+\s*=.+?),?\s+"
    r"the\s+(?:output|result)\s+should\s+be\s+(?P<want>.+?)\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Example:
    call: str
    expected: str

    @property
    def test(self) -> str:
        return f"assert {self.call} == {self.expected}"


def docstring_examples(stub: str, entry_point: str) -> list[Example]:
    """Every example found in ``stub`` for ``entry_point``, in order, without duplicates."""
    found = _doctests(stub, entry_point) or _inline(stub, entry_point) or _for_form(stub, entry_point)
    unique: list[Example] = []
    for example in found:
        if example not in unique and _compiles(example.test):
            unique.append(example)
    return unique


def _doctests(stub: str, entry_point: str) -> list[Example]:
    try:
        examples = doctest.DocTestParser().get_examples(stub)
    except ValueError:  # inconsistent indentation in a docstring
        return []
    found = []
    for example in examples:
        lines = []
        for line in example.want.strip().splitlines():  # a docstring's closing quotes can follow the output
            if line.strip().startswith(('"""', "'''")):
                break
            lines.append(line.strip())
        want = _leading_expression(" ".join(lines))
        if want and entry_point in example.source and "\n" not in example.source.strip():
            found.append(Example(example.source.strip(), want))
    return found


def _inline(stub: str, entry_point: str) -> list[Example]:
    """``f(1, 2) ==> 3`` / ``f(x) = y`` / ``f(x) # returns y`` on one line."""
    examples = []
    for line in stub.splitlines():
        start = line.find(f"{entry_point}(")
        if start < 0 or line.lstrip().startswith(("def ", "return ")):
            continue
        end = _call_end(line, start + len(entry_point))
        if end is None:
            continue
        separator = _SEPARATORS.match(line, end)
        if separator is None:
            continue
        want = _leading_expression(line[separator.end() :])
        if want:
            examples.append(Example(line[start:end], want))
    return examples


def _for_form(stub: str, entry_point: str) -> list[Example]:
    """``For lst = [1,2,3] the output should be 14`` -> ``f(lst=[1,2,3]) == 14``."""
    examples = []
    for line in stub.splitlines():
        match = _FOR_FORM.match(line)
        if match is None:
            continue
        want = _leading_expression(match.group("want").rstrip("."))
        if want:
            examples.append(Example(f"{entry_point}({match.group('args').strip()})", want))
    return examples


def _call_end(line: str, open_at: int) -> int | None:
    """Index just past the parenthesis that closes the call opened at ``open_at`` (brackets and quotes aware)."""
    depth, quote = 0, ""
    for index in range(open_at, len(line)):
        char = line[index]
        if quote:
            quote = "" if char == quote and line[index - 1] != "\\" else quote
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _leading_expression(text: str) -> str | None:
    """The longest prefix of ``text`` that is a Python expression (drops trailing comments and prose)."""
    text = text.strip()
    for end in range(len(text), 0, -1):
        candidate = text[:end].strip()
        if candidate and _is_expression(candidate):
            return candidate
    return None


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _compiles(source: str) -> bool:
    try:
        compile(source, "<example>", "exec")
    except SyntaxError:
        return False
    return True
