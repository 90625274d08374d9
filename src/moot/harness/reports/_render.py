"""The report as Markdown, HTML and rich tables: one set of tables, one document (``document``), three renderings."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text

from moot.display import fitted_table
from moot.display.blocks import Block, Bullets, Heading, Image, Note, Paragraph, to_html, to_markdown
from moot.display.blocks import Table as BlockTable
from moot.harness.jobs._runner import Comparison
from moot.harness.reports._report import (
    ROUNDED_ARMS,
    ArmSummary,
    PairSummary,
    Report,
    build_report,
    first_round_name,
)

__all__ = [
    "Tables",
    "document",
    "install_rich_views",
    "markdown",
    "page",
    "pairs_table",
    "report_renderables",
    "rounds_table",
    "tables",
    "terminal_table",
]

PLOT_FILE = "cost_accuracy.png"


@dataclass(frozen=True)
class Tables:
    arms: tuple[list[str], list[list[str]]]
    pairs: tuple[list[str], list[list[str]]]
    notes: list[str]
    rounds: tuple[list[str], list[list[str]]] = ([], [])
    """What each arm's later rounds bought over its own round 1 (arms with rounds only)."""


def _pct(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:,.{digits}f}"


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _settings(settings: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def _pts(value: float) -> str:
    return f"{100 * value:+.1f} pts" if math.isfinite(value) else "–"


def _ci_pts(pair: PairSummary) -> str:
    if not math.isfinite(pair.ci_low):
        return "–"
    flag = "" if pair.agrees else " (disagrees with the test)"
    return f"[{100 * pair.ci_low:+.1f}, {100 * pair.ci_high:+.1f}]{flag}"


def _rounds_row(arm: ArmSummary) -> list[str]:
    bought, changed = arm.rounds_bought, arm.rounds_changed or {}
    assert bought is not None and arm.first_round_vote is not None
    shares = " → ".join(_pct(s) for s in arm.correct_share_per_round) or "–"
    return [arm.label, first_round_name(arm.name), str(bought.n), _pct(arm.first_round_vote), _pct(arm.accuracy),
            _pts(bought.difference), _ci_pts(bought), _p(bought.p_value),
            f"{changed.get('better', 0)} / {changed.get('worse', 0)}", shares]  # fmt: skip


_ROUNDS_HEAD = [
    "arm", "round 1 is", "n", "round-1 accuracy", "final accuracy", "what the rounds bought", "95% CI", "p",
    "items better / worse", "right positions per round",
]  # fmt: skip


def tables(report: Report) -> Tables:
    arm_head = [
        "arm",
        "settings",
        "n",
        "accuracy",
        "95% CI",
        "tokens/item",
        "billed tokens/item",
        "calls/item",
        "billed calls/item",
        "wall s/item",
        "acc. per 1k tokens",
        "rounds",
        "parse fails",
        "oracle gaps",
    ]
    arm_rows = [
        [a.label, _settings(a.settings), f"{a.n}" + (f" (+{a.errors} failed)" if a.errors else ""), _pct(a.accuracy),
         f"[{_pct(a.ci_low)}, {_pct(a.ci_high)}]", _num(a.mean_tokens, 0), _num(a.mean_billed_tokens, 0),
         _num(a.mean_calls), _num(a.mean_billed_calls), _num(a.mean_wall_seconds), _num(a.accuracy_per_1k_tokens, 3),
         _num(a.mean_rounds), str(a.parse_failures), "–" if a.oracle_gaps is None else str(a.oracle_gaps)]
        for a in report.arms
    ]  # fmt: skip
    pair_head = ["A vs B", "n", "A − B", "95% CI", "test", "p", "p (Holm)", "only A right / only B right"]
    pair_rows = [
        [f"{p.a} vs {p.b}", str(p.n), _pts(p.difference), _ci_pts(p), p.test, _p(p.p_value), _p(p.p_holm),
         f"{p.a_only} / {p.b_only}" if report.binary else "–"]
        for p in report.pairs
    ]  # fmt: skip
    if any(a.mean_cost_usd is not None for a in report.arms):  # only when prices are known
        arm_head.insert(9, "cost/item")
        for arm, row in zip(report.arms, arm_rows, strict=True):
            row.insert(9, "–" if arm.mean_cost_usd is None else f"${arm.mean_cost_usd:.4g}")
    rounds = [_rounds_row(a) for a in report.arms if a.rounds_bought is not None and a.first_round_vote is not None]
    return Tables((arm_head, arm_rows), (pair_head, pair_rows), _notes(report), (_ROUNDS_HEAD, rounds))


def _notes(report: Report) -> list[str]:
    replayed = (
        f" ({report.replayed} replayed from the cache with the same answers and scores; their rows keep the "
        "original run's billed tokens and wall time)"
        if report.replayed
        else ""
    )
    notes = [
        f"This run computed {report.computed} rows{replayed}, reused {report.reused} finished ones"
        + (f", and {report.failed} failed (they are retried on the next run)" if report.failed else "")
        + f". Model calls this run: {report.run_billed_calls} billed of {report.run_calls} logical "
        f"({report.run_billed_tokens:,} of {report.run_tokens:,} tokens)"
        + ("; the rest came from the cache." if report.run_calls > report.run_billed_calls else "."),
        "Tokens and calls per item are logical (every call, cache hits included: the compute an arm used); "
        "billed counts only calls that reached the model when the row was computed.",
        "Scores are binary, so pairs use McNemar's exact test on the discordant items; each interval's sign "
        "comes from the exact interval conditional on them (Clopper-Pearson on their split), so it excludes 0 "
        "exactly when p < 0.05, and its width also carries the uncertainty of how many items are discordant "
        "(conservative). Accuracy CIs are exact (Clopper-Pearson)."
        if report.binary
        else "Scores are graded, so pairs use a paired permutation test of the mean difference, and each "
        "interval holds the shifts that test does not reject (it excludes 0 exactly when p < 0.05). "
        "Accuracy CIs are bootstrap (BCa) 95% intervals.",
        "p (Holm) adjusts for testing several pairs at once.",
    ]
    disagreeing = [p for p in [*report.pairs, *(a.rounds_bought for a in report.arms if a.rounds_bought)]
                   if not p.agrees]  # fmt: skip
    if disagreeing:
        notes.append(
            "Where an interval and its test disagree on 0 (marked), the p-value is the one to read: "
            + ", ".join(f"{p.a} vs {p.b}" for p in disagreeing)
            + "."
        )
    notes.extend(f"{shared}: they differ only in what follows the samples." for shared in report.shared_samples)
    if report.rescored:
        when = ", ".join(f"{n} rows at {code}" for code, n in report.rescored.items())
        changed = "; ".join(report.rescore_changed) if report.rescore_changed else "none"
        notes.append(f"Stored answers scored again after the fact (--rescore): {when}; scores that changed: {changed}.")
    if report.matched_k is not None:
        notes.append(
            f"Compute-matched: the sampling arms ran k = {report.matched_k} samples, the mean model calls per "
            f"item of {report.matched_to or 'the debate arm'}."
        )
    for arm in report.arms:
        if arm.rounds_bought is None and arm.name in ROUNDED_ARMS and arm.n:
            notes.append(
                f"{arm.label}: its rows predate first-round scoring, so what its rounds bought is not shown "
                "(computing the rows again adds it)."
            )
        if arm.mean_flips is not None:
            notes.append(
                f"{arm.label}: {_num(arm.mean_flips, 2)} answer flips per item, "
                f"{_num(arm.mean_first_round_diversity, 2)} distinct first-round answers per item."
            )
        if arm.signals:
            told = ", ".join(f"{name} {_num(value, 0)}" for name, value in arm.signals.items())
            notes.append(f"{arm.label} over {arm.n} items: {told}.")
        if arm.oracle_gaps:
            notes.append(
                f"{arm.label}: on {arm.oracle_gaps} items a better answer was proposed along the way "
                "and then lost (the oracle gap)."
            )
    return notes


def _provenance(report: Report) -> list[Block]:
    """Where the rows came from; a warning first when they span several code versions."""
    origin = report.provenance
    if origin is None:
        return []
    codes = ", ".join(f"{code} ({n} rows)" for code, n in origin.row_commits.items())
    if origin.replayed_commits:
        replays = ", ".join(f"{code} ({n} rows)" for code, n in origin.replayed_commits.items())
        codes += f"; reproduced from the cache, same answers and scores, at {replays}"
    machines = ", ".join(f"{m} ({n} rows)" for m, n in origin.machines.items())
    models = "; ".join(f"{role}: {identity}" for role, identity in origin.models.items())
    blocks: list[Block] = []
    if origin.mixed:
        blocks.append(
            Note(
                "Rows from different code versions",
                f"{codes}. Rows last produced at different commits may differ for reasons other than the arms; "
                "--rerun recomputes them all at one commit (from the cache where it still holds their calls).",
            )
        )
    span = f"{origin.first_row} to {origin.last_row}" if origin.first_row else "no rows"
    blocks.append(
        Note(
            "Provenance",
            f"moot {origin.moot_version}; rows computed at {codes or 'none'}, on {machines or '–'}, from {span}; "
            f"report built at {origin.commit}. Models: {models}.",
        )
    )
    return blocks


def document(report: Report) -> list[Block]:
    """The report once, as blocks: ``markdown`` and ``page`` write these same blocks.

    What would explain a gain more cheaply comes first: each arm's own round 1 (a debate's first-round vote,
    a reflection's first draft) against its final answer, before any comparison between arms.
    """
    t = tables(report)
    models = ", ".join(f"{role}={spec}" for role, spec in report.models.items())
    pair_head, pair_rows = t.pairs
    rounds_head, rounds_rows = t.rounds
    rounds: list[Block] = (
        [Heading("What the rounds bought", level=2), _table(rounds_head, rounds_rows)] if rounds_rows else []
    )
    return [
        Heading(f"moot compare: {report.suite}", level=1),
        Paragraph(f"{report.description}. Models: {models}. Generated {report.generated_at}."),
        *_provenance(report),
        *rounds,
        Heading("Arms", level=2),
        _table(*t.arms),
        Heading("Pairs of arms", level=2),
        _table(pair_head, pair_rows) if pair_rows else Paragraph("Only one arm: nothing to compare."),
        Image(PLOT_FILE, "cost and accuracy per arm"),
        Heading("Notes", level=2),
        Bullets(tuple(t.notes)),
    ]


def _table(head: list[str], rows: list[list[str]]) -> BlockTable:
    return BlockTable("", tuple(head), tuple(tuple(row) for row in rows))


def markdown(report: Report) -> str:
    return to_markdown(document(report))


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:75em}table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}th{background:#f4f4f4}"
    "td:first-child,th:first-child{text-align:left}img{max-width:100%}"
)


