"""reasoning-gym's scorers evaluate model answers (sympy's ``parse_expr``, ``eval``): the answer runs confined.

Each attack is an answer to an item whose scorer evaluates it (countdown through ``parse_expr``, n_queens through
``eval``). Each test asserts that the effect did not happen, that the answer scores 0 with a one-line detail, and
that the next answer is scored as reasoning-gym scores it in this process (nothing one answer does reaches the next).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time

import pytest

from moot.errors import ConfigError

pytest.importorskip("reasoning_gym")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel layers are Linux-only")

import reasoning_gym  # noqa: E402

from moot.harness.suites import _gym  # noqa: E402
from moot.harness.suites._gym import GymEntry, GymScore, bounded_score  # noqa: E402

EVALUATORS = ("countdown", "n_queens")
"""Tasks whose scorer runs the answer as Python: sympy's parse_expr, and plain eval."""


def _dataset(task: str, size: int = 3):
    return reasoning_gym.create_dataset(task, size=size, seed=1)


def _entry(task: str, index: int, size: int = 3) -> GymEntry:
    """How moot's process names ``_dataset(task, size)[index]`` to the scoring child."""
    return GymEntry(task, size, 1, (), index)


def _refused(task: str, answer: str) -> str:
    """Score ``answer`` on the first entry of ``task``; assert it scored 0 with a one-line detail; the detail."""
    value, detail = bounded_score(_entry(task, 0), answer)
    assert value == 0.0 and detail and "\n" not in detail, (value, detail)
    return detail


def _scores_as_in_process(task: str) -> None:
    """A right and a wrong answer score exactly what reasoning-gym gives them in this process."""
    dataset = _dataset(task)
    for answer in (dataset[1]["answer"], "0"):
        assert bounded_score(_entry(task, 1), answer)[0] == dataset.score_answer(answer, dataset[1])


@pytest.mark.parametrize("task", EVALUATORS)
def test_an_answer_cannot_write_a_file_outside(task, tmp_path):
    marker = tmp_path / "written"
    for answer in (f"open({str(marker)!r}, 'w').write('x')", f"__import__('pathlib').Path({str(marker)!r}).touch()"):
        detail = _refused(task, answer)
        assert "writing files outside" in detail or "changing files outside" in detail
    assert not marker.exists()
    _scores_as_in_process(task)


@pytest.mark.parametrize("task", EVALUATORS)
def test_an_answer_cannot_start_a_process(task, tmp_path):
    marker = tmp_path / "spawned"
    attacks = (
        f"__import__('os').system('touch {marker}')",
        f"__import__('subprocess').run(['touch', {str(marker)!r}])",
        f"__import__('os').execv('/bin/sh', ['sh', '-c', 'touch {marker}'])",
        "__import__('os').fork()",
    )
    for answer in attacks:
        assert "starting processes" in _refused(task, answer)
    time.sleep(0.2)
    assert not marker.exists()
    _scores_as_in_process(task)


@pytest.mark.parametrize("task", EVALUATORS)
def test_an_answer_cannot_open_a_socket(task):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        for answer in (
            f"__import__('socket').create_connection(('127.0.0.1', '{port}'))",
            "__import__('socket').socket()",
        ):
            assert "network access" in _refused(task, answer)  # a port as text: sympy makes numbers its own
        with pytest.raises(TimeoutError):
            listener.accept()
    _scores_as_in_process(task)


