"""Groth16 end to end on small R1CS circuits built in Python, both curves and both H
conventions, with the pure-Python reference backend (and the CPU backend when it is built):
setup → prove → verify, and the ways a proof must fail."""

from __future__ import annotations

import os
import random
from dataclasses import replace

import numpy as np
import pytest

from cuzk.backends import get_backend
from cuzk.backends.cpu import native_module
from cuzk.curves import CURVES, Curve, get_curve
from cuzk.groth16 import prover, qap
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.groth16.setup import setup
from cuzk.groth16.verifier import explain, verify
from cuzk.layout import fr_from_ints, fr_to_ints, g1_from_ints, g1_to_ints, g2_from_ints, g2_to_ints
from cuzk.model.keys import Proof, ProvingKey
from cuzk.model.r1cs import CSR, R1CS
from cuzk.reference import ec

SEED = int.from_bytes(os.urandom(8), "little")
print(f"test_groth16 seed: {SEED}")
CONVENTIONS = ("snarkjs", "bellman")
Row = dict[int, int]


# --- circuits ---------------------------------------------------------------------------------


def make_r1cs(
    curve: Curve, n_vars: int, n_public: int, rows: list[tuple[Row, Row, Row]], labels: dict | None = None
) -> R1CS:
    """R1CS from rows of {wire: coefficient} for A, B, C (coefficients may be negative)."""

    def csr(k: int) -> CSR:
        indptr, indices, values = [0], [], []
        for row in rows:
            for wire, coef in sorted(row[k].items()):
                indices.append(wire)
                values.append(coef % curve.r)
            indptr.append(len(indices))
        return CSR(
            indptr=np.array(indptr, dtype=np.int64),
            indices=np.array(indices, dtype=np.int64),
            values=fr_from_ints(curve, values).reshape(-1, 4),
            n_cols=n_vars,
        )

    return R1CS(
        curve=curve, n_vars=n_vars, n_public=n_public, a=csr(0), b=csr(1), c=csr(2),
        n_constraints=len(rows), labels=labels or {},
    )


def cubic(curve: Curve, x: int) -> tuple[R1CS, list[int]]:
    """x^3 + x + 5 = out; wires: 1, out (public), x, x^2, x^3."""
    r = curve.r
    rows = [
        ({2: 1}, {2: 1}, {3: 1}),
        ({3: 1}, {2: 1}, {4: 1}),
        ({4: 1, 2: 1, 0: 5}, {0: 1}, {1: 1}),
    ]
    labels = {"wires": {1: "main.out", 2: "main.x", 3: "main.x2", 4: "main.x3"}}
    w = [1, (x**3 + x + 5) % r, x % r, x * x % r, x**3 % r]
    return make_r1cs(curve, 5, 1, rows, labels), w


def chain(curve: Curve, x: int, k: int) -> tuple[R1CS, list[int]]:
    """Public x and out = x^(k+1) through k multiplications; wires 1, x, out, z_1 .. z_k."""
    r = curve.r
    rows: list[tuple[Row, Row, Row]] = []
    z = [x % r]
    for i in range(k):
        prev = 1 if i == 0 else 2 + i
        rows.append(({prev: 1}, {1: 1}, {3 + i: 1}))
        z.append(z[-1] * x % r)
    rows.append(({2 + k: 1}, {0: 1}, {2: 1}))  # out = z_k
    return make_r1cs(curve, 3 + k, 2, rows), [1, x % r, z[-1]] + z[1:]


def booleanity(curve: Curve, value: int, bits: int) -> tuple[R1CS, list[int]]:
    """Public value = Σ 2^i b_i with each b_i·(1 − b_i) = 0; wires 1, value, b_0 .. b_{bits-1}."""
    rows: list[tuple[Row, Row, Row]] = [({2 + i: 1}, {0: 1, 2 + i: -1}, {}) for i in range(bits)]
    rows.append(({2 + i: 1 << i for i in range(bits)}, {0: 1}, {1: 1}))
    w = [1, value] + [(value >> i) & 1 for i in range(bits)]
    return make_r1cs(curve, 2 + bits, 1, rows), w


CIRCUITS = {
    "cubic": lambda c, rng: cubic(c, rng.randrange(c.r)),
    "chain": lambda c, rng: chain(c, rng.randrange(c.r), 6),
    "booleanity": lambda c, rng: booleanity(c, rng.randrange(1 << 12), 12),
}


