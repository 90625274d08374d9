"""``moot compare``: the command-line face of the harness (registered in ``moot.cli``).

Bad input is one line on stderr and exit code 2, before any model call or
file is written; failed rows leave the report written and exit 3 (partial:
re-run the same command to retry them), as ``moot._exit_codes`` documents.
Ctrl-C or SIGTERM stops it at once (exit 130 or 143) with one line: what is
saved, and the same command, which goes on from the rows already finished.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from moot._exit_codes import INTERRUPTED, PARTIAL, Interrupted, refuse, run_until_signal
from moot._plugins import PluginError
from moot.boundary import TerminalConsole
from moot.errors import ConfigError
from moot.harness.arms._registry import known_arms
from moot.harness.arms._team_arms import DebateSettings
from moot.harness.jobs._results import ResultRow
from moot.harness.jobs._runner import (
    RESULTS_FILE,
    CompareRequest,
    Comparison,
    PreparedComparison,
    prepare_comparison,
)
from moot.harness.reports._render import report_renderables
from moot.harness.reports._report import Report, build_report
from moot.harness.reports._write import ReportFiles, write_report
from moot.harness.suites._suites import SUITE_FORMS

__all__ = ["compare"]

out_console = TerminalConsole()
err_console = TerminalConsole(stderr=True)


def row_rate(task: Task) -> float | None:
    """Rows per second this invocation computed for ``task`` (rows finished before it started do not count)."""
    computed = task.completed - task.fields.get("before", 0)
    elapsed = task.elapsed
    return computed / elapsed if computed > 0 and elapsed else None


class _Rate(ProgressColumn):
    """Rows finished per minute (per hour when slower)."""

    def render(self, task: Task) -> Text:
        rate = row_rate(task)
        if rate is None:
            return Text("– rows/min", style="progress.data.speed")
        per_minute = rate * 60
        shown = f"{per_minute:.1f} rows/min" if per_minute >= 1 else f"{per_minute * 60:.1f} rows/h"
        return Text(shown, style="progress.data.speed")


class _Eta(ProgressColumn):
    """The time left at the rate so far: ``eta 0:12:30``, or ``eta –`` before the first row."""

    def render(self, task: Task) -> Text:
        rate = row_rate(task)
        if task.total is not None and task.completed >= task.total:
            return Text("done", style="progress.remaining")
        if rate is None or task.total is None:
            return Text("eta –", style="progress.remaining")
        left = int((task.total - task.completed) / rate)
        return Text(f"eta {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}", style="progress.remaining")


PROGRESS_COLUMNS = (
    TextColumn("{task.description}"), BarColumn(bar_width=24), MofNCompleteColumn(), _Rate(), TimeElapsedColumn(),
    _Eta(),
)  # fmt: skip
"""A live bar per arm (and one for all arms): done/total, rows per minute, elapsed time, and the time left (at the
mean rate of this invocation: rows of a code suite take minutes each, and a short window would make it jump)."""
_ALL = "all arms"


class _Bar:
    """ProgressSink on rich progress bars, one per arm; failed rows are printed as they happen, and a log (output
    that is not a terminal) gets one plain line per row instead of live bars."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}
        self.header = ""

    def start(self, phase: str, total: int, done: int) -> None:
        if self.header:  # printed once the options proved valid, so bad input stays one line
            self.progress.console.print(self.header)
            self.header = ""

    def start_arms(self, phase: str, arms: Mapping[str, tuple[int, int]]) -> None:
        """A bar per arm of this phase (``label: (rows, finished)``) and, for several arms, one for all of them."""
        self.start(phase, 0, 0)
        for task in self.tasks.values():
            self.progress.update(task, visible=False)
        self.tasks = {}
        width = max((len(label) for label in [*arms, _ALL]), default=0)
        for label, (total, done) in arms.items():
            self.tasks[label] = self.progress.add_task(
                escape(label.ljust(width)), total=total, completed=done, before=done
            )
        if len(arms) > 1:
            total, done = sum(t for t, _ in arms.values()), sum(d for _, d in arms.values())
            self.tasks[_ALL] = self.progress.add_task(
                f"[bold]{_ALL.ljust(width)}[/]", total=total, completed=done, before=done
            )

    def advance(self, row: ResultRow) -> None:
        for label in (row.arm, _ALL):
            if label in self.tasks:
                self.progress.advance(self.tasks[label])
        if row.status == "error":
            self.progress.console.print(
                f"[red]row failed[/] {escape(f'{row.item} × {row.arm}: {row.error}')}", markup=True
            )
        elif not self.progress.console.is_terminal:  # a log file gets no live bar: one line per row instead
            mark = f"score {row.score:g}"
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
    """``moot-compare/<suite name>``: slices and parameters of one suite share a results file and a cache."""
    name = re.split(r"[\[?]", suite, maxsplit=1)[0]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(name).stem if name.endswith((".jsonl", ".yaml", ".yml")) else name)
    return Path("moot-compare") / slug.strip("-")


