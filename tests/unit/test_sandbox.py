"""The sandbox: outcomes counted right, clear messages, and every escape attempt contained as a content fault."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

import moot.sandbox._confine as confine_module
import moot.sandbox._sandbox as sandbox_module
from moot.errors import ConfigError
from moot.sandbox import Outcome, SandboxLimits, SandboxStatus, label_for, run_tests
from moot.sandbox._records import MEMORY_EXIT_CODE, ChildExit, assemble

FAST = SandboxLimits(wall_seconds=5, test_seconds=1, cpu_seconds=2, memory_mb=256)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the sandbox needs POSIX process control")


def run(code: str, *tests: str, limits: SandboxLimits = FAST):
    return run_tests(code, list(tests), limits)


def outcomes(result) -> list[str]:
    return [t.outcome.value for t in result.tests]


def attacks(prelude: str = "", **bodies: str) -> str:
    """Code that defines one function per attack: the code does the deed when a test calls it."""
    functions = [f"def {name}():\n" + textwrap.indent(body, "    ") for name, body in bodies.items()]
    return "\n".join([prelude, *functions]) + "\n"


# ------------------------------------------------------------------ counting and messages
def test_passing_and_failing_tests_are_counted():
    code = "def add(a, b):\n    return a + b if a < 10 else a - b\n"
    result = run(code, "assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(10, 1) == 11", "add(1)")
    assert result.status is SandboxStatus.CONTENT_FAULT
    assert (result.passed, result.total) == (2, 4)
    assert outcomes(result) == ["passed", "passed", "failed", "error"]
    assert [t.label for t in result.failures] == ["add(10, 1) == 11", "add(1)"]
    assert result.seconds < 2


def test_all_tests_passing_is_status_passed_and_output_is_kept():
    result = run(
        "print('hi from the code')\nsquare = lambda x: x * x", "assert square(3) == 9", "assert square(0) == 0"
    )
    assert result.status is SandboxStatus.PASSED
    assert result.load.outcome is Outcome.PASSED
    assert (result.passed, result.failures, result.exit_code) == (2, [], 0)
    assert result.stdout == "hi from the code\n"
    assert {"rlimits", "audit-hook"} <= set(result.isolation)


@pytest.mark.parametrize(
    ("test", "message"),
    [
        ("assert slugify('a  b') == 'a-b'", "got 'a--b', expected 'a-b'"),
        ("assert slugify('x') != 'x'", "got 'x', expected anything but 'x'"),
        ("assert slugify('x') in ['y', 'z']", "got 'x', expected a value in ['y', 'z']"),
        ("assert slugify('x') is None", "got 'x', expected None"),
        ("assert len(slugify('abc')) < 2", "got 3, expected a value < 2"),
        ("assert not slugify('x')", "got False, expected a true value"),
        ("assert slugify('A') == 'b', 'lowercase it'", "lowercase it (got 'a', expected 'b')"),
        ("for s in ['a b', 'c  d']:\n    assert slugify(s).count('-') == 1", "got 2, expected 1"),
    ],
)
def test_failed_asserts_report_got_versus_expected(test, message):
    result = run("def slugify(s):\n    return s.lower().replace(' ', '-')\n", test)
    (only,) = result.tests
    assert (only.outcome, only.message) == (Outcome.FAILED, message)


def test_a_test_that_draws_random_inputs_fails_the_same_way_on_every_run():
    code = "def shout(s):\n    return s.upper() if len(s) < 5 else s\n"
    draw = "import random\ns = ''.join(random.choice('abc') for _ in range(8))\nassert shout(s) == s.upper()"
    first, second = run(code, draw, draw), run(code, draw, draw)
    details = [t.message for t in first.tests]
    assert outcomes(first) == ["failed", "failed"] and details == [t.message for t in second.tests]
    assert details[0] != details[1]  # each test has its own draw, and it is the same on every run


def test_both_sides_of_an_assert_are_evaluated_once_in_order():
    code = "calls = []\ndef f(x):\n    calls.append(x)\n    return x\n"
    result = run(code, "assert f(1) == f(2)", "assert calls == [1, 2]")
    assert outcomes(result) == ["failed", "passed"]  # each side ran exactly once
    assert result.tests[0].message == "got 1, expected 2"


def test_an_exception_reports_type_message_and_where_in_the_code():
    result = run("def mean(xs):\n    return sum(xs) / len(xs)\n", "assert mean([]) == 0")
    (only,) = result.tests
    assert (only.outcome, only.error_type, only.message) == (Outcome.ERROR, "ZeroDivisionError", "division by zero")
    assert only.where == "candidate.py line 2, in mean"
    assert "return sum(xs) / len(xs)" in only.traceback


def test_a_syntax_error_is_a_content_fault_and_no_test_runs():
    result = run("def f(:\n    pass\n", "assert f() is None", "assert True")
    assert result.status is SandboxStatus.CONTENT_FAULT
    assert (result.load.outcome, result.load.error_type) == (Outcome.ERROR, "SyntaxError")
    assert result.load.message == "invalid syntax: 'def f(:'"
    assert result.load.where == "candidate.py line 1"
    assert outcomes(result) == ["not_run", "not_run"]
    assert result.tests[0].message == "not run: the code failed to load"


def test_sys_exit_in_the_code_is_reported_not_obeyed():
    result = run(attacks("import sys", leave="sys.exit(3)"), "leave()", "assert 1 + 1 == 2")
    assert outcomes(result) == ["error", "passed"]
    assert result.tests[0].message == "the code called sys.exit(3)"


# ------------------------------------------------------------------ limits
def test_an_endless_loop_times_out_and_the_next_test_still_runs():
    limits = FAST.model_copy(update={"test_seconds": 0.5})
    code = "def spin():\n    while True:\n        try:\n            pass\n        except Exception:\n            pass\n"
    result = run(code, "spin()", "assert 2 + 2 == 4", limits=limits)
    assert outcomes(result) == ["timeout", "passed"]
    assert result.tests[0].message == "took longer than 0.5 s"
    assert result.status is SandboxStatus.CONTENT_FAULT


def test_a_busy_loop_in_c_code_hits_the_cpu_limit():
    limits = FAST.model_copy(update={"cpu_seconds": 1, "test_seconds": 5})
    code = attacks(burn="sum(range(10**12))")  # C code: the alarm cannot interrupt it
    result = run(code, "burn()", "assert burn is not None", limits=limits)
    assert outcomes(result) == ["timeout", "passed"]  # the code's process is started afresh for the next test
    assert result.tests[0].message == "exceeded the CPU-time limit of 1 s"


def test_the_wall_clock_limit_kills_a_sleeper_that_ignores_the_alarm():
    limits = FAST.model_copy(update={"wall_seconds": 1.5, "test_seconds": 30})
    code = attacks("import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)", nap="time.sleep(60)")
    started = time.monotonic()
    result = run(code, "nap()", limits=limits)
    assert time.monotonic() - started < 3
    assert outcomes(result) == ["timeout"]
    assert result.tests[0].message == "exceeded the wall-clock limit of 1.5 s"
    assert result.status is SandboxStatus.CONTENT_FAULT


@pytest.mark.parametrize(
    "bomb",
    ["blob = bytearray(8 * 1024**3)", "hoard = []\nwhile True:\n    hoard.append(' ' * 10**6)"],
    ids=["one-allocation", "growing-list"],
)
def test_a_memory_bomb_is_reported_as_memory_exhaustion(bomb):
    result = run(
        f"def bomb():\n    {bomb.replace(chr(10), chr(10) + '    ')}\n", "bomb()", "assert [0] * 10 == [0] * 10"
    )
    assert result.status is SandboxStatus.CONTENT_FAULT
    assert outcomes(result) == ["error", "passed"]  # the memory is released and the next test runs
    assert result.tests[0].error_type == "MemoryError"
    assert result.tests[0].message == "memory limit of 256 MB exceeded (MemoryError)"


@pytest.mark.parametrize("hoard", ["' ' * 10**5", "[0] * 10"], ids=["big-items", "small-items"])
def test_a_memory_bomb_that_keeps_its_memory_is_still_the_codes_fault(hoard):
    # The memory stays referenced by a module global, so even the harness's own reporting can fail.
    limits = FAST.model_copy(update={"memory_mb": 64})
    for _ in range(2):  # where exactly the harness runs dry varies from run to run
        result = run(f"hoard = []\nwhile True:\n    hoard.append({hoard})\n", "assert hoard", limits=limits)
        assert result.status is SandboxStatus.CONTENT_FAULT, result.tool_error
        assert (result.load.error_type, result.load.message) == (
            "MemoryError",
            "memory limit of 64 MB exceeded (MemoryError)",
        )
        assert outcomes(result) == ["not_run"]


def test_output_beyond_the_file_size_limit_fails_the_write_not_the_sandbox():
    limits = FAST.model_copy(update={"file_size_mb": 1})
    result = run("def chatter():\n    while True:\n        print('x' * 10000)\n", "chatter()", limits=limits)
    assert (result.tests[0].error_type, result.tests[0].message) == ("OSError", "[Errno 27] File too large")


# ------------------------------------------------------------------ containment
def test_a_socket_to_loopback_is_refused_and_nothing_connects():
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        code = attacks(
            "import socket",
            call_home=f"socket.create_connection(('127.0.0.1', {port}), timeout=1)",
            datagram="socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        )
        result = run(code, "call_home()", "datagram()")
        with pytest.raises(BlockingIOError):
            server.accept()
    assert outcomes(result) == ["error", "error"]
    assert {t.error_type for t in result.tests} == {"PermissionError"}
    assert result.tests[0].message == "sandbox: network access is not allowed (socket.getaddrinfo)"
    assert result.tests[1].message == "sandbox: network access is not allowed (socket.__new__)"


def test_an_env_var_secret_is_not_visible_to_the_code(monkeypatch):
    monkeypatch.setenv("MOOT_TEST_SECRET", "hunter2-secret-value")
    code = attacks(
        "import os\nprint(sorted(os.environ))",
        secret="return os.environ.get('MOOT_TEST_SECRET')",
        parent_env="return open(f'/proc/{os.getppid()}/environ').read()",
    )
    result = run(code, "assert secret() is None", "parent_env()")
    assert outcomes(result) == ["passed", "error"]
    assert result.stdout == "['HOME', 'LANG', 'PATH', 'TMPDIR']\n"
    assert result.tests[1].message == "sandbox: reading other processes' /proc entries is not allowed (open)"
    assert "hunter2" not in result.model_dump_json()


@pytest.mark.parametrize(
    ("attempt", "event"),
    [
        ("import subprocess\nsubprocess.run(['echo', 'hi'])", "subprocess.Popen"),
        ("import os\nos.system('echo hi')", "os.system"),
        ("import os\nos.fork()", "os.fork"),
        ("import os\nos.execv(sys.executable, [sys.executable, '-c', 'pass'])", "os.exec"),
        ("import os\nos.posix_spawn('/bin/echo', ['echo'], {})", "os.posix_spawn"),
        ("import _posixsubprocess\n_posixsubprocess.fork_exec()", "_posixsubprocess.fork_exec"),
        ("import ctypes\nctypes.CDLL(None).system(b'echo hi')", "ctypes.dlopen"),
    ],
)
def test_spawning_processes_and_foreign_calls_are_refused(attempt, event):
    result = run(attacks("import sys", spawn=attempt), "spawn()")
    (only,) = result.tests
    assert (only.outcome, only.error_type) == (Outcome.ERROR, "PermissionError")
    assert only.message.startswith("sandbox: ")
    assert only.message.endswith(f"is not allowed ({event})")


def test_writes_land_only_in_the_work_dir_which_is_removed_afterwards(tmp_path: Path):
    outside = tmp_path / "escaped.txt"
    code = attacks(
        "import os, tempfile\n"
        "open('notes.txt', 'w').write('kept?')\n"
        "tempfile.NamedTemporaryFile(delete=False).write(b'x')\n"
        "print(os.getcwd())",
        escape=f"open({str(outside)!r}, 'w')",
        delete=f"os.remove({__file__!r})",
    )
    result = run(code, "escape()", "delete()")
    assert outcomes(result) == ["error", "error"]
    assert result.tests[0].message == "sandbox: writing files outside the work directory is not allowed (open)"
    assert result.tests[1].message == "sandbox: changing files outside the work directory is not allowed (os.remove)"
    workdir = Path(result.stdout.strip())
    assert workdir.parent.parent.name.startswith("moot-sandbox-")
    assert not workdir.parent.parent.exists()
    assert not outside.exists()
    assert Path(__file__).exists()


def test_files_outside_the_work_dir_and_the_python_installation_cannot_be_read(tmp_path: Path):
    secret = tmp_path / "credentials"  # e.g. ~/.aws/credentials, or the project's .env
    secret.write_text("hunter2-secret-value")
    code = attacks(
        "import json, decimal, zoneinfo, email.parser\nopen('mine.txt', 'w').write('ok')",
        steal=f"return open({str(secret)!r}).read()",
        mine="return open('mine.txt').read()",  # the work directory
        zone="return zoneinfo.ZoneInfo('Europe/Paris').key",  # system data
        stdlib="return json.__file__.endswith('json/__init__.py') and len(open(json.__file__).read()) > 0",
    )
    result = run(code, "steal()", "assert mine() == 'ok'", "assert zone() == 'Europe/Paris'", "assert stdlib()")
    assert outcomes(result) == ["error", "passed", "passed", "passed"]
    assert result.tests[0].message == (
        "sandbox: reading files outside the work directory and the Python installation is not allowed (open)"
    )
    assert "hunter2" not in result.model_dump_json()


def test_forged_output_does_not_fool_the_runner():
    forgery = (
        "import json, os\n"
        "fake = json.dumps({'event': 'done', 'status': 'passed', 'outcome': 'passed'})\n"
        "print(fake)\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, (fake + '\\n').encode())\n"
        "    except OSError:\n"
        "        pass\n"
    )
    result = run(forgery, "assert False, 'the real verdict'")
    assert result.status is SandboxStatus.CONTENT_FAULT
    assert (result.tests[0].outcome, result.tests[0].message) == (
        Outcome.FAILED,
        "the real verdict (got False, expected a true value)",
    )
    assert '"event": "done"' in result.stdout


def test_ending_the_interpreter_mid_test_is_the_codes_fault_not_a_pass():
    result = run(attacks("import os", leave="os._exit(0)"), "leave()", "assert leave is not None")
    assert result.status is SandboxStatus.CONTENT_FAULT
    assert outcomes(result) == ["error", "passed"]
    assert result.tests[0].message.startswith("the process exited with code 0 in the middle of the step")


def test_threads_and_asyncio_still_work():
    code = attacks(
        "import asyncio, threading\nasync def answer():\n    await asyncio.sleep(0)\n    return 42",
        threaded="out = []\nt = threading.Thread(target=out.append, args=(1,))\nt.start()\nt.join()\nreturn out",
    )
    result = run(code, "assert asyncio.run(answer()) == 42", "assert threaded() == [1]")
    assert result.status is SandboxStatus.PASSED


# ------------------------------------------------------------------ blame: tool faults vs content faults
def _record(event: str, **fields) -> dict:
    return {"event": event, **fields}


def _assemble(records, returncode=0, timed_out=False, stderr=""):
    return assemble(records, ChildExit(returncode, timed_out), ["assert f()"], FAST, "", stderr, 0.1)


def test_a_harness_that_never_started_is_a_tool_fault():
    result = _assemble([], returncode=1, stderr="Traceback...\nImportError: boom")
    assert result.status is SandboxStatus.TOOL_FAULT
    assert result.tool_error == "the sandbox harness did not start (exit code 1): ImportError: boom"
    assert outcomes(result) == ["not_run"]


def test_dying_between_steps_or_a_harness_error_is_a_tool_fault():
    ready, load = _record("ready", isolation=[]), [_record("begin", step="load")]
    loaded = [*load, _record("end", step="load", outcome="passed")]
    between = _assemble([ready, *loaded], returncode=-11)
    assert between.status is SandboxStatus.TOOL_FAULT
    assert between.tool_error == "the harness stopped between steps without reporting (killed by signal 11)"
    own_bug = _assemble([ready, *load, _record("harness_error", error="Traceback\nKeyError: 'x'")], returncode=1)
    assert (own_bug.status, own_bug.tool_error) == (
        SandboxStatus.TOOL_FAULT,
        "the harness itself failed: KeyError: 'x'",
    )


def test_the_harness_running_out_of_memory_between_steps_blames_the_code():
    loaded = [_record("ready"), _record("begin", step="load"), _record("end", step="load", outcome="passed")]
    result = _assemble(loaded, returncode=MEMORY_EXIT_CODE)
    assert result.status is SandboxStatus.CONTENT_FAULT
    assert (result.tests[0].error_type, result.tests[0].outcome) == ("MemoryError", Outcome.ERROR)


def test_dying_inside_a_step_is_a_content_fault():
    records = [_record("ready"), _record("begin", step="load")]
    result = _assemble(
        [*records, _record("end", step="load", outcome="passed"), _record("begin", step="test", index=0)],
        returncode=-11,
    )
    assert result.status is SandboxStatus.CONTENT_FAULT
    assert result.tests[0].message.startswith("the interpreter crashed with SIGSEGV")


def test_corrupt_or_incomplete_reports_are_tool_faults():
    ready = _record("ready")
    unbegun = _assemble([ready, _record("end", step="load", outcome="passed")])
    assert unbegun.tool_error == "the harness's report is corrupt (end of step ('load', None) that was not begun)"
    loaded = [ready, _record("begin", step="load"), _record("end", step="load", outcome="passed")]
    missing = _assemble([*loaded, _record("done")])
    assert missing.tool_error == "the harness finished without reporting every test"
    bad_outcome = _assemble([ready, _record("begin", step="load"), _record("end", step="load", outcome="great")])
    assert bad_outcome.status is SandboxStatus.TOOL_FAULT


# ------------------------------------------------------------------ inputs
def test_tests_that_are_not_python_are_a_config_error():
    with pytest.raises(ConfigError, match=r"test 2 is not valid Python \(invalid syntax, line 1\): 'asert f\(\)'"):
        run_tests("", ["assert True", "asert f()"])
    with pytest.raises(ConfigError, match="non-empty list of Python snippets"):
        run_tests("", [])


def test_limits_validate_and_round_trip():
    assert SandboxLimits() == SandboxLimits(wall_seconds=10, test_seconds=3, cpu_seconds=5, memory_mb=512)
    assert SandboxLimits.model_validate_json(FAST.model_dump_json()) == FAST
    with pytest.raises(ValidationError, match="memory_mb"):
        SandboxLimits(memory_mb=8)
    with pytest.raises(ValidationError, match="extra_forbidden"):
        SandboxLimits(network=True)


def test_labels_are_what_a_reader_wants_to_see():
    assert label_for("assert f(1) == 2") == "f(1) == 2"
    assert label_for("\nx = f(1)\nassert x == 2\n") == "x = f(1) …"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kernel layers are Linux-only")
def test_kernel_layers_are_reported_where_available():
    result = run("", "assert True")
    assert result.status is SandboxStatus.PASSED
    print("isolation:", result.isolation, "uid:", os.geteuid())  # for the record; availability depends on the kernel
    assert result.isolation[0] == "rlimits" and result.isolation[-1] == "audit-hook"


_PROBE_START = """
import ctypes, errno, importlib.util, json, os, socket, sys
spec = importlib.util.spec_from_file_location("confine", sys.argv[1])
confine = importlib.util.module_from_spec(spec)
spec.loader.exec_module(confine)
def attempt(action):
    try:
        action()
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return "allowed"
"""
"""What a probe program starts with: the confinement module (argv[1]) loaded, and ``attempt`` to name an errno."""

_KERNEL_PROBE = (
    _PROBE_START
    + """