def public_of(pk: ProvingKey, w: list[int]) -> list[int]:
    return w[1 : pk.n_public + 1]


_KEYS: dict[tuple, tuple[ProvingKey, list[int]]] = {}


def keyed(curve_name: str, circuit: str, convention: str) -> tuple[ProvingKey, list[int]]:
    """A (cached) dev key for a circuit plus a fresh satisfying witness."""
    rng = random.Random(f"{SEED}-{curve_name}-{circuit}-{convention}")
    c = get_curve(curve_name)
    r1cs, w = CIRCUITS[circuit](c, rng)
    k = (curve_name, circuit, convention)
    if k not in _KEYS:
        _KEYS[k] = (setup(r1cs, seed=f"test-{SEED}-{circuit}", convention=convention, backend="reference"), w)
    return _KEYS[k][0], w


def tamper_g1(curve: Curve, pt: np.ndarray) -> np.ndarray:
    G = ec.g1(curve)
    return g1_from_ints(curve, [G.add(g1_to_ints(curve, pt)[0], G.generator)])[0]


def tamper_g2(curve: Curve, pt: np.ndarray) -> np.ndarray:
    G = ec.g2(curve)
    return g2_from_ints(curve, [G.add(g2_to_ints(curve, pt)[0], G.generator)])[0]


# --- tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("curve_name", sorted(CURVES))
@pytest.mark.parametrize("circuit", sorted(CIRCUITS))
def test_prove_verify(curve_name: str, circuit: str, convention: str) -> None:
    pk, w = keyed(curve_name, circuit, convention)
    assert len(pk.h_g1) == (pk.domain_size if convention == "snarkjs" else pk.domain_size - 1)
    proof = prover.prove(pk, w, backend="reference")
    assert explain(pk.vk, public_of(pk, w), proof) is None


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("curve_name", sorted(CURVES))
def test_rejections(curve_name: str, convention: str) -> None:
    pk, w = keyed(curve_name, "chain", convention)  # two public inputs
    c = pk.curve
    be = get_backend("reference")
    proof = prover.prove(pk, w, backend=be)
    pub = public_of(pk, w)
    assert verify(pk.vk, pub, proof)

    assert not verify(pk.vk, pub, replace(proof, a=tamper_g1(c, proof.a)))
    assert not verify(pk.vk, pub, replace(proof, b=tamper_g2(c, proof.b)))
    assert not verify(pk.vk, pub, replace(proof, c=tamper_g1(c, proof.c)))
    wrong = list(pub)
    wrong[1] = (wrong[1] + 1) % c.r
    assert not verify(pk.vk, wrong, proof)
    assert not verify(pk.vk, pub[:-1], proof)  # wrong count
    assert explain(pk.vk, [pub[0] + c.r] + pub[1:], proof) is not None  # not reduced
    # the same circuit under another key (other seed) rejects it
    other = setup(pk.r1cs, seed=f"other-{SEED}", convention=convention, backend=be)
    assert not verify(other.vk, pub, proof)
    assert verify(other.vk, pub, prover.prove(other, w, backend=be))


def test_random_r_s_give_different_valid_proofs() -> None:
    pk, w = keyed("bls12_381", "cubic", "snarkjs")
    p1 = prover.prove(pk, w, backend="reference")
    p2 = prover.prove(pk, w, backend="reference")
    assert not np.array_equal(p1.a, p2.a)
    assert verify(pk.vk, public_of(pk, w), p1) and verify(pk.vk, public_of(pk, w), p2)


@pytest.mark.parametrize("curve_name", sorted(CURVES))
def test_proof_with_zero_r_s_is_valid_and_deterministic(curve_name: str) -> None:
    pk, w = keyed(curve_name, "chain", "bellman")
    p1 = prover.prove(pk, w, r=0, s=0, backend="reference")
    p2 = prover.prove(pk, w, r=0, s=0, backend="reference")
    assert all(np.array_equal(getattr(p1, k), getattr(p2, k)) for k in ("a", "b", "c"))
    assert verify(pk.vk, public_of(pk, w), p1)


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("curve_name", sorted(CURVES))
def test_unsatisfied_witness_names_the_constraint(curve_name: str, convention: str) -> None:
    pk, w = keyed(curve_name, "cubic", convention)
    bad = list(w)
    bad[3] = (bad[3] + 1) % pk.curve.r  # x^2 wrong: constraint 0 (x·x = x2) is the first broken
    with pytest.raises(UnsatisfiedConstraint) as info:
        prover.prove(pk, bad, backend="reference")
    assert info.value.index == 0
    assert "constraint 0" in str(info.value) and "main.x2" in str(info.value)

    pk, w = keyed(curve_name, "booleanity", convention)
    bad = list(w)
    bad[2 + 5] = 2  # a non-bit at b_5 (the sum row is broken too, but later)
    with pytest.raises(UnsatisfiedConstraint) as info:
        prover.prove(pk, bad, backend="reference")
    assert info.value.index == 5


