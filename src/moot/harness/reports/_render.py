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
from moot.harness.reports._evidence import KindEvidence
from moot.harness.reports._report import (
    ArmSummary,
    Graded,
    HeldOut,
    PairSummary,
    Report,
    build_report,
    first_round_name,
    runs_rounds,
)
from moot.harness.reports._selection import Selection, Variant

__all__ = [
    "Tables",
    "document",
    "held_out_tables",
    "held_out_title",
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


def _graded_pts(graded: Graded | None) -> list[str]:
    """A graded difference beside its exact one: estimate with interval, and p."""
    if graded is None:
        return ["–", "–"]
    interval = f" [{100 * graded.ci_low:+.1f}, {100 * graded.ci_high:+.1f}]" if math.isfinite(graded.ci_low) else ""
    return [_pts(graded.estimate) + interval, _p(graded.p_value)]


def _rounds_row(arm: ArmSummary, exact_first: bool) -> list[str]:
    bought, changed = arm.rounds_bought, arm.rounds_changed or {}
    assert bought is not None and arm.first_round_vote is not None
    shares = " → ".join(_pct(s) for s in arm.correct_share_per_round) or "–"
    row = [arm.label, first_round_name(arm.name), str(bought.n), _pct(arm.first_round_vote), _pct(arm.accuracy),
           _pts(bought.difference), _ci_pts(bought), _p(bought.p_value),
           f"{changed.get('better', 0)} / {changed.get('worse', 0)}", shares]  # fmt: skip
    return row + _graded_pts(bought.graded) if exact_first else row


_ROUNDS_HEAD = [
    "arm", "round 1 is", "n", "round-1 accuracy", "final accuracy", "what the rounds bought", "95% CI", "p",
    "items better / worse", "right positions per round",
]  # fmt: skip
_GRADED_ROUNDS_HEAD = [
    "arm", "round 1 is", "n", "round-1 exact accuracy", "final exact accuracy", "what the rounds bought (exact)",
    "95% CI", "p", "items better / worse", "exactly right positions per round", "graded: what the rounds bought",
    "graded p",
]  # fmt: skip


def _arm_row(arm: ArmSummary, exact_first: bool) -> list[str]:
    row = [arm.label, _settings(arm.settings), f"{arm.n}" + (f" (+{arm.errors} failed)" if arm.errors else ""),
           _pct(arm.accuracy), f"[{_pct(arm.ci_low)}, {_pct(arm.ci_high)}]"]  # fmt: skip
    graded = arm.graded
    if exact_first:
        row += (
            ["–", "–"]
            if graded is None
            else [_pct(graded.estimate), f"[{_pct(graded.ci_low)}, {_pct(graded.ci_high)}]"]
        )
    return [
        *row, _num(arm.mean_tokens, 0), _num(arm.mean_billed_tokens, 0), _num(arm.mean_calls),
        _num(arm.mean_billed_calls), _num(arm.mean_wall_seconds), _num(arm.accuracy_per_1k_tokens, 3),
        _num(arm.mean_rounds), str(arm.parse_failures), "–" if arm.oracle_gaps is None else str(arm.oracle_gaps),
    ]  # fmt: skip


def _pair_row(pair: PairSummary, exact_first: bool) -> list[str]:
    row = [f"{pair.a} vs {pair.b}", str(pair.n), _pts(pair.difference), _ci_pts(pair), pair.test, _p(pair.p_value),
           _p(pair.p_holm), f"{pair.a_only} / {pair.b_only}" if pair.test.startswith("McNemar") else "–"]  # fmt: skip
    return row + _graded_pts(pair.graded) if exact_first else row


def tables(report: Report) -> Tables:
    """The report's tables; on a partial-credit suite the exact-match figures lead and the graded ones follow."""
    exact = report.exact_first
    rounds = [
        _rounds_row(a, exact) for a in report.arms if a.rounds_bought is not None and a.first_round_vote is not None
    ]
    head = _GRADED_ROUNDS_HEAD if exact else _ROUNDS_HEAD
    return Tables(_arms_rows(report.arms, exact), _pairs_rows(report.pairs, exact), _notes(report),
                  (head, rounds))  # fmt: skip


def _arms_rows(arms: list[ArmSummary], exact: bool) -> tuple[list[str], list[list[str]]]:
    """The arms table (head, rows) of ``arms``: the report's own, or the same figures on the items that decided
    nothing; the cost column only when prices are known."""
    arm_head = [
        "arm",
        "settings",
        "n",
        "exact accuracy" if exact else "accuracy",
        "95% CI",
        *(["graded accuracy", "graded 95% CI"] if exact else []),
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
    arm_rows = [_arm_row(a, exact) for a in arms]
    if any(a.mean_cost_usd is not None for a in arms):  # only when prices are known
        at = arm_head.index("wall s/item")
        arm_head.insert(at, "cost/item")
        for arm, row in zip(arms, arm_rows, strict=True):
            row.insert(at, "–" if arm.mean_cost_usd is None else f"${arm.mean_cost_usd:.4g}")
    return arm_head, arm_rows


def _pairs_rows(pairs: list[PairSummary], exact: bool) -> tuple[list[str], list[list[str]]]:
    """The pairs table (head, rows) of ``pairs``: difference [CI], test, p, p (Holm) among them, discordant split."""
    pair_head = ["A vs B", "n", "A − B" + (" (exact)" if exact else ""), "95% CI", "test", "p", "p (Holm)",
                 "only A right / only B right", *(["graded A − B", "graded p"] if exact else [])]  # fmt: skip
    return pair_head, [_pair_row(p, exact) for p in pairs]


def _scoring_note(report: Report) -> str:
    """How the scores were read and tested: exact scores, exact-first on partial credit, or graded throughout."""
    exact = (
        "pairs use McNemar's exact test on the discordant items; each interval's sign comes from the exact interval "
        "conditional on them (Clopper-Pearson on their split), so it excludes 0 exactly when p < 0.05, and its width "
        "also carries the uncertainty of how many items are discordant (conservative). Accuracy CIs are exact "
        "(Clopper-Pearson)."
    )
    if report.exact_first:
        return (
            "Scores give partial credit (some rows score strictly between 0 and 1), so every figure leads with "
            "exact-match accuracy (score = 1, right or wrong) and " + exact + " The graded figures (partial credit "
            "counted) are shown beside, named graded: paired permutation tests and bootstrap (BCa) intervals."
        )
    if report.binary:
        return "Scores are exact (every row scored 0 or 1), so " + exact
    return (
        "Scores are graded, so pairs use a paired permutation test of the mean difference, and each interval holds "
        "the shifts that test does not reject (it excludes 0 exactly when p < 0.05). Accuracy CIs are bootstrap "
        "(BCa) 95% intervals."
    )


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
        _scoring_note(report),
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
        if arm.rounds_bought is None and runs_rounds(arm.name) and arm.n:
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
    answered = ", ".join(f"{identity} ({n} rows)" for identity, n in origin.answered_by.items()) or "–"
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
            f"report built at {origin.commit}. Rows answered by: {answered}. Models named now: {models}.",
        )
    )
    return blocks


