"""The ``moot`` command line.

Bad input of any kind (model spec, role, scenario, missing key) is one line
on stderr naming what is wrong and what is valid, and exit code 2.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from autogen_agentchat.base import TaskResult
from rich.console import Console

from moot.console import render_message, render_result
from moot.errors import ConfigError
from moot.scenario import Scenario, load_scenario, parse_model_options

app = typer.Typer(add_completion=False, no_args_is_help=True, help="moot: multi-agent debate and review loops.")
out = Console()
err = Console(stderr=True)

ModelOption = Annotated[
    list[str],
    typer.Option(
        "--model",
        "-m",
        help="Model SPEC for every role, or ROLE=SPEC for one role. SPEC: "
        "PROVIDER[:MODEL][@TEMPERATURE][?seed=N&max_tokens=N&base_url=URL&api_key_env=VAR], e.g. local@0.7",
    ),
]
TaskOption = Annotated[str | None, typer.Option("--task", help="Replace the scenario's task text.")]


@app.callback()
def root() -> None:
    """moot: multi-agent debate and review loops on AutoGen."""


def fail(message: str) -> typer.Exit:
    err.print(f"moot: error: {message}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2)


@app.command()
def run(
    scenario: Annotated[str, typer.Argument(help="Scenario name (see scenarios/) or path to a scenario script.")],
    model: ModelOption = [],  # noqa: B006 - typer reads the default
    task: TaskOption = None,
) -> None:
    """Run a scenario, printing the transcript live and then the result."""
    try:
        loaded = load_scenario(scenario)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    run_scenario(loaded, model, task)


def run_scenario(scenario: Scenario, model_options: list[str], task: str | None) -> TaskResult:
    """Resolve models, build the team (all bad input surfaces here, before any output), run it."""
    try:
        models = parse_model_options(model_options, scenario.roles)
        team = scenario.build(models)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    out.print(f"[bold]moot[/] running [cyan]{scenario.name}[/]: {scenario.description}")
    return asyncio.run(_stream(team, task or scenario.task))


async def _stream(team: object, task: str) -> TaskResult:
    result: TaskResult | None = None
    async for item in team.run_stream(task=task):  # type: ignore[attr-defined]
        if isinstance(item, TaskResult):
            result = item
        else:
            render_message(out, item)
    assert result is not None
    render_result(out, result)
    return result


def run_scenario_main(scenario: Scenario, argv: list[str]) -> None:
    """Entry point for ``python scenarios/<name>.py [--model ...] [--task ...]``."""
    command = typer.Typer(add_completion=False)

    @command.command()
    def main(model: ModelOption = [], task: TaskOption = None) -> None:  # noqa: B006
        run_scenario(scenario, model, task)

    command(args=argv, prog_name=f"{scenario.name}.py")


def main() -> None:
    app()
