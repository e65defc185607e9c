"""Groth16 verification by a pairing check: BLS12-381 through py_arkworks_bls12381, BN254
through the native core (cuzk/native pairing.hpp, one call per proof; pure-Python py_ecc only
when the extension is not built).

    e(A, B) = e(α, β) · e(IC(x), γ) · e(C, δ),  IC(x) = ic_0 + Σ x_i·ic_i

checked as one product of four Miller loops and one final exponentiation. Proof points must be
canonical, on the curve and in the prime-order subgroup; public inputs must be below r.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cuzk.curves import Curve
from cuzk.identity_cache import IdentityCache
from cuzk.layout import G1Ints, G2Ints, g1_to_ints, g2_to_ints, ints_to_limbs, limbs_to_ints
from cuzk.model.keys import Proof, VerifyingKey
from cuzk.reference import ec


class _Reject(Exception):
    pass


def _canonical(curve: Curve, arr: np.ndarray, what: str) -> None:
    # Montgomery limbs must encode a value below p, or one point would have two encodings.
    if any(v >= curve.p for v in limbs_to_ints(np.asarray(arr, dtype=np.uint64).reshape(-1, curve.limbs))):
        raise _Reject(f"{what} has a coordinate ≥ p")


def _one_point(curve: Curve, arr: np.ndarray, what: str, g2: bool) -> G1Ints | G2Ints:
    _canonical(curve, arr, what)
    pts = (g2_to_ints if g2 else g1_to_ints)(curve, arr)
    if len(pts) != 1:
        raise _Reject(f"{what} is not one {'G2' if g2 else 'G1'} point")
    return pts[0]


def _g1(curve: Curve, arr: np.ndarray, what: str) -> G1Ints:
    return _one_point(curve, arr, what, g2=False)


def _g2(curve: Curve, arr: np.ndarray, what: str) -> G2Ints:
    return _one_point(curve, arr, what, g2=True)


def explain(vk: VerifyingKey, public_inputs: Sequence[int], proof: Proof) -> str | None:
    """None when the proof is valid, else a short reason."""
    curve = vk.curve
    if proof.curve.name != curve.name:
        return f"proof is for {proof.curve.name}, key for {curve.name}"
    if len(public_inputs) != vk.n_public:
        return f"{len(public_inputs)} public inputs, the key expects {vk.n_public}"
    xs = [int(x) for x in public_inputs]
    for i, x in enumerate(xs):
        if not 0 <= x < curve.r:
            return f"public input {i} is not a field element (must be 0 ≤ x < r)"
    if curve.name == "bn254" and _native_verify() is not None:
        return _explain_native(vk, xs, proof)
    try:
        a = _g1(curve, proof.a, "proof A")
        b = _g2(curve, proof.b, "proof B")
        c = _g1(curve, proof.c, "proof C")
        if curve.name == "bls12_381":
            ok = _check_bls(vk, xs, a, b, c)
        elif curve.name == "bn254":
            ok = _check_bn(vk, xs, a, b, c)
        else:
            return f"no pairing for curve {curve.name}"
    except _Reject as exc:
        return str(exc)
    return None if ok else "pairing check failed"


# --- BN254 in the native core -----------------------------------------------------------------

_NATIVE_REASONS = {
    1: "pairing check failed",
    2: "proof A is not on the curve",
    3: "proof B is not a point of G2",
    4: "proof C is not on the curve",
    5: "a public input is not a field element (must be 0 ≤ x < r)",
    6: "the verifying key has a point off the curve",
}


def _native_verify():  # noqa: ANN202
    try:
        from cuzk import _native
    except ImportError:
        return None
    return getattr(_native, "groth16_verify", None)


def _explain_native(vk: VerifyingKey, xs: list[int], proof: Proof) -> str | None:
    fn = _native_verify()
    u64 = lambda a: np.ascontiguousarray(a, dtype=np.uint64)  # noqa: E731
    pub = ints_to_limbs(xs, 4) if xs else np.zeros((0, 4), dtype=np.uint64)
    code = fn(vk.curve.name, u64(vk.alpha_g1), u64(vk.beta_g2), u64(vk.gamma_g2),
              u64(vk.delta_g2), u64(vk.ic), pub, u64(proof.a), u64(proof.b), u64(proof.c))
    return None if code == 0 else _NATIVE_REASONS.get(code, f"native verifier code {code}")


def verify(vk: VerifyingKey, public_inputs: Sequence[int], proof: Proof) -> bool:
    return explain(vk, public_inputs, proof) is None


# --- BLS12-381 through arkworks ---------------------------------------------------------------


def _ark_g1(pt: G1Ints, what: str):  # noqa: ANN202
    import py_arkworks_bls12381 as ark

    if pt is None:
        return ark.G1Point.identity()
    try:  # checks on-curve and subgroup
        return ark.G1Point.from_xy_bytes_be(pt[0].to_bytes(48, "big") + pt[1].to_bytes(48, "big"))
    except Exception:
        raise _Reject(f"{what} is not a point of G1") from None


def _ark_g2(pt: G2Ints, what: str):  # noqa: ANN202
    import py_arkworks_bls12381 as ark

    if pt is None:
        return ark.G2Point.identity()
    (x0, x1), (y0, y1) = pt
    raw = b"".join(v.to_bytes(48, "big") for v in (x0, x1, y0, y1))
    try:
        return ark.G2Point.from_xy_bytes_be(raw)
    except Exception:
        raise _Reject(f"{what} is not a point of G2") from None


# A key's points as arkworks objects, made once per VerifyingKey (their subgroup checks cost
# more than the pairing of a small circuit).
_ARK_KEYS: IdentityCache[tuple] = IdentityCache()


def _ark_key(vk: VerifyingKey) -> tuple:
    hit = _ARK_KEYS.get(vk)
    if hit is None:
        curve = vk.curve
        ic = [_ark_g1(p, f"vk IC[{i}]") for i, p in enumerate(g1_to_ints(curve, vk.ic))]
        hit = _ARK_KEYS.put(vk, (
            ic,
            _ark_g1(_g1(curve, vk.alpha_g1, "vk alpha"), "vk alpha"),
            _ark_g2(_g2(curve, vk.beta_g2, "vk beta"), "vk beta"),
            _ark_g2(_g2(curve, vk.gamma_g2, "vk gamma"), "vk gamma"),
            _ark_g2(_g2(curve, vk.delta_g2, "vk delta"), "vk delta"),
        ))
    return hit


def _check_bls(vk: VerifyingKey, xs: list[int], a: G1Ints, b: G2Ints, c: G1Ints) -> bool:
    import py_arkworks_bls12381 as ark

    ic, alpha, beta, gamma, delta = _ark_key(vk)
    acc = ic[0]
    if xs:
        acc = acc + ark.G1Point.multiexp_unchecked(ic[1:], [ark.Scalar(x) for x in xs])
    g1s = [-_ark_g1(a, "proof A"), alpha, acc, _ark_g1(c, "proof C")]
    g2s = [_ark_g2(b, "proof B"), beta, gamma, delta]
    return bool(ark.GT.pairing_check(g1s, g2s))


# --- BN254 through py_ecc (when the native core is not built) --------------------------------


def _check_bn(vk: VerifyingKey, xs: list[int], a: G1Ints, b: G2Ints, c: G1Ints) -> bool:
    from py_ecc import optimized_bn128 as bn

    curve = vk.curve
    G1, G2 = ec.g1(curve), ec.g2(curve)
    # G1 has cofactor 1 on BN254, so on-curve is enough there; G2 needs the subgroup check.
    for pt, what in ((a, "proof A"), (c, "proof C")):
        if not G1.is_on_curve(pt):
            raise _Reject(f"{what} is not on the curve")
    if not G2.in_subgroup(b):
        raise _Reject("proof B is not a point of G2")

    def q1(pt: G1Ints):  # noqa: ANN202
        return bn.Z1 if pt is None else (bn.FQ(pt[0]), bn.FQ(pt[1]), bn.FQ.one())

    def q2(pt: G2Ints):  # noqa: ANN202
        if pt is None:
            return bn.Z2
        return (bn.FQ2(list(pt[0])), bn.FQ2(list(pt[1])), bn.FQ2.one())

    ic = g1_to_ints(curve, vk.ic)
    acc = G1.add(ic[0], G1.msm(ic[1:], xs)) if xs else ic[0]
    pairs = [
        (q2(b), q1(G1.neg(a))),
        (q2(_g2(curve, vk.beta_g2, "vk beta")), q1(_g1(curve, vk.alpha_g1, "vk alpha"))),
        (q2(_g2(curve, vk.gamma_g2, "vk gamma")), q1(acc)),
        (q2(_g2(curve, vk.delta_g2, "vk delta")), q1(c)),
    ]
    f = bn.FQ12.one()
    for Q, P in pairs:
        try:
            f = f * bn.pairing(Q, P, final_exponentiate=False)
        except ValueError:
            raise _Reject("a point is not on the curve") from None
    return bn.final_exponentiate(f) == bn.FQ12.one()
