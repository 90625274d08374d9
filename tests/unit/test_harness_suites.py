"""Suites and their scorers: every kind scores a right answer 1 and a wrong one 0, bad specs fail in one line."""

from __future__ import annotations

import ast
import asyncio
import builtins
import json
import symtable
from pathlib import Path

import pytest
from pydantic import ValidationError

from moot._extras import MissingExtraError
from moot.errors import ConfigError
from moot.harness import CodeTests, ExactMatch, Item, LLMJudge, NumericMatch, RegexMatch, RowContext, load_suite
from moot.harness.arms._prompts import solver
from moot.harness.jobs._calls import CallCache, ClientFactory, EndpointLimits
from moot.harness.suites._examples import docstring_examples
from moot.harness.suites._scorers import last_number
from moot.models import ModelSpec
from moot.roles import NUMBER
from moot.sandbox import assemble_program, run_tests, task_helpers
from moot.scenario import RoleModels
from tests.unit.test_harness_support import PromptModel


def score(item: Item, answer: str, ctx: RowContext | None = None) -> float:
    return asyncio.run(item.scorer.score(item, answer, ctx or _ctx())).value


def _ctx(model: PromptModel | None = None, tmp: Path | None = None) -> RowContext:
    base = ModelSpec.parse(model.spec) if model else ModelSpec.parse("scripted:none")
    cache = CallCache(tmp) if tmp else None
    return RowContext(RoleModels(base), ClientFactory(EndpointLimits(1), cache))


# ------------------------------------------------------------------ spec errors
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("humanevl[:3]", "unknown suite 'humanevl[:3]'; valid forms: humaneval[:N]"),
        ("humaneval[a:b]", "slice [a:b] must look like [:20]"),
        ("humaneval?n=3", "unknown parameter(s) n"),
        ("reasoning-gym:", "name the task"),
        ("missing.jsonl", "suite file 'missing.jsonl' does not exist"),
        ("humaneval[500:]", "selects no items; humaneval has 164 problems"),
    ],
)
def test_a_bad_suite_spec_is_one_line_naming_what_is_valid(spec, expected):
    with pytest.raises(ConfigError) as error:
        load_suite(spec)
    assert expected in str(error.value)
    assert "\n" not in str(error.value)


# ------------------------------------------------------------------ humaneval
def test_humaneval_has_164_problems_and_slices():
    assert len(load_suite("humaneval").items) == 164
    sliced = load_suite("humaneval[:20]")
    assert [i.id for i in sliced.items][:2] == ["HumanEval/0", "HumanEval/1"] and len(sliced.items) == 20
    assert sliced.key == "humaneval" and sliced.answer_format == "code" and sliced.has_visible_tests
    assert [i.id for i in load_suite("humaneval[5]").items] == ["HumanEval/5"]


def test_humaneval_scores_a_correct_completion_1_and_a_wrong_one_0_in_the_sandbox():
    item = load_suite("humaneval[:1]").items[0]
    correct = (
        "```python\nfrom typing import List\n\n\n"
        "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
    )
    wrong = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"
    body_only = "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[:i])\n"
    assert score(item, correct) == 1.0
    assert score(item, wrong) == 0.0
    assert score(item, body_only) == 1.0  # a completion of the stub's body is scored like a whole function
    assert score(item, "no code at all, sorry") == 0.0


def test_humaneval_reference_solutions_pass_their_visible_tests():
    """The docstring examples given to reflection-tests are right: the canonical solutions pass them."""
    for item in load_suite("humaneval[:12]").items:
        assert item.code is not None and item.reference is not None
        program = assemble_program(item.code.stub, item.reference, item.code.entry_point)
        result = run_tests(program, list(item.code.visible_tests))
        assert result.status == "passed", (item.id, [t.message for t in result.failures])


