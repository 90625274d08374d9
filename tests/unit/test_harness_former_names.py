"""Each harness name renamed so a concept has one name (issue 43 item 5) still works under its former spelling, with
a DeprecationWarning that names the new one; the new spelling works without one. A closed answer set is ``choices``
(the suite file field, the suite spec parameter, ``Item.choices``); the suite key rows are stored under keeps the
former spelling, so committed results folders find their rows."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from moot.errors import ConfigError, MalformedOutputError
from moot.harness import (
    CompareRequest,
    Comparison,
    DebateArm,
    ExactMatch,
    Item,
    ResultStore,
    SelfConsistency,
    Suite,
    agent_reply,
    ask,
    load_suite,
)
from moot.harness.arms._arm import canonical_spec


def _no_warning(make):
    """``make()``, failing the test if it warns of a deprecation."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        return make()


def _yes_no(path: Path, field: str | None = None) -> Path:
    item = {"input": "Is 4 even?", "answer": "Yes"} | ({field: ["Yes", "No"]} if field else {})
    path.write_text(json.dumps(item) + "\n")
    return path


def test_a_suite_spec_s_choices_parameter_was_options_and_the_key_keeps_that_spelling(tmp_path: Path):
    path = _yes_no(tmp_path / "yn.jsonl")
    new = _no_warning(lambda: load_suite(f"{path}?choices=Yes,No"))
    with pytest.warns(DeprecationWarning, match=r"options is deprecated; it is now called choices"):
        old = load_suite(f"{path}?options=Yes,No")
    assert new.items == old.items and new.items[0].choices == ("Yes", "No")
    assert new.key == old.key and new.key.endswith("?options=Yes,No")  # the key committed rows are stored under
    with pytest.raises(ConfigError, match=r"give choices once \(options is its former name\)"):
        load_suite(f"{path}?options=Yes,No&choices=Yes,No")


def test_a_gym_suite_s_choices_parameter_was_options_and_the_key_keeps_that_spelling():
    pytest.importorskip("reasoning_gym")
    new = _no_warning(lambda: load_suite("reasoning-gym:syllogism?n=2&seed=2&choices=Yes,No"))
    with pytest.warns(DeprecationWarning, match=r"options is deprecated; it is now called choices"):
        old = load_suite("reasoning-gym:syllogism?n=2&seed=2&options=Yes,No")
    assert new.key == old.key == "reasoning-gym:syllogism?seed=2&options=Yes,No"
    assert new.items[0].choices == old.items[0].choices == ("Yes", "No")


def test_a_suite_file_s_choices_field_was_options_and_still_loads(tmp_path: Path):
    new = _no_warning(lambda: load_suite(str(_yes_no(tmp_path / "new.jsonl", "choices"))))
    with pytest.warns(DeprecationWarning, match=r"item 1: options is deprecated; it is now called choices"):
        old = load_suite(str(_yes_no(tmp_path / "old.jsonl", "options")))
    assert new.items[0].choices == old.items[0].choices == ("Yes", "No") and old.answer_kind == "choices"
    wide = tmp_path / "wide.yaml"
    wide.write_text("options: [Yes, No]\nitems:\n  - {input: 'Is 4 even?', answer: 'Yes'}\n")
    with pytest.warns(DeprecationWarning, match=r"wide.yaml: options is deprecated; it is now called choices"):
        assert load_suite(str(wide)).items[0].choices == ("Yes", "No")


def test_an_item_s_closed_answer_set_is_its_choices_and_options_still_sets_it():
    new = _no_warning(lambda: Item("q", "Is 4 even?", ExactMatch("Yes"), choices=("Yes", "No")))
    with pytest.warns(DeprecationWarning, match=r"Item\(options=\.\.\.\) .* now called choices="):
        old = Item("q", "Is 4 even?", ExactMatch("Yes"), options=("Yes", "No"))
    with pytest.warns(DeprecationWarning, match=r"Item\.options is deprecated; it is now called Item\.choices"):
        assert old.options == ("Yes", "No")
    assert new == old


