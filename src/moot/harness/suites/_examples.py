"""Examples from a function's docstring, as visible tests and as probe calls.

HumanEval's hidden tests score the answer and are never shown to an arm. What
an arm may use is what a programmer would: the examples in the docstring.
They come in several styles (``>>> f(x)`` doctests, ``f(x) ==> y``, ``For lst
= [1, 2] the output should be 3``); each is turned into an ``assert`` and kept
only if it compiles. Probe calls are the same calls without expected values.

A stub comes from a suite file, so the scan is bounded whatever it holds: lines longer than
``MAX_EXAMPLE_CHARS`` are not examples (they are blanked before any pattern sees them), at most
``MAX_EXAMPLES`` examples are kept, finding where an expected value ends tokenizes it once and
parses at most ``MAX_PARSES`` prefixes of it (never every prefix), and all of it parses at most
``MAX_PARSED_CHARS`` characters per stub.
"""

from __future__ import annotations

import ast
import doctest
import io
import keyword
import re
import tokenize
from dataclasses import dataclass

__all__ = ["MAX_EXAMPLES", "MAX_EXAMPLE_CHARS", "MAX_PARSES", "Example", "docstring_examples"]

MAX_EXAMPLE_CHARS = 1000
"""The longest line read as an example; longer lines of a stub are skipped (no docstring example is that long)."""
MAX_EXAMPLES = 64
"""The most examples kept from one stub."""
MAX_PARSES = 48
"""The most prefixes of an expected value parsed to find where the expression ends."""
MAX_PARSED_CHARS = 500_000
"""All the text parsed while looking for one stub's examples; once it is spent the examples found so far are kept."""


@dataclass
class _Budget:
    """Characters still to parse for one stub: what keeps the scan linear however many lines a stub holds."""

    left: int = MAX_PARSED_CHARS

    def spend(self, chars: int) -> bool:
        self.left -= chars
        return self.left >= 0


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
    """Every example found in ``stub`` for ``entry_point``, in order, without duplicates (at most MAX_EXAMPLES)."""
    stub = "\n".join(line if len(line) <= MAX_EXAMPLE_CHARS else "" for line in stub.splitlines())
    budget = _Budget()
    found = (
        _doctests(stub, entry_point, budget)
        or _inline(stub, entry_point, budget)
        or _for_form(stub, entry_point, budget)
    )
    unique: dict[Example, None] = {}
    for example in found:
        if len(unique) >= MAX_EXAMPLES:
            break
        if example not in unique and _compiles(example.test):
            unique[example] = None
    return list(unique)


def _doctests(stub: str, entry_point: str, budget: _Budget) -> list[Example]:
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
        want = _leading_expression(" ".join(lines), budget)
        if want and entry_point in example.source and "\n" not in example.source.strip():
            found.append(Example(example.source.strip(), want))
    return found


def _inline(stub: str, entry_point: str, budget: _Budget) -> list[Example]:
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
        want = _leading_expression(line[separator.end() :], budget)
        if want:
            examples.append(Example(line[start:end], want))
    return examples


def _for_form(stub: str, entry_point: str, budget: _Budget) -> list[Example]:
    """``For lst = [1,2,3] the output should be 14`` -> ``f(lst=[1,2,3]) == 14``."""
    examples = []
    for line in stub.splitlines():
        match = _FOR_FORM.match(" ".join(line.split()))  # single spaces: the lazy groups cannot rescan a long run
        if match is None:
            continue
        want = _leading_expression(match.group("want").rstrip("."), budget)
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


def _leading_expression(text: str, budget: _Budget) -> str | None:
    """The longest prefix of ``text`` that is a Python expression (drops trailing comments and prose).

    At most MAX_PARSES prefixes are parsed, longest first: the whole text (a trailing comment parses), then
    every length just short of where the prose starts (two operands side by side, ``3 since ...``, found by
    tokenizing once), then the ends of the tokens outside any bracket before it.
    """
    text = text.strip()
    if not text or len(text) > MAX_EXAMPLE_CHARS or not budget.spend(len(text)):  # tokenizing costs too
        return None
    cutoff, token_ends = _expression_ends(text)
    near = range(cutoff, max(cutoff - MAX_PARSES * 2 // 3, 0), -1)
    tried = dict.fromkeys([len(text), *near, *reversed(token_ends)])
    for end in list(tried)[:MAX_PARSES]:
        candidate = text[:end].strip()
        if not budget.spend(len(candidate)):
            return None
        if candidate and _is_expression(candidate):
            return candidate
    return None


def _expression_ends(text: str) -> tuple[int, list[int]]:
    """Where the prose after a leading expression starts in ``text`` (one line), and the offsets before it where
    a token outside any bracket ends, in order."""
    ends: list[int] = []
    cutoff = len(text)
    depth, operand, last_string = 0, False, False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.COMMENT, tokenize.ERRORTOKEN, tokenize.NEWLINE, tokenize.ENDMARKER):
                cutoff = token.start[1]
                break
            value = token.string
            is_operand = token.type in (tokenize.NUMBER, tokenize.STRING) or (
                token.type == tokenize.NAME and (value not in keyword.kwlist or value in ("None", "True", "False"))
            )
            if depth == 0 and operand and is_operand and not (token.type == tokenize.STRING and last_string):
                cutoff = token.start[1]
                break  # two operands side by side: the prose after the expression has begun
            depth += value in "([{" and token.type == tokenize.OP
            depth -= value in ")]}" and token.type == tokenize.OP
            if depth < 0:
                cutoff = token.start[1]
                break
            operand = is_operand or (token.type == tokenize.OP and value in ")]}")
            last_string = token.type == tokenize.STRING
            if depth == 0:
                ends.append(token.end[1])
    except (tokenize.TokenError, SyntaxError):
        pass
    return cutoff, ends


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # MemoryError: "too complex to parse"
        return False
    return True


def _compiles(source: str) -> bool:
    try:
        compile(source, "<example>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