WRONG_ANSWERS_THAT_REDEFINE_HELPERS = {
    # Each passes its item's check in one process: the check would call the answer's helper.
    "HumanEval/32": "```python\ndef poly(xs, x):\n    return 0.0\n\n\ndef find_zero(xs):\n    return 0.0\n```",
    "HumanEval/38": "```python\ndef encode_cyclic(s):\n    return s\n\n\ndef decode_cyclic(s):\n    return s\n```",
    "HumanEval/50": "```python\ndef encode_shift(s):\n    return s\n\n\ndef decode_shift(s):\n    return s\n```",
}


def _free_names(source: str) -> set[str]:
    """Names ``source`` reads and never binds (at the top or in any function), builtins aside."""
    top = symtable.symtable(source, "test", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    used: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        used |= {s.get_name() for s in table.get_symbols() if s.is_referenced() and (table is top or s.is_global())}
        tables += table.get_children()
    return used - bound - set(dir(builtins))


def _helpers_the_tests_call(item: Item) -> set[str]:
    assert item.code is not None and isinstance(item.scorer, CodeTests)
    setup = task_helpers(item.code.stub, item.code.entry_point)
    defined = {n.name for n in ast.parse(setup).body if isinstance(n, ast.FunctionDef)}
    return defined & set().union(*(_free_names(test) for test in item.scorer.tests))


def test_humaneval_tests_take_nothing_from_the_answer_but_the_entry_point():
    """Over all 164 problems: what the scoring tests run reads no name from the answer except the entry point,
    so an answer cannot hand the tests its own helpers (HumanEval/32's ``poly``, /38's ``encode_cyclic``)."""
    items = load_suite("humaneval").items
    for item in items:
        assert item.code is not None and isinstance(item.scorer, CodeTests)
        for test in item.scorer.sandbox_tests(item.code):
            assert _free_names(test) == {item.code.entry_point}, item.id
    calling = sorted(item.id for item in items if _helpers_the_tests_call(item))
    assert calling == sorted(WRONG_ANSWERS_THAT_REDEFINE_HELPERS)  # the items this protects, each tried below


@pytest.mark.parametrize("item_id", sorted(WRONG_ANSWERS_THAT_REDEFINE_HELPERS))
def test_a_wrong_humaneval_answer_that_redefines_the_items_helpers_scores_0(item_id):
    (item,) = load_suite(f"humaneval[{item_id.split('/')[1]}]").items
    assert score(item, WRONG_ANSWERS_THAT_REDEFINE_HELPERS[item_id]) == 0.0
    assert score(item, item.reference or "") == 1.0


def _sabotaged_helpers(item: Item) -> str:
    """The item's right answer, whose helpers raise when anyone but the answer itself calls them."""
    assert item.code is not None and item.reference is not None
    helpers = sorted(_helpers_the_tests_call(item))
    spy = (
        "import sys as _sys\n"
        f"_own = {{name: globals()[name] for name in {helpers!r}}}\n"
        "def _spy(name):\n"
        "    def spy(*args, **kwargs):\n"
        "        if _sys._getframe(1).f_globals is not globals():\n"
        "            raise RuntimeError(f'a test called the answer\\'s own {name}')\n"
        "        return _own[name](*args, **kwargs)\n"
        "    return spy\n"
        f"for _name in {helpers!r}:\n"
        "    globals()[_name] = _spy(_name)\n"
    )
    return f"```python\n{item.reference}\n{spy}```"


def test_every_humaneval_test_that_calls_a_helper_calls_the_items_own():
    """Found over all 164 problems, not listed: where a check calls a helper of the prompt, a right answer whose
    copy of that helper refuses outside callers still scores 1 (the check used the item's copy)."""
    items = [item for item in load_suite("humaneval").items if _helpers_the_tests_call(item)]
    assert items
    for item in items:
        assert score(item, _sabotaged_helpers(item)) == 1.0, item.id


def test_task_helpers_are_the_stubs_setup_without_the_entry_point_or_what_the_answer_writes():
    stub = (
        "import math\nfrom typing import List\nLIMIT = 10\n\n"
        "def helper(x):\n    return x + 1\n\n"
        'def declared(x):\n    """The answer writes this one."""\n\n'
        "def stubbed(x):\n    raise NotImplementedError\n\n"
        "class Node:\n    pass\n\n"
        'def solve(xs: List[int]) -> int:\n    """Entry point."""\n'
    )
    setup = task_helpers(stub, "solve")
    assert [type(n).__name__ for n in ast.parse(setup).body] == ["Import", "ImportFrom", "Assign", "FunctionDef"]
    assert "def helper" in setup and "solve" not in setup and "Node" not in setup
    assert task_helpers("def helper(x):\n    return x\n\ndef solve(x):\n", "solve") == "def helper(x):\n    return x\n"
    assert task_helpers("def solve(x:\n", "solve") == ""  # not Python: no setup to take


def test_docstring_examples_read_several_styles():
    stub = (
        'def f(lst, k):\n    """Example:\n    f([1, 2], 1) ==> 3\n    For lst = [4], k = 2 the output should be 6\n'
        '    >>> f([0], 0)\n    0\n    """\n'
    )
    assert [e.test for e in docstring_examples(stub, "f")] == ["assert f([0], 0) == 0"]  # doctests win
    assert [e.call for e in docstring_examples(stub.split(">>>")[0] + '"""\n', "f")] == ["f([1, 2], 1)"]
    for_form = 'def g(lst):\n    """For lst = [1,2,3] the output should be 14\n    """\n'
    assert [e.test for e in docstring_examples(for_form, "g")] == ["assert g(lst = [1,2,3]) == 14"]


# ------------------------------------------------------------------ reasoning-gym
def test_reasoning_gym_items_are_scored_by_the_package_scorer():
    pytest.importorskip("reasoning_gym")
    suite = load_suite("reasoning-gym:basic_arithmetic?n=3&seed=1")
    assert len(suite.items) == 3 and suite.key == "reasoning-gym:basic_arithmetic?seed=1"
    item = suite.items[0]
    assert score(item, item.reference or "") == 1.0
    assert score(item, "definitely not a number") == 0.0
    knights = load_suite("reasoning-gym:knights_knaves?n=1&seed=1").items[0]
    assert score(knights, knights.reference or "") == 1.0
    assert 0.0 < score(knights, "Amelia is a hero and Elizabeth is a villain") < 1.0  # partial credit: graded
    # item i is the same whatever n is, so a larger run reuses a smaller one's rows
    assert load_suite("reasoning-gym:basic_arithmetic?n=10&seed=1").items[2].task == suite.items[2].task


def test_numeric_suites_hold_every_short_answer_to_a_number(tmp_path):
    pytest.importorskip("reasoning_gym")
    assert {i.answer_pattern for i in load_suite("reasoning-gym:chain_sum?n=5&seed=1").items} == {NUMBER}
    assert {i.answer_pattern for i in load_suite("reasoning-gym:knights_knaves?n=2&seed=1").items} == {None}
    numeric = _jsonl(
        tmp_path, {"input": "2 + 2?", "answer": "4", "scoring": "numeric"}, {"input": "Hi?", "answer": "hi"}
    )
    assert [i.answer_pattern for i in load_suite(str(numeric)).items] == [NUMBER, None]
    shaped = solver((), NUMBER).output_type
    assert shaped.model_validate({"reasoning": "r", "answer": "-12.5"}).answer == "-12.5"
    for prose in ("expert_1: subtract first", "no units", "-590 + 330", "4 apples", "1,000"):
        with pytest.raises(ValidationError):
            shaped.model_validate({"reasoning": "r", "answer": prose})


def test_a_gym_suite_takes_a_closed_answer_set_and_every_answer_must_be_in_it():
    pytest.importorskip("reasoning_gym")
    suite = load_suite("reasoning-gym:syllogism?n=6&seed=2&choices=Yes,No")
    assert {i.choices for i in suite.items} == {("Yes", "No")} and suite.answer_kind == "choices"
    assert {i.reference for i in suite.items} <= {"Yes", "No"}
    assert suite.key == "reasoning-gym:syllogism?seed=2&options=Yes,No"
    assert load_suite("reasoning-gym:syllogism?n=6&seed=2").items[3].task == suite.items[3].task  # same generator
    assert score(suite.items[0], suite.items[0].reference or "") == 1.0
    with pytest.raises(ConfigError, match=r"item 0's answer '-?\d+' is not one of the choices Yes, No"):
        load_suite("reasoning-gym:chain_sum?n=2&seed=1&choices=Yes,No")
    with pytest.raises(ConfigError, match="choices needs at least two answers"):
        load_suite("reasoning-gym:syllogism?n=2&choices=Yes")


def test_a_suite_file_under_the_working_directory_is_keyed_by_its_relative_path(tmp_path, monkeypatch):
    """A results folder committed beside its suite file finds its rows in a clone at any other path."""
    keys = []
    for clone in ("a", "b"):
        root = tmp_path / clone
        (root / "suites").mkdir(parents=True)
        _jsonl(root / "suites", {"input": "2 + 2?", "answer": "4"})
        monkeypatch.chdir(root)
        keys.append(load_suite("suites/suite.jsonl?choices=4,5").key)
    assert keys == ["file:suites/suite.jsonl?options=4,5"] * 2
    monkeypatch.chdir(tmp_path / "a" / "suites")  # outside the file's folder tree: the absolute path
    assert (
        load_suite(str(tmp_path / "b" / "suites" / "suite.jsonl")).key
        == f"file:{tmp_path / 'b' / 'suites' / 'suite.jsonl'}"
    )


def test_a_suite_s_answer_kind_is_what_every_item_asks_for(tmp_path):
    pytest.importorskip("reasoning_gym")
    assert load_suite("reasoning-gym:chain_sum?n=3&seed=1").answer_kind == "number"
    assert load_suite("reasoning-gym:knights_knaves?n=2&seed=1").answer_kind == "text"
    assert load_suite("humaneval[:2]").answer_kind == "code"
    closed = {"input": "Is 4 even?", "answer": "Yes", "choices": ["Yes", "No"]}
    assert load_suite(str(_jsonl(tmp_path, closed, closed))).answer_kind == "choices"
    assert load_suite(str(_jsonl(tmp_path, closed, {"input": "2 + 2?", "answer": "4"}))).answer_kind == "text"


def test_reasoning_gym_bad_task_or_parameter_is_a_config_error():
    pytest.importorskip("reasoning_gym")
    with pytest.raises(ConfigError, match=r"unknown reasoning-gym task 'gsm_symbolc'; e\.g\. gsm_symbolic"):
        load_suite("reasoning-gym:gsm_symbolc")
    with pytest.raises(ConfigError, match="rejected the parameters"):
        load_suite("reasoning-gym:basic_arithmetic?n=2&bogus=1")


# ------------------------------------------------------------------ user files
def _jsonl(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_jsonl_exact_regex_and_numeric_scoring(tmp_path):
    path = _jsonl(
        tmp_path,
        {"id": "capital", "input": "Capital of France?", "answer": "Paris"},
        {"id": "year", "question": "When?", "pattern": r"^19\d\d$", "scoring": "regex"},
        {"id": "pi", "prompt": "Pi to 2 places?", "answer": 3.14159, "scoring": "numeric", "tolerance": 0.01},
    )
    capital, year, pi = load_suite(str(path)).items
    assert isinstance(capital.scorer, ExactMatch) and score(capital, " paris. ") == 1.0 and score(capital, "Lyon") == 0
    assert isinstance(year.scorer, RegexMatch) and score(year, "1969") == 1.0 and score(year, "2001") == 0.0
    assert isinstance(pi.scorer, NumericMatch)
    assert score(pi, "about 3.14") == 1.0 and score(pi, "3.2") == 0.0 and score(pi, "pi") == 0.0
    assert last_number("we got 1,250.5 apples") == 1250.5


def test_spec_options_set_the_scoring_of_a_whole_file(tmp_path):
    path = _jsonl(tmp_path, {"input": "Half of 5?", "answer": "2.5"}, {"input": "Third of 1?", "answer": "0.333"})
    half, third = load_suite(f"{path}?scoring=numeric&tolerance=0.001").items
    assert score(third, "0.3333") == 1.0 and score(half, "2.49") == 0.0
    assert [i.id for i in load_suite(f"{path}[1:]").items] == ["2"]


def test_yaml_file_with_defaults_and_an_llm_judge(tmp_path):
    path = tmp_path / "judged.yaml"
    path.write_text(
        "scoring: judge\nrubric: The answer must name the colour.\n"
        "items:\n  - id: sky\n    input: What colour is the sky?\n    answer: blue\n"
        "  - id: two\n    input: 1 + 1?\n    answer: '2'\n    scoring: exact\n"
    )
    sky, two = load_suite(str(path)).items
    assert isinstance(sky.scorer, LLMJudge) and not sky.scorer.cheap and isinstance(two.scorer, ExactMatch)
    judge = PromptModel(
        "judge-model",
        lambda agent, messages: {"reasoning": "names blue", "verdict": "correct" if "Blue" in messages[-1].content
                                 else "incorrect"},
    ).register()  # fmt: skip
    try:
        ctx = _ctx(judge, tmp_path / "cache")
        assert score(sky, "Blue, on a clear day", ctx) == 1.0
        assert score(sky, "green", ctx) == 0.0
        assert judge.agents == ["judge", "judge"] and ctx.meter.calls == 2
        assert "The answer must name the colour." in judge_prompt(judge, ctx, sky)
    finally:
        judge.unregister()


def judge_prompt(model: PromptModel, ctx: RowContext, item: Item) -> str:
    seen: list[str] = []
    model.reply = lambda agent, messages: seen.append(messages[-1].content) or {"reasoning": "r", "verdict": "correct"}
    asyncio.run(item.scorer.score(item, "some other answer", ctx))
    return seen[0]


def test_file_code_items_are_scored_by_their_tests(tmp_path):
    stub = 'def add(a, b):\n    """Add.\n    >>> add(1, 2)\n    3\n    """\n'
    path = _jsonl(tmp_path, {"id": "add", "stub": stub, "entry_point": "add", "tests": ["assert add(2, 2) == 4"]})
    suite = load_suite(str(path))
    item = suite.items[0]
    assert suite.answer_format == "code" and suite.has_visible_tests and isinstance(item.scorer, CodeTests)
    assert item.code is not None and item.code.visible_tests == ("assert add(1, 2) == 3",)
    assert score(item, "```python\ndef add(a, b):\n    return a + b\n```") == 1.0
    assert score(item, "```python\ndef add(a, b):\n    return a - b\n```") == 0.0


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"inptu": "x", "answer": "y"}, "valid fields: id, input"),
        ({"input": "x", "scoring": "numeric", "answer": "ten"}, "needs a numeric answer, got 'ten'"),
        ({"input": "x", "scoring": "fuzzy", "answer": "y"}, "scoring"),
        ({"input": "x", "scoring": "regex", "pattern": "(["}, "bad regex"),
        ({"stub": "def f(): pass", "tests": ["assert f() is None"]}, "needs 'entry_point'"),
    ],
)
def test_bad_file_items_name_the_problem(tmp_path, row, expected):
    with pytest.raises(ConfigError, match=None) as error:
        load_suite(str(_jsonl(tmp_path, row)))
    assert expected in str(error.value)


def test_a_reasoning_gym_suite_without_its_extra_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "reasoning_gym", None)  # import reasoning_gym now fails
    with pytest.raises(MissingExtraError) as refused:
        load_suite("reasoning-gym:chain_sum?n=2")
    assert str(refused.value) == (
        "a reasoning-gym suite needs the 'suites' extra (reasoning_gym not installed): "
        "pip install 'moot[suites]' (from a clone: pip install -e '.[suites]')"
    )