def test_unchecked_bad_witness_gives_invalid_proof() -> None:
    pk, w = keyed("bn254", "cubic", "snarkjs")
    bad = list(w)
    bad[4] = (bad[4] + 1) % pk.curve.r
    proof = prover.prove(pk, bad, backend="reference", check=False)
    assert not verify(pk.vk, public_of(pk, w), proof)


def test_key_without_c_matrix_checks_with_given_r1cs() -> None:
    # snarkjs zkeys carry A and B only: c = a∘b; the check then needs the full R1CS.
    pk, w = keyed("bls12_381", "cubic", "snarkjs")
    full = pk.r1cs
    empty_c = CSR(
        indptr=np.zeros(full.n_rows + 1, dtype=np.int64),
        indices=np.zeros(0, dtype=np.int64),
        values=np.zeros((0, 4), dtype=np.uint64),
        n_cols=full.n_vars,
    )
    ab_only = replace(pk, r1cs=replace(full, c=empty_c), meta={"c_from_ab": True})
    proof = prover.prove(ab_only, w, backend="reference")
    assert verify(pk.vk, public_of(pk, w), proof)
    bad = list(w)
    bad[3] = (bad[3] + 1) % pk.curve.r
    with pytest.raises(UnsatisfiedConstraint):
        prover.prove(ab_only, bad, backend="reference", r1cs=full)
    assert not verify(pk.vk, public_of(pk, w), prover.prove(ab_only, bad, backend="reference"))


def test_circuit_with_empty_c_is_still_checked() -> None:
    # Every constraint has C = 0 (b·(1−b) = 0): an empty C matrix, not a missing one.
    c = get_curve("bn254")
    rows = [({2 + i: 1}, {0: 1, 2 + i: -1}, {}) for i in range(4)] + [({1: 1}, {1: 1}, {})]
    r1cs = make_r1cs(c, 6, 1, rows)
    pk = setup(r1cs, seed=SEED, backend="reference")
    assert pk.r1cs.c.nnz == 0
    good = [1, 0, 1, 0, 1, 1]
    assert verify(pk.vk, [0], prover.prove(pk, good, backend="reference"))
    with pytest.raises(UnsatisfiedConstraint) as info:
        prover.prove(pk, [1, 0, 1, 3, 1, 1], backend="reference")
    assert info.value.index == 1


def test_phases_compose_like_prove() -> None:
    pk, w = keyed("bn254", "booleanity", "snarkjs")
    be = get_backend("reference")
    syn = prover.synthesize(pk, w, be)
    out = prover.kernels(pk, syn, be, g2=False)
    assert out.b_g2 is None
    b2 = prover.g2_msm(pk, syn, be)
    r, s = 12345, 67890
    p1 = prover.assemble(pk, out, r, s, be, b_g2=b2)
    p2 = prover.prove(pk, w, r=r, s=s, backend=be)
    assert all(np.array_equal(getattr(p1, k), getattr(p2, k)) for k in ("a", "b", "c"))
    with pytest.raises(ValueError):
        prover.assemble(pk, out, r, s, be)


def test_bad_points_rejected() -> None:
    pk, w = keyed("bls12_381", "cubic", "bellman")
    c = pk.curve
    proof = prover.prove(pk, w, backend="reference")
    pub = public_of(pk, w)
    off_curve = proof.a.copy()
    off_curve[1, 0] ^= np.uint64(1)
    assert "A" in explain(pk.vk, pub, Proof(c, off_curve, proof.b, proof.c))
    big = np.zeros_like(proof.c)
    big[0] = np.uint64(0xFFFFFFFFFFFFFFFF)  # limbs ≥ p
    assert explain(pk.vk, pub, Proof(c, proof.a, proof.b, big)) is not None


