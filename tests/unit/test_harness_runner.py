"""The compare runner: rows per item x arm, resume, cache replay with zero calls, compute-matched k, limits."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.harness import (
    Attempt,
    CompareRequest,
    ResultRow,
    build_report,
    register_arm,
    run_comparison,
    unregister_arm,
    write_report,
)
from tests.unit.test_harness_support import PromptModel, arithmetic, write_sums

ARMS = ["single", "self-consistency?k=3", "reflection", "debate"]
CLASSIC = "debate?rounds=2&anchor=none&peer_answers=shown&temperature=0.7"
"""The debate every short-answer row ran before the defaults took what measured best: three experts opening on
their own at 0.7, shown each other's answers, two rounds."""


@pytest.fixture
def sums(tmp_path) -> Path:
    return write_sums(tmp_path / "sums.jsonl", 4)


@pytest.fixture
def model(request):
    made: list[PromptModel] = []

    def make(name: str = "sums", **kwargs) -> PromptModel:
        reply = kwargs.pop("reply", None) or arithmetic(
            kwargs.pop("wrong", set()), stubborn=kwargs.pop("stubborn", False)
        )
        built = PromptModel(name, reply, **kwargs).register()
        made.append(built)
        return built

    yield make
    for built in made:
        built.unregister()


def compare_request(suite: Path | str, out: Path, model: PromptModel, arms=ARMS, **extra) -> CompareRequest:
    return CompareRequest(suite=str(suite), arms=list(arms), models=[model.spec], out=out, **extra)


def run(opts: CompareRequest, **kwargs):
    return asyncio.run(run_comparison(opts, **kwargs))


def by_key(rows: list[ResultRow]) -> dict[tuple[str, str], ResultRow]:
    return {(r.item, r.arm): r for r in rows}


def test_every_item_times_every_arm_is_one_row_with_usage_and_a_score(sums, tmp_path, model):
    m = model(wrong={2})  # every agent is off by one on "What is 2 + 4?"
    comparison = run(compare_request(sums, tmp_path / "out", m))
    rows = by_key(comparison.rows)
    assert len(rows) == 4 * len(ARMS) and comparison.computed == 16 and comparison.failed == 0
    assert rows[("q1", "single")].answer == "3" and rows[("q1", "single")].score == 1.0
    assert rows[("q2", "single")].score == 0.0
    single, sc = rows[("q0", "single")], rows[("q0", "self-consistency?k=3")]
    assert (single.model_calls, single.billed_calls, single.rounds) == (1, 1, 1)
    assert single.prompt_tokens > 0 and single.completion_tokens > 0 and single.tokens == single.billed_tokens
    assert sc.model_calls == 3 and sc.metrics["k"] == 3 and sc.metrics["vote"] == "answer"
    debate = rows[("q0", "debate")]
    assert debate.model_calls == 3 and debate.rounds == 1 and "consensus" in debate.stop_reason  # all agreed
    assert debate.metrics["verdict_by"] == "rounds_vote" and debate.metrics["first_round_diversity"] == 1
    reflection = rows[("q0", "reflection")]
    assert reflection.model_calls == 2 and "quality threshold" in reflection.stop_reason
    assert all(r.wall_seconds >= 0 and r.status == "done" for r in rows.values())
    assert comparison.meter.billed_calls == m.calls  # every inner call is accounted for


def test_rows_are_written_to_sqlite_as_they_finish(sums, tmp_path, model):
    import sqlite3

    comparison = run(compare_request(sums, tmp_path / "out", model(), arms=["single"]))
    with sqlite3.connect(comparison.results_path) as db:
        stored = db.execute("SELECT item, arm, status, score, model_calls FROM rows ORDER BY item").fetchall()
    assert stored == [(f"q{i}", "single", "done", 1.0, 1) for i in range(4)]


def test_a_compare_that_failed_midway_resumes_with_only_the_missing_rows(sums, tmp_path, model):
    out = tmp_path / "out"
    broken = model("flaky", fail_after=9)
    first = run(compare_request(sums, out, broken))
    assert 0 < first.computed < 16 and first.failed == 16 - first.computed
    errors = [r for r in first.rows if r.status == "error"]
    assert errors and all("went away" in (r.error or "") for r in errors)
    finished = {(r.item, r.arm): r.finished_at for r in first.rows if r.status == "done"}

    broken.fail_after, broken.calls = None, 0  # the endpoint is back
    second = run(compare_request(sums, out, broken))
    assert second.reused == len(finished) and second.computed == 16 - len(finished) and second.failed == 0
    rows = by_key(second.rows)
    assert all(rows[key].finished_at == stamp for key, stamp in finished.items())  # not recomputed
    recomputed = [r for r in second.rows if (r.item, r.arm) not in finished]
    assert second.meter.calls == sum(r.model_calls for r in recomputed)  # calls went to missing rows only
    assert broken.calls == second.meter.billed_calls


def test_an_interrupted_compare_keeps_its_rows_and_resumes(sums, tmp_path, model):
    out = tmp_path / "out"
    m = model()

    class StopAfter:
        def __init__(self, rows: int) -> None:
            self.rows, self.seen = rows, 0

        def start(self, phase, total, done):
            pass

        def advance(self, row):
            self.seen += 1
            if self.seen == self.rows:
                raise KeyboardInterrupt  # Ctrl-C between two rows

    with pytest.raises(KeyboardInterrupt):
        run(compare_request(sums, out, m, arms=["single", "reflection"]), progress=StopAfter(3))
    resumed = run(compare_request(sums, out, m, arms=["single", "reflection"]))
    assert resumed.reused == 3 and resumed.computed == 5 and len(resumed.rows) == 8


def test_a_finished_comparison_replays_from_the_cache_with_zero_model_calls(sums, tmp_path, model):
    from moot.harness.jobs._provenance import code_version

    out = tmp_path / "out"
    m = model(wrong={1})
    first = run(compare_request(sums, out, m))
    assert m.calls > 0 and first.meter.billed_calls == m.calls
    m.calls = 0

    replay = run(compare_request(sums, out, m, rerun=True))  # recompute every row, through the cache
    assert m.calls == 0 and replay.meter.billed_calls == 0
    assert replay.computed == replay.replayed == 16 and replay.meter.calls == first.meter.calls  # same logical work
    # the replay agreed with every stored row, so the rows keep what the paid run measured, and say who replayed them
    assert all(r.metrics.pop("replayed_at") == code_version() for r in replay.rows)
    assert by_key(replay.rows) == by_key(first.rows)

    elsewhere = run(compare_request(sums, tmp_path / "fresh", m, cache=out / "cache"))  # a new results file, same cache
    assert m.calls == 0 and elsewhere.computed == 16 and elsewhere.meter.billed_calls == 0
    before = by_key(first.rows)
    for key, row in by_key(elsewhere.rows).items():  # same answers and logical work, nothing billed
        assert (row.answer, row.score, row.model_calls, row.tokens) == (
            before[key].answer, before[key].score, before[key].model_calls, before[key].tokens
        )  # fmt: skip
        assert row.billed_calls == 0 and row.billed_tokens == 0
    report = build_report(elsewhere)
    assert report.run_billed_calls == 0 and report.run_calls == first.meter.calls


