"""Python source moot did not write (a model's program, a suite's test), parsed in moot's own process safely.

CPython's parser answers hostile source with more than ``SyntaxError``: ``MemoryError`` ("too complex",
at a few thousand nested unary minus signs or ``not``), ``RecursionError`` (nesting past the interpreter's
limit, in the parser, the compiler, ``ast.unparse`` or ``ast.dump``) and ``ValueError`` (a NUL byte). Any
of them escaping a caller that expected only ``SyntaxError`` ended a comparison row, or a whole run, with a
traceback. Here every such failure is the one thing a caller already handles: a ``SyntaxError`` saying
why, and source past a size bound is refused before the parser sees it.
"""

from __future__ import annotations

import ast

from moot.boundary._text import one_line

__all__ = ["MAX_SOURCE_CHARS", "compile_python", "parse_python", "unparse_python"]

MAX_SOURCE_CHARS = 1_000_000
"""The largest source parsed here: far above any program a task asks for, and the parser's time and memory are
linear in it below its nesting limits."""
_PARSER_FAILURES = (SyntaxError, ValueError, RecursionError, MemoryError)


def parse_python(source: str, mode: str = "exec", filename: str = "<unknown>") -> ast.AST:
    """``ast.parse(source)``, with every way the parser refuses source (see the module docstring) a SyntaxError."""
    if len(source) > MAX_SOURCE_CHARS:
        raise SyntaxError(f"source of {len(source):,} characters; at most {MAX_SOURCE_CHARS:,} are parsed")
    try:
        return ast.parse(source, filename, mode)
    except SyntaxError:
        raise
    except _PARSER_FAILURES as exc:
        raise SyntaxError(f"cannot be parsed: {_why(exc)}") from None


def compile_python(source: str, filename: str = "<unknown>") -> None:
    """Check that ``source`` compiles as a module (the compiler recurses too), as a SyntaxError if it does not."""
    tree = parse_python(source, "exec", filename)
    try:
        compile(tree, filename, "exec", dont_inherit=True)
    except SyntaxError:
        raise
    except _PARSER_FAILURES as exc:
        raise SyntaxError(f"cannot be compiled: {_why(exc)}") from None


def unparse_python(tree: ast.AST) -> str | None:
    """``ast.unparse(tree)``, or None where the tree is too deep for it (the caller keeps the source it had)."""
    try:
        return ast.unparse(tree)
    except (RecursionError, MemoryError, ValueError):
        return None


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError | MemoryError):
        return "nested too deeply"
    return one_line(str(exc) or type(exc).__name__, 200)
