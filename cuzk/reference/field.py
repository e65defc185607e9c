"""Prime fields and the quadratic extension Fq2 = Fq[u]/(u^2 + 1) over Python ints.

Elements are plain ints (prime field) or (c0, c1) tuples (Fq2). Written for clarity; the native
core is tested against this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Fq2Elem = tuple[int, int]


class PrimeField:
    """Arithmetic mod a prime; elements are ints in [0, p)."""

    def __init__(self, p: int) -> None:
        self.p = p
        self.zero = 0
        self.one = 1

    def __repr__(self) -> str:
        return f"PrimeField({self.p:#x})"

    def from_int(self, v: int) -> int:
        return v % self.p

    def add(self, a: int, b: int) -> int:
        return (a + b) % self.p

    def sub(self, a: int, b: int) -> int:
        return (a - b) % self.p

    def neg(self, a: int) -> int:
        return -a % self.p

    def mul(self, a: int, b: int) -> int:
        return a * b % self.p

    def sqr(self, a: int) -> int:
        return a * a % self.p

    def mul_int(self, a: int, k: int) -> int:
        return a * k % self.p

    def inv(self, a: int) -> int:
        if a % self.p == 0:
            raise ZeroDivisionError("inverse of zero")
        return pow(a, -1, self.p)

    def pow(self, a: int, e: int) -> int:
        return pow(a, e, self.p)

    def is_zero(self, a: int) -> bool:
        return a % self.p == 0

    def eq(self, a: int, b: int) -> bool:
        return (a - b) % self.p == 0

    def sqrt(self, a: int) -> int | None:
        """A square root of a, or None if a is a non-residue (Tonelli-Shanks)."""
        p = self.p
        a %= p
        if a == 0:
            return 0
        if pow(a, (p - 1) // 2, p) != 1:
            return None
        if p % 4 == 3:
            return pow(a, (p + 1) // 4, p)
        q, s = p - 1, 0
        while q % 2 == 0:
            q //= 2
            s += 1
        z = 2
        while pow(z, (p - 1) // 2, p) != p - 1:
            z += 1
        m, c, t, x = s, pow(z, q, p), pow(a, q, p), pow(a, (q + 1) // 2, p)
        while t != 1:
            i, t2 = 0, t
            while t2 != 1:
                t2 = t2 * t2 % p
                i += 1
            b = pow(c, 1 << (m - i - 1), p)
            m, c, t, x = i, b * b % p, t * b * b % p, x * b % p
        return x


class Fq2Field:
    """Fq[u]/(u^2 + 1) (both BLS12-381 and BN254 build their G2 twist field this way)."""

    def __init__(self, p: int) -> None:
        self.p = p
        self.zero: Fq2Elem = (0, 0)
        self.one: Fq2Elem = (1, 0)

    def __repr__(self) -> str:
        return f"Fq2Field({self.p:#x})"

    def from_int(self, v: Any) -> Fq2Elem:
        if isinstance(v, tuple):
            return (v[0] % self.p, v[1] % self.p)
        return (v % self.p, 0)

    def add(self, a: Fq2Elem, b: Fq2Elem) -> Fq2Elem:
        p = self.p
        return ((a[0] + b[0]) % p, (a[1] + b[1]) % p)

    def sub(self, a: Fq2Elem, b: Fq2Elem) -> Fq2Elem:
        p = self.p
        return ((a[0] - b[0]) % p, (a[1] - b[1]) % p)

    def neg(self, a: Fq2Elem) -> Fq2Elem:
        return (-a[0] % self.p, -a[1] % self.p)

    def mul(self, a: Fq2Elem, b: Fq2Elem) -> Fq2Elem:
        # (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + (a0 b1 + a1 b0) u, since u^2 = -1
        p = self.p
        return ((a[0] * b[0] - a[1] * b[1]) % p, (a[0] * b[1] + a[1] * b[0]) % p)

    def sqr(self, a: Fq2Elem) -> Fq2Elem:
        return self.mul(a, a)

    def mul_int(self, a: Fq2Elem, k: int) -> Fq2Elem:
        return (a[0] * k % self.p, a[1] * k % self.p)

    def inv(self, a: Fq2Elem) -> Fq2Elem:
        # 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2)
        p = self.p
        norm = (a[0] * a[0] + a[1] * a[1]) % p
        if norm == 0:
            raise ZeroDivisionError("inverse of zero")
        t = pow(norm, -1, p)
        return (a[0] * t % p, -a[1] * t % p)

    def pow(self, a: Fq2Elem, e: int) -> Fq2Elem:
        result, base = self.one, a
        while e:
            if e & 1:
                result = self.mul(result, base)
            base = self.mul(base, base)
            e >>= 1
        return result

    def is_zero(self, a: Fq2Elem) -> bool:
        return a[0] % self.p == 0 and a[1] % self.p == 0

    def sqrt(self, a: Fq2Elem) -> Fq2Elem | None:
        """A square root of a, or None if a is a non-residue; through the norm: if x^2 = a then
        N(x)^2 = N(a), and x0^2 = (a0 ± N(x)) / 2."""
        p = self.p
        base = PrimeField(p)
        a0, a1 = a[0] % p, a[1] % p
        if a1 == 0:
            s = base.sqrt(a0)
            if s is not None:
                return (s, 0)
            s = base.sqrt(-a0 % p)  # a0 = -(s^2) = (s·u)^2
            return None if s is None else (0, s)
        n = base.sqrt((a0 * a0 + a1 * a1) % p)
        if n is None:
            return None
        inv2 = (p + 1) // 2
        for cand in ((a0 + n) * inv2 % p, (a0 - n) * inv2 % p):
            x0 = base.sqrt(cand)
            if x0 is not None and x0 != 0:
                x1 = a1 * pow(2 * x0, -1, p) % p
                if self.mul((x0, x1), (x0, x1)) == (a0, a1):
                    return (x0, x1)
        return None

    def eq(self, a: Fq2Elem, b: Fq2Elem) -> bool:
        return (a[0] - b[0]) % self.p == 0 and (a[1] - b[1]) % self.p == 0


def batch_inverse(values: Sequence[int], m: int) -> list[int]:
    """Inverses of all values mod m with one modular inversion (Montgomery's trick); 0 -> 0."""
    prefix: list[int] = []
    acc = 1
    for v in values:
        prefix.append(acc)
        if v % m:
            acc = acc * v % m
    inv = pow(acc, -1, m)
    out = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        v = values[i] % m
        if v:
            out[i] = prefix[i] * inv % m
            inv = inv * v % m
    return out


# Scalar-field helpers (Fr) over plain ints, used by the NTT and the Groth16 code.


def fr_add(a: int, b: int, r: int) -> int:
    return (a + b) % r


def fr_sub(a: int, b: int, r: int) -> int:
    return (a - b) % r


def fr_mul(a: int, b: int, r: int) -> int:
    return a * b % r


def fr_inv(a: int, r: int) -> int:
    """Inverse mod r, with 0 -> 0 (the native batch inverse's convention)."""
    return pow(a, -1, r) if a % r else 0