def test_a_changed_model_spec_never_reuses_rows(sums, tmp_path, model):
    out = tmp_path / "out"
    m = model()
    run(compare_request(sums, out, m, arms=["single"]))
    hotter = CompareRequest(suite=str(sums), arms=["single"], models=[f"{m.spec}@0.9"], out=out)
    again = run(hotter)
    assert again.reused == 0 and again.computed == 4


def test_compute_matched_sizes_self_consistency_to_the_debate_calls(tmp_path, model):
    suite = write_sums(tmp_path / "sums.jsonl", 4)
    m = model(stubborn=True)  # expert_3 never agrees: every debate runs both rounds
    opts = compare_request(suite, tmp_path / "out", m, arms=["debate", "self-consistency"], compute_matched=True)
    comparison = run(opts)
    debate = [r for r in comparison.rows if r.arm == "debate"]
    assert [r.model_calls for r in debate] == [7, 7, 7, 7]  # the held anchor's solver call, 2 experts x 3 rounds
    assert comparison.matched_k == 7
    sc = [r for r in comparison.rows if r.arm == "self-consistency"]
    assert len(sc) == 4 and all(r.model_calls == 7 and r.settings["k"] == 7 for r in sc)
    report = build_report(comparison)
    assert report.matched_k == 7
    assert report.arms[0].mean_calls == report.arms[1].mean_calls == 7


def test_compute_matched_with_two_debate_arms_matches_the_first_listed(tmp_path, model):
    suite = write_sums(tmp_path / "sums.jsonl", 4)
    m = model(stubborn=True)
    arms = [f"{CLASSIC}&experts=4", "debate", "self-consistency"]
    comparison = run(compare_request(suite, tmp_path / "out", m, arms=arms, compute_matched=True))
    calls = {arm: [r.model_calls for r in comparison.rows if r.arm == arm] for arm in arms}
    assert calls["debate"] == [7, 7, 7, 7] and calls[f"{CLASSIC}&experts=4"] == [8, 8, 8, 8]  # 4 experts x 2 rounds
    assert comparison.matched_k == 8 and comparison.matched_to == f"{CLASSIC}&experts=4"
    report = build_report(comparison)
    markdown = write_report(report, tmp_path / "out").markdown.read_text()
    assert f"k = 8 samples, the mean model calls per item of {CLASSIC}&experts=4" in markdown


def test_compute_matched_needs_a_debate_and_a_self_consistency_arm(sums, tmp_path, model):
    with pytest.raises(ConfigError, match="list both kinds"):
        run(compare_request(sums, tmp_path / "out", model(), arms=["single", "debate"], compute_matched=True))


@pytest.mark.parametrize(
    ("arms", "expected"),
    [
        (["reflection-tests"], "arm 'reflection-tests' needs a suite whose items have tests"),
        (["singel"], "unknown arm 'singel'; known arms: best-of-k-tests, debate, reflection, reflection-tests"),
        (["debate?experts=1"], "arm 'debate': experts: Input should be greater than or equal to 2"),
        (
            ["debate?judges=2"],
            "valid parameters: experts (default 3), rounds (default 3 on numbers (1 on any other short answer) for "
            "short answers, 2 for code)",
        ),
        (["debate?rebuttal_temperature=hot"], "rebuttal_temperature (default 0.7 for short answers, opened for"),
        (["single", "single"], "each arm may appear once"),
    ],
)
def test_arms_that_cannot_run_are_refused_before_any_call(sums, tmp_path, model, arms, expected):
    m = model()
    with pytest.raises(ConfigError) as error:
        run(compare_request(sums, tmp_path / "out", m, arms=arms))
    assert expected in str(error.value) and m.calls == 0


def test_a_user_defined_arm_runs_like_a_built_in_one(sums, tmp_path, model):
    class Oracle:
        name = "oracle"

        def __init__(self, params):
            self.settings = dict(params)

        def check(self, suite):
            pass

        async def solve(self, item, ctx):
            return Attempt(item.reference or "", stop_reason="looked it up", metrics={"cheat": True})

    register_arm("oracle", Oracle)
    try:
        comparison = run(compare_request(sums, tmp_path / "out", model(), arms=["oracle?style=smug", "single"]))
    finally:
        unregister_arm("oracle")
    rows = [r for r in comparison.rows if r.arm == "oracle?style=smug"]
    assert len(rows) == 4 and all(r.score == 1.0 and r.model_calls == 0 and r.metrics["cheat"] for r in rows)


class Draws:
    """A sampling arm of a user's own: the runner knows it by its ``with_k``, not by its class."""

    name = "draws"

    def __init__(self, params, k: int = 2):
        self.k = int(params.get("k", k))
        self.settings = {"k": self.k}

    def with_k(self, k):
        return Draws({}, k)

    def check(self, suite):
        pass

    async def solve(self, item, ctx):
        return Attempt(item.reference or "", stop_reason=f"{self.k} draws", metrics={"k": self.k})


class Floor:
    """A baseline of a user's own (and no sampling arm): the selection warning measures variants against it."""

    name = "floor"
    baseline = True
    settings: dict[str, str] = {}

    def __init__(self, params):
        pass

    def check(self, suite):
        pass

    async def solve(self, item, ctx):
        return Attempt("0", stop_reason="always 0")


@pytest.mark.parametrize("sizing", [{"k": 5}, {"compute_matched": True}])
def test_a_user_s_sampling_arm_is_sized_by_k_and_compute_matched(sums, tmp_path, model, sizing):
    register_arm("draws", Draws)
    try:
        comparison = run(compare_request(sums, tmp_path / "out", model(), arms=["debate", "draws"], **sizing))
    finally:
        unregister_arm("draws")
    drawn = {r.metrics["k"] for r in comparison.rows if r.arm.startswith("draws")}
    assert drawn == ({5} if "k" in sizing else {comparison.matched_k}) and comparison.matched_k != 2