layers = confine._linux_layers(os.getcwd(), {"disk_mb": 8, "memory_mb": 256})  # kernel layers only, no audit hook
def fork():
    if os.fork() == 0:
        os._exit(0)
print(json.dumps({
    "layers": layers,
    "inet_socket": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
    "fork": attempt(fork),
    "write_outside": attempt(lambda: open(sys.argv[2], "w")),
    "write_inside": attempt(lambda: open("inside.txt", "w")),
    "read_outside": attempt(lambda: open(sys.argv[3]).read()),
    "read_stdlib": attempt(lambda: open(os.__file__).read()),
    "read_etc": attempt(lambda: open("/etc/passwd").read()),
    "unix_datagram": attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", sys.argv[4])),
    "socketpair": attempt(lambda: socket.socketpair()[0].close()),
    "memfd": attempt(lambda: os.memfd_create("hoard")),
    "disk": attempt(lambda: open("big", "wb").write(b"x" * 16 * 1024 * 1024)),
}))
"""
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kernel layers are Linux-only")
def test_kernel_layers_hold_even_without_the_audit_hook(tmp_path: Path):
    workdir, outside, secret = tmp_path / "work", tmp_path / "outside.txt", tmp_path / "secret.txt"
    workdir.mkdir()
    secret.write_text("hunter2")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # a host service on a Unix socket
    listener.bind(str(tmp_path / "host.sock"))
    listener.setblocking(False)
    argv = [sys.executable, "-I", "-c", _KERNEL_PROBE, confine_module.__file__, str(outside), str(secret)]
    argv.append(str(tmp_path / "host.sock"))
    with listener:
        child = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.PIPE, text=True)
        out, _ = child.communicate(timeout=60)
        confine_module.remove_task_group(child.pid)
        probe = json.loads(out)
        with pytest.raises(BlockingIOError):
            listener.recv(16)  # nothing arrived
    if not {"seccomp", "landlock"} & set(probe["layers"]):
        pytest.skip(f"no seccomp or landlock on this kernel (layers: {probe['layers']})")
    assert probe["write_inside"] == "allowed"
    if "seccomp" in probe["layers"]:
        assert (probe["inet_socket"], probe["fork"]) == ("EPERM", "EPERM")
        assert (probe["unix_datagram"], probe["memfd"], probe["socketpair"]) == ("EPERM", "EPERM", "allowed")
    if any(layer.startswith("disk-quota") for layer in probe["layers"]):
        assert probe["disk"] == "ENOSPC"
        assert not (workdir / "big").exists()  # written to the quota's tmpfs, gone with the process
    if "landlock" in probe["layers"]:
        # Denied by Landlock, or (as root, run as nobody) not even there: tmp_path lies in a directory closed to
        # other users, which the sandbox covers with an empty read-only tmpfs, the work directory mounted back.
        hidden = confine_module.UNPRIVILEGED in probe["layers"]
        assert probe["write_outside"] == ("EROFS" if hidden else "EACCES")
        assert not outside.exists()
        assert probe["read_outside"] == ("ENOENT" if hidden else "EACCES")
        assert (probe["read_stdlib"], probe["read_etc"]) == ("allowed", "EACCES")


_NOBODY_PROBE = (
    _PROBE_START
    + """
