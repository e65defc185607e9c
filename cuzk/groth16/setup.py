"""Development trusted setup — NOT FOR PRODUCTION.

The toxic waste (τ, α, β, γ, δ) is derived deterministically from a seed, so anyone who knows
the seed can forge proofs for the resulting key. This exists to make keys for tests,
benchmarks and demos of our own circuits; real deployments need a multi-party ceremony.

Both H conventions are produced:
- "snarkjs": H_i = L^{(2n)}_{2i+1}(τ)/δ for i < n, the Lagrange basis of the 2n-th roots at the
  odd points (what snarkjs's zkey_new puts in section 9): Σ_i t(ω_{2n}^{2i+1})·H_i = t(τ)/δ for
  t = a·b − c = h·Z, because t vanishes on the even points;
- "bellman": H_i = τ^i·Z(τ)/δ for i < n − 1 (coefficient basis).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from cuzk.backends import get_backend
from cuzk.backends.base import Backend
from cuzk.curves import Curve
from cuzk.groth16 import qap
from cuzk.layout import fr_from_ints, fr_to_ints, g1_from_ints, g2_from_ints
from cuzk.model.keys import HConvention, ProvingKey, VerifyingKey
from cuzk.model.r1cs import CSR, R1CS
from cuzk.reference.field import batch_inverse

WARNING = "DEVELOPMENT SETUP, NOT FOR PRODUCTION: the toxic waste is derived from the seed"


@dataclass(frozen=True)
class ToxicWaste:
    tau: int
    alpha: int
    beta: int
    gamma: int
    delta: int


def derive_toxic_waste(curve: Curve, seed: bytes | str | int, domain_size: int) -> ToxicWaste:
    """NOT FOR PRODUCTION: τ, α, β, γ, δ from SHA-512 of the seed (non-zero; τ off the 2n-th
    roots of unity so no Lagrange denominator vanishes)."""
    if isinstance(seed, int):
        seed = str(seed)
    if isinstance(seed, str):
        seed = seed.encode()
    r = curve.r

    def draw(label: str) -> int:
        counter = 0
        while True:
            msg = b"cuzk dev setup v1|" + curve.name.encode() + b"|" + label.encode()
            digest = hashlib.sha512(msg + b"|" + str(counter).encode() + b"|" + seed).digest()
            v = int.from_bytes(digest, "big") % r
            if v and (label != "tau" or pow(v, 2 * domain_size, r) != 1):
                return v
            counter += 1

    return ToxicWaste(*(draw(x) for x in ("tau", "alpha", "beta", "gamma", "delta")))


def lagrange_at(tau: int, n: int, omega: int, r: int) -> list[int]:
    """L_i(τ) = ω^i (τ^n − 1) / (n (τ − ω^i)) for the domain ⟨ω⟩ of size n."""
    pows = [1] * n
    for i in range(1, n):
        pows[i] = pows[i - 1] * omega % r
    dens = batch_inverse([n * (tau - w) % r for w in pows], r)
    zt = (pow(tau, n, r) - 1) % r
    return [w * zt % r * d % r for w, d in zip(pows, dens, strict=True)]


def lagrange_array(curve: Curve, tau: int, n: int, omega: int) -> np.ndarray:
    """lagrange_at as canonical Fr limbs (n, 4), natively when the extension is built."""
    try:
        from cuzk import _native

        native = _native.fr_lagrange_at
    except (ImportError, AttributeError):
        native = None
    if native is not None and n >= 2048:
        t, w = fr_from_ints(curve, [tau, omega])
        return native(curve.name, t, n, w, threads=0)
    return fr_from_ints(curve, lagrange_at(tau, n, omega, curve.r))


def _transpose(m: CSR, n_cols: int) -> CSR:
    rows = np.repeat(np.arange(m.n_rows, dtype=np.int64), np.diff(m.indptr))
    order = np.argsort(m.indices, kind="stable")
    counts = np.bincount(m.indices, minlength=n_cols) if m.nnz else np.zeros(n_cols, np.int64)
    indptr = np.zeros(n_cols + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return CSR(
        indptr=indptr,
        indices=np.ascontiguousarray(rows[order]),
        values=np.ascontiguousarray(m.values.reshape(-1, 4)[order]),
        n_cols=m.n_rows,
    )


def _column_evals(m: CSR, n_vars: int, lag: np.ndarray, curve: Curve, be: Backend) -> np.ndarray:
    """u_j(τ) = Σ_i M[i][j]·L_i(τ) for each wire j: the transposed matrix times the basis."""
    if m.nnz == 0:
        return np.zeros((n_vars, 4), dtype=np.uint64)
    t = _transpose(m, n_vars)
    out = be.csr_matvec(curve, t.indptr, t.indices, t.values, lag[: m.n_rows])
    return np.ascontiguousarray(out.get() if hasattr(out, "get") else out, dtype=np.uint64)


def _fr_op(curve: Curve, op: str, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """a + b or a·b over Fr, elementwise on canonical (n, 4) arrays; an int b applies to every
    row. Native when the extension is built: keys of 2^24 rows would otherwise spend minutes
    in Python ints."""
    if isinstance(b, int):
        b = np.broadcast_to(fr_from_ints(curve, [b]), a.shape)
    native = qap._native_fn(f"fr_{op}")
    if native is not None and len(a):
        return native(curve.name, np.ascontiguousarray(a), np.ascontiguousarray(b))
    r = curve.r
    xs, ys = fr_to_ints(a), fr_to_ints(np.asarray(b))
    res = [x * y % r for x, y in zip(xs, ys, strict=True)] if op == "mul" else \
        [(x + y) % r for x, y in zip(xs, ys, strict=True)]
    return fr_from_ints(curve, res)


def _fr_powers(curve: Curve, x: int, n: int) -> np.ndarray:
    """[1, x, ..., x^(n-1)] as canonical Fr (n, 4)."""
    native = qap._native_fn("fr_powers")
    if native is not None:
        return native(curve.name, fr_from_ints(curve, [x]), n)
    out, v = [], 1
    for _ in range(n):
        out.append(v)
        v = v * x % curve.r
    return fr_from_ints(curve, out)


def setup(
    r1cs: R1CS,
    seed: bytes | str | int,
    convention: HConvention = "snarkjs",
    backend: Backend | str | None = None,
) -> ProvingKey:
    """NOT FOR PRODUCTION: a proving key (with .vk) for r1cs from a seed."""
    be = get_backend(backend or "auto") if not hasattr(backend, "g1_mul") else backend
    curve = r1cs.curve
    r = curve.r
    full = qap.with_public_rows(r1cs)
    n = qap.domain_size_for(full.n_rows)
    tw = derive_toxic_waste(curve, seed, n)
    omega, _, _ = qap.domain_params(curve, n, convention)
    lag = lagrange_array(curve, tw.tau, n, omega)

    u = _column_evals(full.a, full.n_vars, lag, curve, be)
    v = _column_evals(full.b, full.n_vars, lag, curve, be)
    w = _column_evals(full.c, full.n_vars, lag, curve, be)
    n_pub1 = full.n_public + 1
    gamma_inv, delta_inv = pow(tw.gamma, -1, r), pow(tw.delta, -1, r)
    combo = _fr_op(curve, "add", _fr_op(curve, "add", _fr_op(curve, "mul", u, tw.beta),
                                        _fr_op(curve, "mul", v, tw.alpha)), w)
    ic = _fr_op(curve, "mul", combo[:n_pub1], gamma_inv)
    ell = _fr_op(curve, "mul", combo[n_pub1:], delta_inv)

    if convention == "snarkjs":
        w2 = curve.root_of_unity(2 * n, "snarkjs")
        h = _fr_op(curve, "mul", lagrange_array(curve, tw.tau, 2 * n, w2)[1::2], delta_inv)
    else:
        zt = (pow(tw.tau, n, r) - 1) % r
        h = _fr_op(curve, "mul", _fr_powers(curve, tw.tau, n - 1), zt * delta_inv % r)

    nv = full.n_vars
    g1_scalars = np.concatenate([u, v, ic, ell, h, fr_from_ints(curve, [tw.alpha, tw.beta, tw.delta])])
    g1_pts = be.g1_mul(curve, g1_from_ints(curve, [curve.g1])[0], g1_scalars)
    g2_scalars = np.concatenate([v, fr_from_ints(curve, [tw.beta, tw.gamma, tw.delta])])
    g2_pts = be.g2_mul(curve, g2_from_ints(curve, [curve.g2])[0], g2_scalars)


    o = 0

    def take(arr: np.ndarray, k: int) -> np.ndarray:
        nonlocal o
        out = np.ascontiguousarray(arr[o : o + k])
        o += k
        return out

    a_g1, b_g1, ic_g1 = take(g1_pts, nv), take(g1_pts, nv), take(g1_pts, n_pub1)
    l_g1, h_g1 = take(g1_pts, nv - n_pub1), take(g1_pts, len(h))
    alpha_g1, beta_g1, delta_g1 = (take(g1_pts, 1)[0] for _ in range(3))
    o = 0
    b_g2 = take(g2_pts, nv)
    beta_g2, gamma_g2, delta_g2 = (take(g2_pts, 1)[0] for _ in range(3))

    vk = VerifyingKey(
        curve=curve, alpha_g1=alpha_g1, beta_g2=beta_g2, gamma_g2=gamma_g2, delta_g2=delta_g2, ic=ic_g1
    )
    return ProvingKey(
        curve=curve,
        n_vars=nv,
        n_public=full.n_public,
        domain_size=n,
        alpha_g1=alpha_g1,
        beta_g1=beta_g1,
        beta_g2=beta_g2,
        delta_g1=delta_g1,
        delta_g2=delta_g2,
        a_g1=a_g1,
        b_g1=b_g1,
        b_g2=b_g2,
        l_g1=l_g1,
        h_g1=h_g1,
        h_convention=convention,
        vk=vk,
        r1cs=full,
        meta={"setup": WARNING},
    )