async def _run(runner: PreparedComparison) -> Comparison:
    request = runner.request
    try:
        with Progress(*PROGRESS_COLUMNS, console=out_console, transient=False) as progress:
            bar = _Bar(progress)
            bar.header = "[bold]moot compare[/] " + escape(
                f"{request.suite} · arms: {', '.join(request.arms)} · out: {request.out}"
            )
            runner.progress = bar
            return await runner.run()
    finally:
        runner.close()


def _arm_names() -> list[str]:
    """The arms to list: built by import, help text must not fail on a broken plugin, which the command itself then
    refuses in one line when it looks its arms up; until then the help lists the arms that did load."""
    try:
        return known_arms()
    except PluginError:
        return known_arms(plugins=False)


def arms_help() -> str:
    """``--arms``'s help: every arm in the registry (a new arm shows by itself) and the debate's arbiters, read from
    its settings, so the help names no arm or arbiter value the code lacks nor leaves one out."""
    arbiters = "|".join(get_args(DebateSettings.model_fields["arbiter"].annotation))
    return escape(
        f"Comma-separated arms, each NAME[?key=value&...]; NAME one of {', '.join(_arm_names())}, or one registered "
        f"in code. E.g. self-consistency[?k=N], debate[?experts=N&rounds=N&arbiter={arbiters}] (auto: a vote over "
        "every round for short answers, the program vote for code)."
    )


SuiteArgument = Annotated[str, typer.Argument(help=escape(f"The items to run. Forms: {SUITE_FORMS}"))]
ArmsOption = Annotated[str, typer.Option("--arms", "-a", help=arms_help())]
ModelOption = Annotated[
    list[str],
    typer.Option(
        "--model",
        "-m",
        help="Model SPEC for every role, or ROLE=SPEC (generator, critic, expert, "
        "expert_N, arbiter, judge, or a role a listed arm declares), e.g. local, judge=openai:gpt-4o-mini, or "
        "scripted:deterministic (a free built-in test model, for a dry run of the suite)",
    ),
]
ConcurrencyOption = Annotated[
    int, typer.Option("--concurrency", "-j", help="Model calls in flight per endpoint (1 to 64).")
]
OutOption = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Output directory (results, cache, report); default moot-compare/<suite>."),
]
KOption = Annotated[int | None, typer.Option("--k", help="Self-consistency samples per item (1 to 64).")]
ComputeMatchedOption = Annotated[
    bool,
    typer.Option(
        "--compute-matched",
        help="Size the sampling arms' k to the mean model calls per item of the (first listed) debate arm.",
    ),
]
CacheOption = Annotated[Path | None, typer.Option("--cache", help="Call cache directory; default OUT/cache.")]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Call the models every time.")]
RerunOption = Annotated[
    bool, typer.Option("--rerun", help="Recompute finished rows too (a replay, through the cache).")
]
CacheOnlyOption = Annotated[
    bool,
    typer.Option(
        "--cache-only",
        help="Call no model (none is loaded): every call comes from the cache, and a row the cache cannot "
        "answer is left as it was. With --rerun: check that the report replays with zero billed calls.",
    ),
]
CompactOption = Annotated[
    bool,
    typer.Option(
        "--compact",
        help="First fold a folder from an earlier moot (a file per run trace, a cache folder per model) into one "
        "traces file and one cache file, each checked before the old files are deleted.",
    ),
]
ReportOnlyOption = Annotated[bool, typer.Option("--report-only", help="Run nothing: report the rows finished so far.")]
RescoreOption = Annotated[
    bool,
    typer.Option("--rescore", help="With --report-only: score every finished row's stored answer again first."),
]
SeedOption = Annotated[int, typer.Option("--seed", help="Base seed for sampling and resampling.")]
PurposeOption = Annotated[
    str | None,
    typer.Option(
        "--purpose",
        help="What the --out folder's rows are for: tuning (choosing a protocol; its report says its figures "
        "are not for publishing) or evaluation (the default for a new folder). Recorded in results.sqlite3; "
        "a folder keeps one purpose (with --report-only: states it for a folder from before purposes).",
    ),
]
TunedOnOption = Annotated[
    list[str],
    typer.Option(
        "--tuned-on",
        help=escape(
            "Items of this suite that decided a protocol choice made elsewhere, as a suite spec (e.g. "
            "humaneval[:50]); repeatable. Recorded in results.sqlite3 (replacing the folder's list; also with "
            "--report-only), and the report gives every figure again on the items outside them."
        ),
    ),
]
ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor", help=escape("Where jobs run: local (this process) or ray (Ray tasks; needs the [ray] extra).")
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option("--ray-address", help="Ray cluster to join (auto, ray://HOST:10001); default: a local one."),
]
RayCpusOption = Annotated[
    float,
    typer.Option("--ray-cpus-per-job", help="CPUs Ray reserves per job; below 1 for models served elsewhere."),
]