layers = confine._as_nobody(ctypes.CDLL(None, use_errno=True), os.getcwd(), 8)  # no Landlock, no seccomp
def home():
    global listing
    listing = sorted(os.listdir(os.path.expanduser("~root")))
listing = None
def imports():
    import decimal, sqlite3, zoneinfo  # loaded now, from the Python installation (under /root here)
print(json.dumps({
    "layers": layers,
    "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups()],
    "shadow": attempt(lambda: open("/etc/shadow").read()),
    "home": attempt(home),
    "listing": listing,
    "secret": attempt(lambda: open(sys.argv[2]).read()),
    "imports": attempt(imports),
    "write_inside": attempt(lambda: open("inside.txt", "w").write("ok")),
    "regain_root": attempt(lambda: os.setuid(0)),
}))
"""
)


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0, reason="drops root's uid")
def test_as_root_the_code_runs_as_nobody_and_reads_only_what_anyone_may(tmp_path: Path):
    """Without Landlock or seccomp: the uid alone keeps root's files out, and the interpreter still imports."""
    workdir, secret = tmp_path / "work", tmp_path / "secret.txt"
    workdir.mkdir()
    secret.write_text("hunter2")
    secret.chmod(0o600)
    argv = [sys.executable, "-I", "-c", _NOBODY_PROBE, confine_module.__file__, str(secret)]
    out = subprocess.run(argv, cwd=workdir, stdout=subprocess.PIPE, text=True, timeout=60, check=True).stdout
    probe = json.loads(out)
    if confine_module.UNPRIVILEGED not in probe["layers"]:
        pytest.skip(f"root could not switch to nobody here (layers: {probe['layers']})")
    nobody = confine_module.NOBODY
    assert probe["ids"] == [nobody, nobody, nobody, nobody, []]
    assert probe["shadow"] == "EACCES"
    home = Path(os.path.expanduser("~root"))
    needed = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    in_home = sorted({p.relative_to(home).parts[0] for p in needed if p.is_relative_to(home)})
    if probe["home"] == "allowed":  # covered: only the way to the Python installation is there
        assert probe["listing"] == in_home
    else:
        assert probe["home"] == "EACCES"
    assert probe["secret"] in ("EACCES", "ENOENT")
    assert (probe["imports"], probe["write_inside"], probe["regain_root"]) == ("allowed", "allowed", "EPERM")


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0, reason="drops root's uid")
def test_root_that_may_not_change_its_uid_says_so_instead_of_crashing(tmp_path: Path):
    """A trimmed container's root (no CAP_SETUID) keeps its uid: the layer is missing, and the floor refuses."""
    program = (
        _PROBE_START
        + """
def refused(*ids):
    raise PermissionError(1, "Operation not permitted")
os.setresuid = refused
layers = confine._linux_layers(os.getcwd(), {"disk_mb": 8, "memory_mb": 256})
print(json.dumps({"layers": layers, "uid": os.getuid()}))
"""
    )
    argv = [sys.executable, "-I", "-c", program, confine_module.__file__]
    out = subprocess.run(argv, cwd=tmp_path, stdout=subprocess.PIPE, text=True, timeout=60, check=True).stdout
    probe = json.loads(out)
    assert confine_module.UNPRIVILEGED not in probe["layers"] and probe["uid"] == 0
    # It falls back to a user namespace (no capabilities outside it), each layer named once, one quota mounted.
    assert "userns" in probe["layers"] and len(probe["layers"]) == len(set(probe["layers"]))


