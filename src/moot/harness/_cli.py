"""``moot compare``: the command-line face of the harness (registered in ``moot.cli``).

Bad input is one line on stderr and exit code 2, before any model call or
file is written; failed rows leave the report written and exit 3 (partial:
re-run the same command to retry them), as ``moot._exit_codes`` documents.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from moot._exit_codes import PARTIAL, refuse
from moot.boundary import TerminalConsole
from moot.errors import ConfigError
from moot.harness.jobs._results import ResultRow
from moot.harness.jobs._runner import CompareOptions, Comparison, PreparedComparison, prepare_comparison
from moot.harness.reports._render import pairs_table, rounds_table, tables, terminal_table
from moot.harness.reports._report import build_report
from moot.harness.reports._write import write_report
from moot.harness.suites._suites import SUITE_FORMS

__all__ = ["compare"]

out_console = TerminalConsole()
err_console = TerminalConsole(stderr=True)


class _Bar:
    """ProgressSink on a rich progress bar; failed rows are printed as they happen."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: object | None = None
        self.header = ""

    def start(self, phase: str, total: int, done: int) -> None:
        if self.header:  # printed once the options proved valid, so bad input stays one line
            self.progress.console.print(self.header)
            self.header = ""
        self.task = self.progress.add_task(phase, total=total, completed=done)

    def advance(self, row: ResultRow) -> None:
        mark = "✗ failed" if row.status == "error" else f"score {row.score:g}"
        self.progress.update(self.task, advance=1, description=escape(f"{row.item} · {row.arm} · {mark}"))  # type: ignore[arg-type]
        if row.status == "error":
            self.progress.console.print(
                f"[red]row failed[/] {escape(f'{row.item} × {row.arm}: {row.error}')}", markup=True
            )
        elif not self.progress.console.is_terminal:  # a log file gets no live bar: one line per row instead
            # a replayed row carries its paid run's billed calls and time: say so, or they read as this run's
            paid = " · replayed from the cache; as paid:" if "replayed_at" in row.metrics else " ·"
            self.progress.console.print(
                f"{row.item} · {row.arm} · {mark}{paid} {row.model_calls} calls ({row.billed_calls} billed) · "
                f"{row.tokens} tokens · {row.wall_seconds:.1f} s",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )


def _one_line(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "options"
    given = f" (got {first['input']!r})" if not isinstance(first.get("input"), dict | list) else ""
    return f"bad option {where}: {first['msg']}{given}"


def default_out(suite: str) -> Path:
    """``moot-compare/<suite name>``: slices and options of one suite share a results file and a cache."""
    name = re.split(r"[\[?]", suite, maxsplit=1)[0]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(name).stem if name.endswith((".jsonl", ".yaml", ".yml")) else name)
    return Path("moot-compare") / slug.strip("-")


async def _run(runner: PreparedComparison) -> Comparison:
    options = runner.options
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())  # fmt: skip
    try:
        with Progress(*columns, console=out_console, transient=False) as progress:
            bar = _Bar(progress)
            bar.header = "[bold]moot compare[/] " + escape(
                f"{options.suite} · arms: {', '.join(options.arms)} · out: {options.out}"
            )
            runner.progress = bar
            return await runner.run()
    finally:
        runner.close()


