"""The llama-cpp-python adapter: one supported version, and what it does the way llama-cpp-python itself does it.

No model is loaded: the batch is compared field by field with the one ``Llama``
builds, on a stand-in context whose decode records what it is given.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import json
import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from moot.errors import ConfigError

ADAPTER = "moot.embedded._llama_cpp"
ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"


def pinned_version() -> str:
    local = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["local"]
    return next(re.fullmatch(r"llama-cpp-python==(.+)", pin)[1] for pin in local if pin.startswith("llama-cpp-python"))


def test_another_llama_cpp_python_is_refused_in_one_line_naming_both_versions(monkeypatch):
    installed = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata,
        "version",
        lambda name: "0.2.90" if name == "llama-cpp-python" else installed(name),
    )
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # the check comes first: llama_cpp is never imported
    with pytest.raises(ConfigError) as refused:
        importlib.import_module(ADAPTER)
    message = str(refused.value)
    assert "\n" not in message
    assert f"llama-cpp-python {pinned_version()} only, but 0.2.90 is installed" in message
    assert f"pip install 'llama-cpp-python=={pinned_version()}'" in message


def test_the_install_check_refuses_another_version_before_anything_loads(monkeypatch):
    from moot.models import ModelSpec

    installed = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda name: "0.4.0" if name == "llama-cpp-python" else installed(name)
    )
    monkeypatch.delitem(sys.modules, ADAPTER, raising=False)
    with pytest.raises(ConfigError, match=r"supports llama-cpp-python .* only, but 0\.4\.0 is installed"):
        ModelSpec.parse("local").check()


def test_the_supported_version_is_the_pinned_one():
    adapter = pytest.importorskip(ADAPTER)
    assert adapter.SUPPORTED_VERSION == pinned_version() == adapter.LLAMA_CPP_VERSION


class StandInLlama:
    n_batch = 512
    n_tokens = 5
    ctx = None

    def __init__(self) -> None:
        self.input_ids = np.zeros(64, dtype=np.intc)


def test_a_decoded_batch_is_the_one_llama_builds(monkeypatch):
    """Same tokens, positions, sequence and logits flags as ``LlamaBatch.set_batch``, what the engine used before."""
    adapter = pytest.importorskip(ADAPTER)
    from llama_cpp import _internals

    decoded: list[list[tuple[int, ...]]] = []

    def record(context, batch) -> int:
        decoded.append([_cells(batch, i) for i in range(batch.n_tokens)])
        return 0

    monkeypatch.setattr(adapter.native, "llama_decode", record)
    model = adapter.LoadedModel.__new__(adapter.LoadedModel)  # a context without a model: decode is stood in
    model.llama = StandInLlama()
    model._batch = adapter.native.llama_batch_init(StandInLlama.n_batch, 0, 1)
    for logits_all in (False, True):
        for tokens in ([7], [1, 2, 3]):
            assert model.decode(tokens, logits_all=logits_all) == 5
            reference = _internals.LlamaBatch(n_tokens=512, embd=0, n_seq_max=8, verbose=False)
            reference.set_batch(tokens, n_past=5, logits_all=logits_all)
            assert decoded[-1] == [_cells(reference.batch, i) for i in range(len(tokens))]
            assert model.llama.input_ids[5 : 5 + len(tokens)].tolist() == tokens
    with pytest.raises(ValueError, match="a batch holds 1 to 512 tokens"):
        model.decode([], logits_all=False)


def _cells(batch, i: int) -> tuple[int, ...]:
    return (batch.token[i], batch.pos[i], batch.seq_id[i][0], batch.n_seq_id[i], batch.logits[i])


def test_a_json_grammar_is_the_one_llama_grammar_holds():
    adapter = pytest.importorskip(ADAPTER)
    from llama_cpp import LlamaGrammar

    schema = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}}, "required": ["a"]}
    held = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    assert adapter.json_grammar(schema) == held._grammar


def test_only_the_adapter_imports_llama_cpp_python():
    """So the version check comes first, and nothing else depends on how llama-cpp-python is laid out."""
    importers = set()
    for path in (ROOT / "src" / "moot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                modules = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            if any(module.split(".")[0] == "llama_cpp" or module == "llguidance.llamacpp" for module in modules):
                importers.add(path.relative_to(ROOT / "src").as_posix())
    assert importers == {"moot/embedded/_llama_cpp.py"}