def _variant(variant: Variant, items: int) -> str:
    """One variant's accuracy, with its item count when it did not finish all of the report's items."""
    return f"{variant.label} {_pct(variant.accuracy)}" + ("" if variant.n == items else f" of {variant.n}")


def _selection_note(chosen: Selection) -> Note:
    """The selection warning for one arm: how many variants it was chosen among, the corrected test, the command
    that confirms it on fresh items."""
    place = "the best" if chosen.rank == 1 else f"ranked {chosen.rank}"
    text = (
        f"{chosen.arm} is {place} of {len(chosen.variants)} {chosen.family} variants run on these {chosen.items} items "
        f"({', '.join(_variant(v, chosen.items) for v in chosen.variants)}; exact-match accuracy)."
    )
    if chosen.baseline is not None and math.isfinite(chosen.p_value):
        text += (
            f" Its lead over {chosen.baseline} is corrected for that choice: p = {_p(chosen.p_value)} alone, "
            f"{_p(chosen.p_holm)} Holm over the {len(chosen.variants)} variants' tests against {chosen.baseline} "
            f"(Bonferroni {_p(chosen.p_bonferroni)})."
        )
    text += (
        " Its accuracy here is optimistic: an arm chosen for scoring best on these items is expected to score "
        "lower on items that decided nothing."
    )
    if chosen.held_out_items is not None and chosen.held_out_accuracy is not None:
        against = "" if chosen.held_out_baseline is None else f" vs {chosen.baseline} {_pct(chosen.held_out_baseline)}"
        text += (
            f" On the {chosen.held_out_items} items that decided nothing: {chosen.arm} "
            f"{_pct(chosen.held_out_accuracy)}{against}."
        )
    if chosen.confirm is not None:
        text += f" To confirm it on fresh items ({chosen.fresh}): {chosen.confirm}"
    else:
        text += f" {chosen.fresh[:1].upper()}{chosen.fresh[1:]}."
    return Note("Selection", text, alert=True)


