"""llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``) on the embedded model's weights.

One owner for every process that serves the embedded model: the concurrency benchmark and the served-model
test (``tests/integration/test_served_model.py``) start it here. It needs the ``[local]`` extra and the
server's own packages (in the ``test`` and ``bench`` extras).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from moot.embedded import EngineSettings, model_path

SERVED_SPEC = "openai:qwen@0.2?base_url={base}&response_format=json_object_schema"
"""The model spec for the server at ``base``: the embedded model's default temperature, and the reply schema in
the form llama-cpp-python's server takes (inside JSON mode; it refuses OpenAI's ``json_schema``)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def llama_server(log: Path | None = None) -> Iterator[str]:
    """Start the server on loopback, wait until it answers, stop it afterwards; its output goes to ``log``."""
    from moot.embedded import CONTEXT_TOKENS  # needs llama_cpp, as the server does

    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()), "--host", "127.0.0.1"]
    threads = str(EngineSettings.from_env().effective_threads)  # as the embedded engine would run here
    command += ["--port", str(port), "--n_ctx", str(CONTEXT_TOKENS), "--n_threads", threads]
    command += ["--n_threads_batch", threads, "--model_alias", "qwen"]
    with contextlib.ExitStack() as stack:
        output = stack.enter_context(log.open("wb")) if log is not None else subprocess.DEVNULL
        proc = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}/v1"
        try:
            _wait_until_it_answers(proc, base)
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _wait_until_it_answers(proc: subprocess.Popen[bytes], base: str) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{base}/models", timeout=2).read()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("llama_cpp.server did not start") from None
            time.sleep(0.5)