def test_as_root_code_that_would_keep_roots_uid_is_refused_unless_accepted(monkeypatch):
    """As root, the unprivileged uid is part of the floor: without it the sandbox refuses and says what to do."""
    monkeypatch.setattr("moot.sandbox._sandbox.os.geteuid", lambda: 0)
    monkeypatch.setattr("moot.sandbox._sandbox.UNPRIVILEGED", "uid-a-name-no-process-reports")
    with pytest.raises(ConfigError, match=r"no uid-a-name-no-process-reports .*run moot as a user other than root"):
        run("def f():\n    return 1\n", "assert f() == 1")
    monkeypatch.setattr("moot.sandbox._sandbox.os.geteuid", lambda: 1000)
    assert run("def f():\n    return 1\n", "assert f() == 1").status is SandboxStatus.PASSED


def test_a_machine_that_cannot_confine_the_code_is_refused_unless_accepted(monkeypatch):
    """Below the floor of kernel layers the sandbox refuses, naming what is missing; an explicit opt-in runs."""
    monkeypatch.setattr("moot.sandbox._sandbox.SAFE_FLOOR", ("seccomp", "a-layer-this-kernel-lacks"))
    with pytest.raises(ConfigError, match=r"cannot confine untrusted code: no a-layer-this-kernel-lacks \(layers"):
        run("def f():\n    return 1\n", "assert f() == 1")
    accepted = run(
        "def f():\n    return 1\n", "assert f() == 1", limits=FAST.model_copy(update={"weak_isolation": True})
    )
    assert accepted.status is SandboxStatus.PASSED


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux permission bits")
def test_what_nobody_can_reach_is_judged_from_every_directory_on_the_way():
    """Without a mount namespace the switch to nobody happens only where every needed tree is open to others."""
    base = Path(tempfile.mkdtemp(prefix="moot-reach-"))
    try:
        open_tree, closed = base / "open" / "lib", base / "closed"
        open_tree.mkdir(parents=True)
        (closed / "python").mkdir(parents=True)
        for path, mode in ((base, 0o755), (base / "open", 0o755), (open_tree, 0o755), (closed, 0o700)):
            path.chmod(mode)
        (closed / "python").chmod(0o755)
        assert confine_module._closed_ancestor(str(open_tree)) is None
        assert confine_module._closed_ancestor(str(closed / "python")) == str(closed)
        reach = confine_module._reachable_by_nobody
        assert reach(None, [str(open_tree)], can_mount=False)
        assert not reach(None, [str(open_tree), str(closed / "python")], can_mount=False)
        assert not reach(None, [str(closed)], can_mount=True)  # closed itself: nothing to mount back
    finally:
        shutil.rmtree(base)


