"""The ``moot`` command line.

Bad input of any kind (model spec, role, scenario, missing or refused key,
damaged store) is one line on stderr naming what is wrong and what is valid,
and exit code 2, before anything is run or written. A run that ends partial
or suspended exits 3, one that fails exits 1 (see ``moot._exit_codes``).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from autogen_agentchat.base import TaskResult
from rich.markup import escape

from moot._exit_codes import (
    COMPARE_EXIT_CODES_HELP,
    EXIT_CODES_HELP,
    FAILED,
    FINISHED,
    Interrupted,
    exit_code,
    refuse,
    run_until_signal,
    say_error,
)
from moot._extras import require
from moot._renamed import say_renames_to
from moot._usage_errors import OneLineCommand, OneLineGroup
from moot.arbiters import load_arbiter
from moot.boundary import TerminalConsole, read_bounded
from moot.catalog import Entry, entries
from moot.display import (
    ConsoleApprover,
    ConsoleFeedback,
    RunView,
    TurnCalls,
    calls_by_turn,
    catalog_table,
    completed_rounds,
    prompts_document,
    read_trace,
    render_calls,
    render_message,
    render_result,
    render_run,
    run_view,
    runs_table,
)
from moot.errors import ConfigError
from moot.harness._cli import compare
from moot.models import SPEC_FORM, refusal
from moot.roles import known_roles, role, role_origin
from moot.scenario import SCENARIO_SUFFIXES, Scenario, load_scenario
from moot.store import RunRecord, RunStatus, RunStore, resumable_state
from moot.teams import AnswerOnce, Feedback, HumanInTheLoop, MootTeam, load_preset

app = typer.Typer(
    cls=OneLineGroup,
    name="moot",
    add_completion=False,
    no_args_is_help=True,
    help=f"moot: multi-agent debate and review loops. {EXIT_CODES_HELP}",
)
out = TerminalConsole()
err = TerminalConsole(stderr=True)

ModelOption = Annotated[
    list[str],
    typer.Option(
        "--model",
        "-m",
        help=escape(
            f"Model SPEC for every role, or ROLE=SPEC for one role. SPEC: {SPEC_FORM}, e.g. local@0.7, "
            "openai:gpt-4o-mini@0.2, or scripted:deterministic (a free built-in test model, for a dry run)"
        ),
    ),
]
TaskOption = Annotated[str | None, typer.Option("--task", help="Replace the scenario's task text.")]
TaskFileOption = Annotated[
    Path | None, typer.Option("--task-file", help="Read the task from a file (your own code or document).")
]
RolesOption = Annotated[
    str | None,
    typer.Option("--roles", help="Team presets: the participants by role name, e.g. architect,ops,security."),
]
ArbiterOption = Annotated[
    str | None, typer.Option("--arbiter", help="Team presets: the arbiter by name (see moot arbiters).")
]


PauseOption = Annotated[
    list[str], typer.Option("--pause-at", help="Pause for your feedback at: round, final (repeatable).")
]


def _store_path(value: str | None) -> str | None:
    """``--store``: a file in a directory that exists. A typo must not create a tree of folders (nor a store
    inside one), so a missing folder is refused; the default store's folder is created as before."""
    if value is None:
        return None
    path = Path(value)
    if not value.strip():
        raise typer.BadParameter("is empty; give the path of the run store file, e.g. ./runs.sqlite3")
    if path.is_dir():
        raise typer.BadParameter(f"{value} is a directory; give a file in it, e.g. {path / 'runs.sqlite3'}")
    if not path.parent.is_dir():
        state = "is not a directory" if path.parent.exists() else "does not exist"
        raise typer.BadParameter(
            f"the folder {path.parent} {state}; create it first, or give a store file in an existing folder"
        )
    return value


StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store", help="Run store (SQLite) path; default $MOOT_STORE or the user data dir.", callback=_store_path
    ),
]
"""The store a command writes (run, resume): its folder must exist."""
ReadStoreOption = Annotated[
    str | None, typer.Option("--store", help="Run store (SQLite) path; default $MOOT_STORE or the user data dir.")
]
"""The store a command only reads (runs, show): a missing one reads as empty, and nothing is created."""


@app.callback()
def root() -> None:
    """moot: multi-agent debate and review loops on AutoGen."""


