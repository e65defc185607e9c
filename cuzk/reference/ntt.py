"""Number-theoretic transforms over Fr and the Groth16 quotient h, on lists of Python ints.

Conventions follow docs/ARCHITECTURE.md: a forward transform with shift s evaluates the
polynomial at s·ω^i; an inverse transform with shift s returns the coefficients of the
polynomial whose evaluations on s·⟨ω⟩ are given.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.curves import Curve, get_curve


def _check_root(omega: int, n: int, r: int) -> None:
    if n & (n - 1) or n == 0:
        raise ValueError(f"NTT size {n} is not a power of two")
    if pow(omega, n, r) != 1 or (n > 1 and pow(omega, n // 2, r) == 1):
        raise ValueError(f"omega is not a primitive {n}-th root of unity")


def dft_naive(values: Sequence[int], omega: int, r: int) -> list[int]:
    """out[i] = Σ_j values[j]·ω^(ij): the definition, O(n^2)."""
    n = len(values)
    out = []
    for i in range(n):
        w = pow(omega, i, r)
        acc, x = 0, 1
        for v in values:
            acc += v * x
            x = x * w % r
        out.append(acc % r)
    return out


def _fft(values: list[int], omega: int, r: int) -> list[int]:
    n = len(values)
    if n == 1:
        return [values[0] % r]
    even = _fft(values[0::2], omega * omega % r, r)
    odd = _fft(values[1::2], omega * omega % r, r)
    out = [0] * n
    w = 1
    half = n // 2
    for i in range(half):
        t = w * odd[i] % r
        out[i] = (even[i] + t) % r
        out[i + half] = (even[i] - t) % r
        w = w * omega % r
    return out


def ntt(
    curve: Curve | str,
    values: Sequence[int],
    omega: int,
    inverse: bool = False,
    shift: int | None = None,
    naive: bool = False,
) -> list[int]:
    """Forward/inverse (coset) NTT of len(values) = n elements over Fr of `curve`."""
    r = get_curve(curve).r
    n = len(values)
    _check_root(omega, n, r)
    transform = dft_naive if naive else _fft
    vals = [int(v) % r for v in values]
    if not inverse:
        if shift is not None:
            vals = _scale_powers(vals, shift, r)
        return transform(vals, omega, r)
    out = transform(vals, pow(omega, -1, r), r)
    n_inv = pow(n, -1, r)
    out = [v * n_inv % r for v in out]
    if shift is not None:
        out = _scale_powers(out, pow(shift, -1, r), r)
    return out


def _scale_powers(vals: list[int], s: int, r: int) -> list[int]:
    out, x = [], 1
    for v in vals:
        out.append(v * x % r)
        x = x * s % r
    return out


def groth16_h(
    curve: Curve | str,
    a: Sequence[int],
    b: Sequence[int],
    c: Sequence[int],
    omega: int,
    shift: int,
    coefficients: bool,
) -> list[int]:
    """The quotient data of docs/ARCHITECTURE.md from evaluations a, b, c on ⟨ω⟩.

    coefficients=False (snarkjs): a·b − c evaluated on s·⟨ω⟩.
    coefficients=True (bellman): coefficients of h = (a·b − c)/Z, Z = X^n − 1, via the coset
    (Z is the constant s^n − 1 there).
    """
    cv = get_curve(curve)
    r = cv.r
    n = len(a)
    if not (len(b) == len(c) == n):
        raise ValueError("a, b, c must have the same length")
    coset = [ntt(cv, ntt(cv, v, omega, inverse=True), omega, shift=shift) for v in (a, b, c)]
    t = [(x * y - z) % r for x, y, z in zip(*coset, strict=True)]
    if not coefficients:
        return t
    z_inv = pow((pow(shift, n, r) - 1) % r, -1, r)
    return ntt(cv, [v * z_inv % r for v in t], omega, inverse=True, shift=shift)


# --- polynomials in coefficient form (lowest degree first), for tests and setup ---------------


def poly_mul(p: Sequence[int], q: Sequence[int], r: int) -> list[int]:
    if not p or not q:
        return []
    out = [0] * (len(p) + len(q) - 1)
    for i, x in enumerate(p):
        if x:
            for j, y in enumerate(q):
                out[i + j] = (out[i + j] + x * y) % r
    return out


def poly_divmod(num: Sequence[int], den: Sequence[int], r: int) -> tuple[list[int], list[int]]:
    """Schoolbook long division: num = q·den + rem with deg rem < deg den."""
    den = list(den)
    while den and den[-1] % r == 0:
        den.pop()
    if not den:
        raise ZeroDivisionError("polynomial division by zero")
    rem = [v % r for v in num]
    lead_inv = pow(den[-1], -1, r)
    dq = len(rem) - len(den) + 1
    q = [0] * max(dq, 0)
    for k in range(dq - 1, -1, -1):
        coef = rem[k + len(den) - 1] * lead_inv % r
        q[k] = coef
        if coef:
            for j, d in enumerate(den):
                rem[k + j] = (rem[k + j] - coef * d) % r
    return q, rem[: len(den) - 1]


def poly_eval(p: Sequence[int], x: int, r: int) -> int:
    acc = 0
    for v in reversed(p):
        acc = (acc * x + v) % r
    return acc