def test_bn254_g2_outside_subgroup_rejected() -> None:
    # A point on BN254's twist but outside G2: subgroup check, not the pairing, rejects it.
    from test_reference import _fq2_sqrt

    pk, w = keyed("bn254", "cubic", "bellman")
    c = pk.curve
    G = ec.g2(c)
    rng = random.Random(SEED)
    while True:
        x = (rng.randrange(c.p), rng.randrange(c.p))
        y = _fq2_sqrt(G.F, G.F.add(G.F.mul(G.F.sqr(x), x), G.b))
        if y is not None and not G.in_subgroup((x, y)):
            break
    proof = prover.prove(pk, w, backend="reference")
    bad = replace(proof, b=g2_from_ints(c, [(x, y)])[0])
    reason = explain(pk.vk, public_of(pk, w), bad)
    assert reason is not None and "G2" in reason


@pytest.mark.parametrize("curve_name", sorted(CURVES))
def test_setup_is_deterministic_in_the_seed(curve_name: str) -> None:
    c = get_curve(curve_name)
    r1cs, _ = cubic(c, 3)
    k1 = setup(r1cs, seed="abc", backend="reference")
    k2 = setup(r1cs, seed="abc", backend="reference")
    k3 = setup(r1cs, seed="abd", backend="reference")
    assert np.array_equal(k1.h_g1, k2.h_g1) and np.array_equal(k1.vk.ic, k2.vk.ic)
    assert not np.array_equal(k1.delta_g1, k3.delta_g1)
    assert qap.has_public_rows(k1.r1cs) and not qap.has_public_rows(r1cs)
    assert k1.domain_size == 8  # 3 constraints + 2 public-binding rows


# --- CPU backend (native) against the reference ----------------------------------------------

needs_cpu = pytest.mark.skipif(native_module() is None, reason="cuzk._native CPU backend not built")


@needs_cpu
@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("curve_name", sorted(CURVES))
def test_cpu_and_reference_give_identical_proofs(curve_name: str, convention: str) -> None:
    pk, w = keyed(curve_name, "chain", convention)
    rng = random.Random(SEED)
    r, s = rng.randrange(pk.curve.r), rng.randrange(pk.curve.r)
    p_ref = prover.prove(pk, w, r=r, s=s, backend="reference")
    p_cpu = prover.prove(pk, w, r=r, s=s, backend="cpu")
    for k in ("a", "b", "c"):
        assert np.array_equal(getattr(p_ref, k), getattr(p_cpu, k)), k
    assert verify(pk.vk, public_of(pk, w), p_cpu)


@needs_cpu
@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("curve_name", sorted(CURVES))
def test_cpu_setup_matches_reference_setup(curve_name: str, convention: str) -> None:
    c = get_curve(curve_name)
    r1cs, w = booleanity(c, 1234, 11)
    k_ref = setup(r1cs, seed="same", convention=convention, backend="reference")
    k_cpu = setup(r1cs, seed="same", convention=convention, backend="cpu")
    for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1"):
        assert np.array_equal(getattr(k_ref, name), getattr(k_cpu, name)), name
    assert np.array_equal(k_ref.vk.ic, k_cpu.vk.ic)
    assert verify(k_cpu.vk, w[1:2], prover.prove(k_cpu, w, backend="cpu"))


@needs_cpu
@pytest.mark.parametrize("curve_name", sorted(CURVES))
def test_native_lagrange_matches_python(curve_name: str) -> None:
    from cuzk.groth16.setup import lagrange_array, lagrange_at

    c = get_curve(curve_name)
    rng = random.Random(SEED)
    tau = rng.randrange(c.r)
    n = 4096
    w = c.root_of_unity(n, "snarkjs")
    assert fr_to_ints(lagrange_array(c, tau, n, w)) == lagrange_at(tau, n, w, c.r)


@needs_cpu
@pytest.mark.parametrize("convention", CONVENTIONS)
def test_setup_field_steps_native_and_python_agree(convention: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """setup's Fr steps (combinations, scalings, τ powers) run natively when built; the
    Python-int path must give the same key, point for point."""
    c = get_curve("bls12_381")
    r1cs, w = booleanity(c, 77, 9)
    native = setup(r1cs, seed="agree", convention=convention, backend="cpu")
    monkeypatch.setattr(qap, "_native_fn", lambda name: None)
    python = setup(r1cs, seed="agree", convention=convention, backend="cpu")
    for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1", "alpha_g1", "delta_g1"):
        assert np.array_equal(getattr(native, name), getattr(python, name)), name
    assert np.array_equal(native.vk.ic, python.vk.ic)
    assert verify(python.vk, w[1:2], prover.prove(python, w, backend="cpu"))
