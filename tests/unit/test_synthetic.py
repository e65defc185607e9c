"""The synthetic circuit: satisfiable witnesses, a PoRep-like value mix, vectorized structure
at larger sizes, exact wide products, and keys cached once per size."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest

from cuzk.backends import get_backend
from cuzk.circuits.synthetic import SyntheticCircuit, _mul128, for_domain, seed_of, witness_mix
from cuzk.groth16 import prover, qap
from cuzk.groth16.dev_keys import development_key
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.groth16.verifier import verify
from cuzk.layout import fr_to_ints


@pytest.fixture
def rng() -> random.Random:
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    return random.Random(seed)


def _check(c: SyntheticCircuit, w: np.ndarray) -> None:
    full = qap.with_public_rows(c.r1cs)
    a, b, cc = qap.evaluate(full, w, get_backend("auto"), c.domain_size)
    qap.check_satisfied(full, a, b, cc)


@pytest.mark.parametrize("curve", ["bls12_381", "bn254"])
def test_witness_satisfies_and_differs_per_partition(curve: str, rng: random.Random) -> None:
    c = for_domain(curve, 9)
    assert c.n_constraints + c.n_public + 1 == c.domain_size == 512
    assert c.r1cs.n_rows == c.n_constraints
    seed = rng.getrandbits(63)
    w0, w1 = c.witness(seed, 0), c.witness(seed, 1)
    _check(c, w0)
    _check(c, w1)
    assert not np.array_equal(w0, w1)
    assert np.array_equal(w0, c.witness(seed, 0))  # deterministic in (seed, partition)
    ints = fr_to_ints(w0)
    assert all(0 <= v < c.curve.r for v in ints)
    assert c.public_inputs(seed, 0) == ints[1 : 1 + c.n_public]


def test_corrupted_witness_is_rejected(rng: random.Random) -> None:
    c = for_domain("bls12_381", 8)
    w = c.witness(rng.getrandbits(32), rng.randrange(10))
    i = rng.randrange(1 + c.n_public, c.n_vars)
    w[i, 0] += np.uint64(2)  # a bit becomes non-boolean, a word or product wrong
    with pytest.raises(UnsatisfiedConstraint):
        _check(c, w)


def test_witness_mix_is_porep_like(rng: random.Random) -> None:
    c = for_domain("bls12_381", 14)
    mix = witness_mix(c.witness(rng.getrandbits(32), 0))
    assert mix["binary"] > 0.7  # mostly 0/1
    assert 0.03 < mix["wide"] < 0.15  # a minority of ~252-bit products
    assert mix["full"] > 0.005  # some of them at least 2^250


def test_mul128_exact(rng: random.Random) -> None:
    xs = [rng.getrandbits(126) for _ in range(200)]
    ys = [rng.getrandbits(126) for _ in range(200)]
    xs[0], ys[0] = 2**126 - 1, 2**126 - 1

    def limbs(vals: list[int], k: int) -> np.ndarray:
        return np.array([[(v >> (64 * j)) & (2**64 - 1) for j in range(k)] for v in vals],
                        dtype=np.uint64)

    z = _mul128(limbs(xs, 2), limbs(ys, 2))
    got = [sum(int(z[i, j]) << (64 * j) for j in range(4)) for i in range(len(xs))]
    assert got == [x * y for x, y in zip(xs, ys, strict=True)]


def test_large_build_structure() -> None:
    # 2^18 constraints: the matrices come from tiling, so the structure is checked cheaply.
    c = for_domain("bls12_381", 18)
    r = c.r1cs
    assert r.a.n_rows == r.b.n_rows == r.c.n_rows == c.n_constraints
    for m in (r.a, r.b, r.c):
        assert m.indptr[0] == 0 and m.indptr[-1] == m.nnz == len(m.values)
        assert np.all(np.diff(m.indptr) >= 1)
        assert m.indices.min() >= 0 and m.indices.max() < c.n_vars
    # Every unit's packing row has 32 terms; booleanity rows square one bit.
    assert (np.diff(r.a.indptr) == 32).sum() == 3 * c.units
    w = c.witness(1, 0)
    assert w.shape == (c.n_vars, 4)


def test_seed_of_inputs() -> None:
    assert seed_of({"seed": 5}) == 5 == seed_of(5)
    assert seed_of(b"abc") == seed_of(b"abc") != seed_of(b"abd")


def test_key_cached_once_and_proves(tmp_path: Path, rng: random.Random) -> None:
    c = for_domain("bn254", 7, n_public=1)
    pk = development_key(c, "bellman", cache_dir=tmp_path)
    files = list(tmp_path.glob("*.cuzkkey"))
    assert len(files) == 1
    again = development_key(SyntheticCircuit(c.curve, c.n_constraints, n_public=1),
                            "bellman", cache_dir=tmp_path)
    assert again is not pk and np.array_equal(again.a_g1, pk.a_g1)
    assert list(tmp_path.glob("*.cuzkkey")) == files  # loaded, not regenerated
    seed = rng.getrandbits(32)
    w = c.witness(seed, 3)
    proof = prover.prove(again, w)
    assert verify(again.vk, c.public_inputs(seed, 3), proof)
    assert not verify(again.vk, c.public_inputs(seed, 4), proof)