def test_the_sandbox_root_is_enterable_and_each_work_directory_private(monkeypatch):
    modes: dict[str, int] = {}
    started = sandbox_module._Process.__init__

    def recording(self, name, place, setup, limits):
        started(self, name, place, setup, limits)
        modes.update({"root": os.stat(place.root).st_mode & 0o777, name: os.stat(self.workdir).st_mode & 0o777})

    monkeypatch.setattr(sandbox_module._Process, "__init__", recording)
    assert run("def f():\n    return 1\n", "assert f() == 1").status is SandboxStatus.PASSED
    assert modes == {"root": 0o711, "code": 0o700, "tester": 0o700}


def test_a_wall_clock_overrun_between_tests_is_the_sandboxs_only_when_its_own_time_overran():
    """The tester's own time (start-up, between steps) is the only time the code cannot stretch: within its budget,
    an overrun opens the next test (a timeout, the code's); past it, the reports stand (a tool fault)."""
    from moot.sandbox import _sandbox

    own = _sandbox._OwnTime(SandboxLimits(wall_seconds=4), tests=2)
    first = [{"event": "begin", "step": "test", "index": 0}, {"event": "end", "step": "test", "index": 0}]
    for event in ("begin", "end"):
        own.note(event)
    assert _sandbox._at_wall(first, own)[-1] == {"event": "begin", "step": "test", "index": 1}
    both = [*first, {"event": "begin", "step": "test", "index": 1}, {"event": "end", "step": "test", "index": 1}]
    assert _sandbox._at_wall(both, own)[-1] == {"event": "done"}  # every verdict is in
    assert _sandbox._at_wall(first[:1], own) == first[:1]  # inside a step: already the code's
    own.spent = own.budget + 0.1
    assert _sandbox._at_wall(first, own) == first  # the tester itself overran: stays a tool fault
    assert own.budget == 1.0  # a quarter of a 4 s wall clock, at most 2 s