def page(report: Report) -> str:
    """The report as a standalone HTML page."""
    title = html.escape(f"moot compare: {report.suite}")
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_STYLE}</style></head><body>\n" + to_html(document(report)) + "\n</body></html>\n"
    )


_LEFT_OUT_OF_TERMINAL = frozenset({"settings", "billed calls/item", "cost/item", "rounds", "parse fails"})
"""Arm columns the terminal leaves to the written report, so the first ones a reader needs fit."""


TERMINAL_WIDTH = 80
"""The width the terminal tables are laid out for when none is given (a log file, a pipe)."""


def terminal_table(report: Report, width: int = TERMINAL_WIDTH) -> RenderableType:
    """The arms table for the terminal (the columns a reader needs first), every number whole at ``width``."""
    head, rows = tables(report).arms
    wanted = [h for h in head if h not in _LEFT_OUT_OF_TERMINAL]
    index = [head.index(w) for w in wanted]
    title = f"moot compare: {report.suite} ({report.items} items)"
    return fitted_table(title, wanted, [[row[i] for i in index] for row in rows], {"arm"}, width)


def pairs_table(report: Report, width: int = TERMINAL_WIDTH) -> RenderableType:
    head, rows = tables(report).pairs
    return fitted_table("pairs of arms (paired on the same items)", head, rows, {"A vs B", "test"}, width)


