"""``moot compare --compact``: a results folder an earlier moot wrote, folded into the compact form, checked first.

Earlier moots kept a folder's evidence as thousands of files: one JSONL trace per run under ``OUT/traces/`` and one
cache sub-folder per model spec under ``OUT/cache/`` (``<spec>/calls.sqlite3``, or diskcache's ``<spec>/cache.db``).
Such a folder is still read as it is (a spec's sub-folder is copied into the one cache file when first opened; new
traces go to the one trace file). Compacting makes it light for good:

* every cache sub-folder's entries are copied into ``cache/calls.sqlite3`` under its spec, and each is read back
  and compared with the sub-folder's before the sub-folder is deleted;
* every run's trace in ``traces/`` not yet in ``traces.jsonl.xz`` is appended to it (one stream, name order), read
  back and compared event by event before the JSONL file is deleted.

A mismatch deletes nothing and is refused in one line. Compacting again does nothing: a copy cut short by a kill is
completed (entries already copied are kept, traces already appended are not appended twice).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from moot.errors import ConfigError
from moot.harness.jobs._call_store import CALLS_FILE, CallFile, old_entries
from moot.harness.jobs._call_values import dump_value
from moot.harness.jobs._legacy_cache import LEGACY_FILE, legacy_entries
from moot.tracing import TRACES_FILE, JsonlSink, TraceArchive, TraceEvent

__all__ = ["Compacted", "compact_folder"]

log = logging.getLogger(__name__)


@dataclass
class Compacted:
    """What compacting a folder moved: spec sub-folders into the cache file, run traces into the trace file."""

    specs: int = 0
    entries: int = 0
    """Calls, and each spec's kept ``model_info``."""
    traces: int = 0


def compact_folder(out: Path, cache_dir: Path) -> Compacted:
    """Fold ``out``'s per-run traces and ``cache_dir``'s per-spec sub-folders into one file each; see the module
    docstring. ConfigError, one line, when a copy does not read back as the original (nothing is deleted then)."""
    done = Compacted()
    _compact_cache(cache_dir, done)
    _compact_traces(out / "traces", TraceArchive(out / TRACES_FILE), done)
    if done.specs or done.traces:
        log.info(
            "compacted %s: %d cache sub-folders (%d entries), %d traces", out, done.specs, done.entries, done.traces
        )
    return done


def _old_spec_folders(cache_dir: Path) -> list[Path]:
    """The sub-folders an earlier moot kept a spec's calls in (real folders only: a symlink is not followed)."""
    if not cache_dir.is_dir():
        return []
    return sorted(
        p
        for p in cache_dir.iterdir()
        if p.is_dir() and not p.is_symlink() and ((p / CALLS_FILE).is_file() or (p / LEGACY_FILE).is_file())
    )


def _compact_cache(cache_dir: Path, done: Compacted) -> None:
    folders = _old_spec_folders(cache_dir)
    if not folders:
        return
    calls = CallFile(cache_dir)
    try:
        for folder in folders:
            done.entries += _check_copied(calls, folder)
    finally:
        calls.close()
    for folder in folders:
        shutil.rmtree(folder)
    done.specs += len(folders)


def _check_copied(calls: CallFile, folder: Path) -> int:
    """Copy ``folder``'s entries (if its spec has none yet) and check each reads back as it was; how many."""
    store = calls.store(folder.name)
    if (folder / CALLS_FILE).is_file():
        old = dict(old_entries(folder / CALLS_FILE))
    else:
        old = {key: dump_value(value) for key, value in legacy_entries(folder)[0]}
    kept = store.texts()
    differ = [key for key, text in old.items() if kept.get(key) != text]
    if differ:
        raise ConfigError(
            f"compacting {folder}: {len(differ)} of its {len(old)} entries did not copy into {store.path} as they "
            f"were (the first: {differ[0][:16]}); nothing was deleted"
        )
    return len(old)


def _compact_traces(directory: Path, archive: TraceArchive, done: Compacted) -> None:
    if directory.is_symlink():  # (its files are elsewhere: not this folder's to delete)
        return
    files = sorted(p for p in directory.glob("*.jsonl") if p.is_file() and not p.is_symlink())
    if not files:
        return
    held = {event.trace_id for event in archive.scan().events}
    archive.append({p.name: p.read_text(encoding="utf-8") for p in files if p.stem not in held})
    copied = _by_trace(archive)
    old = JsonlSink(directory)
    for path in files:
        if copied.get(path.stem, []) != old.read(path.stem):
            raise ConfigError(
                f"compacting {directory}: trace {path.stem} did not copy into {archive.path} as it was; "
                "nothing was deleted"
            )
    for path in files:
        path.unlink()
    done.traces += len(files)
    if not any(directory.iterdir()):
        directory.rmdir()


def _by_trace(archive: TraceArchive) -> dict[str, list[TraceEvent]]:
    """The archive's events, by the run they belong to."""
    runs: dict[str, list[TraceEvent]] = {}
    for event in archive.scan().events:
        runs.setdefault(event.trace_id, []).append(event)
    return runs