@app.command(epilog=EXIT_CODES_HELP)
def run(
    scenario: Annotated[
        str, typer.Argument(help="A scenario or team preset, by name (moot scenarios, moot teams) or path.")
    ],
    model: ModelOption = [],  # noqa: B006 - typer reads the default
    task: TaskOption = None,
    task_file: TaskFileOption = None,
    roles: RolesOption = None,
    arbiter: ArbiterOption = None,
    store: StoreOption = None,
    pause_at: PauseOption = [],  # noqa: B006
) -> None:
    """Run a scenario, or a team preset on a task, printing the transcript live and then the result."""
    try:
        names = [r.strip() for r in roles.split(",") if r.strip()] if roles else []
        loaded = load_scenario(scenario).compose(names, arbiter)
        text = _task_text(task, task_file)
    except ConfigError as exc:
        raise refuse(str(exc)) from None
    run_scenario(loaded, model, text, store=store, pause_at=pause_at)


MAX_TASK_BYTES = 1_000_000
"""The largest --task-file read (1 MB): a task is a prompt, and a FIFO or a device must not cost memory without end."""


def _task_text(task: str | None, task_file: Path | None) -> str | None:
    """The task given on the command line; None leaves the scenario's own. An empty or blank one is refused: it
    would silently run the scenario's own task instead of the one the user meant to give."""
    if task is not None and task_file is not None:
        raise ConfigError("give --task or --task-file, not both")
    if task_file is None:
        if task is not None and not task.strip():
            raise ConfigError("--task is empty; give the task text, or leave --task out to run the scenario's own task")
        return task
    raw = read_bounded(task_file, "--task-file", MAX_TASK_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"--task-file {task_file} is not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start}); "
            "save it as UTF-8"
        ) from None
    if not text.strip():
        raise ConfigError(f"--task-file {task_file} is empty; write the task in it, or leave --task-file out")
    return text


@app.command(epilog=EXIT_CODES_HELP)
def resume(
    run_id: Annotated[str | None, typer.Argument(help="The run to continue (see moot runs).")] = None,
    last: Annotated[bool, typer.Option("--last", help="Continue the newest unfinished run.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Continue even though the scenario's stop conditions changed.")
    ] = False,
    approve: Annotated[
        bool, typer.Option("--approve", help="A run suspended for feedback: approve what it is waiting on.")
    ] = False,
    feedback: Annotated[
        str | None,
        typer.Option(
            "--feedback",
            help="A run suspended for feedback: reject what it is waiting on with this comment, and go on "
            "(with --approve: approve it with this comment).",
        ),
    ] = None,
    store: StoreOption = None,
) -> None:
    """Continue a run that was killed, interrupted or suspended for feedback, from its last checkpoint (never
    one a live process drives). Without a terminal, --approve or --feedback answers a feedback pause."""
    try:
        given = _given_feedback(approve, feedback)
        # a run to resume is looked up first (a missing store is not created), and the reader is closed on every
        # path, so no refusal leaves -wal/-shm files beside the store
        with contextlib.closing(RunStore.reader(store)) as found:
            found.check()
            record = _resumable(found, run_id, last)
            if given is not None and record.status is not RunStatus.SUSPENDED:
                raise ConfigError(
                    f"run {record.id} is not waiting for feedback (status {record.status}); --approve and "
                    "--feedback answer a run suspended at a feedback pause"
                )
            options = record.options
            loaded = load_scenario(record.scenario or "").compose(options.get("roles", []), options.get("arbiter"))
            team = _build(loaded, list(options.get("model_options", [])), store, list(options.get("pause_at", [])))
            if given is not None:
                team.human.feedback = AnswerOnce(team.human, given, then=team.human.feedback)
            resumable_state(found, record.id)
        opened = RunStore.shared(store)
        opened.acquire(record.id)  # refused while another live process drives it
    except ConfigError as exc:
        raise refuse(str(exc)) from None
    what = f"[cyan]{escape(record.id)}[/] of {escape(loaded.name)} ({record.turns} turns recorded)"
    out.print(f"[bold]moot[/] resuming run {what}")
    _drive(team.resume_stream(record.id, force=force), team)


def _given_feedback(approve: bool, comment: str | None) -> Feedback | None:
    """The answer ``moot resume --approve / --feedback TEXT`` gives the pause a suspended run waits at."""
    if comment is not None and not comment.strip():
        raise ConfigError("--feedback needs a comment (what should change); to accept as it is, give --approve")
    if approve:
        return Feedback.approve((comment or "").strip())
    return Feedback.reject(comment.strip()) if comment is not None else None


JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout instead of tables.")]


@app.command()
def runs(
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many runs to list (at least 1).")] = 20,
    as_json: JsonOption = False,
    store: ReadStoreOption = None,
) -> None:
    """List recent runs, newest first (reading the store only: nothing is created or written)."""
    try:
        if limit < 1:
            raise ConfigError(f"--limit must be at least 1, got {limit}")
        with contextlib.closing(RunStore.reader(store)) as opened:  # closed: no -wal/-shm left beside the store
            records = opened.list(limit)
            rounds = {r.id: completed_rounds(opened, r.id) for r in records}
    except ConfigError as exc:
        raise refuse(str(exc)) from None
    if as_json:
        _print_json([run_summary(r, rounds[r.id]) for r in records])
    else:
        out.print(runs_table(records, rounds, width=out.width))


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="The run to show (see moot runs).")],
    path: Annotated[
        str | None, typer.Argument(metavar="PATH", help="Where --plot saves its PNG; default RUN_ID.png.")
    ] = None,
    as_json: JsonOption = False,
    prompts: Annotated[
        bool, typer.Option("--prompts", help="Show what each model call saw and answered (from the run's trace).")
    ] = False,
    plot: Annotated[
        bool, typer.Option("--plot", help="Save a PNG: score or agreement per round, tokens per round.")
    ] = False,
    store: ReadStoreOption = None,
) -> None:
    """Show a run: transcript, scores or verdicts per round, stop reason, tokens per round."""
    try:
        if path is not None and not plot:
            raise ConfigError(
                f"unexpected argument {path!r}: a PATH is only taken by --plot (moot show RUN_ID --plot PATH)"
            )
        with contextlib.closing(RunStore.reader(store)) as opened:  # closed on every path, errors too
            view = run_view(opened, run_id)
        calls = _calls(view, store) if prompts else None
        chart = _save_plot(view, path or f"{run_id}.png") if plot else None
    except ConfigError as exc:
        raise refuse(str(exc)) from None
    _print_show(view, calls, chart, as_json)


