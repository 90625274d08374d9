"""The comparison harness: does debate beat a single critic on *your* task, and at what cost?

Four parts, one subpackage each: ``suites/`` (items and scorers), ``arms/`` (the configurations compared),
``jobs/`` (jobs, model calls, executors, the runner and its results store) and ``reports/`` (statistics
and writers); ``_cli.py`` is ``moot compare``. Each imports only those listed before it (suites, arms, jobs,
reports), which ``tests/unit/test_imports.py`` checks. From code::

    request = CompareRequest(suite="humaneval[:20]", arms=["single", "debate", "self-consistency"],
                             models=["local"], out=Path("out"), compute_matched=True)
    comparison = await run_comparison(request)
    report = build_report(comparison)
    write_report(report, request.out)

Add suites with :func:`register_suite` (or a JSONL/YAML file) and arms with
:func:`register_arm` (anything with ``name``, ``settings``, ``check``, ``solve``), or from an installed package
through the entry-point groups ``moot.suites`` and ``moot.arms`` (docs/plugins.md).
"""

from typing import Any

from moot._renamed import warn_renamed
from moot.harness.arms._arm import ARM_FORMS, Arm, Attempt, Reply, agent_reply, ask
from moot.harness.arms._context import MODEL_ROLES, RowContext
from moot.harness.arms._registry import build_arm, known_arms, register_arm, unregister_arm
from moot.harness.arms._sampling import SelfConsistency, Single, matched_k
from moot.harness.arms._team_arms import DebateArm, ReflectionArm, TestReflectionArm
from moot.harness.jobs._results import ResultRow, ResultStore
from moot.harness.jobs._runner import CompareRequest, Comparison, ProgressSink, run_comparison
from moot.harness.reports._report import ArmSummary, PairSummary, Provenance, Report, build_report
from moot.harness.reports._stats import (
    PairedComparison,
    accuracy_interval,
    bootstrap_mean,
    compare_paired,
    holm,
    mcnemar_exact,
    paired_permutation,
)
from moot.harness.reports._write import ReportFiles, write_report
from moot.harness.suites._items import AnswerFormat, CodeTask, Item, Score, ScoreContext, Scorer, Suite
from moot.harness.suites._scorers import CodeTests, ExactMatch, Judgement, LLMJudge, NumericMatch, RegexMatch
from moot.harness.suites._suites import SUITE_FORMS, load_suite, register_suite, unregister_suite
from moot.models import Meter

__all__ = [
    "ARM_FORMS",
    "MODEL_ROLES",
    "SUITE_FORMS",
    "AnswerFormat",
    "Arm",
    "ArmSummary",
    "Attempt",
    "CodeTask",
    "CodeTests",
    "CompareRequest",
    "Comparison",
    "DebateArm",
    "ExactMatch",
    "Item",
    "Judgement",
    "LLMJudge",
    "Meter",
    "NumericMatch",
    "PairSummary",
    "PairedComparison",
    "ProgressSink",
    "Provenance",
    "ReflectionArm",
    "RegexMatch",
    "Reply",
    "Report",
    "ReportFiles",
    "ResultRow",
    "ResultStore",
    "RowContext",
    "Score",
    "ScoreContext",
    "Scorer",
    "SelfConsistency",
    "Single",
    "Suite",
    "TestReflectionArm",
    "accuracy_interval",
    "agent_reply",
    "ask",
    "bootstrap_mean",
    "build_arm",
    "build_report",
    "compare_paired",
    "holm",
    "known_arms",
    "load_suite",
    "matched_k",
    "mcnemar_exact",
    "paired_permutation",
    "register_arm",
    "register_suite",
    "run_comparison",
    "unregister_arm",
    "unregister_suite",
    "write_report",
]


def __getattr__(name: str) -> Any:
    """``moot.harness.CompareOptions``, the former name of :class:`CompareRequest`, still imports (warning)."""
    if name == "CompareOptions":
        warn_renamed("moot.harness.CompareOptions", "CompareRequest")
        return CompareRequest
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