@pytest.mark.parametrize("task", EVALUATORS)
def test_an_answer_cannot_read_files_outside(task, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("moot-secret-7391")
    for path in (str(secret), "/etc/passwd"):
        detail = _refused(task, f"int(open({path!r}).read())")
        assert "reading files outside" in detail and "moot-secret" not in detail and "root:" not in detail
    _scores_as_in_process(task)


@pytest.mark.parametrize("task", EVALUATORS)
def test_an_answer_cannot_exhaust_memory(task):
    detail = _refused(task, "'x' * (2 ** 38)")
    assert "memory limit" in detail
    _scores_as_in_process(task)


def test_an_answer_cannot_exhaust_cpu_or_wall_time(monkeypatch):
    monkeypatch.setattr(_gym, "SCORE_SECONDS", 1)
    start = time.monotonic()
    assert "no score within 1 s of CPU" in _refused("n_queens", "sum(range(10 ** 12))")
    assert "no score within 1 s" in _refused("n_queens", "__import__('time').sleep(60)")
    assert time.monotonic() - start < 20
    _scores_as_in_process("n_queens")


@pytest.mark.parametrize("task", EVALUATORS)
def test_an_answer_cannot_change_how_the_next_answer_is_scored(task):
    kind = type(_dataset(task))
    found = f"getattr(__import__('sys').modules[{kind.__module__!r}], {kind.__name__!r})"
    rescore = f"setattr({found}, 'score_answer', {found}.__len__)"  # len(dataset): every later answer scores 3
    flood = "[__import__('os').write(fd, b'{\"score\": 1.0}\\n' * 64) for fd in range(64) if fd != 3]"
    for answer in (rescore, flood):
        bounded_score(_entry(task, 0), answer)
        _scores_as_in_process(task)


def test_an_answer_sees_none_of_moots_environment(monkeypatch):
    monkeypatch.setenv("MOOT_TEST_SECRET", "env-secret-5521")
    _restart_worker()
    leak = "__import__('os').environ.get('MOOT_TEST_SECRET', 'absent') + 1"  # TypeError names the value's type only
    forge = (
        "[__import__('os').write(3, ('{\"error\": \"' + __import__('os').environ.get('MOOT_TEST_SECRET', 'absent')"
        " + '\"}\\n').encode()), __import__('os')._exit(0)]"
    )
    for answer in (leak, forge):
        _, detail = bounded_score(_entry("n_queens", 0), answer)
        assert "env-secret" not in detail


def test_an_answer_cannot_make_moot_refuse_the_machine():
    """The confinement's report is written before the answer runs; what the answer writes cannot stand in for it."""
    forge = "[__import__('os').write(3, b'{\"unconfined\": [\"landlock\"]}\\n'), __import__('os')._exit(0)]"
    detail = _refused("n_queens", forge)
    assert "no number" in detail
    _scores_as_in_process("n_queens")


def test_a_machine_that_cannot_confine_the_scorer_is_refused_in_one_line(monkeypatch, tmp_path):
    marker = tmp_path / "unconfined"
    monkeypatch.setattr(_gym, "isolation_floor", lambda: ("landlock", "seccomp", "imaginary-layer"))
    dataset = _dataset("n_queens")
    with pytest.raises(ConfigError) as refused:
        bounded_score(_entry("n_queens", 0), f"open({str(marker)!r}, 'w')")
    message = str(refused.value)
    assert "no imaginary-layer" in message and "layers in force: rlimits" in message
    assert "GymScore(weak_isolation=True)" in message and "\n" not in message
    assert not marker.exists()
    accepted = GymScore(_entry("n_queens", 0), dataset[0]["answer"], weak_isolation=True)
    right = asyncio.run(accepted.score(None, dataset[0]["answer"], None))  # type: ignore[arg-type]
    assert right.value == 1.0


@pytest.mark.parametrize("task", ["chain_sum", "basic_arithmetic", "gsm_symbolic", "knights_knaves", "countdown"])
def test_confined_scores_equal_in_process_scores(task):
    dataset = _dataset(task)
    for index, entry in enumerate(dataset):
        for answer in (entry["answer"], "0", "not an answer", f"{entry['answer']} and more"):
            expected = (dataset.score_answer(answer, entry), "")
            assert bounded_score(_entry(task, index), answer) == expected, (task, answer)
    scorer = GymScore(_entry(task, 0), dataset[0]["answer"])
    right = asyncio.run(scorer.score(None, dataset[0]["answer"], None))  # type: ignore[arg-type]
    assert right.value == 1.0 and right.detail == ""


def test_the_scoring_child_leaves_nothing_behind():
    dataset = _dataset("countdown")
    for answer in ("open('x', 'w').write('y' * 1000)", "__import__('os').makedirs('a/' * 50)", dataset[0]["answer"]):
        bounded_score(_entry("countdown", 0), answer)
    assert _gym._worker is not None
    root = _worker_root(_gym._worker.pid)
    assert os.listdir(root) == []  # each answer's work directory went with it
    _restart_worker()
    assert not os.path.exists(root)


def _worker_root(pid: int) -> str:
    """The scoring server's directory for its answers' work directories (it holds it open, locked)."""
    held = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    roots = [path for path in held if os.path.basename(path).startswith("moot-sandbox-score-")]
    assert len(roots) == 1, held
    return roots[0]


def _restart_worker() -> None:
    """End the scoring child (it started with this process's environment of the time); the next call starts one."""
    worker = _gym._worker
    if worker is not None:
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait(timeout=30)
    _gym._worker = None