def test_a_user_s_baseline_arm_is_what_a_chosen_variant_is_measured_against(sums, tmp_path, model):
    register_arm("floor", Floor)
    try:
        arms = ["floor", "debate", "debate?rounds=2"]
        comparison = run(compare_request(sums, tmp_path / "out", model(wrong={1}), arms=arms))
        report = build_report(comparison)
    finally:
        unregister_arm("floor")
    (selection,) = report.selections
    assert selection.family == "debate" and selection.baseline == "floor"


def test_a_registered_suite_kind_builds_its_colon_specs(tmp_path, model):
    from moot.harness import Item, Suite, register_suite, unregister_suite
    from moot.harness.suites._suites import load_suite

    def build(parts, label):
        faces = int(parts.name.partition(":")[2])
        items = [Item(id=f"d{i}", task=f"Roll {i}", scorer=None, reference=str(i)) for i in range(1, faces + 1)]
        return Suite(key=parts.name, label=label, items=items[parts.slice or slice(None)])

    register_suite("dice", build)
    try:
        assert [i.id for i in load_suite("dice:6[:2]").items] == ["d1", "d2"]
        assert len(load_suite("dice:4").items) == 4
    finally:
        unregister_suite("dice")
    with pytest.raises(ConfigError, match="unknown suite 'dice:4'"):
        load_suite("dice:4")


def test_calls_in_flight_are_bounded_per_endpoint(sums, tmp_path, model):
    m = model()
    state = {"now": 0, "peak": 0}

    def slow(spec, agent):
        inner = spec.client(agent)
        create = inner.create

        async def limited_create(*args, **kwargs):
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            await asyncio.sleep(0.005)
            try:
                return await create(*args, **kwargs)
            finally:
                state["now"] -= 1

        inner.create = limited_create
        return inner

    run(
        compare_request(sums, tmp_path / "out", m, arms=["self-consistency?k=4", "debate"], concurrency=2), clients=slow
    )
    assert state["peak"] == 2


def test_the_report_has_per_arm_and_per_pair_statistics_and_writes_its_files(sums, tmp_path, model):
    comparison = run(compare_request(write_sums(tmp_path / "more.jsonl", 10), tmp_path / "out", model(wrong={1, 2, 3})))
    report = build_report(comparison)
    assert [a.label for a in report.arms] == ARMS and report.binary
    single = report.arms[0]
    assert single.n == 10 and single.accuracy == pytest.approx(0.7) and single.ci_low < 0.7 < single.ci_high
    assert single.accuracy_per_1k_tokens == pytest.approx(0.7 / (single.mean_tokens / 1000))
    assert len(report.pairs) == 6 and all(p.test == "McNemar exact" and p.n == 10 for p in report.pairs)
    import matplotlib
    from matplotlib import pyplot

    before = matplotlib.get_backend()
    matplotlib.use("pdf")  # the user's own backend, which writing a report must leave alone
    try:
        figures = pyplot.get_fignums()
        files = write_report(report, tmp_path / "out")
        assert (matplotlib.get_backend(), pyplot.get_fignums()) == ("pdf", figures)
    finally:
        matplotlib.use(before)
    assert files.plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = files.markdown.read_text()
    assert "| single |" in text and "McNemar" in text and "cost_accuracy.png" in text
    assert "<table>" in files.html.read_text()
    assert json.loads(files.summary.read_text())["arms"][0]["n"] == 10


def test_code_suites_run_single_reflection_tests_and_vote_by_behaviour(tmp_path, model):
    stub = 'def double(x):\n    """Twice x.\n    >>> double(3)\n    6\n    """\n'
    suite = tmp_path / "code.jsonl"
    suite.write_text(json.dumps({"id": "double", "stub": stub, "entry_point": "double",
                                 "tests": ["assert double(5) == 10", "assert double(-1) == -2"]}) + "\n")  # fmt: skip
    drafts = iter([f"```python\ndef double(x):\n    return {body}\n```" for body in ("x ** 2", "x * 2", "x ** 2")])

    def reply(agent, messages):
        text = messages[-1].content
        if "Revise the draft" in text or "Earlier drafts" in text:  # a revision: the visible test failed
            return "```python\ndef double(x):\n    return 2 * x\n```"
        return next(drafts, "```python\ndef double(x):\n    return x ** 2\n```")

    m = model("coder", reply=reply)
    arms = [
        "single",
        "self-consistency?k=3",
        "best-of-k-tests?k=3",
        "reflection-tests?revision=continue",
        "reflection-tests",
    ]
    comparison = run(compare_request(suite, tmp_path / "out", m, arms=arms))
    rows = by_key(comparison.rows)
    assert rows[("double", "single")].score == 0.0  # x ** 2
    sc = rows[("double", "self-consistency?k=3")]
    # samples x * 2, x ** 2, x ** 2: on the probe double(3) they return 6, 9, 9, so the wrong pair outvotes
    assert sc.metrics["vote"] == "execution, vote first" and sc.metrics["groups"] == [2, 1]
    assert sc.metrics["visible_passed"] == [1, 0, 0]
    assert sc.score == 0.0 and sc.metrics["oracle"] == {"candidates": 2, "best": 1.0, "gap": True}  # voted out
    # The same three samples (same seeds: from the cache), chosen by the visible test first: x * 2 wins.
    best = rows[("double", "best-of-k-tests?k=3")]
    assert best.metrics["vote"] == "execution, tests first" and best.score == 1.0 and best.billed_calls == 0
    assert build_report(comparison).shared_samples == [
        "self-consistency?k=3 and best-of-k-tests?k=3 share 3 samples (seeds 100-102)"
    ]
    refl = rows[("double", "reflection-tests?revision=continue")]
    # The first draft is single's x ** 2 (the same request: from the cache). It fails the visible
    # double(3) == 6, the critic says so, the revision 2 * x passes.
    assert refl.metrics["visible_tests"] == 1 and refl.rounds == 2 and refl.score == 1.0
    assert refl.metrics["scores"] == [0, 100] and (refl.model_calls, refl.billed_calls) == (2, 1)
    assert refl.settings == {"rounds": 3}  # the key its rows had before fresh revisions existed
    fresh = rows[("double", "reflection-tests")]
    # The same first draft; the revision is asked for from the failing test, shown no draft.
    assert fresh.settings == {"rounds": 3, "revision": "fresh"} and fresh.metrics["scores"] == [0, 100]
    assert fresh.score == 1.0 and (fresh.model_calls, fresh.billed_calls) == (2, 1)