def compare(
    suite: SuiteArgument,
    arms: ArmsOption = "single,reflection,debate,self-consistency",
    model: ModelOption = [],  # noqa: B006 - typer reads the default
    concurrency: ConcurrencyOption = 1,
    out: OutOption = None,
    k: KOption = None,
    compute_matched: ComputeMatchedOption = False,
    cache: CacheOption = None,
    no_cache: NoCacheOption = False,
    compact: CompactOption = False,
    rerun: RerunOption = False,
    cache_only: CacheOnlyOption = False,
    report_only: ReportOnlyOption = False,
    rescore: RescoreOption = False,
    seed: SeedOption = 0,
    purpose: PurposeOption = None,
    tuned_on: TunedOnOption = [],  # noqa: B006 - typer reads the default
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    ray_cpus_per_job: RayCpusOption = 1.0,
) -> None:
    """Compare arms (debate, self-consistency, critics) on a suite: accuracy, cost, and whether it is significant."""
    given = dict(locals())  # the parameters by name: CompareRequest spells all but four the same
    runner, comparison = _compute(given)
    files = _write(comparison, runner)
    _say_outcome(comparison, runner.request, files)


def _request(given: Mapping[str, Any]) -> CompareRequest:
    """The command line's values as a ``CompareRequest`` (pydantic refuses a bad one)."""
    arms = [a.strip() for a in given["arms"].split(",") if a.strip()]
    renamed = {"arms": arms, "models": given["model"], "out": given["out"] or default_out(given["suite"])}
    kept = {name: value for name, value in given.items() if name not in ("arms", "model", "out", "no_cache")}
    return CompareRequest(**kept, **renamed, use_cache=not given["no_cache"])


def _compute(given: Mapping[str, Any]) -> tuple[PreparedComparison, Comparison]:
    """Refuse bad input in one line before any output, then run the rows; Ctrl-C or SIGTERM says what is saved."""
    runner: PreparedComparison | None = None
    try:
        runner = prepare_comparison(_request(given))  # all bad input is refused here, before any output
        return runner, run_until_signal(_run(runner))
    except (ConfigError, ValidationError) as exc:
        raise refuse(str(exc) if isinstance(exc, ConfigError) else _one_line(exc)) from None
    except KeyboardInterrupt:  # Ctrl-C before the rows started (while the suite or the models loaded)
        raise _stopped(Interrupted(INTERRUPTED, "Ctrl-C"), runner) from None
    except Interrupted as stop:
        raise _stopped(stop, runner) from None