def test_an_arm_is_built_from_its_params_and_options_still_passes_them():
    new = _no_warning(lambda: DebateArm(params={"experts": "2"}))
    with pytest.warns(DeprecationWarning, match=r"DebateArm\(options=\.\.\.\) is deprecated; it is now called params="):
        old = DebateArm(options={"experts": "2"})
    with pytest.warns(DeprecationWarning, match=r"SelfConsistency\(options=\.\.\.\) .* now called params="):
        sampled = SelfConsistency(options={"k": "3"})
    assert new.given == old.given and sampled.settings == SelfConsistency({"k": "3"}).settings
    with pytest.raises(ConfigError, match=r"arm 'debate': experts: .*; valid parameters: experts"):
        DebateArm({"experts": "0"})


async def test_one_agent_s_reply_is_agent_reply_and_ask_is_its_former_name():
    class Agent:
        async def run(self, task):
            raise MalformedOutputError("solver", 2, "never well formed")

    new = await _no_warning(lambda: agent_reply(Agent(), "t"))
    with pytest.warns(DeprecationWarning, match="ask is deprecated; it is now called agent_reply"):
        old = await ask(Agent(), "t")
    assert new == old and new.failed and new.parse_failures == 2


def test_an_arm_declaring_its_former_full_options_still_gets_its_canonical_spec():
    class Old:
        name = "old"
        settings = {"b": 1}
        former_options = {"a": "x"}

    with pytest.warns(DeprecationWarning, match=r"Old\.former_options is deprecated; it is now called implied_params"):
        assert canonical_spec(Old()) == "old?a=x&b=1"


def test_one_moot_compare_is_a_compare_request_and_compare_options_still_imports(tmp_path: Path):
    import moot.harness

    with pytest.warns(DeprecationWarning, match="moot.harness.CompareOptions is deprecated; it is now called Compare"):
        from moot.harness import CompareOptions
    assert CompareOptions is CompareRequest and "CompareOptions" not in moot.harness.__all__
    request = CompareRequest(suite="s.jsonl", arms=["single"], out=tmp_path)
    suite = Suite("s", "s.jsonl", [Item("q", "t", ExactMatch("a"))])
    new = _no_warning(lambda: Comparison(request, suite, [], {}))
    with pytest.warns(DeprecationWarning, match=r"Comparison\(options=\.\.\.\) .* now called request="):
        old = Comparison(options=request, suite=suite, arms=[], models={})
    with pytest.warns(
        DeprecationWarning, match=r"Comparison\.options is deprecated; it is now called Comparison\.request"
    ):
        assert old.options is request
    assert new == old and new.results_path == tmp_path / "results.sqlite3"


def test_a_committed_folder_s_suite_spec_still_loads_and_keys_the_rows_it_holds(monkeypatch):
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)  # the folder's suite key names its file relative to the repository
    store = ResultStore(root / "docs/compare/yes-no-3-fresh/results.sqlite3", read_only=True)
    try:
        stored = store.suite_keys()
    finally:
        store.close()
    with pytest.warns(DeprecationWarning, match="now called choices"):
        old = load_suite("docs/compare/suites/yes-no-3.jsonl?options=Yes,No")
    new = _no_warning(lambda: load_suite("docs/compare/suites/yes-no-3.jsonl?choices=Yes,No"))
    assert old.key == new.key and stored == {new.key}


def test_the_command_line_says_a_former_spelling_once_as_a_note(tmp_path: Path):
    import subprocess
    import sys

    suite = tmp_path / "yn.jsonl"
    suite.write_text('{"id": "a", "question": "Is 4 even?", "answer": "Yes"}\n')
    done = subprocess.run(
        [sys.executable, "-m", "moot", "compare", f"{suite}?options=Yes,No", "--arms", "single",
         "--model", "scripted:deterministic", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    notes = [line for line in done.stderr.splitlines() if line.startswith("moot: note:")]
    assert done.returncode == 0, done.stderr
    assert notes == [f"moot: note: suite '{suite}?options=Yes,No': options is deprecated; it is now called choices"]
    assert "DeprecationWarning" not in done.stderr