def test_report_only_computes_nothing_and_reports_what_is_finished(sums, tmp_path, model):
    out = tmp_path / "out"
    m = model()
    run(compare_request(sums, out, m, arms=["single"]))
    calls = m.calls
    report_only = run(compare_request(sums, out, m, arms=["single", "debate", "self-consistency"], compute_matched=True,
                              report_only=True))  # fmt: skip
    assert m.calls == calls and report_only.computed == 0 and report_only.reused == 4
    assert report_only.matched_k is None  # no debate rows yet: nothing to match
    assert {r.arm for r in report_only.rows} == {"single"}
    report = build_report(report_only)
    assert [a.n for a in report.arms] == [4, 0, 0]
    assert "| debate |" in write_report(report, out).markdown.read_text()  # empty arms still render


def test_graded_scores_use_the_paired_permutation_test_and_a_registered_suite(tmp_path, model):
    from moot.harness import Item, Score, Suite, register_suite, unregister_suite

    class Closeness:
        cheap = True

        async def score(self, item, answer, ctx):
            return Score(max(0.0, 1.0 - abs(float(answer) - float(item.reference)) / 10))

    def build(parts, label):
        items = [
            Item(id=f"g{i}", task=f"What is {i} + {i}?", scorer=Closeness(), reference=str(2 * i)) for i in range(6)
        ]
        return Suite(key="graded", label=label, items=items[parts.slice or slice(None)])

    register_suite("graded", build)
    try:
        comparison = run(
            compare_request("graded[:5]", tmp_path / "out", model(wrong={1, 3}), arms=["single", "debate"])
        )
    finally:
        unregister_suite("graded")
    report = build_report(comparison)
    assert not report.binary and report.exact_first and report.items == 5  # partial credit: exact figures lead
    assert report.arms[0].accuracy == pytest.approx(3 / 5) and report.arms[0].graded is not None
    assert report.arms[0].graded.estimate == pytest.approx((3 * 1.0 + 2 * 0.9) / 5)
    graded = report.pairs[0].graded
    assert report.pairs[0].test == "McNemar exact" and graded is not None and graded.test == "paired permutation"
    assert 0.0 <= graded.p_value <= 1.0


def test_llm_judge_calls_are_counted_apart_from_the_arm_and_cached(tmp_path, model):
    suite = tmp_path / "judged.yaml"
    suite.write_text("scoring: judge\nitems:\n" + "".join(f"  - input: What is {i} + {i}?\n    answer: '{2 * i}'\n"
                                                          for i in range(3)))  # fmt: skip
    m = model(wrong={2})
    out = tmp_path / "out"
    first = run(compare_request(suite, out, m, arms=["single"]))
    assert [r.score for r in sorted(first.rows, key=lambda r: r.item)] == [1.0, 1.0, 0.0]
    assert all(r.model_calls == 1 and r.scoring_calls == 1 and r.scoring_billed_calls == 1 for r in first.rows)
    assert m.agents.count("judge") == 3
    m.calls = 0
    replay = run(compare_request(suite, out, m, arms=["single"], rerun=True))
    assert m.calls == 0 and replay.meter.calls == 6 and replay.meter.billed_calls == 0 and replay.replayed == 3


def test_a_closed_answer_set_constrains_every_arm_and_scores_the_option_named(tmp_path, model):
    from tests.unit.test_harness_support import critique

    path = tmp_path / "yesno.jsonl"
    items = [{"id": f"q{i}", "input": f"Is {i} even?", "answer": "No" if i % 2 else "Yes"} for i in range(3)]
    path.write_text("\n".join(json.dumps(item) for item in items) + "\n")
    constrained: list[bool] = []
    lettered: list[str] = []

    def reply(agent, messages):
        request = str(messages[-1].content)
        if agent == "critic":
            return critique(90)
        number = int(request.split("Is ")[1].split(" ")[0])
        answer = "Yes" if number % 2 == 0 else "No"
        listed = re.search(r"A\) (Yes|No)\nB\) (Yes|No)", request)
        if listed:  # a rotated expert is shown the set lettered, and held to the letters
            lettered.append(agent)
            constrained.append('"answer": "A" | "B"' in request and "Answer with exactly one of: A, B." in request)
            return {"reasoning": "parity", "answer": "AB"[listed.groups().index(answer)]}
        constrained.append('"answer": "Yes" | "No"' in request and "Answer with exactly one of: Yes, No." in request)
        if "Answer one claim of another expert" in request:
            other = "expert_2" if agent == "expert_1" else "expert_1"
            return {"claim": f"{other}: parity holds", "response": "it holds", "answer": answer, "because": "parity",
                    "key_arguments": ["parity holds"], "confidence": 0.9}  # fmt: skip
        if agent.startswith("expert_"):
            return {"reasoning": "parity", "answer": answer, "key_arguments": ["parity holds"], "confidence": 0.9}
        return {"reasoning": "parity", "answer": answer}

    prompted = model("yesno", reply=reply)
    arms = ["single", "self-consistency?k=3", "reflection", "debate"]
    rows = run(compare_request(f"{path}?choices=Yes,No", tmp_path / "out", prompted, arms=arms)).rows
    assert len(rows) == 12 and all(r.status == "done" and r.score == 1 for r in rows)
    assert constrained and all(constrained)
    assert len(lettered) == 6  # the debate's two sampled openings (solver calls) on each of the 3 items


def test_option_scoring_compares_the_option_named_not_the_prose():
    from moot.harness.suites._scorers import ChoiceMatch

    yes = ChoiceMatch("Yes", ("Yes", "No"))
    item, ctx = None, None
    said = {
        "Yes": 1.0,
        "yes.": 1.0,
        "Yes, June's name comes from Juno.": 1.0,
        "No, June's name from mythology is not possible.": 0.0,
        "The answer is yes": 1.0,
        "yes and no": 0.0,  # names both
        "Juno": 0.0,  # names neither
    }
    for answer, expected in said.items():
        assert asyncio.run(yes.score(item, answer, ctx)).value == expected, answer
    letters = ChoiceMatch("C", ("A", "B", "C", "D"))
    assert asyncio.run(letters.score(item, "C) 42", ctx)).value == 1.0


