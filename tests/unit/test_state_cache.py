"""The prompt-state cache: longest-prefix lookup, LRU under a byte cap, no redundant prefixes."""

from __future__ import annotations

import numpy as np

from moot.embedded._state_cache import PrefixStateCache, common_prefix


def test_common_prefix_counts_equal_leading_tokens():
    a = np.array([1, 2, 3, 4], dtype=np.int32)
    assert common_prefix(a, np.array([1, 2, 9], dtype=np.int32)) == 2
    assert common_prefix(a, a[:3]) == 3
    assert common_prefix(a, np.array([7], dtype=np.int32)) == 0
    assert common_prefix(a, np.array([], dtype=np.int32)) == 0


def test_best_is_the_state_sharing_the_longest_prefix():
    cache = PrefixStateCache(capacity_bytes=1 << 20)
    cache.put([1, 2, 3, 10, 11], b"critic")
    cache.put([1, 2, 3, 20, 21, 22], b"generator")
    found = cache.best([1, 2, 3, 20, 21, 99])
    assert found is not None
    state, shared = found
    assert state.data == b"generator" and shared == 5
    assert cache.best([5, 6]) is None  # nothing in common


def test_best_only_answers_when_it_beats_the_live_context():
    cache = PrefixStateCache(capacity_bytes=1 << 20)
    cache.put([1, 2, 3, 4], b"x")
    assert cache.best([1, 2, 3, 9], better_than=3) is None
    assert cache.best([1, 2, 3, 4, 5], better_than=3) is not None


def test_a_state_that_is_a_prefix_of_a_new_one_is_dropped():
    cache = PrefixStateCache(capacity_bytes=1 << 20)
    cache.put([1, 2], b"short")
    cache.put([1, 2, 3, 4], b"long")
    assert len(cache) == 1
    state, shared = cache.best([1, 2, 7])  # the longer state serves the shorter prefix
    assert state.data == b"long" and shared == 2


def test_least_recently_used_states_go_first_when_over_the_cap():
    item = 100 + 3 * 4  # data plus three int32 tokens
    cache = PrefixStateCache(capacity_bytes=2 * item)
    cache.put([1, 1, 1], b"a" * 100)
    cache.put([2, 2, 2], b"b" * 100)
    cache.best([1, 1, 1])  # touch a: b is now the oldest
    cache.put([3, 3, 3], b"c" * 100)
    assert {s.data[:1] for s in (cache.best([1, 1, 1])[0], cache.best([3, 3, 3])[0])} == {b"a", b"c"}
    assert cache.best([2, 2, 2]) is None
    assert cache.nbytes == 2 * item <= cache.capacity_bytes


def test_a_state_larger_than_the_cap_is_not_kept():
    cache = PrefixStateCache(capacity_bytes=64)
    assert cache.put([1, 2, 3], b"x" * 1000) is False
    assert len(cache) == 0 and cache.nbytes == 0


def test_storing_the_same_tokens_again_replaces_the_state():
    cache = PrefixStateCache(capacity_bytes=1 << 20)
    cache.put([4, 5], b"old")
    cache.put([4, 5], b"newer")
    assert len(cache) == 1 and cache.best([4, 5])[0].data == b"newer"
    assert cache.nbytes == len(b"newer") + 8
