"""The native pairing (cuzk/native pairing.hpp) against py_ecc and arkworks, and the Groth16
check on it against snarkjs's answers: valid, tampered, wrong public input, off-curve and
off-subgroup points, public inputs ≥ r, points at infinity."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import CURVES

from cuzk.cli import main as cli
from cuzk.curves import get_curve
from cuzk.formats.snarkjs_json import read_proof_json, read_public_json, read_vk_json
from cuzk.groth16.verifier import explain, verify
from cuzk.layout import g1_from_ints, g2_from_ints, ints_to_limbs, limbs_to_ints
from cuzk.model.keys import Proof
from cuzk.reference import ec
from cuzk.tools import snarkjs

native = pytest.importorskip("cuzk._native")
if not hasattr(native, "pairing_product"):
    pytest.skip("native core built without the pairing", allow_module_level=True)


def _pairing(curve: str, P: list, Q: list) -> list[tuple[int, int]]:
    out = native.pairing_product(curve, g1_from_ints(curve, P), g2_from_ints(curve, Q))
    v = limbs_to_ints(out.reshape(12, -1))
    return [(v[2 * i], v[2 * i + 1]) for i in range(6)]


def _one(curve: str) -> list[tuple[int, int]]:
    return [(1, 0)] + [(0, 0)] * 5


def _py_ecc(curve: str):  # noqa: ANN202
    from py_ecc import optimized_bls12_381, optimized_bn128

    return (optimized_bn128, 9) if curve == "bn254" else (optimized_bls12_381, 1)


def _py_ecc_pairing(curve: str, a: int, b: int) -> list[tuple[int, int]]:
    """py_ecc's e(a·G1, b·G2) in our basis: its FQ12 is Fq[w]/(w^12 - 2k w^6 + k^2 + 1) with
    w^6 = xi = k + u, so our coefficient g_i = a_i + b_i u of w^i is c_i + k c_{i+6} and c_{i+6}."""
    mod, k = _py_ecc(curve)
    f = mod.pairing(mod.multiply(mod.G2, b), mod.multiply(mod.G1, a))
    c = [int(x) for x in f.coeffs]
    p = mod.field_modulus
    return [((c[i] + k * c[i + 6]) % p, c[i + 6] % p) for i in range(6)]


@pytest.mark.parametrize("curve", CURVES)
def test_pairing_matches_py_ecc(curve: str, rng: random.Random) -> None:
    c = get_curve(curve)
    G1, G2 = ec.g1(c), ec.g2(c)
    a, b = rng.randrange(1, c.r), rng.randrange(1, c.r)
    ours = _pairing(curve, [G1.mul(G1.generator, a)], [G2.mul(G2.generator, b)])
    theirs = _py_ecc_pairing(curve, a, b)
    if curve == "bn254":
        assert ours == theirs
    else:
        # py_ecc skips the conjugation that BLS12-381's negative x calls for (arkworks and the
        # IETF draft apply it): its value is our inverse, the conjugate of a unitary element.
        assert ours == [(x, y) if i % 2 == 0 else ((-x) % c.p, (-y) % c.p)
                        for i, (x, y) in enumerate(theirs)]


@pytest.mark.parametrize("curve", CURVES)
def test_bilinear_nondegenerate_and_infinity(curve: str, rng: random.Random) -> None:
    c = get_curve(curve)
    G1, G2 = ec.g1(c), ec.g2(c)
    a, b = rng.randrange(1, c.r), rng.randrange(1, c.r)
    P, Q = G1.generator, G2.generator
    e = _pairing(curve, [P], [Q])
    assert e != _one(curve)
    # e(aP, bQ) · e(-ab P, Q) = 1, and e(aP, Q)·e(P, -aQ) = 1
    assert _pairing(curve, [G1.mul(P, a), G1.neg(G1.mul(P, a * b % c.r))],
                    [G2.mul(Q, b), Q]) == _one(curve)
    assert _pairing(curve, [G1.mul(P, a), P], [Q, G2.neg(G2.mul(Q, a))]) == _one(curve)
    assert _pairing(curve, [G1.mul(P, a)], [Q]) == _pairing(curve, [P], [G2.mul(Q, a)])
    # pairs with a point at infinity contribute 1
    assert _pairing(curve, [None, P], [Q, None]) == _one(curve)
    assert _pairing(curve, [None, P], [Q, Q]) == e


def _off_subgroup_g2(c, rng: random.Random):  # noqa: ANN001, ANN202
    G2 = ec.g2(c)
    while True:
        x = (rng.randrange(c.p), rng.randrange(c.p))
        y = G2.F.sqrt(G2.F.add(G2.F.mul(G2.F.sqr(x), x), G2.b))
        if y is not None and not G2.in_subgroup((x, y)):
            return x, y


def _off_subgroup_g1(c, rng: random.Random):  # noqa: ANN001, ANN202
    G1 = ec.g1(c)
    while True:
        x = rng.randrange(c.p)
        y = G1.F.sqrt(x**3 + c.b)
        if y is not None and not G1.in_subgroup((x, y)):
            return x, y


@pytest.mark.parametrize("curve", CURVES)
def test_subgroup_checks(curve: str, rng: random.Random) -> None:
    c = get_curve(curve)
    G1, G2 = ec.g1(c), ec.g2(c)
    good2 = G2.mul(G2.generator, rng.randrange(1, c.r))
    bad2 = _off_subgroup_g2(c, rng)
    assert list(native.g2_in_subgroup(curve, g2_from_ints(curve, [good2, bad2, None]))) == \
        [True, False, True]
    if curve == "bls12_381":  # BN254's G1 has cofactor 1
        bad1 = _off_subgroup_g1(c, rng)
        assert list(native.g1_in_subgroup(curve, g1_from_ints(curve, [G1.generator, bad1]))) == \
            [True, False]


def _native_code(vk, public: list[int], proof: Proof) -> int:  # noqa: ANN001
    u = lambda a: np.ascontiguousarray(a, dtype=np.uint64)  # noqa: E731
    pub = ints_to_limbs(public, 4) if public else np.zeros((0, 4), np.uint64)
    return native.groth16_verify(vk.curve.name, u(vk.alpha_g1), u(vk.beta_g2), u(vk.gamma_g2),
                                 u(vk.delta_g2), u(vk.ic), pub, u(proof.a), u(proof.b),
                                 u(proof.c))


def _dump(path: Path, obj) -> Path:  # noqa: ANN001
    path.write_text(json.dumps(obj))
    return path


@pytest.mark.parametrize("curve", CURVES)
def test_groth16_verify_agrees_with_snarkjs(curve: str, circom_artifact, rng: random.Random,
                                            tmp_path: Path) -> None:
    """Both curves through the native check (the verifier's BN254 path; BLS12-381's runs on
    arkworks, so this is the cross-check) and through `verify`, against snarkjs."""
    c = get_curve(curve)
    art = circom_artifact(curve, "multi_io")
    vk = read_vk_json(art.vk_json)
    good = json.loads(art.proof_json.read_text())
    public = art.public
    proof = read_proof_json(art.proof_json)
    assert _native_code(vk, public, proof) == 0 and verify(vk, public, proof)

    def both(pub: list[int], prf: Proof, code: int, pub_json: Path, prf_json: Path) -> None:
        assert _native_code(vk, pub, prf) == code
        assert not verify(vk, pub, prf)
        assert not snarkjs.groth16_verify(art.vk_json, pub_json, prf_json)

    # A and C swapped
    swapped = dict(good, pi_a=good["pi_c"], pi_c=good["pi_a"])
    both(public, read_proof_json(swapped), 1, art.public_json, _dump(tmp_path / "s.json", swapped))
    # wrong public input
    bad_pub = list(public)
    i = rng.randrange(len(bad_pub))
    bad_pub[i] = (bad_pub[i] + 1) % c.r
    both(bad_pub, proof, 1, _dump(tmp_path / "p.json", [str(x) for x in bad_pub]), art.proof_json)
    # B off the subgroup (on the twist): the readers accept it, the check must not
    off = _off_subgroup_g2(c, rng)
    bad_b = Proof(curve=c, a=proof.a, b=g2_from_ints(c, [off])[0], c=proof.c)
    assert _native_code(vk, public, bad_b) == 3 and "B" in explain(vk, public, bad_b)
    # off-curve A, as raw limbs (the readers refuse to build one)
    a_off = proof.a.copy()
    a_off[1] = g1_from_ints(c, [(1, 1)])[0][1]
    assert _native_code(vk, public, Proof(curve=c, a=a_off, b=proof.b, c=proof.c)) == 2
    c_off = proof.c.copy()
    c_off[0, 0] ^= 1
    assert _native_code(vk, public, Proof(curve=c, a=proof.a, b=proof.b, c=c_off)) == 4
    # a public input ≥ r
    assert _native_code(vk, [public[0] + c.r, *public[1:]], proof) == 5
    assert "field element" in explain(vk, [public[0] + c.r, *public[1:]], proof)
    # a coordinate ≥ p in Montgomery limbs
    big = proof.a.copy()
    big[0] = ints_to_limbs([c.p + 1], c.limbs)[0]
    assert _native_code(vk, public, Proof(curve=c, a=big, b=proof.b, c=proof.c)) == 2
    # A at infinity: a valid encoding of a wrong proof
    inf = Proof(curve=c, a=np.zeros_like(proof.a), b=proof.b, c=proof.c)
    assert _native_code(vk, public, inf) == 1
    assert read_public_json(art.public_json) == public

    # the same points as proof.json files: `cuzk groth16 verify` and snarkjs both say invalid
    (bx0, bx1), (by0, by1) = off
    for tag, bad in (("a_off_curve", dict(good, pi_a=["1", "1", "1"])),
                     ("b_off_subgroup", dict(good, pi_b=[[str(bx0), str(bx1)],
                                                         [str(by0), str(by1)], ["1", "0"]])),
                     ("a_infinity", dict(good, pi_a=["0", "1", "0"]))):
        f = _dump(tmp_path / f"{tag}.json", bad)
        assert cli(["groth16", "verify", str(art.vk_json), str(art.public_json), str(f)]) == 1, tag
        assert not snarkjs.groth16_verify(art.vk_json, art.public_json, f), tag
    assert cli(["groth16", "verify", str(art.vk_json), str(art.public_json),
                str(art.proof_json)]) == 0


@pytest.mark.parametrize("curve", CURVES)
def test_no_public_inputs(curve: str, circom_artifact) -> None:
    art = circom_artifact(curve, "no_public")
    vk, proof = read_vk_json(art.vk_json), read_proof_json(art.proof_json)
    assert art.public == [] and _native_code(vk, [], proof) == 0 and verify(vk, [], proof)