def test_an_answer_outside_the_choices_is_a_one_line_error(tmp_path):
    from moot.harness import load_suite

    path = tmp_path / "bad.yaml"
    path.write_text("choices: [Yes, No]\nitems:\n  - {input: 'Is 2 even?', answer: Maybe}\n")
    with pytest.raises(ConfigError, match=r"answer 'Maybe' is not one of the choices Yes, No") as caught:
        load_suite(str(path))
    assert "\n" not in str(caught.value)


def test_rows_and_arms_carry_their_cost_when_every_model_has_a_price(sums, tmp_path, model):
    m = model()
    priced = CompareRequest(
        suite=str(sums), arms=["single", "reflection"], models=[f"{m.spec}?price_in=1000&price_out=2000"],
        out=tmp_path / "out",
    )  # fmt: skip
    comparison = run(priced)
    for row in comparison.rows:
        expected = (row.billed_prompt_tokens * 1000 + row.billed_completion_tokens * 2000) / 1_000_000
        assert row.cost_usd == pytest.approx(expected) and row.cost_usd > 0
    report = build_report(comparison)
    single = report.arms[0]
    assert single.mean_cost_usd == pytest.approx(sum(r.cost_usd for r in comparison.rows if r.arm == "single") / 4)
    assert "cost/item" in write_report(report, tmp_path / "out").markdown.read_text()
    unpriced = build_report(run(compare_request(sums, tmp_path / "free", m, arms=["single"])))
    assert unpriced.arms[0].mean_cost_usd == 0.0  # a scripted model without a price is free


def test_a_results_file_from_before_named_migrations_is_brought_up_to_date_and_a_newer_one_refused(tmp_path):
    import sqlite3

    from moot.harness.jobs._results import MIGRATIONS, ResultStore

    old = tmp_path / "old.sqlite3"
    with sqlite3.connect(old) as db:  # the schema the first releases wrote, marked by user_version only
        db.executescript(MIGRATIONS[0][1] + "; PRAGMA user_version = 1;")
        db.execute("INSERT INTO rows (suite, item, arm_key, arm, settings, models, status, finished_at) "
                   "VALUES ('s', 'i', 'k', 'single', '{}', '{}', 'done', 'now')")  # fmt: skip
    store = ResultStore(old)
    assert store.finished("s", "k") == {"i"}  # the old row survives
    row = store.get("s", "i", "k")
    assert row is not None and row.cost_usd is None  # the cost column arrived empty
    store.close()
    with sqlite3.connect(old) as db:
        applied = [name for (name,) in db.execute("SELECT name FROM migrations ORDER BY name")]
        db.execute("INSERT INTO migrations (name, applied_at) VALUES ('9999_from_the_future', 'later')")
    assert applied == [name for name, _ in MIGRATIONS]
    with pytest.raises(
        ConfigError, match=r"^results file .*old\.sqlite3: written by a newer moot .*9999_from_the_future"
    ):
        ResultStore(old)


def _recount(other: str, answer: str, response: str):
    """A rebuttal answering ``other``'s (only) claim and recomputing ``answer``."""
    from moot.roles import Rebuttal

    return Rebuttal(
        claim=f"{other}: checked the sum", response=response, reasoning=f"added again: = {answer}",
        answer=answer, because="a recount", key_arguments=["checked the sum"], confidence=0.6,
    )  # fmt: skip


def _rounds_that_fix_one_item_and_break_another(agent, messages):
    """q1: round 1 votes wrong (two of three off by one), round 2 all right. q2: round 1 votes right,
    round 2 all wrong. q0, q3: everyone right at once (consensus in round 1). Every change in round 2 answers
    a claim of an expert holding the new answer and recomputes it, so it is adopted."""
    from tests.unit.test_harness_support import position, sum_of

    text = "\n".join(str(m.content) for m in messages)
    total = sum_of(text)
    rebut = "Answer one claim of another expert" in text
    item = total // 3 if total is not None else -1
    wrong = {
        (1, False): {"expert_2", "expert_3"},
        (1, True): set(),
        (2, False): {"expert_3"},
        (2, True): {"expert_1", "expert_2", "expert_3"},
    }.get((item, rebut), set())
    answer = str(total + 1 if agent in wrong else total)
    if not rebut:
        return position(answer, agent)
    holder = "expert_1" if item == 1 else "expert_3"  # who held the answer everyone moves to
    other = holder if agent != holder else "expert_2"
    return _recount(other, answer, "that sum holds")