_KIND_NAMES = {
    "code": "code",
    "multiple_choice": "multiple choice",
    "choices": "a closed answer set",
    "number": "numbers",
    "text": "other short answers",
}


def _evidence_note(kind: str, evidence: KindEvidence) -> Note:
    """Before any figure: what moot's own measurements found on this kind of answer, and the arm they support."""
    supported = "no arm measured significantly above single there"
    if evidence.supported:
        supported = f"the evidence favours {evidence.supported}"
    where = "" if evidence.source == "none" else f" (rows: {evidence.source})"
    return Note(f"Evidence on {_KIND_NAMES.get(kind, kind)}", f"{evidence.measured} So {supported}{where}.")


def _top(report: Report) -> list[Block]:
    """What a reader must know before any figure: a tuning run's figures are for choosing, an arm chosen among
    variants on these items is optimistic, and how the scores are read."""
    blocks: list[Block] = []
    if report.purpose == "tuning":
        blocks.append(Note("Tuning run", TUNING, alert=True))
    elif report.purpose == "unstated":
        blocks.append(Note("Purpose unstated", "this results folder predates purposes (tuning or evaluation); "
                                               "read its figures as possibly tuned on these items."))  # fmt: skip
    blocks.extend(_held_out_note(report))
    blocks.extend(_selection_note(chosen) for chosen in report.selections)
    if report.evidence is not None:
        blocks.append(_evidence_note(report.answer_kind, report.evidence))
    if report.exact_first:
        blocks.append(Paragraph(EXACT_FIRST))
    elif report.binary:
        blocks.append(Paragraph(EXACT_ONLY))
    return blocks


def _tuned_on(held: HeldOut) -> str:
    return ", ".join(held.tuned_on)


def held_out_title(held: HeldOut) -> str:
    """The held-out section's title: how many items decided nothing, and what the folder was tuned on."""
    return f"On the {held.items} items that decided nothing (tuned on: {_tuned_on(held)})"


def _held_out_note(report: Report) -> list[Block]:
    """At the top, when the folder records what it was tuned on: where the figures free of that selection are, or
    that there are none."""
    held = report.held_out
    if held is None:
        return []
    if not held.items:
        text = f"every item here decided a choice (tuned on {_tuned_on(held)}): no figure in this report is free of "
        return [Note("Held out", text + "selection.", alert=True)]
    return [
        Note(
            "Held out",
            f"{held.items} of these {report.items} items decided nothing (tuned on {_tuned_on(held)}): every figure "
            "is given again on them alone, after the pairs of arms; only those are free of that selection.",
        )
    ]


