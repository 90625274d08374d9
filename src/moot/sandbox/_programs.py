"""Programs in model replies: the code a draft holds, and the whole program to run from it.

One owner for "which code do we run": the test critic, the code debate, the
behaviour vote and the hidden-test scorer all read a reply through here, so
a draft is never run one way when reviewed and another when scored. It sits
with the sandbox that runs those programs, and imports nothing from moot but the boundary's parser
(:func:`moot.boundary.parse_python`: a model's code is outside input, parsed without trusting it).
"""

from __future__ import annotations

import ast
import re

from moot.boundary import parse_python, unparse_python

__all__ = [
    "AmbiguousDraft",
    "assemble_program",
    "draft_of",
    "extract_code",
    "program_of",
    "task_helpers",
    "without_scaffolding",
]

# The framing lines of the critique turn prompt (roles/prompts/turns/critique.j2): the draft sits between them.
_DRAFT_LINE = re.compile(r"^Draft to review:[ \t]*$", re.MULTILINE)
_ISSUES_LINE = re.compile(r"^Issues you reported on the previous draft\b.*$", re.MULTILINE)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = frozenset({"", "python", "py", "python3"})


class AmbiguousDraft(ValueError):
    """A critique prompt whose draft cannot be told apart from its framing: a framing line occurs more than once.

    The draft is the model's (or the code's) text, so it could hold a forged ``Draft to review:`` or
    ``Issues you reported ...`` line and make a reviewer run another block than the one the answer is scored on.
    """


def extract_code(text: str) -> tuple[str, bool]:
    """The code to run from a reply (a draft, an answer), and whether it came from a fenced block.

    The reply's last ```python (or untagged) block wins; with no block, the reply itself is taken as code.
    The reply is read as a whole: nothing written in it (such as a line that looks like the critique
    prompt's framing) changes which part of it is read, so a draft is run the same way when reviewed,
    adopted and scored. A reviewer that gets the critique prompt takes the draft out of it first
    (:func:`draft_of`).
    """
    blocks = [body for tag, body in _FENCE.findall(text) if tag.lower() in _PYTHON_TAGS]
    return (blocks[-1], True) if blocks else (text.strip(), False)


def draft_of(prompt: str) -> str:
    """The draft a critique prompt (``turns/critique``) holds, or the whole text if it is not such a prompt.

    The prompt is ``Task: ...``, a ``Draft to review:`` line, the draft, and optionally the previous
    issues after an ``Issues you reported on the previous draft ...`` line. Each framing line must
    occur once, in that order: a second one (written in the draft, the task or an earlier issue)
    makes the draft's extent ambiguous, and :class:`AmbiguousDraft` is raised rather than a guess
    that could review another block than the one the answer is scored on. So is a single issues line
    followed by text that is not a rendered list of issues, when reading the draft as ending there or
    running to the end would run different code (a draft that wrote that line itself, then more code).
    """
    drafts = list(_DRAFT_LINE.finditer(prompt))
    issues = list(_ISSUES_LINE.finditer(prompt))
    if not drafts:
        if issues:
            raise AmbiguousDraft("the text has an 'Issues you reported' line but no 'Draft to review:' line")
        return prompt
    if len(drafts) > 1 or len(issues) > 1 or (issues and issues[0].start() < drafts[0].end()):
        raise AmbiguousDraft(
            "the critique prompt holds more than one 'Draft to review:' or 'Issues you reported' line, "
            "so where the draft begins and ends is ambiguous"
        )
    body = prompt[drafts[0].end() :].removeprefix("\n")
    if not issues:
        return body
    draft = prompt[drafts[0].end() : issues[0].start()].removeprefix("\n").removesuffix("\n\n")
    if not _as_rendered(prompt[issues[0].end() :]) and extract_code(draft) != extract_code(body):
        raise AmbiguousDraft(
            "the text after the critique prompt's 'Issues you reported' line is not a list of issues and holds "
            "code, so that line may have been written in the draft"
        )
    return draft


def _as_rendered(issues: str) -> bool:
    """Whether the text after the issues line is what the template renders: one ``- issue`` line per issue."""
    return all(line.startswith("- ") for line in issues.strip("\n").split("\n"))


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
    unparsed = unparse_python(ast.Module(body=kept, type_ignores=[])) if kept else None
    return unparsed + "\n" if unparsed else ""


def _parsed_stub(stub: str) -> ast.Module | None:
    for source in (stub, f"{stub.rstrip()}\n    pass\n"):  # a stub may end where the body is to be written
        try:
            return parse_python(source)  # type: ignore[return-value]
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
        tree = parse_python(code)
    except SyntaxError:
        return code
    assert isinstance(tree, ast.Module)
    kept = [node for node in tree.body if not _is_scaffolding(node)]
    if len(kept) == len(tree.body):
        return code
    unparsed = unparse_python(ast.Module(body=kept, type_ignores=[]))
    return code if unparsed is None else unparsed + "\n"


def _is_scaffolding(node: ast.stmt) -> bool:
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Expr):  # a bare call or a stray string; a module docstring stays harmless either way
        return isinstance(node.value, ast.Call | ast.Await)
    if isinstance(node, ast.If):
        test = node.test
        return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
    return False
