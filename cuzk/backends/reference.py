"""The pure-Python backend: base.Backend over cuzk.reference (slow; a few hundred constraints)."""

from __future__ import annotations

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.layout import (
    fr_from_ints,
    fr_to_ints,
    g1_from_ints,
    g1_to_ints,
    g2_from_ints,
    g2_to_ints,
)
from cuzk.reference import ec
from cuzk.reference import ntt as rntt


def _fixed_base_mul(group: ec.Group, base: ec.Affine, scalars: list[int]) -> list[ec.Affine]:
    # Table of 2^i·base, then each product is a sum of table entries: no doublings per scalar.
    nbits = max((k.bit_length() for k in scalars), default=0)
    table = []
    acc = group.to_jac(base)
    for _ in range(nbits):
        table.append(acc)
        acc = group.jac_double(acc)
    out = []
    for k in scalars:
        j = group.to_jac(None)
        bit = 0
        while k:
            if k & 1:
                j = group.jac_add(j, table[bit])
            k >>= 1
            bit += 1
        out.append(group.from_jac(j))
    return out


class ReferenceBackend:
    name = "reference"

    def g1_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        res = ec.g1(c).msm(g1_to_ints(c, points), fr_to_ints(scalars))
        return g1_from_ints(c, [res])[0]

    def g2_msm(self, curve: Curve, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        res = ec.g2(c).msm(g2_to_ints(c, points), fr_to_ints(scalars))
        return g2_from_ints(c, [res])[0]

    def g1_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        G = ec.g1(c)
        pts = _fixed_base_mul(G, g1_to_ints(c, base)[0], [k % c.r for k in fr_to_ints(scalars)])
        return g1_from_ints(c, pts).reshape(len(pts), 2, c.limbs)

    def g2_mul(self, curve: Curve, base: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        G = ec.g2(c)
        pts = _fixed_base_mul(G, g2_to_ints(c, base)[0], [k % c.r for k in fr_to_ints(scalars)])
        return g2_from_ints(c, pts).reshape(len(pts), 2, 2, c.limbs)

    def g1_add(self, curve: Curve, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        G = ec.g1(c)
        pts = [G.add(x, y) for x, y in zip(g1_to_ints(c, p), g1_to_ints(c, q), strict=True)]
        return g1_from_ints(c, pts).reshape(len(pts), 2, c.limbs)

    def fr_ntt(self, curve: Curve, a: np.ndarray, omega: int, inverse: bool = False,
               shift: int | None = None) -> np.ndarray:
        c = get_curve(curve)
        return fr_from_ints(c, rntt.ntt(c, fr_to_ints(a), omega, inverse=inverse, shift=shift))

    def groth16_h(self, curve: Curve, a: np.ndarray, b: np.ndarray, c: np.ndarray, omega: int,
                  shift: int, coefficients: bool) -> np.ndarray:
        cv = get_curve(curve)
        h = rntt.groth16_h(
            cv, fr_to_ints(a), fr_to_ints(b), fr_to_ints(c), omega, shift, coefficients
        )
        return fr_from_ints(cv, h)

    def csr_matvec(self, curve: Curve, indptr: np.ndarray, indices: np.ndarray,
                   values: np.ndarray, w: np.ndarray) -> np.ndarray:
        c = get_curve(curve)
        r = c.r
        vals = fr_to_ints(values)
        wv = fr_to_ints(w)
        out = []
        for i in range(len(indptr) - 1):
            acc = 0
            for k in range(int(indptr[i]), int(indptr[i + 1])):
                acc += vals[k] * wv[int(indices[k])]
            out.append(acc % r)
        return fr_from_ints(c, out)
