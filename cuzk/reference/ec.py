"""Short-Weierstrass groups y^2 = x^3 + b (a = 0) over a field from cuzk.reference.field.

Affine points are (x, y) tuples, None for the point at infinity; for G2 the coordinates are Fq2
tuples. Jacobian points (X, Y, Z) represent (X/Z^2, Y/Z^3) and have Z = 0 at infinity.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from cuzk.curves import Curve, get_curve
from cuzk.reference.field import Fq2Field, PrimeField

Affine = tuple[Any, Any] | None
Jacobian = tuple[Any, Any, Any]


class Group:
    """One elliptic-curve group (G1 or G2 of a curve) with textbook formulas."""

    def __init__(self, name: str, field: PrimeField | Fq2Field, b: Any, generator: Affine, order: int):
        self.name = name
        self.F = field
        self.b = field.from_int(b)
        self.generator = generator
        self.order = order

    def __repr__(self) -> str:
        return f"Group({self.name})"

    # --- affine -----------------------------------------------------------------------------

    def is_on_curve(self, P: Affine) -> bool:
        if P is None:
            return True
        F = self.F
        x, y = P
        return F.eq(F.sqr(y), F.add(F.mul(F.sqr(x), x), self.b))

    def in_subgroup(self, P: Affine) -> bool:
        """On the curve and of order dividing r (the prime-order subgroup)."""
        return self.is_on_curve(P) and self.mul(P, self.order) is None

    def neg(self, P: Affine) -> Affine:
        if P is None:
            return None
        return (P[0], self.F.neg(P[1]))

    def eq(self, P: Affine, Q: Affine) -> bool:
        if P is None or Q is None:
            return P is None and Q is None
        return self.F.eq(P[0], Q[0]) and self.F.eq(P[1], Q[1])

    def add(self, P: Affine, Q: Affine) -> Affine:
        """Affine chord-and-tangent addition, handling P + P, P + (-P) and infinity."""
        F = self.F
        if P is None:
            return Q
        if Q is None:
            return P
        if F.eq(P[0], Q[0]):
            if F.eq(P[1], Q[1]) and not F.is_zero(P[1]):
                return self.double(P)
            return None  # P + (-P), or doubling a point of order two
        lam = F.mul(F.sub(Q[1], P[1]), F.inv(F.sub(Q[0], P[0])))
        x3 = F.sub(F.sub(F.sqr(lam), P[0]), Q[0])
        y3 = F.sub(F.mul(lam, F.sub(P[0], x3)), P[1])
        return (x3, y3)

    def double(self, P: Affine) -> Affine:
        F = self.F
        if P is None or F.is_zero(P[1]):
            return None
        x, y = P
        lam = F.mul(F.mul_int(F.sqr(x), 3), F.inv(F.mul_int(y, 2)))
        x3 = F.sub(F.sqr(lam), F.mul_int(x, 2))
        y3 = F.sub(F.mul(lam, F.sub(x, x3)), y)
        return (x3, y3)

    def sub(self, P: Affine, Q: Affine) -> Affine:
        return self.add(P, self.neg(Q))

    # --- Jacobian ---------------------------------------------------------------------------

    def to_jac(self, P: Affine) -> Jacobian:
        F = self.F
        if P is None:
            return (F.one, F.one, F.zero)
        return (P[0], P[1], F.one)

    def from_jac(self, P: Jacobian) -> Affine:
        F = self.F
        X, Y, Z = P
        if F.is_zero(Z):
            return None
        zi = F.inv(Z)
        zi2 = F.sqr(zi)
        return (F.mul(X, zi2), F.mul(Y, F.mul(zi2, zi)))

    def jac_double(self, P: Jacobian) -> Jacobian:
        F = self.F
        X, Y, Z = P
        if F.is_zero(Z) or F.is_zero(Y):
            return (F.one, F.one, F.zero)
        # a = 0: S = 4XY^2, M = 3X^2, X' = M^2 - 2S, Y' = M(S - X') - 8Y^4, Z' = 2YZ
        Y2 = F.sqr(Y)
        S = F.mul_int(F.mul(X, Y2), 4)
        M = F.mul_int(F.sqr(X), 3)
        X3 = F.sub(F.sqr(M), F.mul_int(S, 2))
        Y3 = F.sub(F.mul(M, F.sub(S, X3)), F.mul_int(F.sqr(Y2), 8))
        Z3 = F.mul_int(F.mul(Y, Z), 2)
        return (X3, Y3, Z3)

    def jac_add(self, P: Jacobian, Q: Jacobian) -> Jacobian:
        F = self.F
        X1, Y1, Z1 = P
        X2, Y2, Z2 = Q
        if F.is_zero(Z1):
            return Q
        if F.is_zero(Z2):
            return P
        Z1Z1, Z2Z2 = F.sqr(Z1), F.sqr(Z2)
        U1, U2 = F.mul(X1, Z2Z2), F.mul(X2, Z1Z1)
        S1 = F.mul(Y1, F.mul(Z2, Z2Z2))
        S2 = F.mul(Y2, F.mul(Z1, Z1Z1))
        if F.eq(U1, U2):
            if F.eq(S1, S2):
                return self.jac_double(P)
            return (F.one, F.one, F.zero)
        H = F.sub(U2, U1)
        R = F.sub(S2, S1)
        H2 = F.sqr(H)
        H3 = F.mul(H2, H)
        U1H2 = F.mul(U1, H2)
        X3 = F.sub(F.sub(F.sqr(R), H3), F.mul_int(U1H2, 2))
        Y3 = F.sub(F.mul(R, F.sub(U1H2, X3)), F.mul(S1, H3))
        Z3 = F.mul(H, F.mul(Z1, Z2))
        return (X3, Y3, Z3)

    # --- scalar multiplication and MSM --------------------------------------------------------

    def mul(self, P: Affine, k: int) -> Affine:
        """k·P by double-and-add (k taken mod nothing: any non-negative or negative int)."""
        if k < 0:
            return self.mul(self.neg(P), -k)
        acc = self.to_jac(None)
        base = self.to_jac(P)
        for bit in bin(k)[2:] if k else "":
            acc = self.jac_double(acc)
            if bit == "1":
                acc = self.jac_add(acc, base)
        return self.from_jac(acc)

    def msm(self, points: Sequence[Affine], scalars: Sequence[int]) -> Affine:
        """Σ k_i·P_i with scalars reduced mod r; doublings shared across points (Straus)."""
        if len(points) != len(scalars):
            raise ValueError(f"{len(points)} points but {len(scalars)} scalars")
        ks = [int(k) % self.order for k in scalars]
        pairs = [(self.to_jac(P), k) for P, k in zip(points, ks, strict=True) if P is not None and k]
        acc = self.to_jac(None)
        nbits = max((k.bit_length() for _, k in pairs), default=0)
        for bit in range(nbits - 1, -1, -1):
            acc = self.jac_double(acc)
            for P, k in pairs:
                if (k >> bit) & 1:
                    acc = self.jac_add(acc, P)
        return self.from_jac(acc)

    def sum(self, points: Sequence[Affine]) -> Affine:
        acc = self.to_jac(None)
        for P in points:
            acc = self.jac_add(acc, self.to_jac(P))
        return self.from_jac(acc)


@cache
def g1(curve: str | Curve) -> Group:
    c = get_curve(curve)
    return Group(f"{c.name}.G1", PrimeField(c.p), c.b, c.g1, c.r)


@cache
def g2(curve: str | Curve) -> Group:
    c = get_curve(curve)
    return Group(f"{c.name}.G2", Fq2Field(c.p), c.b2, c.g2, c.r)