def _write(comparison: Comparison, runner: PreparedComparison) -> tuple[Report, ReportFiles]:
    """The report on the rows, written to the output folder."""
    request = runner.request
    try:  # every row is saved by now: a Ctrl-C while the report is written says so, as during the rows
        report = build_report(comparison, seed=request.seed)
        return report, write_report(report, request.out)
    except ConfigError as exc:  # the folder changed under the report (another process wrote a bad value)
        raise refuse(str(exc)) from None
    except KeyboardInterrupt:
        raise _stopped(Interrupted(INTERRUPTED, "Ctrl-C"), runner) from None


def _say_outcome(comparison: Comparison, request: CompareRequest, written: tuple[Report, ReportFiles]) -> None:
    """The report on the terminal, where its files are, and what is left to do (exit 3 when rows are missing)."""
    report, files = written
    for shown in report_renderables(report, out_console.width):
        out_console.print(shown, soft_wrap=isinstance(shown, Text))  # a note stays one line in a log
    out_console.print(f"report: {files.markdown}  {files.html}  plot: {files.plot}  results: {comparison.results_path}")
    if request.rerun:
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


def _stopped(stop: Interrupted, runner: PreparedComparison | None) -> typer.Exit:
    """A comparison stopped by Ctrl-C or SIGTERM: one line saying what is saved and the command that goes on; exit
    130 or 143. (The runner is closed by then: every finished row is in the results file.)"""
    if runner is None:
        say_stopped(f"moot compare stopped ({stop.how}) before any row ran; nothing was saved")
        return typer.Exit(stop.code)
    result, request = runner.result, runner.request
    saved = result.reused + result.computed
    this_run = f"{result.computed} by this run" + (f", {result.failed} failed" if result.failed else "")
    say_stopped(
        f"moot compare stopped ({stop.how}); {saved} finished rows are saved in {request.out / RESULTS_FILE} "
        f"({this_run}); to go on, run the same command again: {compare_command(request)}"
    )
    return typer.Exit(stop.code)


def say_stopped(line: str) -> None:
    """One line on stderr, whatever its length (outside text in it is printed as it is, never as markup)."""
    err_console.print(line, markup=False, highlight=False, soft_wrap=True)


_FLAGS = {
    "concurrency": "--concurrency", "k": "--k", "compute_matched": "--compute-matched", "cache": "--cache",
    "use_cache": "--no-cache", "rerun": "--rerun", "cache_only": "--cache-only", "report_only": "--report-only",
    "rescore": "--rescore", "seed": "--seed", "executor": "--executor", "ray_address": "--ray-address",
    "ray_cpus_per_job": "--ray-cpus-per-job", "purpose": "--purpose", "tuned_on": "--tuned-on",
}  # fmt: skip
"""Each field of ``CompareRequest`` past the suite, arms, models and output, as ``moot compare`` spells it."""


def compare_command(request: CompareRequest) -> str:
    """The ``moot compare`` command line that gives ``request`` (shell-quoted): running it again goes on where it
    stopped, because the same request always means the same rows and the same --out holds the finished ones."""
    words = ["moot", "compare", request.suite, "--arms", ",".join(request.arms)]
    for spec in request.models:
        words += ["--model", spec]
    words += ["--out", str(request.out)]
    defaults = CompareRequest.model_fields
    for name, flag in _FLAGS.items():
        value = getattr(request, name)
        if value == defaults[name].default:
            continue
        if isinstance(value, list):  # a repeatable option: the flag once per value
            words += [word for given in value for word in (flag, str(given))]
        else:
            words += [flag] if isinstance(value, bool) else [flag, str(value)]
    return shlex.join(words)


def replay_line(comparison: Comparison) -> str:
    """What a ``--rerun`` did: rows reproduced from the cache as they were, rows that came out otherwise, and the
    calls that reached a model (zero when the cache held every call)."""
    differ = comparison.computed - comparison.replayed
    return (
        f"replay: {comparison.replayed} rows reproduced from the cache exactly, {differ} recomputed with a "
        f"different result or with new calls, {comparison.missed} missed the cache; "
        f"{comparison.meter.billed_calls} billed model calls"
    )