def _held_out(report: Report) -> list[Block]:
    """The arms and pairs tables again on the items that decided nothing (nothing when the folder records no
    ``--tuned-on``, or no item is left: the top says so), and the specs that selected none of these items."""
    held = report.held_out
    if held is None or not held.items:
        return []
    blocks: list[Block] = [Heading(held_out_title(held), level=2), _table(*_arms_rows(held.arms, report.exact_first))]
    if held.pairs:
        blocks.append(_table(*_pairs_rows(held.pairs, report.exact_first)))
    if held.idle:
        each = "each selects" if len(held.idle) > 1 else "selects"
        blocks.append(Paragraph(f"{', '.join(held.idle)}: {each} none of these items, so decided nothing here."))
    return blocks


TUNING = (
    "its figures are for choosing a protocol, not for publishing: confirm the choice on items that decided nothing "
    "(an evaluation run)."
)
EXACT_FIRST = (
    "Exact first: these scores give partial credit, so every figure counts exact matches (score = 1) and tests "
    "right/wrong exactly; the graded figures (partial credit counted) are shown beside, named graded."
)
EXACT_ONLY = "Scores are exact: every row scored 0 or 1."


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
        *_top(report),
        *_provenance(report),
        *rounds,
        Heading("Arms", level=2),
        _table(*t.arms),
        Heading("Pairs of arms", level=2),
        _table(pair_head, pair_rows) if pair_rows else Paragraph("Only one arm: nothing to compare."),
        *_held_out(report),
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


_LEFT_OUT_OF_TERMINAL = frozenset(
    {"settings", "billed calls/item", "cost/item", "rounds", "parse fails", "graded 95% CI"}
)
"""Arm columns the terminal leaves to the written report, so the first ones a reader needs fit."""


TERMINAL_WIDTH = 80
"""The width the terminal tables are laid out for when none is given (a log file, a pipe)."""


def terminal_table(report: Report, width: int = TERMINAL_WIDTH) -> RenderableType:
    """The arms table for the terminal (the columns a reader needs first), every number whole at ``width``."""
    title = f"moot compare: {report.suite} ({report.items} items)"
    return _terminal_arms(title, tables(report).arms, width)


def _terminal_arms(title: str, table: tuple[list[str], list[list[str]]], width: int) -> RenderableType:
    """An arms table with the columns a reader needs first, fitted to ``width``."""
    head, rows = table
    wanted = [h for h in head if h not in _LEFT_OUT_OF_TERMINAL]
    index = [head.index(w) for w in wanted]
    return fitted_table(title, wanted, [[row[i] for i in index] for row in rows], {"arm"}, width)


def held_out_tables(report: Report, width: int = TERMINAL_WIDTH) -> list[RenderableType]:
    """The arms (and pairs) on the items that decided nothing, for the terminal; none without them."""
    held = report.held_out
    if held is None or not held.items:
        return []
    title = held_out_title(held)
    shown = [_terminal_arms(title, _arms_rows(held.arms, report.exact_first), width)]
    if held.pairs:
        head, rows = _pairs_rows(held.pairs, report.exact_first)
        shown.append(fitted_table(f"pairs of arms: {title}", head, rows, {"A vs B", "test"}, width))
    return shown


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
    shown: list[RenderableType] = [Text(f"{b.label}: {b.text}") for b in _top(report) if isinstance(b, Note)]
    shown += [rounds] if rounds is not None else []
    shown.append(terminal_table(report, width))
    if report.pairs:
        shown.append(pairs_table(report, width))
    shown += held_out_tables(report, width)
    shown += [Text(note) for note in tables(report).notes[:1]]
    return shown


def _report_console(report: Report, console: Console, options: ConsoleOptions) -> RenderResult:
    yield from report_renderables(report, options.max_width)


def _comparison_console(comparison: Comparison, console: Console, options: ConsoleOptions) -> RenderResult:
    yield from report_renderables(build_report(comparison, seed=comparison.request.seed), options.max_width)


def install_rich_views() -> None:
    """``rich.print(report)`` or ``rich.print(comparison)`` prints what ``moot compare`` prints (at the console's
    width), instead of a dump of every field: the one renderer of each, hooked on its class here."""
    Report.__rich_console__ = _report_console  # type: ignore[attr-defined]
    Comparison.__rich_console__ = _comparison_console  # type: ignore[attr-defined]


install_rich_views()
