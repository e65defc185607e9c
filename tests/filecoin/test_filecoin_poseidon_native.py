"""The native Poseidon hasher (cuzk._native.PoseidonHasher) equals the Python reference bit for
bit: batches of every Filecoin arity, hash_md, and its input checks."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cuzk.filecoin.poseidon import native, reference
from cuzk.filecoin.poseidon.matrices import R
from cuzk.filecoin.poseidon.params import ARITIES


def _random_values(rng: random.Random, n: int) -> list[int]:
    # Random field elements plus the edges 0, 1 and r - 1.
    edges = [0, 1, R - 1]
    return [
        edges[i] if i < len(edges) and rng.random() < 0.3 else rng.randrange(R) for i in range(n)
    ]


@pytest.mark.parametrize("arity", ARITIES)
def test_batch_equals_reference(arity: int) -> None:
    rng = random.Random(100 + arity)
    n = 6
    values = _random_values(rng, n * arity)
    got = native.from_limbs(native.hash_batch(native.to_limbs(values).reshape(n, arity, 4)))
    want = [reference.hash_plain(values[i * arity : (i + 1) * arity]) for i in range(n)]
    assert got == want


def test_batch_threads_agree() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**63, size=(257, 8, 4), dtype=np.uint64)
    x[..., 3] >>= np.uint64(2)  # below r
    assert np.array_equal(native.hash_batch(x, threads=1), native.hash_batch(x))
    assert native.hash_batch(np.zeros((0, 2, 4), np.uint64)).shape == (0, 4)


@pytest.mark.parametrize("k", [2, 35, 36, 37, 71, 72, 106])
def test_hash_md_equals_reference(k: int) -> None:
    values = _random_values(random.Random(k), k)
    got = native.from_limbs(native.hash_md(native.to_limbs(values)))[0]
    assert got == reference.hash_md(values)


def test_rejects_values_not_below_r() -> None:
    bad = native.to_limbs([1, R])
    with pytest.raises(ValueError, match="element 1 is not below r"):
        native.hash_batch(bad.reshape(1, 2, 4))
    with pytest.raises(ValueError, match="not below r"):
        native.hash_md(native.to_limbs([R + 5, 1]))
    with pytest.raises(ValueError, match="at least two"):
        native.hash_md(native.to_limbs([1]))
    with pytest.raises(ValueError, match="shape"):
        native.hash_batch(np.zeros((3, 4), np.uint64))
