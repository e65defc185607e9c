"""Just enough Python-int curve arithmetic to decompress and check points.

Fq2 elements are tuples (c0, c1) with u^2 = -1 (both curves' quadratic extension); both base
primes are 3 mod 4, so Fq square roots are a single exponentiation. Subgroup membership is
checked the plain way, [r]P = O, in Jacobian coordinates: a few milliseconds per point, which
is fine for proofs and verifying keys (bulk key data goes through the vectorized paths).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cuzk.curves import Curve

Fq2 = tuple[int, int]


def fq_sqrt(a: int, p: int) -> int | None:
    a %= p
    y = pow(a, (p + 1) // 4, p)
    return y if y * y % p == a else None


def fq2_mul(a: Fq2, b: Fq2, p: int) -> Fq2:
    return ((a[0] * b[0] - a[1] * b[1]) % p, (a[0] * b[1] + a[1] * b[0]) % p)


def fq2_sqrt(a: Fq2, p: int) -> Fq2 | None:
    """Square root in Fq2 via the norm: if x^2 = a then N(x)^2 = N(a)."""
    a0, a1 = a[0] % p, a[1] % p
    if a1 == 0:
        s = fq_sqrt(a0, p)
        if s is not None:
            return (s, 0)
        s = fq_sqrt(-a0 % p, p)  # a0 = -(s^2) = (s·u)^2
        return None if s is None else (0, s)
    n = fq_sqrt((a0 * a0 + a1 * a1) % p, p)
    if n is None:
        return None
    inv2 = (p + 1) // 2
    for cand in ((a0 + n) * inv2 % p, (a0 - n) * inv2 % p):
        x0 = fq_sqrt(cand, p)
        if x0 is not None and x0 != 0:
            x1 = a1 * pow(2 * x0, -1, p) % p
            if fq2_mul((x0, x1), (x0, x1), p) == (a0, a1):
                return (x0, x1)
    return None


@dataclass(frozen=True)
class _Field:
    """Field operations for the generic Jacobian code: Fq as ints or Fq2 as tuples."""

    add: Callable[[Any, Any], Any]
    sub: Callable[[Any, Any], Any]
    mul: Callable[[Any, Any], Any]
    zero: Any
    one: Any


def _fq(p: int) -> _Field:
    return _Field(
        add=lambda a, b: (a + b) % p,
        sub=lambda a, b: (a - b) % p,
        mul=lambda a, b: a * b % p,
        zero=0,
        one=1,
    )


def _fq2(p: int) -> _Field:
    return _Field(
        add=lambda a, b: ((a[0] + b[0]) % p, (a[1] + b[1]) % p),
        sub=lambda a, b: ((a[0] - b[0]) % p, (a[1] - b[1]) % p),
        mul=lambda a, b: fq2_mul(a, b, p),
        zero=(0, 0),
        one=(1, 0),
    )


def _jac_double(F: _Field, P: tuple) -> tuple:
    X, Y, Z = P
    if Z == F.zero or Y == F.zero:
        return (F.one, F.one, F.zero)
    A = F.mul(X, X)
    B = F.mul(Y, Y)
    C = F.mul(B, B)
    t = F.add(X, B)
    D = F.sub(F.sub(F.mul(t, t), A), C)
    D = F.add(D, D)
    E = F.add(F.add(A, A), A)
    X3 = F.sub(F.mul(E, E), F.add(D, D))
    C8 = F.add(C, C)
    C8 = F.add(C8, C8)
    C8 = F.add(C8, C8)
    Y3 = F.sub(F.mul(E, F.sub(D, X3)), C8)
    YZ = F.mul(Y, Z)
    return (X3, Y3, F.add(YZ, YZ))


def _jac_add_affine(F: _Field, P: tuple, q: tuple) -> tuple:
    X1, Y1, Z1 = P
    if Z1 == F.zero:
        return (q[0], q[1], F.one)
    Z1Z1 = F.mul(Z1, Z1)
    U2 = F.mul(q[0], Z1Z1)
    S2 = F.mul(F.mul(q[1], Z1), Z1Z1)
    H = F.sub(U2, X1)
    R = F.sub(S2, Y1)
    if H == F.zero:
        return _jac_double(F, P) if R == F.zero else (F.one, F.one, F.zero)
    HH = F.mul(H, H)
    HHH = F.mul(HH, H)
    V = F.mul(X1, HH)
    X3 = F.sub(F.sub(F.mul(R, R), HHH), F.add(V, V))
    Y3 = F.sub(F.mul(R, F.sub(V, X3)), F.mul(Y1, HHH))
    return (X3, Y3, F.mul(Z1, H))


def _mul_is_zero(F: _Field, q: tuple, k: int) -> bool:
    acc = (F.one, F.one, F.zero)
    for bit in bin(k)[2:]:
        acc = _jac_double(F, acc)
        if bit == "1":
            acc = _jac_add_affine(F, acc, q)
    return acc[2] == F.zero


def g1_on_curve(curve: Curve, x: int, y: int) -> bool:
    p = curve.p
    return (y * y - x * x * x - curve.b) % p == 0


def g2_on_curve(curve: Curve, x: Fq2, y: Fq2) -> bool:
    p = curve.p
    lhs = fq2_mul(y, y, p)
    rhs = fq2_mul(fq2_mul(x, x, p), x, p)
    return lhs == ((rhs[0] + curve.b2[0]) % p, (rhs[1] + curve.b2[1]) % p)


def g1_in_subgroup(curve: Curve, x: int, y: int) -> bool:
    if curve.name == "bn254":  # cofactor 1: every curve point is in the group
        return True
    return _mul_is_zero(_fq(curve.p), (x, y), curve.r)


def g2_in_subgroup(curve: Curve, x: Fq2, y: Fq2) -> bool:
    return _mul_is_zero(_fq2(curve.p), (x, y), curve.r)


def fq_is_largest(y: int, p: int) -> bool:
    """zcash's 'lexicographically largest': y > (p-1)/2, i.e. y > -y."""
    return y > (p - 1) // 2


def fq2_is_largest(y: Fq2, p: int) -> bool:
    if y[1] != 0:
        return fq_is_largest(y[1], p)
    return fq_is_largest(y[0], p)
