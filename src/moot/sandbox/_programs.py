"""Programs in model replies: the code a draft holds, and the whole program to run from it.

One owner for "which code do we run": the test critic, the code debate, the
behaviour vote and the hidden-test scorer all read a reply through here, so
a draft is never run one way when reviewed and another when scored. It sits
with the sandbox that runs those programs, and imports nothing from moot.
"""

from __future__ import annotations

import ast
import re

__all__ = [
    "assemble_program",
    "extract_code",
    "program_of",
    "task_helpers",
    "without_scaffolding",
]

# Markers of the critique turn prompt (roles/prompts/turns/critique.j2): the draft sits between them.
_DRAFT_MARK = "Draft to review:"
_AFTER_DRAFT_MARK = "\nIssues you reported on the previous draft"
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = frozenset({"", "python", "py", "python3"})


def extract_code(text: str) -> tuple[str, bool]:
    """The code to run from a critique prompt (or any text), and whether it came from a fenced block.

    Only the draft is searched when the text is a critique prompt, so code
    quoted in the task (e.g. the function to fix) is never run in its place.
    The draft's last ```python (or untagged) block wins; with no block, the
    draft itself is taken as code.
    """
    section = text
    start = text.find(_DRAFT_MARK)
    if start >= 0:
        section = text[start + len(_DRAFT_MARK) :]
        end = section.rfind(_AFTER_DRAFT_MARK)
        section = section[:end] if end >= 0 else section
    blocks = [body for tag, body in _FENCE.findall(section) if tag.lower() in _PYTHON_TAGS]
    return (blocks[-1], True) if blocks else (section.strip(), False)


def assemble_program(stub: str, answer: str, entry_point: str) -> str:
    """The program to test: the stub (imports, helpers) followed by the answer's code.

    An answer that defines the entry point replaces the stub's empty function
    (a later ``def`` wins); one that does not is taken as the function body.
    """
    code, fenced = extract_code(answer)
    if not fenced:  # unfenced text is taken as is: stripping it would break a body's indentation
        code = answer.rstrip().lstrip("\n")
    code = without_scaffolding(code)
    if re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", code, re.MULTILINE):
        return f"{stub.rstrip()}\n\n\n{code}\n"
    return f"{stub}{code}\n"


def task_helpers(stub: str, entry_point: str) -> str:
    """The stub's own setup, to run ahead of a task's tests: its imports, constants and implemented helper
    functions, without the entry point.

    A task's tests may call helpers its stub defines (HumanEval/38's check encodes with the prompt's
    ``encode_cyclic`` and expects the answer to decode it). Run with the tests, they are the task's own: an
    answer that redefines them changes what its own process computes, never what the test computes from
    them. Functions the stub only declares (a docstring or ``pass`` for a body) are the answer's to write,
    and classes stay the answer's too (the test hands their instances to the code, which takes only its own
    objects). A stub that does not parse, even as a declaration awaiting its body, gives no setup.
    """
    tree = _parsed_stub(stub)
    if tree is None:
        return ""
    kept = [node for node in tree.body if _is_setup(node, entry_point)]
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n" if kept else ""


def _parsed_stub(stub: str) -> ast.Module | None:
    for source in (stub, f"{stub.rstrip()}\n    pass\n"):  # a stub may end where the body is to be written
        try:
            return ast.parse(source)
        except SyntaxError:
            continue
    return None


def _is_setup(node: ast.stmt, entry_point: str) -> bool:
    if isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.AnnAssign):
        return True
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.name != entry_point and any(not _is_placeholder(statement) for statement in node.body)
    return False


def _is_placeholder(node: ast.stmt) -> bool:
    """A statement that leaves a body to be written: a docstring, ``pass``, ``...``, ``raise NotImplementedError``."""
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant) and (isinstance(node.value.value, str) or node.value.value is ...)
    if isinstance(node, ast.Raise) and node.exc is not None:
        raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
    return False


def program_of(reply: str, stub: str = "", entry_point: str | None = None) -> str:
    """The program a reply stands for: assembled onto ``stub`` when the task gave one, else its code alone."""
    if stub and entry_point:
        return assemble_program(stub, reply, entry_point)
    return without_scaffolding(extract_code(reply)[0])


def without_scaffolding(code: str) -> str:
    """``code`` without the top-level checks a model adds after its answer (bare calls such as ``check()``,
    ``print(...)``, asserts, ``if __name__ == "__main__":`` blocks).

    An answer to "complete this function" is its definitions; a model's own
    example run at import time is not part of it, and a wrong one would fail
    the load before any real test ran. Code that does not parse, or has no
    such statements, is returned unchanged (comments and layout kept).
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    kept = [node for node in tree.body if not _is_scaffolding(node)]
    if len(kept) == len(tree.body):
        return code
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n"


def _is_scaffolding(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Expr):  # a bare call or a stray string; a module docstring stays harmless either way
        return isinstance(node.value, ast.Call | ast.Await)
    if isinstance(node, ast.If):
        test = node.test
        return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
    return False