def test_a_debate_row_carries_its_first_round_vote_and_the_report_says_what_the_rounds_bought(sums, tmp_path, model):
    m = model(reply=_rounds_that_fix_one_item_and_break_another)
    comparison = run(compare_request(sums, tmp_path / "out", m, arms=[CLASSIC]))
    rows = by_key(comparison.rows)
    fixed, broken = rows[("q1", CLASSIC)], rows[("q2", CLASSIC)]
    assert (fixed.metrics["first_round_vote"], fixed.metrics["first_round_score"], fixed.score) == ("4", 0.0, 1.0)
    assert (broken.metrics["first_round_vote"], broken.metrics["first_round_score"], broken.score) == ("6", 1.0, 0.0)
    assert fixed.metrics["position_scores"] == [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    assert rows[("q0", CLASSIC)].metrics["position_scores"] == [[1.0, 1.0, 1.0]]  # settled in round 1
    assert m.calls == 3 + 6 + 6 + 3  # the counterfactuals cost no model call
    arm = build_report(comparison).arms[0]
    assert (arm.accuracy, arm.first_round_vote) == (0.75, 0.75)
    assert arm.rounds_changed == {"better": 1, "worse": 1}
    assert arm.rounds_bought is not None and arm.rounds_bought.difference == 0.0 and arm.rounds_bought.n == 4
    # held after round 2: q1 3 of 3, q2 0 of 3, and q0, q3 (settled in round 1) keep their 3 of 3 each
    assert arm.correct_share_per_round == [9 / 12, 9 / 12] and arm.positions_per_round == [12, 12]
    files = write_report(build_report(comparison), tmp_path / "out")
    text = files.markdown.read_text()
    assert text.index("What the rounds bought") < text.index("## Arms")  # the cheaper explanation comes first
    assert f"| {CLASSIC} | first-round vote | 4 | 75.0% | 75.0% | +0.0 pts |" in text
    summary = json.loads(files.summary.read_text())["arms"][0]
    assert summary["first_round_vote"] == 0.75 and summary["rounds_changed"] == {"better": 1, "worse": 1}


def test_rows_record_the_commit_and_machine_and_a_report_spanning_commits_says_so(sums, tmp_path, model):
    from moot.harness.jobs._provenance import code_version, machine
    from moot.harness.jobs._results import ResultStore

    out = tmp_path / "out"
    first = run(compare_request(sums, out, model(), arms=["single"]))
    assert all(r.code_version == code_version() and r.machine == machine() for r in first.rows)
    report = build_report(first)
    assert report.provenance is not None and report.provenance.row_commits == {code_version(): 4}
    assert not report.provenance.mixed and "local" not in report.provenance.models["base"]
    store = ResultStore(out / "results.sqlite3")
    store.put(first.rows[0].model_copy(update={"code_version": "0123456789"}))  # as if computed at another commit
    store.close()
    mixed = build_report(run(compare_request(sums, out, model(), arms=["single"], report_only=True)))
    assert mixed.provenance is not None and mixed.provenance.row_commits == {"0123456789": 1, code_version(): 3}
    text = write_report(mixed, out).markdown.read_text()
    assert "Rows from different code versions" in text and "0123456789 (1 rows)" in text


def test_a_replay_refreshes_the_metrics_the_current_code_derives_and_keeps_what_the_paid_run_measured(
    sums, tmp_path, model
):
    from moot.harness.jobs._provenance import code_version
    from moot.harness.jobs._results import ResultStore

    out = tmp_path / "out"
    m = model(reply=_rounds_that_fix_one_item_and_break_another)
    first = run(compare_request(sums, out, m, arms=["debate"]))
    store = ResultStore(out / "results.sqlite3")
    for row in first.rows:  # as written by an older moot: no counterfactuals, another commit
        stale = {k: v for k, v in row.metrics.items() if k not in ("first_round_score", "position_scores")}
        store.put(row.model_copy(update={"metrics": stale, "code_version": "old", "wall_seconds": 99.0}))
    store.close()
    m.calls = 0
    replay = run(compare_request(sums, out, m, arms=["debate"], rerun=True))
    assert m.calls == 0 and replay.replayed == 4
    for row in replay.rows:
        assert "first_round_score" in row.metrics and (row.code_version, row.wall_seconds) == ("old", 99.0)
        assert row.metrics["replayed_at"] == code_version()  # the commit whose code reproduced it
    origin = build_report(replay).provenance
    assert origin is not None and (origin.row_commits, origin.replayed_commits) == ({"old": 4}, {code_version(): 4})
    assert not origin.mixed  # every row was last produced by one commit's code
    text = write_report(build_report(replay), out).markdown.read_text()
    assert (
        f"rows computed at old (4 rows); reproduced from the cache, same answers and scores, at {code_version()}"
        in text
    )
    assert "Rows from different code versions" not in text


def test_self_consistency_draws_its_own_samples_unless_told_to_share_the_debate_s(tmp_path, sums, model):
    from moot.harness import SelfConsistency

    own, shared = SelfConsistency({"k": "3"}), SelfConsistency({"k": "3", "samples": "debate"})
    assert own.sample_draws(0) == [(100, 0.7), (101, 0.7), (102, 0.7)]
    assert shared.sample_draws(0) == [(0, 0.7), (1, 0.7), (2, 0.7)]
    assert own.settings["samples"] == "own" and "samples" not in shared.settings  # the key rows had before
    assert shared.with_k(5).config.samples == "debate" and shared.with_k(5).settings["k"] == 5
    m = model()
    comparison = run(compare_request(sums, tmp_path / "out", m, arms=["debate", "self-consistency?samples=debate"],
                             compute_matched=True))  # fmt: skip
    report = build_report(comparison)
    assert report.shared_samples == []  # short answers: a debater's position is never the same reply as a sample


def test_solver_openings_are_samples_a_self_consistency_arm_at_the_same_temperature_shares(tmp_path, sums, model):
    solver = "debate?opening=solver&temperature=0/0.7/0.7"
    arms = [solver, "self-consistency?samples=debate&k=3", "debate?temperature=0.7"]
    comparison = run(compare_request(sums, tmp_path / "out", model(), arms=arms))
    debate = comparison.arms[0].arm
    assert debate.sample_draws(0) == [(1, 0.7), (2, 0.7)]  # expert 1 is the anchor: single's greedy call
    assert build_report(comparison).shared_samples == [
        f"{solver} and self-consistency?samples=debate&k=3 share 2 samples (seeds 1-2)"
    ]


def test_rescore_scores_the_stored_answers_again_and_the_report_says_which_changed(sums, tmp_path, model):
    from moot.harness.jobs._provenance import code_version
    from moot.harness.jobs._results import ResultStore

    out = tmp_path / "out"
    m = model(wrong={2})
    first = run(compare_request(sums, out, m, arms=["single"]))
    store = ResultStore(out / "results.sqlite3")
    store.put(by_key(first.rows)[("q1", "single")].model_copy(update={"score": 0.0}))  # as a broken judge scored it
    store.close()
    m.calls = 0
    with pytest.raises(ConfigError, match="give it with --report-only"):
        run(compare_request(sums, out, m, arms=["single"], rescore=True))
    rescored = run(compare_request(sums, out, m, arms=["single"], report_only=True, rescore=True))
    q1 = by_key(rescored.rows)[("q1", "single")]
    assert m.calls == 0 and q1.score == 1.0 and q1.metrics["score_before_rescore"] == 0.0
    report = build_report(rescored)
    assert report.rescored == {code_version(): 4} and report.rescore_changed == ["q1 × single: 0 -> 1"]
    # the rows keep the record, so any later report says so too
    later = build_report(run(compare_request(sums, out, m, arms=["single"], report_only=True)))
    assert later.rescored == report.rescored and later.rescore_changed == report.rescore_changed
    text = write_report(later, out).markdown.read_text()
    assert "scored again after the fact (--rescore): 4 rows at" in text and "q1 × single: 0 -> 1" in text


def test_debate_experts_take_one_temperature_each_when_given_one_per_expert():
    from moot.harness.arms._prompts import SHORT_DEBATER
    from moot.harness.arms._team_arms import DebateArm

    class Ctx:  # records what each expert is sampled at, and hands back the temperature as the agent
        def sampled(self, model_role: str, index: int, temperature: float) -> tuple[str, int, float]:
            return (model_role, index, temperature)

        def agent(self, role, *, model_role: str, name: str, spec):
            return spec

    mixed = DebateArm({"temperature": "0/ 0.7/1.1"})
    assert mixed._experts(Ctx(), SHORT_DEBATER) == [("expert_1", 0, 0.0), ("expert_2", 1, 0.7), ("expert_3", 2, 1.1)]
    assert mixed.settings["temperature"] == "0/0.7/1.1"  # the rows' key, as written
    same = DebateArm({"temperature": "0.3"})
    assert [t for *_, t in same._experts(Ctx(), SHORT_DEBATER)] == [0.3, 0.3, 0.3]
    assert DebateArm({}).settings["temperature"] == "0/0.3/0.3"  # short answers: the anchor, two experts at 0.3
    assert [t for *_, t in DebateArm({"anchor": "none"})._experts(Ctx(), SHORT_DEBATER)] == [0.3, 0.3, 0.3]
    for bad, says in (("0/0.7", "one per expert (3)"), ("0/2.5/1", "between 0 and 2"), ("hot", "valid number")):
        with pytest.raises(ConfigError, match=re.escape(says)):
            DebateArm({"temperature": bad})
    hot = DebateArm({"temperature": "0/0.3/0.3", "rebuttal_temperature": "0/0.7/0.7"})
    assert hot._rebutting(Ctx(), SHORT_DEBATER) == [("expert_1", 0, 0.0), ("expert_2", 1, 0.7), ("expert_3", 2, 0.7)]
    assert hot.settings["rebuttal_temperature"] == "0/0.7/0.7"
    assert [t for *_, t in mixed._rebutting(Ctx(), SHORT_DEBATER)] == [0.7, 0.7, 0.7]  # short answers' default
    as_opened = DebateArm({"temperature": "0/0.7/1.1", "rebuttal_temperature": "0/0.7/1.1"})
    assert as_opened._rebutting(Ctx(), SHORT_DEBATER) == [] and "rebuttal_temperature" not in as_opened.settings
    with pytest.raises(ConfigError, match=re.escape("rebuttal_temperature: give one temperature, or one per expert")):
        DebateArm({"rebuttal_temperature": "0.7/0.7"})


def test_experts_rebut_at_the_rebuttal_temperature_from_its_own_cache_store(sums, tmp_path, model):
    from moot.harness.arms._team_arms import DebateArm
    from moot.harness.jobs._call_store import CallFile
    from moot.harness.suites._suites import load_suite

    arm = "debate?anchor=held&rebuttal_temperature=0.9&rounds=2"
    rows = by_key(run(compare_request(sums, tmp_path / "out", model(reply=_split_openings), arms=[arm])).rows)
    assert rows[("q0", arm)].settings["rebuttal_temperature"] == 0.9
    assert all(rows[(i, arm)].billed_calls == 5 for i in ("q0", "q1", "q2", "q3"))  # solver, 2 openings, 2 rebuttals
    entries = {spec.split("-")[0]: n for spec, n in CallFile(tmp_path / "out" / "cache").counts().items()}
    # one rebuttal per item from each sampled expert, drawn at 0.9 on its own seed; none from the held one
    assert [entries[f"scripted_sums@0.9_seed_{i}"] for i in range(3)] == [0, 4, 4]
    openings = [entries.get(f"scripted_sums@{t}_seed_{i}", 0) for i, t in enumerate(("0", "0.3", "0.3"))]
    assert openings == [0, 4, 4]  # the sampled experts' openings at 0.3; the held anchor's is the solver call
    with pytest.raises(ConfigError, match=r"rebuttal_temperature is for short answers.*valid for code: leave it out"):
        DebateArm({"rebuttal_temperature": "0.9"}).check(load_suite("humaneval[:2]"))


def test_a_cache_only_replay_reproduces_every_row_with_no_call(sums, tmp_path, model):
    out = tmp_path / "out"
    m = model(wrong={1})
    first = run(compare_request(sums, out, m))
    m.fail_after, m.calls = 0, 0  # the endpoint is gone: any call that reached it would fail its row
    replay = run(compare_request(sums, out, m, rerun=True, cache_only=True))
    assert m.calls == 0 and replay.meter.billed_calls == 0 and replay.missed == 0 and replay.failed == 0
    assert replay.computed == replay.replayed == 16 and replay.meter.calls == first.meter.calls
    assert all(r.metrics.pop("replayed_at") for r in replay.rows)
    assert by_key(replay.rows) == by_key(first.rows)


def test_cache_only_leaves_a_row_the_cache_cannot_answer_as_it_was(sums, tmp_path, model):
    out = tmp_path / "out"
    m = model()
    first = run(compare_request(sums, out, m, arms=["single"]))
    m.calls = 0
    # an empty cache: every stored row stays as it was, and an arm never run gets no row at all
    empty = run(
        compare_request(sums, out, m, arms=["single", "debate"], rerun=True, cache_only=True, cache=tmp_path / "c")
    )
    assert m.calls == 0 and empty.missed == 8 and empty.computed == empty.failed == 0
    assert by_key(empty.rows) == by_key(first.rows)  # no debate row, and the single rows untouched
    # a resumed (not rerun) cache-only run computes only the missing debate rows, and misses them too
    resumed = run(compare_request(sums, out, m, arms=["single", "debate"], cache_only=True))
    assert resumed.reused == 4 and resumed.missed == 4 and m.calls == 0


def test_cache_only_needs_no_installed_model(sums, tmp_path, monkeypatch):
    from moot.models import _providers

    def absent(*args, **kwargs):
        raise AssertionError("a cache-only run must not check, load or build the embedded model")

    monkeypatch.setattr(_providers, "require_installed", absent)
    monkeypatch.setattr(_providers, "shared_engine", absent)
    opts = CompareRequest(suite=str(sums), arms=["single", "debate"], models=["local"], out=tmp_path / "out",
                          cache_only=True)  # fmt: skip
    comparison = run(opts)
    assert comparison.missed == 8 and comparison.computed == 0 and comparison.meter.billed_calls == 0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"use_cache": False}, "--cache-only answers every call from the cache and --no-cache uses none"),
        ({"report_only": True}, "--report-only runs nothing, so --cache-only has no call to answer"),
    ],
)
def test_cache_only_refuses_flags_that_contradict_it(sums, tmp_path, model, flags, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        run(compare_request(sums, tmp_path / "out", model(), cache_only=True, **flags))
    assert not (tmp_path / "out").exists()


def test_a_rerun_that_fails_keeps_the_finished_row_it_would_have_replaced(sums, tmp_path, model):
    out = tmp_path / "out"
    m = model()
    first = run(compare_request(sums, out, m, arms=["single"]))
    m.fail_after, m.calls = 0, 0  # the endpoint is gone, and the cache is not used: every recomputation fails
    broken = run(compare_request(sums, out, m, arms=["single"], rerun=True, use_cache=False))
    assert broken.failed == 4 and broken.computed == 0
    assert by_key(broken.rows) == by_key(first.rows)  # the paid rows, untouched


def _split_openings(agent: str, messages) -> object:
    """The solver adds right; in round 1 experts 2 and 3 are off by one and by two (three answers, no majority);
    in round 2 every expert keeps its answer, answering a claim the other sampled expert made."""
    from moot.harness.arms._prompts import ShortAnswer
    from tests.unit.test_harness_support import position, sum_of

    text = "\n".join(str(m.content) for m in messages)
    total = sum_of(text)
    assert total is not None
    if agent == "solver":
        return ShortAnswer(reasoning=f"First I add the two numbers. The sum is {total}.", answer=str(total))
    answer = str(total + {"expert_1": 0, "expert_2": 1, "expert_3": 2}[agent])
    if "Answer one claim of another expert" not in text:
        assert agent != "expert_1", "the anchored expert is never asked to open"
        return position(answer, agent)
    other = "expert_3" if agent == "expert_2" else "expert_2"
    return _recount(other, answer, "that sum is off")


def anchored_rows(sums: Path, out: Path, m, anchor: str) -> tuple[dict, list]:
    """Per item, (single's row, the anchored debate's row) of a sweep of both arms."""
    arm = f"debate?anchor={anchor}&rounds=2"
    rows = by_key(run(compare_request(sums, out, m, arms=["single", arm])).rows)
    return rows, [(rows[(i, "single")], rows[(i, arm)]) for i in ("q0", "q1", "q2", "q3")]


def test_an_anchored_debate_opens_with_the_single_call_and_its_answer_takes_round_ones_ties(sums, tmp_path, model):
    m = model(reply=_split_openings)
    rows, pairs = anchored_rows(sums, tmp_path / "out", m, "single")
    for single, debate in pairs:
        assert debate.metrics["answers_per_round"][0][0] == single.answer  # expert 1's opening is single's answer
        assert debate.metrics["first_round_vote"] == single.answer  # three answers: the anchor takes the tie
        assert debate.answer == single.answer and debate.score == 1.0
        # the solver call (a cache hit after single's), two openings, three rebuttals
        assert (debate.model_calls, debate.billed_calls) == (6, 5)
    assert m.agents.count("solver") == 4  # once per item: the debate's anchor call came from the cache
    assert rows[("q0", "debate?anchor=single&rounds=2")].settings == {
        "anchor": "single", "arbiter": "auto", "experts": 3, "rounds": 2, "temperature": "0/0.3/0.3",
        "peer_answers": "hidden", "rebuttal_temperature": 0.7,
    }  # fmt: skip


def test_a_held_anchor_is_the_single_call_in_every_round_and_never_asked(sums, tmp_path, model):
    m = model(reply=_split_openings)
    for single, debate in anchored_rows(sums, tmp_path / "out", m, "held")[1]:
        assert [r[0] for r in debate.metrics["answers_per_round"]] == [single.answer] * 2
        assert (debate.model_calls, debate.billed_calls) == (5, 4)  # the solver call (a hit), 2 openings, 2 rebuttals
    assert "expert_1" not in m.agents  # the held expert is never asked


def test_hidden_peer_answers_reach_the_debate_and_its_rows_key(sums, tmp_path, model):
    rebuttals: list[str] = []

    def reply(agent: str, messages) -> object:
        text = "\n".join(str(m.content) for m in messages)
        if "Answer one claim of another expert" in text:
            rebuttals.append(text.split("Answer one claim")[0])
        return _split_openings(agent, messages)

    arm = "debate?anchor=single&peer_answers=hidden&rounds=2"
    comparison = run(compare_request(sums, tmp_path / "out", model(reply=reply), arms=[arm]))
    row = by_key(comparison.rows)[("q0", arm)]
    assert row.settings["peer_answers"] == "hidden" and len(rebuttals) == 12
    for text in rebuttals:
        view = text.split("their answers are hidden as ?: reach your own):")[1]
        assert "- The sum is ?." in view and not re.search(r"\d", re.sub(r"expert_\d", "", view))  # no answer shown


def test_anchor_is_refused_for_code_and_left_out_of_the_key_when_off(tmp_path):
    from moot.harness.arms._team_arms import DebateArm
    from moot.harness.suites._suites import load_suite

    old_key = {"experts": 3, "rounds": 2, "arbiter": "auto", "temperature": 0.7}  # every earlier row's
    classic = DebateArm({"rounds": "2", "anchor": "none", "peer_answers": "shown", "temperature": "0.7"})
    sums = load_suite(str(write_sums(tmp_path / "sums.jsonl", 2)))
    classic.check(sums)
    assert classic.settings == old_key
    code = DebateArm({})
    code.check(load_suite("humaneval[:2]"))
    assert code.settings == old_key  # a code debate's defaults are what every code row ran
    numbers = DebateArm({})
    numbers.check(sums)
    assert numbers.settings == {  # numbers: what measured best on chain_sum
        **old_key,
        "rounds": 3,
        "temperature": "0/0.3/0.3",
        "anchor": "held",
        "peer_answers": "hidden",
        "rebuttal_temperature": 0.7,
    }
    with pytest.raises(ConfigError, match=r"peer_answers=hidden is for short answers.*values for code: shown"):
        DebateArm({"peer_answers": "hidden"}).check(load_suite("humaneval[:2]"))
    with pytest.raises(ConfigError, match=r"anchor=single is for short answers.*valid anchor values for code: none"):
        DebateArm({"anchor": "single"}).check(load_suite("humaneval[:2]"))
    with pytest.raises(ConfigError, match=r"anchor=held is for short answers"):
        DebateArm({"anchor": "held"}).check(load_suite("humaneval[:2]"))
    with pytest.raises(ConfigError, match=r"opening=solver is for short answers.*opening values for code: expert"):
        DebateArm({"opening": "solver"}).check(load_suite("humaneval[:2]"))
    with pytest.raises(ConfigError, match=re.escape("anchor: Input should be 'none', 'single' or 'held'")):
        DebateArm({"anchor": "greedy"})
