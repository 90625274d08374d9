"""The comparison harness: does debate beat a single critic on *your* task, and at what cost?

Suites (items with scorers), arms (named configurations), a resumable runner
with a persistent call cache, statistics and reports. ``moot compare`` is the
command line; from code::

    options = CompareOptions(suite="humaneval[:20]", arms=["single", "debate", "self-consistency"],
                             models=["local"], out=Path("out"), compute_matched=True)
    comparison = await run_comparison(options)
    report = build_report(comparison)
    write_report(report, options.out)

Add suites with :func:`register_suite` (or a JSONL/YAML file) and arms with
:func:`register_arm` (anything with ``name``, ``settings``, ``check``, ``solve``).
"""

from moot.harness import _sampling, _team_arms  # noqa: F401  (registers the built-in arms)
from moot.harness._arm import ARM_FORMS, Arm, Attempt, Reply, ask, build_arm, known_arms, register_arm
from moot.harness._context import MODEL_ROLES, RowContext
from moot.harness._items import AnswerFormat, CodeTask, Item, Score, ScoreContext, Scorer, Suite
from moot.harness._report import ArmSummary, PairSummary, Report, build_report
from moot.harness._results import ResultRow, ResultStore
from moot.harness._runner import CompareOptions, Comparison, ProgressSink, run_comparison
from moot.harness._sampling import SelfConsistency, Single
from moot.harness._scorers import CodeTests, ExactMatch, Judgement, LLMJudge, NumericMatch, RegexMatch
from moot.harness._stats import (
    bootstrap_mean,
    holm,
    matched_k,
    mcnemar_exact,
    paired_difference,
    paired_permutation,
)
from moot.harness._suites import SUITE_FORMS, load_suite, register_suite
from moot.harness._team_arms import DebateArm, ReflectionArm, TestReflectionArm
from moot.harness._write import ReportFiles, write_report
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
    "CompareOptions",
    "Comparison",
    "DebateArm",
    "ExactMatch",
    "Item",
    "Judgement",
    "LLMJudge",
    "Meter",
    "NumericMatch",
    "PairSummary",
    "ProgressSink",
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
    "ask",
    "bootstrap_mean",
    "build_arm",
    "build_report",
    "holm",
    "known_arms",
    "load_suite",
    "matched_k",
    "mcnemar_exact",
    "paired_difference",
    "paired_permutation",
    "register_arm",
    "register_suite",
    "run_comparison",
    "write_report",
]