def compare(
    suite: Annotated[str, typer.Argument(help=escape(f"The items to run. Forms: {SUITE_FORMS}"))],
    arms: Annotated[
        str,
        typer.Option(
            "--arms",
            "-a",
            help=escape(
                "Comma-separated arms: single, self-consistency[?k=N], reflection, "
                "reflection-tests, debate[?experts=N&rounds=N&arbiter=vote|llm], or ones registered in code."
            ),
        ),
    ] = "single,reflection,debate,self-consistency",
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            "-m",
            help="Model SPEC for every role, or ROLE=SPEC (generator, critic, expert, "
            "expert_N, arbiter, judge), e.g. local, judge=openai:gpt-4o-mini, or scripted:deterministic "
            "(a free built-in test model, for a dry run of the suite)",
        ),
    ] = [],  # noqa: B006 - typer reads the default
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", help="Model calls in flight per endpoint (1 to 64).")
    ] = 1,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Output directory (results, cache, report); default moot-compare/<suite>."),
    ] = None,
    k: Annotated[int | None, typer.Option("--k", help="Self-consistency samples per item (1 to 64).")] = None,
    compute_matched: Annotated[
        bool,
        typer.Option(
            "--compute-matched",
            help="Size the sampling arms' k to the mean model calls per item of the (first listed) debate arm.",
        ),
    ] = False,
    cache: Annotated[Path | None, typer.Option("--cache", help="Call cache directory; default OUT/cache.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Call the models every time.")] = False,
    rerun: Annotated[
        bool, typer.Option("--rerun", help="Recompute finished rows too (a replay, through the cache).")
    ] = False,
    cache_only: Annotated[
        bool,
        typer.Option(
            "--cache-only",
            help="Call no model (none is loaded): every call comes from the cache, and a row the cache cannot "
            "answer is left as it was. With --rerun: check that the report replays with zero billed calls.",
        ),
    ] = False,
    report_only: Annotated[
        bool, typer.Option("--report-only", help="Run nothing: report the rows finished so far.")
    ] = False,
    rescore: Annotated[
        bool,
        typer.Option("--rescore", help="With --report-only: score every finished row's stored answer again first."),
    ] = False,
    seed: Annotated[int, typer.Option("--seed", help="Base seed for sampling and resampling.")] = 0,
    executor: Annotated[
        str,
        typer.Option(
            "--executor", help=escape("Where jobs run: local (this process) or ray (Ray tasks; needs the [ray] extra).")
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="Ray cluster to join (auto, ray://HOST:10001); default: a local one."),
    ] = None,
    ray_cpus_per_job: Annotated[
        float,
        typer.Option("--ray-cpus-per-job", help="CPUs Ray reserves per job; below 1 for models served elsewhere."),
    ] = 1.0,
) -> None:
    """Compare arms (debate, self-consistency, critics) on a suite: accuracy, cost, and whether it is significant."""
    try:
        options = CompareOptions(
            suite=suite, arms=[a.strip() for a in arms.split(",") if a.strip()], models=model, concurrency=concurrency,
            out=out or default_out(suite), k=k, compute_matched=compute_matched, cache=cache, use_cache=not no_cache,
            rerun=rerun, cache_only=cache_only, report_only=report_only, rescore=rescore, seed=seed, executor=executor,
            ray_address=ray_address, ray_cpus_per_job=ray_cpus_per_job,
        )  # fmt: skip
        runner = prepare_comparison(options)  # all bad input is refused here, before any output
        comparison = asyncio.run(_run(runner))
    except (ConfigError, ValidationError) as exc:
        raise refuse(str(exc) if isinstance(exc, ConfigError) else _one_line(exc)) from None
    report = build_report(comparison, seed=seed)
    files = write_report(report, options.out)
    rounds = rounds_table(report)
    if rounds is not None:  # what would explain a gain more cheaply comes first
        out_console.print(rounds)
    out_console.print(terminal_table(report))
    if report.pairs:
        out_console.print(pairs_table(report))
    for note in tables(report).notes[:1]:
        out_console.print(note, soft_wrap=True)
    out_console.print(f"report: {files.markdown}  {files.html}  plot: {files.plot}  results: {comparison.results_path}")
    if options.rerun:
        out_console.print(replay_line(comparison), soft_wrap=True)
    if comparison.missed:
        err_console.print(
            f"{comparison.missed} rows needed a call the cache does not hold and were left as they were; "
            "run without --cache-only to compute them"
        )
    if comparison.changed_meanwhile:
        err_console.print(
            f"{comparison.changed_meanwhile} rows were rewritten by another process while --rescore ran and were "
            "left as that process wrote them; run --report-only --rescore again once it is done"
        )
    if comparison.failed:
        err_console.print(f"{comparison.failed} rows failed; run the same command again to retry them")
    if comparison.failed or comparison.missed:
        raise typer.Exit(PARTIAL)


def replay_line(comparison: Comparison) -> str:
    """What a ``--rerun`` did: rows reproduced from the cache as they were, rows that came out otherwise, and the
    calls that reached a model (zero when the cache held every call)."""
    differ = comparison.computed - comparison.replayed
    return (
        f"replay: {comparison.replayed} rows reproduced from the cache exactly, {differ} recomputed with a "
        f"different result or with new calls, {comparison.missed} missed the cache; "
        f"{comparison.meter.billed_calls} billed model calls"
    )
