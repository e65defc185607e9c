"""IdentityCache: entries live exactly as long as their object."""

from __future__ import annotations

import gc

import numpy as np

from cuzk.identity_cache import IdentityCache


def test_entry_follows_its_object() -> None:
    cache: IdentityCache[str] = IdentityCache()
    a, b = np.zeros(3), np.zeros(3)
    cache.put(a, "a")
    assert cache.get(a) == "a" and cache.get(b) is None and len(cache) == 1
    del a
    gc.collect()
    assert len(cache) == 0 and cache.get(b) is None


def test_a_new_object_at_a_reused_id_sees_no_entry() -> None:
    cache: IdentityCache[int] = IdentityCache()
    for i in range(50):  # ids are reused quickly; a stale entry must never answer
        x = np.empty(4)
        assert cache.get(x) is None
        cache.put(x, i)
        assert cache.get(x) == i
        del x


def test_pop_and_objects_without_weak_references() -> None:
    cache: IdentityCache[str] = IdentityCache()
    key = (1, 2)  # tuples cannot be weakly referenced: held strongly until popped
    cache.put(key, "t")
    assert cache.get(key) == "t" and key in cache
    assert cache.pop(key) == "t" and cache.pop(key) is None and key not in cache
