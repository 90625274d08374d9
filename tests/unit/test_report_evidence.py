"""A report says, before any figure, what moot's own measurements found on its suite's kind of answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from moot.harness import build_report, write_report
from moot.harness.reports._evidence import evidence_for
from moot.harness.suites._items import AnswerKind
from tests.unit.test_harness_runner import compare_request, model, run, sums  # noqa: F401 (fixtures)


def test_every_kind_of_answer_has_evidence_naming_its_rows_and_figures():
    for kind in get_args(AnswerKind):
        entry = evidence_for(kind)
        assert "PENDING" not in entry.measured and len(entry.measured) > 80, kind
        if entry.supported is not None:  # a supported arm is backed by rows in the repository
            assert entry.source.startswith("docs/compare/"), kind
        if entry.source != "none":  # every folder named holds the rows (the suite runs from the repository root)
            for folder in entry.source.split(", "):
                assert (Path(folder) / "results.sqlite3").is_file(), (kind, folder)
    assert evidence_for("code").supported == "debate"


def test_a_report_opens_with_the_evidence_for_its_kind(sums, tmp_path, model):  # noqa: F811
    closed = tmp_path / "closed.jsonl"
    lines = [{"id": f"q{i}", "input": f"Is {i} even?", "answer": "No" if i % 2 else "Yes"} for i in range(3)]
    closed.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = build_report(run(compare_request(f"{closed}?choices=Yes,No", tmp_path / "out", model(), arms=["single"])))
    assert report.answer_kind == "choices" and report.evidence == evidence_for("choices")
    text = write_report(report, tmp_path / "out").markdown.read_text()
    assert f"**Evidence on a closed answer set:** {evidence_for('choices').measured}" in text
    words = tmp_path / "exact.jsonl"  # the same sums, scored as exact text: another short answer
    lines = [{"id": f"q{i}", "input": f"What is {i} + {2 * i}?", "answer": str(3 * i)} for i in range(3)]
    words.write_text("".join(json.dumps(line) + "\n" for line in lines))
    exact = build_report(run(compare_request(words, tmp_path / "sums", model(), arms=["single"])))
    assert exact.answer_kind == "text" and exact.evidence == evidence_for("text")
    text = write_report(exact, tmp_path / "sums").markdown.read_text()
    assert f"**Evidence on other short answers:** {evidence_for('text').measured}" in text