def _calls(view: RunView, store: str | None) -> list[TurnCalls]:
    """The run's model calls from its trace; lines that cannot be read are skipped and named on stderr."""
    trace = read_trace(view.run.id, store)
    if trace.unreadable:
        err.print(
            f"moot: warning: skipped {len(trace.unreadable)} unreadable line(s) of the trace of run {view.run.id}: "
            + "; ".join(trace.unreadable),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return calls_by_turn(trace.events, view)


def _save_plot(view: RunView, path: str) -> Path:
    require("plot", "moot show --plot")
    from moot.display.plots import plot_run, save_figure

    if not view.rounds:
        raise ConfigError(f"run {view.run.id} has no rounds to plot yet (status {view.run.status})")
    try:
        return save_figure(plot_run(view), path)
    except OSError as exc:
        raise ConfigError(f"cannot save the plot to {path}: {exc.strerror or exc}") from None


def _print_show(view: RunView, calls: list[TurnCalls] | None, chart: Path | None, as_json: bool) -> None:
    if as_json:
        document = view.dump() if calls is None else prompts_document(view.run.id, calls)
        if chart is not None:
            document["plot"] = str(chart)
        _print_json(document)
        return
    if calls is not None:
        render_calls(out, view.run.id, calls)
    elif chart is None:
        render_run(out, view)
    if chart is not None:
        out.print(f"[bold]moot[/] saved the chart of run {escape(view.run.id)} to {escape(str(chart))}", soft_wrap=True)


def _print_json(data: object) -> None:
    typer.echo(json.dumps(data, indent=2))


def run_summary(record: RunRecord, rounds: int) -> dict[str, Any]:
    """A run as ``moot runs --json`` lists it: the record without its result, plus rounds and total tokens."""
    data = record.model_dump(mode="json", exclude={"result"})
    data["rounds"] = rounds
    data["total_tokens"] = record.tokens.total_tokens
    return data


def _resumable(store: RunStore, run_id: str | None, last: bool) -> RunRecord:
    if (run_id is None) == (not last):
        raise ConfigError("give a RUN_ID or --last (not both); moot runs lists run ids")
    if run_id is not None:
        record = store.get(run_id)
    else:
        found = store.last_unfinished()
        if found is None:
            raise ConfigError("no unfinished run to resume; moot runs lists runs")
        record = found
    if record.scenario is None:
        raise ConfigError(f"run {record.id} was started from code, not a scenario; resume it with team.resume(run_id)")
    return record


def _build(
    scenario: Scenario, model_options: list[str], store: str | None, pause_at: list[str] | None = None
) -> MootTeam:
    models = scenario.models(model_options)
    for name in scenario.roles:  # a missing extra or key is refused before the team (or anything) is built
        models.spec(name).check()
    team = scenario.build_team(models)
    if not isinstance(team, MootTeam):
        raise ConfigError(f"scenario {scenario.name} must build a moot team, got {type(team).__name__}")
    team.store_path = store  # the trace goes next to the store it belongs to, where moot show looks for it
    options: dict[str, Any] = {"model_options": model_options, "pause_at": list(pause_at or [])}
    if scenario.preset is not None:  # what moot resume needs to compose the same team again
        options |= {"roles": list(scenario.preset.roles), "arbiter": _arbiter_name(scenario)}
    team.run_info = {
        "models": {name: str(models.spec(name)) for name in scenario.roles},
        "options": options,
        "scenario": str(scenario.source) if scenario.source is not None else scenario.name,
    }
    _attach_human(team, pause_at or [])
    return team


def _arbiter_name(scenario: Scenario) -> str | None:
    arbiter = scenario.preset.arbiter if scenario.preset is not None else None
    return arbiter.name if arbiter is not None else None


def _attach_human(team: MootTeam, pause_at: list[str]) -> None:
    """At a terminal a person answers feedback pauses and tool approvals; elsewhere the run suspends."""
    interactive = sys.stdin.isatty()
    team.human = HumanInTheLoop(pause_at, feedback=ConsoleFeedback(out) if interactive else None)
    if interactive:
        team.ask_approvals_of(ConsoleApprover(out))


def run_scenario(
    scenario: Scenario,
    model_options: list[str],
    task: str | None,
    *,
    store: str | None = None,
    pause_at: list[str] | None = None,
) -> TaskResult:
    """Resolve models, build the team (all bad input surfaces here, before any output), run it.

    Exits with the run's code (see ``moot._exit_codes``) unless it finished.
    """
    try:
        if not (task or scenario.task).strip():
            raise ConfigError(f"{scenario.name} has no task of its own; give --task TEXT or --task-file PATH")
        team = _build(scenario, model_options, store, pause_at)
        RunStore.shared(store).check()  # a damaged or unwritable store is bad input: refuse before the banner
    except ConfigError as exc:
        raise refuse(str(exc)) from None
    out.print(f"[bold]moot[/] running [cyan]{escape(scenario.name)}[/]: {escape(scenario.description)}")
    return _drive(team.run_stream(task=task or scenario.task), team)


def _drive(stream: AsyncIterator[object], team: MootTeam) -> TaskResult:
    """Render the run as it streams; end with its exit code: partial or suspended 3, failed 1 (one line), a
    refused key or a changed configuration 2."""
    try:
        result = run_until_signal(_render(stream, team))
    except ConfigError as exc:  # e.g. the scenario's configuration changed since the run started
        raise refuse(str(exc)) from None
    except Interrupted as stop:  # the team recorded the run as interrupted (and resumable) as it was cancelled
        raise _interrupted(team, stop.code) from None
    except Exception as exc:
        raise _failed(exc, team) from None
    status = RunStore.shared(team.store_path).get(team.run_id).status if team.run_id else RunStatus.FINISHED
    if exit_code(status) != FINISHED:
        raise typer.Exit(exit_code(status))
    return result


def _interrupted(team: MootTeam, code: int) -> typer.Exit:
    """A run stopped by Ctrl-C or SIGTERM: say where it is kept, exit 130 or 143."""
    where = f"; resume with moot resume {team.run_id}" if team.run_id else " before the run started"
    err.print(f"moot: interrupted{where}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _failed(exc: Exception, team: MootTeam) -> typer.Exit:
    """A run that raised: a key the provider refused is bad input; anything else failed the run."""
    refused = refusal(exc)
    if refused is not None:
        return refuse(refused)
    where = (
        f"; moot show {team.run_id} shows what it did, moot resume {team.run_id} continues it" if team.run_id else ""
    )
    say_error(f"the run failed: {type(exc).__name__}: {exc}{where}")
    return typer.Exit(FAILED)


async def _render(stream: AsyncIterator[object], team: MootTeam | None = None) -> TaskResult:
    result: TaskResult | None = None
    announced = False
    async for item in stream:
        if team is not None and not announced and team.run_id is not None:
            run_id = escape(team.run_id)
            out.print(f"[dim]run id:[/] {run_id}   [dim](resume with: moot resume {run_id})[/]")
            announced = True
        if isinstance(item, TaskResult):
            result = item
        else:
            render_message(out, item)  # type: ignore[arg-type]
    assert result is not None
    render_result(out, result)
    if team is not None and team.waiting_for:
        where, run_id = escape(str(team.waiting_for)), escape(str(team.run_id))
        resume = f"moot resume {run_id}"
        out.print(
            f"[yellow]suspended:[/] waiting for feedback at {where}; continue with {resume} at a terminal, "
            f"or answer from anywhere: {resume} --approve, or {resume} --feedback 'what should change'",
            markup=True,
            highlight=False,
        )
    return result


def run_script(scenario: Scenario, argv: Sequence[str] | None = None) -> None:
    """Run ``scenario`` as a script (``python scenarios/<name>.py [--model ...] [--task ...]``), with the
    options of ``moot run``; ``argv`` defaults to the script's own arguments."""
    command = typer.Typer(add_completion=False)

    @command.command(cls=OneLineCommand)
    def main(
        model: ModelOption = [],  # noqa: B006
        task: TaskOption = None,
        store: StoreOption = None,
        pause_at: PauseOption = [],  # noqa: B006
    ) -> None:
        try:
            text = _task_text(task, None)
        except ConfigError as exc:
            raise refuse(str(exc)) from None
        run_scenario(scenario, model, text, store=store, pause_at=pause_at)

    command(args=list(sys.argv[1:] if argv is None else argv), prog_name=f"{scenario.name}.py")


# ------------------------------------------------------------------ the catalog
def _described(kind: str, entry: Entry) -> str:
    """An entry's description; loading it checks it, so a bad file fails the listing with its one line."""
    if kind == "teams":
        return load_preset(str(entry.path)).description
    if kind == "arbiters":
        return load_arbiter(entry.name).description
    return load_scenario(str(entry.path)).description


def _list(kind: Literal["roles", "teams", "arbiters", "scenarios"], as_json: bool) -> None:
    try:
        if kind == "roles":  # roles registered from code (custom_role, expert) are listed too
            rows = [(name, role(name).description, role_origin(name)) for name in known_roles()]
        else:
            found = entries(kind, SCENARIO_SUFFIXES if kind == "scenarios" else (".yaml", ".yml"))
            rows = [(name, _described(kind, entry), entry.origin) for name, entry in found.items()]
    except ConfigError as exc:
        raise refuse(str(exc)) from None
    if as_json:
        _print_json([{"name": n, "description": d, "origin": o} for n, d, o in rows])
    else:
        out.print(catalog_table(kind, rows))


@app.command("roles")
def list_roles(as_json: JsonOption = False) -> None:
    """List the roles: name, description, and where each comes from (built-in, a file, or code)."""
    _list("roles", as_json)


@app.command("teams")
def list_teams(as_json: JsonOption = False) -> None:
    """List the team presets: name, description, and where each comes from."""
    _list("teams", as_json)


@app.command("arbiters")
def list_arbiters(as_json: JsonOption = False) -> None:
    """List the arbiters: name, description, and where each comes from."""
    _list("arbiters", as_json)


@app.command("scenarios")
def list_scenarios(as_json: JsonOption = False) -> None:
    """List the scenarios (scripts and YAML): name, description, and where each comes from."""
    _list("scenarios", as_json)


app.command(epilog=COMPARE_EXIT_CODES_HELP)(compare)


def main() -> None:
    _say_renames()
    app()


def _say_renames() -> None:
    """A former spelling in what the user wrote (a suite file's ``options:``, ``?options=`` in a spec) is said once,
    as a one-line note on stderr (moot._renamed hands it over; a traceback-style warning line would name moot's
    file, not the user's)."""
    say_renames_to(lambda message: print(f"moot: note: {message}", file=sys.stderr))
