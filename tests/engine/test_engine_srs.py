"""SRS manager: tiers, the HOT budget with LRU demotion, reference counts that block eviction,
key-cache paths loaded memory-mapped (WARM) then made resident (HOT)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from cuzk.curves import BLS12_381
from cuzk.engine.srs import KeyTier, SrsManager
from cuzk.formats.cache import save_key_cache
from cuzk.model.keys import ProvingKey, VerifyingKey


def _key(n: int) -> ProvingKey:
    """A key-shaped object of n variables with random limbs (the manager never does math)."""
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    L = BLS12_381.limbs

    def g1(k: int) -> np.ndarray:
        return rng.integers(0, 2**63, size=(k, 2, L), dtype=np.uint64)

    def g2(k: int) -> np.ndarray:
        return rng.integers(0, 2**63, size=(k, 2, 2, L), dtype=np.uint64)

    vk = VerifyingKey(BLS12_381, g1(1)[0], g2(1)[0], g2(1)[0], g2(1)[0], g1(2))
    return ProvingKey(BLS12_381, n, 1, 8, g1(1)[0], g1(1)[0], g2(1)[0], g1(1)[0], g2(1)[0],
                      g1(n), g1(n), g2(n), g1(n - 2), g1(8), "snarkjs", vk)


def test_budget_demotes_lru_idle_keys_never_used_ones() -> None:
    keys = {f"k{i}": _key(64) for i in range(3)}
    size = keys["k0"].nbytes()
    loads: list[str] = []

    def loader_for(cid: str):  # a COLD source: a loader callable
        def load() -> ProvingKey:
            loads.append(cid)
            return keys[cid]
        return load

    m = SrsManager(budget_bytes=2 * size)
    for cid in keys:
        m.register(cid, loader_for(cid))
        assert m.tier(cid) == KeyTier.COLD
    pk0, _ = m.acquire("k0")
    assert pk0 is keys["k0"] and m.tier("k0") == KeyTier.HOT
    m.acquire("k1")
    m.release("k1")
    assert m.hot_bytes() == 2 * size
    # k0 in use, k1 idle: loading k2 must demote k1 (not k0) to stay within budget.
    m.acquire("k2")
    assert m.tier("k0") == KeyTier.HOT and m.tier("k1") == KeyTier.WARM
    assert m.tier("k2") == KeyTier.HOT and m.hot_bytes() == 2 * size and not m.over_budget
    assert not m.evict("k0") and m.tier("k0") == KeyTier.HOT  # in use
    m.release("k0")
    assert m.evict("k0") and m.tier("k0") == KeyTier.COLD
    m.acquire("k0")  # reloaded from its source
    assert loads.count("k0") == 2
    # All HOT keys in use and over budget: the job still gets its key, flagged over budget.
    m.acquire("k1")
    assert m.over_budget and m.tier("k1") == KeyTier.HOT
    m.release("k1")
    with pytest.raises(RuntimeError, match="without acquire"):
        m.release("k1")


def test_object_key_is_warm_and_never_lost() -> None:
    pk = _key(16)
    m = SrsManager()
    m.register("obj", pk)
    assert m.tier("obj") == KeyTier.WARM
    assert m.preload("obj") == KeyTier.HOT and m.refs("obj") == 0
    assert m.evict("obj", KeyTier.COLD)
    assert m.tier("obj") == KeyTier.WARM  # the caller's object cannot be dropped and reloaded
    got, _ = m.acquire("obj")
    assert np.array_equal(got.a_g1, pk.a_g1)


def test_cache_path_loads_mapped_then_resident(tmp_path: Path) -> None:
    pk = _key(32)
    path = tmp_path / "k.cuzkkey"
    save_key_cache(pk, path)
    m = SrsManager()
    m.register("p", str(path))
    assert m.tier("p") == KeyTier.COLD
    got, ms = m.acquire("p")
    assert ms >= 0 and m.tier("p") == KeyTier.HOT
    # HOT means resident: no point array is backed by the file any more.
    for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1"):
        arr = getattr(got, name)
        assert np.array_equal(arr, getattr(pk, name))
        base = arr
        while base is not None:
            assert not isinstance(base, np.memmap)
            base = getattr(base, "base", None)
    m.release("p")
    assert m.evict("p", KeyTier.WARM) and m.tier("p") == KeyTier.WARM
    assert m.evict("p") and m.tier("p") == KeyTier.COLD


def test_concurrent_acquire_loads_once() -> None:
    pk = _key(16)
    calls: list[int] = []
    gate = threading.Event()

    def slow() -> ProvingKey:
        calls.append(1)
        gate.wait(5)
        return pk

    m = SrsManager()
    m.register("s", slow)
    out: list[ProvingKey] = []
    ts = [threading.Thread(target=lambda: out.append(m.acquire("s")[0])) for _ in range(4)]
    for t in ts:
        t.start()
    gate.set()
    for t in ts:
        t.join()
    assert len(calls) == 1 and len(out) == 4 and m.refs("s") == 4
    assert all(o is out[0] for o in out)
