"""System-prompt states kept on disk: longest-prefix lookup across instances, atomic files, LRU under a cap."""

from __future__ import annotations

import hashlib
import os

import numpy as np

from moot.embedded._disk_states import DiskStates


def test_a_state_written_by_one_process_is_found_by_the_next(tmp_path):
    DiskStates(tmp_path, 1 << 20).put([1, 2, 3, 4], b"rules")
    later = DiskStates(tmp_path, 1 << 20)  # a new process: nothing in memory
    found = later.best([1, 2, 3, 4, 9, 9])
    assert found is not None
    tokens, data, shared = found
    assert (tokens.tolist(), data, shared) == ([1, 2, 3, 4], b"rules", 4)
    key = hashlib.sha256(np.asarray([1, 2, 3, 4], dtype=np.int32).tobytes()).hexdigest()[:32]
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"{key}.kv", f"{key}.tokens"]  # the folder's layout


def test_the_longest_shared_prefix_wins_and_must_beat_the_live_context(tmp_path):
    disk = DiskStates(tmp_path, 1 << 20)
    disk.put([1, 2, 3, 10], b"critic")
    disk.put([1, 2, 3, 20, 21], b"arbiter")
    assert disk.best([1, 2, 3, 20, 21, 5])[1:] == (b"arbiter", 5)
    assert disk.best([1, 2, 3, 20, 21, 5], better_than=5) is None
    assert disk.best([7, 8]) is None


def test_least_recently_used_entries_go_first_beyond_the_cap(tmp_path):
    state = b"x" * 1000
    disk = DiskStates(tmp_path, 2 * (1000 + 4 * 4) + 10)  # room for two entries
    disk.put([1, 1, 1, 1], state)
    disk.put([2, 2, 2, 2], state)
    for age, path in enumerate(sorted(tmp_path.glob("*.kv"))):
        os.utime(path, (1000 + age, 1000 + age))  # both used long ago
    assert disk.best([1, 1, 1, 1, 5]) is not None  # a use makes [1, 1, 1, 1] the newest
    disk.put([3, 3, 3, 3], state)
    remaining = {tuple(e.tokens.tolist()) for e in DiskStates(tmp_path, 1 << 20)._entries().values()}
    assert remaining == {(1, 1, 1, 1), (3, 3, 3, 3)}
    assert disk.nbytes <= disk.capacity_bytes


def test_a_state_larger_than_the_cap_or_an_unwritable_folder_is_not_kept(tmp_path):
    assert DiskStates(tmp_path, 100).put([1, 2], b"y" * 200) is False
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert DiskStates(blocker / "states", 1 << 20).put([1, 2], b"y") is False


def test_half_written_or_vanished_files_are_misses_not_errors(tmp_path):
    disk = DiskStates(tmp_path, 1 << 20)
    disk.put([1, 2, 3], b"kept")
    (tmp_path / ".abc.partial").write_bytes(b"torn")  # a writer killed mid-write leaves only this
    next(tmp_path.glob("*.kv")).unlink()  # another process evicted the data
    later = DiskStates(tmp_path, 1 << 20)
    assert later.best([1, 2, 3, 4]) is None
    assert disk.best([1, 2, 3, 4]) is None and not disk._entries()
    assert not list(tmp_path.glob("*.tokens"))


def test_clear_removes_every_entry(tmp_path):
    disk = DiskStates(tmp_path, 1 << 20)
    disk.put(np.array([1, 2], dtype=np.int32), b"a")
    disk.clear()
    assert DiskStates(tmp_path, 1 << 20).best([1, 2]) is None


def test_only_regular_files_filed_under_their_own_digest_are_read(tmp_path):
    disk = DiskStates(tmp_path, 1 << 20)
    disk.put([1, 2, 3], b"rules")
    (key,) = [p.stem for p in tmp_path.glob("*.tokens")]
    forged = "0" * 32  # a pair claiming a prompt it does not hold
    (tmp_path / f"{forged}.tokens").write_bytes(np.asarray([5, 6, 7], dtype=np.int32).tobytes())
    (tmp_path / f"{forged}.kv").write_bytes(b"forged")
    linked = hashlib.sha256(np.asarray([8, 9], dtype=np.int32).tobytes()).hexdigest()[:32]
    (tmp_path / f"{linked}.tokens").write_bytes(np.asarray([8, 9], dtype=np.int32).tobytes())
    (tmp_path / f"{linked}.kv").symlink_to("/dev/zero")  # reading it would never end
    later = DiskStates(tmp_path, 1 << 20)
    assert later.best([5, 6, 7, 1]) is None and later.best([8, 9, 1]) is None
    assert later.best([1, 2, 3, 4])[1] == b"rules" and list(later._entries()) == [key]