def rounds_table(report: Report, width: int = TERMINAL_WIDTH) -> RenderableType | None:
    """What each arm's later rounds bought over its own round 1, for the terminal; None without such arms."""
    head, rows = tables(report).rounds
    if not rows:
        return None
    title = "what the rounds bought (final vs the arm's own round 1, same items)"
    return fitted_table(title, head, rows, {"arm", "round 1 is", "right positions per round"}, width)


def report_renderables(report: Report, width: int = TERMINAL_WIDTH) -> list[RenderableType]:
    """What ``moot compare`` prints of a report, fitted to ``width``: what the rounds bought (what would explain a
    gain more cheaply comes first), the arms, the pairs, and the first note."""
    rounds = rounds_table(report, width)
    shown: list[RenderableType] = [rounds] if rounds is not None else []
    shown.append(terminal_table(report, width))
    if report.pairs:
        shown.append(pairs_table(report, width))
    shown += [Text(note) for note in tables(report).notes[:1]]
    return shown


def _report_console(report: Report, console: Console, options: ConsoleOptions) -> RenderResult:
    yield from report_renderables(report, options.max_width)


def _comparison_console(comparison: Comparison, console: Console, options: ConsoleOptions) -> RenderResult:
    yield from report_renderables(build_report(comparison, seed=comparison.options.seed), options.max_width)


def install_rich_views() -> None:
    """``rich.print(report)`` or ``rich.print(comparison)`` prints what ``moot compare`` prints (at the console's
    width), instead of a dump of every field: the one renderer of each, hooked on its class here."""
    Report.__rich_console__ = _report_console  # type: ignore[attr-defined]
    Comparison.__rich_console__ = _comparison_console  # type: ignore[attr-defined]


install_rich_views()
