"""How the embedded model runs: grammar backend, prompt-state cache, threads, machine lock.

Each setting can be switched by an environment variable so that one benchmark
(or one user chasing a regression) can run the old and the new paths side by
side; :meth:`EngineSettings.legacy` is exactly what moot did before them.

    MOOT_LOCAL_GRAMMAR          llguidance (default) | llama
    MOOT_LOCAL_STATE_CACHE_MB   byte cap of the prompt-state cache; 0 turns it off (default 384)
    MOOT_LOCAL_DISK_STATES_MB   byte cap of the system-prompt states kept on disk for later processes;
                                0 turns them off (default 256)
    MOOT_LOCAL_LOOKAHEAD        1 (default): take grammar-forced tokens in one batch, and guess tokens copied
                                from the prompt where this machine's batch costs make it pay; 0: one token per step
    MOOT_LOCAL_BATCH_COSTS      what a batch of n tokens costs against one step, the table lookahead guesses by:
                                SIZE=RATIO pairs (``3=1.5,9=3``), or ``measured`` to time batches as the decoder
                                runs (faster where batches are cheap, but greedy replies then follow the machine's
                                load); default: the table measured on the machine kind moot is built on
    MOOT_LOCAL_THREADS          decode threads (default: the physical cores this process may use)
    MOOT_LOCAL_MACHINE_LOCK     1 (default): one embedded-model call at a time on this machine; 0: off
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from moot.errors import ConfigError

__all__ = [
    "DEFAULT_BATCH_COSTS",
    "GRAMMARS",
    "BatchTable",
    "EngineSettings",
    "format_batch_costs",
    "parse_batch_costs",
    "physical_cores",
]

Grammar = Literal["llguidance", "llama"]
GRAMMARS: tuple[str, ...] = ("llguidance", "llama")
DEFAULT_STATE_CACHE_MB = 384
DEFAULT_DISK_STATES_MB = 256
BatchTable = tuple[tuple[int, float], ...]
DEFAULT_BATCH_COSTS: BatchTable = ((2, 1.7), (3, 2.1), (4, 2.4), (5, 3.2), (7, 3.7), (9, 4.7), (13, 5.7))
"""A batch's cost against one step, by size, as ``python -m bench.batch_costs`` measured it on the machine kind
moot is built on (2-core AMD EPYC, 2026-12-04; bench/results/batch_costs.json); sizes between are interpolated,
larger ones extend the last slope."""


@dataclass(frozen=True)
class EngineSettings:
    """The knobs of one embedded-model engine (see the module docstring for the variables)."""

    grammar: Grammar = "llguidance"
    """llguidance computes the token mask in microseconds; llama.cpp's own grammar checks every
    candidate of the 151k vocabulary at every step and halves generation speed."""
    state_cache_bytes: int = DEFAULT_STATE_CACHE_MB << 20
    """Cap on the KV states kept for prompt reuse across roles (LRU); 0 keeps only the live one."""
    disk_state_bytes: int = DEFAULT_DISK_STATES_MB << 20
    """Cap on the system-prompt states kept on disk for reuse across processes (LRU); 0 keeps none."""
    lookahead: bool = True
    """Take the grammar's forced tokens in one batch; guess tokens copied from the prompt where that pays."""
    batch_costs: BatchTable | None = DEFAULT_BATCH_COSTS
    """The fixed table lookahead decides its guesses by, so that a reply depends on its prompt alone (see
    ``_lookahead``); None times batches as the decoder runs instead."""
    threads: int | None = None
    """Decode threads; None means the physical cores: llama.cpp threads spin, SMT siblings only contend."""
    machine_lock: bool = True
    """Take a machine-wide lock around each call, so two processes take turns instead of thrashing."""

    @classmethod
    def from_env(cls) -> EngineSettings:
        """The defaults, overridden by the MOOT_LOCAL_* variables; a bad value is a one-line ConfigError."""
        settings = cls()
        grammar = os.environ.get("MOOT_LOCAL_GRAMMAR")
        if grammar is not None:
            if grammar not in GRAMMARS:
                raise ConfigError(f"MOOT_LOCAL_GRAMMAR={grammar!r} is not valid; valid: {', '.join(GRAMMARS)}")
            settings = replace(settings, grammar=grammar)  # type: ignore[arg-type]
        megabytes = _int_env("MOOT_LOCAL_STATE_CACHE_MB", minimum=0)
        if megabytes is not None:
            settings = replace(settings, state_cache_bytes=megabytes << 20)
        disk = _int_env("MOOT_LOCAL_DISK_STATES_MB", minimum=0)
        if disk is not None:
            settings = replace(settings, disk_state_bytes=disk << 20)
        costs = os.environ.get("MOOT_LOCAL_BATCH_COSTS")
        if costs is not None:
            settings = replace(settings, batch_costs=parse_batch_costs(costs))
        threads = _int_env("MOOT_LOCAL_THREADS", minimum=1)
        if threads is not None:
            settings = replace(settings, threads=threads)
        for name, field in (("MOOT_LOCAL_MACHINE_LOCK", "machine_lock"), ("MOOT_LOCAL_LOOKAHEAD", "lookahead")):
            switch = os.environ.get(name)
            if switch is not None:
                if switch not in ("0", "1"):
                    raise ConfigError(f"{name}={switch!r} is not valid; valid: 0 or 1")
                settings = replace(settings, **{field: switch == "1"})
        return settings

    @classmethod
    def legacy(cls) -> EngineSettings:
        """What moot did before: llama.cpp's grammar, no state caches, one token per step, min(4, CPUs) threads."""
        return cls(
            grammar="llama",
            state_cache_bytes=0,
            disk_state_bytes=0,
            lookahead=False,
            threads=max(1, min(4, os.cpu_count() or 1)),
        )

    def to_env(self) -> dict[str, str]:
        """The MOOT_LOCAL_* variables that make ``from_env`` return these settings (for a child process)."""
        env = {
            "MOOT_LOCAL_GRAMMAR": self.grammar,
            "MOOT_LOCAL_STATE_CACHE_MB": str(self.state_cache_bytes >> 20),
            "MOOT_LOCAL_DISK_STATES_MB": str(self.disk_state_bytes >> 20),
            "MOOT_LOCAL_LOOKAHEAD": str(int(self.lookahead)),
            "MOOT_LOCAL_MACHINE_LOCK": str(int(self.machine_lock)),
            "MOOT_LOCAL_BATCH_COSTS": format_batch_costs(self.batch_costs),
        }
        if self.threads is not None:
            env["MOOT_LOCAL_THREADS"] = str(self.threads)
        return env

    @property
    def effective_threads(self) -> int:
        return self.threads or physical_cores()


