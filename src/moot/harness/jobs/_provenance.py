"""Where a result row came from: the code (moot's version and git commit), the machine, and the model.

A comparison's rows are computed over hours or days, across sessions and
code changes; a report that mixes rows from different code must say so, so
each row records the commit it was produced at and the machine it ran on,
and the report names the model by what identifies its weights or endpoint.
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path

from moot.embedded import local_model_identity
from moot.models import ModelSpec

__all__ = [
    "UNKNOWN_MODEL",
    "answered_by",
    "code_version",
    "machine",
    "model_identity",
    "models_answering",
    "moot_version",
]

_TRACKED = ("src", "pyproject.toml", "roles", "teams", "arbiters", "scenarios")
"""What a row's answer depends on: moot's code and the catalog, not the results files beside them."""


def moot_version() -> str:
    try:
        return metadata.version("moot")
    except metadata.PackageNotFoundError:
        return "unknown"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@cache
def code_version() -> str:
    """The git commit moot runs from (short hash, ``+dirty`` when its code differs from the commit), or
    ``moot==VERSION`` when it is installed from a wheel, outside any checkout."""
    package = Path(__file__).resolve().parents[2]
    root = _git(package, "rev-parse", "--show-toplevel")
    head = _git(package, "rev-parse", "--short=10", "HEAD") if root else None
    if root is None or head is None or not (Path(root) / "src" / "moot").resolve() == package:
        return f"moot=={moot_version()}"
    changed = _git(Path(root), "status", "--porcelain", "--untracked-files=no", "--", *_TRACKED)
    return f"{head}+dirty" if changed else head


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


@cache
def machine() -> str:
    """The CPU model and the cores this process may use, e.g. ``AMD EPYC 7B13, 2 cores, Linux x86_64``."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{_cpu_model()}, {cores} cores, {platform.system()} {platform.machine()}"


def model_identity(spec: ModelSpec) -> str:
    """What identifies a model's behaviour: the embedded weights' hash, or the endpoint and model name (for a
    client component, its label, whose digest covers its whole config, and the endpoint its config names)."""
    provider = spec.effective_provider
    if provider == "local":
        return local_model_identity()
    if spec.component is not None:
        return f"{spec} at {spec.endpoint}"
    where = spec.base_url or "the provider's default endpoint"
    return f"{provider} {spec.model or 'default model'} at {where}"


UNKNOWN_MODEL = "unknown (row from before the model was recorded)"


def answered_by(identity: Mapping[str, str] | None) -> str:
    """A row's ``model_identity`` as one line: the base model's identity, then any role given its own model
    (``...; judge: openai gpt-4o-mini at ...``); :data:`UNKNOWN_MODEL` for a row that did not record it."""
    if not identity:
        return UNKNOWN_MODEL
    base = identity.get("base")
    others = "; ".join(f"{role}: {text}" for role, text in identity.items() if role != "base")
    return "; ".join(part for part in (base, others) if part)


def models_answering(identities: Iterable[Mapping[str, str] | None]) -> dict[str, int]:
    """Rows per model that answered them (:func:`answered_by` of each row's ``model_identity``), most rows first:
    what a report's provenance prints, read from the rows rather than from the code that builds the report."""
    counted: dict[str, int] = {}
    for identity in identities:
        line = answered_by(identity)
        counted[line] = counted.get(line, 0) + 1
    return dict(sorted(counted.items(), key=lambda kv: -kv[1]))
