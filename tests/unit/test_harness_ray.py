"""``moot compare --executor ray``: same rows and report as the local executor, on a local Ray started here.

Workers are real processes: the scripted models travel to them pickled, the
cache is served by an actor, and killing a worker mid-sweep loses only its
in-flight job, which is retried once.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from moot.errors import ConfigError
from moot.harness import CompareRequest, ResultRow, build_report, run_comparison
from moot.harness.jobs._runner import prepare_comparison
from moot.tracing import TRACES_FILE, TraceArchive
from tests.unit.test_harness_support import PromptModel, arithmetic, write_sums

ray = pytest.importorskip("ray")

ARMS = ["single", "self-consistency?k=3", "reflection", "debate"]
TIMING = {"wall_seconds", "finished_at", "trace_ids"}
"""Row fields that differ between any two runs, whatever executes them."""


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (it takes seconds to start), bound to loopback, small object store."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    root = str(Path(__file__).resolve().parents[2])
    ray.init(
        num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024, _node_ip_address="127.0.0.1",
        logging_level="warning", log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": root}},
    )  # fmt: skip
    yield ray
    ray.shutdown()


@pytest.fixture
def model():
    made: list[PromptModel] = []

    def make(name: str, reply=None) -> PromptModel:
        built = PromptModel(name, reply or arithmetic({1})).register()
        made.append(built)
        return built

    yield make
    for built in made:
        built.unregister()


def compare_request(suite: Path, out: Path, m: PromptModel, **extra) -> CompareRequest:
    arms, models = extra.pop("arms", ARMS), extra.pop("models", [m.spec])
    return CompareRequest(suite=str(suite), arms=arms, models=models, out=out, **extra)


def sweep(opts: CompareRequest):
    """Run a comparison and keep its executor, to read what it retried."""
    runner = prepare_comparison(opts)
    try:
        return asyncio.run(runner.run()), runner.executor
    finally:
        runner.close()


def stable(rows: list[ResultRow]) -> dict[tuple[str, str], dict]:
    return {(r.item, r.arm): r.model_dump(exclude=TIMING) for r in rows}


def report_numbers(comparison) -> dict:
    report = build_report(comparison)
    arms = [a.model_dump(exclude={"mean_wall_seconds", "total_wall_seconds"}) for a in report.arms]
    return {"arms": arms, "pairs": [p.model_dump() for p in report.pairs]}


def test_local_and_ray_executors_give_identical_rows_and_report_numbers(local_ray, tmp_path, model):
    sums = write_sums(tmp_path / "sums.jsonl", 6)
    m = model("ray-same")
    local, _ = sweep(compare_request(sums, tmp_path / "local", m))
    on_ray, executor = sweep(compare_request(sums, tmp_path / "ray", m, executor="ray"))
    assert len(on_ray.rows) == 6 * len(ARMS) and on_ray.failed == 0 and executor.retried == 0
    assert stable(on_ray.rows) == stable(local.rows)
    assert report_numbers(on_ray) == report_numbers(local)
    assert on_ray.meter == local.meter  # the workers' calls and tokens came back with their rows
    traces = {e.trace_id for e in TraceArchive(tmp_path / "ray" / TRACES_FILE).scan().events}  # the driver wrote
    assert traces == {t for r in on_ray.rows for t in r.trace_ids} and traces  # the workers' traces


def test_a_ray_sweep_resumes_and_replays_from_the_cache_with_zero_calls(local_ray, tmp_path, model):
    sums, out = write_sums(tmp_path / "sums.jsonl", 4), tmp_path / "out"
    m = model("ray-replay")
    first, _ = sweep(compare_request(sums, out, m, arms=["single", "debate"], executor="ray"))
    again, _ = sweep(compare_request(sums, out, m, arms=["single", "debate"], executor="ray"))
    assert again.computed == 0 and again.reused == 8 and again.meter.calls == 0  # resumed: nothing left to do
    replay, _ = sweep(compare_request(sums, out, m, arms=["single", "debate"], executor="ray", rerun=True))
    assert replay.replayed == 8 and replay.meter.billed_calls == 0 and replay.meter.calls == first.meter.calls > 0
    local_replay, _ = sweep(
        compare_request(sums, out, m, arms=["single", "debate"], rerun=True)
    )  # the same cache, locally
    assert local_replay.replayed == 8 and local_replay.meter.billed_calls == 0
    checked, _ = sweep(
        compare_request(sums, out, m, arms=["single", "debate"], executor="ray", rerun=True, cache_only=True)
    )
    assert checked.replayed == 8 and checked.missed == 0
    empty = compare_request(sums, out, m, arms=["single", "debate"], executor="ray", rerun=True, cache_only=True,
                    cache=tmp_path / "empty")  # fmt: skip
    missed, _ = sweep(empty)  # the workers' clients refuse too: with no cache, nothing is answered
    assert missed.missed == 8 and missed.computed == 0


def test_calls_are_bounded_per_endpoint_across_ray_workers(local_ray, tmp_path, model):
    sums = write_sums(tmp_path / "sums.jsonl", 4)
    m = model("ray-bounded")
    opts = compare_request(
        sums, tmp_path / "out", m, arms=["self-consistency?k=4", "debate"], concurrency=2, executor="ray"
    )
    comparison, executor = sweep(opts)
    assert comparison.failed == 0
    assert executor.peak_calls == {"scripted:ray-bounded": 2}


def dies_once(marker: Path, item: str):
    """The arithmetic model, except that the first worker to see ``item`` is killed mid-call (SIGKILL)."""
    honest = arithmetic({1})

    def reply(agent, messages):
        text = "\n".join(str(m.content) for m in messages)
        if item in text:
            try:
                marker.open("x").close()
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return honest(agent, messages)

    return reply


def always_dies(item: str):
    honest = arithmetic({1})

    def reply(agent, messages):
        if item in "\n".join(str(m.content) for m in messages):
            os.kill(os.getpid(), signal.SIGKILL)
        return honest(agent, messages)

    return reply


def test_a_killed_worker_loses_only_its_job_which_is_retried_once(local_ray, tmp_path, model):
    sums = write_sums(tmp_path / "sums.jsonl", 4)
    m = model("ray-killed", dies_once(tmp_path / "killed", "What is 2 + 4?"))
    comparison, executor = sweep(compare_request(sums, tmp_path / "out", m, arms=["single", "debate"], executor="ray"))
    assert (tmp_path / "killed").exists() and executor.retried == 1
    assert comparison.failed == 0 and len(comparison.rows) == 8
    assert all(r.status == "done" for r in comparison.rows)
    assert {r.answer for r in comparison.rows if r.item == "q2"} == {"6"}


def test_a_job_whose_worker_dies_twice_is_a_failed_row_with_the_reason_and_reruns(local_ray, tmp_path, model):
    sums, out = write_sums(tmp_path / "sums.jsonl", 3), tmp_path / "out"
    m = model("ray-doomed", always_dies("What is 1 + 2?"))
    comparison, executor = sweep(compare_request(sums, out, m, arms=["single"], executor="ray"))
    assert executor.retried == 1 and comparison.failed == 1 and comparison.computed == 2
    (lost,) = [r for r in comparison.rows if r.status == "error"]
    assert lost.item == "q1" and "Ray worker died on all 2 attempts" in lost.error
    healthy = model("ray-doomed")  # the same spec, the fault gone: the next run computes only the lost row
    again, _ = sweep(compare_request(sums, out, healthy, arms=["single"], executor="ray"))
    assert again.computed == 1 and again.reused == 2 and again.failed == 0


def test_a_configuration_error_on_a_worker_stops_the_sweep_with_its_message(local_ray, tmp_path, model):
    suite = tmp_path / "judged.yaml"
    suite.write_text("scoring: judge\nitems:\n" + "".join(f"  - input: What is {i} + {i}?\n    answer: '{2 * i}'\n"
                                                          for i in range(3)))  # fmt: skip
    m = model("ray-bad")
    models = [m.spec, "judge=scripted:nowhere"]
    opts = compare_request(suite, tmp_path / "out", m, arms=["single"], models=models, executor="ray")
    with pytest.raises(ConfigError, match="no scripted model named 'nowhere'"):
        sweep(opts)


def test_ray_only_options_are_refused_with_the_local_executor(tmp_path, model):
    sums = write_sums(tmp_path / "sums.jsonl", 2)
    with pytest.raises(ConfigError, match="--ray-address applies only with --executor ray"):
        asyncio.run(run_comparison(compare_request(sums, tmp_path / "out", model("x"), ray_address="auto")))
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_the_cli_runs_on_ray_and_writes_the_same_report_files(local_ray, tmp_path, model):
    from tests.unit.test_harness_cli import invoke

    suite, out = write_sums(tmp_path / "sums.jsonl", 3), tmp_path / "out"
    m = model("ray-cli")
    result = invoke(str(suite), "--arms", "single,debate", "--model", m.spec, "--out", str(out), "--executor", "ray",
                    "--ray-cpus-per-job", "0.5")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "computed 6 rows" in result.output and "McNemar exact" in result.output
    for name in ("report.md", "report.html", "cost_accuracy.png", "results.sqlite3", "summary.json"):
        assert (out / name).is_file(), name


def test_an_unreachable_ray_address_is_one_line_and_exit_2_at_once(tmp_path):
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    suite = write_sums(tmp_path / "sums.jsonl", 1)
    moot = Path(sys.executable).parent / "moot"
    done = subprocess.run(
        [str(moot), "compare", str(suite), "--model", "scripted:x", "--executor", "ray", "--ray-address",
         f"127.0.0.1:{port}", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"moot: error: cannot reach Ray at 127.0.0.1:{port} (Connection refused)")
    assert done.stderr.strip().count("\n") == 0 and not (tmp_path / "out").exists()


def test_without_ray_installed_the_ray_executor_says_which_extra_to_install(tmp_path, model, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # import ray now raises ImportError
    sums = write_sums(tmp_path / "sums.jsonl", 1)
    refusal = r"^--executor ray \(or use --executor local\) needs the 'ray' extra \(ray not installed\): "
    with pytest.raises(ConfigError, match=refusal + r"pip install 'moot\[ray\]'"):
        prepare_comparison(compare_request(sums, tmp_path / "out", model("no-ray"), executor="ray"))
    assert not (tmp_path / "out").exists()


def test_a_job_carries_the_name_of_the_key_variable_never_the_key(tmp_path, monkeypatch):
    from ray import cloudpickle

    monkeypatch.setenv("MOOT_TEST_SECRET", "sk-do-not-ship-me")
    sums = write_sums(tmp_path / "sums.jsonl", 1)
    spec = "openai:gpt-4o-mini?api_key_env=MOOT_TEST_SECRET"
    runner = prepare_comparison(CompareRequest(suite=str(sums), arms=["debate"], models=[spec], out=tmp_path / "out"))
    try:
        run = runner.arms[0]
        run.key = runner._key(run)
        shipped = cloudpickle.dumps(runner._job(runner.suite.items[0], run))  # what a Ray task receives
    finally:
        runner.close()
    assert b"MOOT_TEST_SECRET" in shipped and b"sk-do-not-ship-me" not in shipped


def test_a_report_of_a_ray_sweep_starts_no_cluster(local_ray, tmp_path, model, monkeypatch):
    sums, out = write_sums(tmp_path / "sums.jsonl", 2), tmp_path / "out"
    m = model("ray-report")
    sweep(compare_request(sums, out, m, arms=["single"], executor="ray"))
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # no Ray at all: a report must not need it
    report, executor = sweep(compare_request(sums, out, m, arms=["single"], executor="ray", report_only=True))
    assert type(executor).__name__ == "LocalExecutor"
    assert report.computed == 0 and report.reused == 2 and len(report.rows) == 2