def parse_batch_costs(text: str) -> BatchTable | None:
    """``MOOT_LOCAL_BATCH_COSTS``: ``measured``, or SIZE=RATIO pairs (sizes 2 or more, ratios 1 or more)."""
    if text.strip() == "measured":
        return None
    table: dict[int, float] = {}
    for pair in text.split(","):
        size, _, ratio = pair.partition("=")
        try:
            n, r = int(size), float(ratio)
        except ValueError:
            n, r = 0, 0.0
        if n < 2 or not 1.0 <= r < 1000 or n in table:
            raise ConfigError(
                f"MOOT_LOCAL_BATCH_COSTS={text!r} is not valid; valid: 'measured', or SIZE=RATIO pairs with distinct "
                "sizes of 2 or more and ratios of 1 or more, e.g. '3=1.5,9=3'"
            )
        table[n] = r
    return tuple(sorted(table.items()))


def format_batch_costs(table: BatchTable | None) -> str:
    """The ``MOOT_LOCAL_BATCH_COSTS`` value of ``table`` (``parse_batch_costs`` reads it back)."""
    return "measured" if table is None else ",".join(f"{size}={ratio:g}" for size, ratio in table)


def _int_env(name: str, minimum: int) -> int | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ConfigError(f"{name}={raw!r} is not valid; valid: an integer >= {minimum}")
    return value


def physical_cores(sysfs: Path = Path("/sys/devices/system/cpu")) -> int:
    """Physical cores among the CPUs this process may run on (SMT siblings counted once).

    Falls back to the number of usable logical CPUs where the topology is not
    readable (not Linux, or a container hiding sysfs).
    """
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    cores = set()
    for cpu in usable:
        topology = sysfs / f"cpu{cpu}" / "topology"
        try:
            cores.add(
                ((topology / "physical_package_id").read_text().strip(), (topology / "core_id").read_text().strip())
            )
        except OSError:
            return max(1, len(usable))
    return max(1, len(cores))
