"""From R1CS and witness to the QAP data the prover needs: a, b, c on the domain and h.

Both H conventions of docs/ARCHITECTURE.md are handled here so the prover and the setup agree
on domains: snarkjs (ω from the smallest non-residue, odd coset of the 2n-th roots, evaluations)
and bellman (ω and coset shift from Fr's multiplicative generator, coefficients).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np

from cuzk.backends.base import Backend
from cuzk.curves import Curve, get_curve
from cuzk.formats.r1cs import add_snarkjs_public_rows
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.layout import fr_from_ints, fr_to_ints
from cuzk.model.r1cs import CSR, R1CS


def domain_size_for(n_rows: int) -> int:
    """Smallest power of two ≥ n_rows (at least 2, so the odd coset is well defined)."""
    n = 2
    while n < n_rows:
        n *= 2
    return n


def domain_params(curve: Curve | str, n: int, convention: str) -> tuple[int, int, bool]:
    """(ω, coset shift, coefficients?) for a domain of size n in a key convention."""
    c = get_curve(curve)
    if convention == "snarkjs":
        return c.root_of_unity(n, "snarkjs"), c.root_of_unity(2 * n, "snarkjs"), False
    if convention == "bellman":
        return c.root_of_unity(n, "bellman"), c.fr_generator, True
    raise ValueError(f"unknown H convention {convention!r}")


def has_public_rows(r1cs: R1CS) -> bool:
    """Whether the matrices already end with the rows binding w_0 .. w_n_public."""
    return r1cs.n_rows >= r1cs.n_constraints + r1cs.n_public + 1


def with_public_rows(r1cs: R1CS) -> R1CS:
    """The R1CS with one row per public wire (incl. the constant one) appended: A = w_i,
    B = C = 0. Both toolchains add these so the verifier's IC points are independent of each
    other and of the private ones. Returns r1cs itself when the rows are already there."""
    if has_public_rows(r1cs):
        return r1cs
    if r1cs.n_rows != r1cs.n_constraints:
        raise ValueError(
            f"R1CS has {r1cs.n_rows} rows for {r1cs.n_constraints} constraints and "
            f"{r1cs.n_public} public inputs: neither with nor without the public-input rows"
        )
    return add_snarkjs_public_rows(r1cs)


def witness_array(curve: Curve | str, witness: np.ndarray | Sequence[int]) -> np.ndarray:
    """Witness as canonical Fr limbs (n_vars, 4); accepts a list of ints too."""
    if isinstance(witness, np.ndarray) and witness.dtype == np.uint64 and witness.ndim == 2:
        return np.ascontiguousarray(witness)
    return fr_from_ints(curve, [int(v) for v in witness])


def _native_fn(name: str):
    """cuzk._native.<name>, or None when the extension is not built."""
    try:
        from cuzk import _native

        return getattr(_native, name)
    except (ImportError, AttributeError):
        return None


def fr_mul_arrays(curve: Curve | str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise a·b over Fr (native when built, Python ints otherwise)."""
    c = get_curve(curve)
    mul = _native_fn("fr_mul")
    if mul is not None and len(a):
        return mul(c.name, np.ascontiguousarray(a), np.ascontiguousarray(b))
    return fr_from_ints(c, [x * y % c.r for x, y in zip(fr_to_ints(a), fr_to_ints(b), strict=True)])


def evaluate(
    r1cs: R1CS,
    witness: np.ndarray,
    backend: Backend,
    domain_size: int,
    out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """a = A·w, b = B·w, c = C·w (None when the C matrix is empty, as in snarkjs zkeys),
    each zero-padded to the domain.

    With out (three (domain_size, 4) uint64 arrays, e.g. pinned partition buffers) the results
    are written there and returned: rows straight from the backend when its csr_matvec takes
    out=, the padding zeroed. An out array whose matrix is empty is zeroed, except C's, which
    is left alone (c is None then)."""
    c = r1cs.curve
    if witness.shape[0] != r1cs.n_vars:
        raise ValueError(f"witness has {witness.shape[0]} values, the circuit {r1cs.n_vars}")
    if r1cs.n_rows > domain_size:
        raise ValueError(f"{r1cs.n_rows} constraint rows do not fit a domain of {domain_size}")
    if out is not None:
        for x in out:
            if (not isinstance(x, np.ndarray) or x.shape != (domain_size, 4)
                    or x.dtype != np.uint64 or not x.flags.c_contiguous or not x.flags.writeable):
                raise ValueError(f"out arrays must be writable C-contiguous uint64 "
                                 f"({domain_size}, 4) arrays")
    direct = _takes_out(backend)

    def matvec(m: CSR, dst: np.ndarray | None) -> np.ndarray:
        if dst is None:
            dst = np.zeros((domain_size, 4), dtype=np.uint64)
            if not m.nnz:
                return dst
        else:
            dst[m.n_rows if m.nnz else 0 :] = 0
        if m.nnz:
            rows = dst[: m.n_rows]
            if direct:
                backend.csr_matvec(c, m.indptr, m.indices, m.values, witness, out=rows)  # type: ignore[call-arg]
            else:
                rows[...] = backend.csr_matvec(c, m.indptr, m.indices, m.values, witness)
        return dst

    oa, ob, oc = out if out is not None else (None, None, None)
    cv = matvec(r1cs.c, oc) if r1cs.c.nnz else None
    return matvec(r1cs.a, oa), matvec(r1cs.b, ob), cv


_out_support: dict[type, bool] = {}


def _takes_out(backend: Backend) -> bool:
    """Whether backend.csr_matvec accepts out= (writes into the caller's array)."""
    t = type(backend)
    hit = _out_support.get(t)
    if hit is None:
        try:
            params = inspect.signature(backend.csr_matvec).parameters
            hit = "out" in params
        except (TypeError, ValueError):
            hit = False
        _out_support[t] = hit
    return hit


def check_satisfied(r1cs: R1CS, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """Raise UnsatisfiedConstraint naming the first row where a·b ≠ c."""
    m = r1cs.n_rows
    i = _first_mismatch(r1cs.curve, a[:m], b[:m], c[:m])
    if i < 0:
        return
    raise UnsatisfiedConstraint(i, constraint_label(r1cs, i),
                                describe_row(a[i : i + 1], b[i : i + 1], c[i : i + 1]))


def _first_mismatch(curve: Curve | str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> int:
    """First row where a·b ≠ c (canonical Fr rows), or −1. Native: two products per row and no
    product array."""
    fn = _native_fn("fr_mul_mismatch")
    if fn is not None and len(a):
        cs = (np.ascontiguousarray(x) for x in (a, b, c))
        return int(fn(get_curve(curve).name, *cs))
    bad = np.nonzero((fr_mul_arrays(curve, a, b) != c).any(axis=1))[0]
    return int(bad[0]) if len(bad) else -1


def constraint_label(r1cs: R1CS, i: int) -> str | None:
    """A human name for row i: the circuit's own label if the loader kept one, else the
    signals it touches (from wire labels), else None."""
    labels = r1cs.labels or {}
    own = labels.get("constraints", {}) if isinstance(labels.get("constraints"), dict) else {}
    if i in own:
        return str(own[i])
    if i >= r1cs.n_constraints:
        return f"public input binding row for wire {i - r1cs.n_constraints}"
    wires = labels.get("wires", labels)
    names: list[str] = []
    for m in (r1cs.a, r1cs.b, r1cs.c):
        for k in range(int(m.indptr[i]), int(m.indptr[i + 1])):
            name = wires.get(int(m.indices[k])) if isinstance(wires, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
    return ", ".join(names[:6]) + (" ..." if len(names) > 6 else "") if names else None


def describe_row(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> str:
    """The values of one unsatisfied row (each a (1, 4) canonical array)."""
    av, bv, cv = (fr_to_ints(x)[0] for x in (a, b, c))
    return f"A·w = {av}, B·w = {bv}, C·w = {cv} (A·w·B·w ≠ C·w)"


def compute_h(
    curve: Curve | str,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    convention: str,
    h_len: int,
    backend: Backend,
) -> np.ndarray:
    """The scalars that multiply the key's H points (h_len of them) in its convention."""
    cv = get_curve(curve)
    n = len(a)
    omega, shift, coefficients = domain_params(cv, n, convention)
    h = backend.groth16_h(cv, a, b, c, omega, shift, coefficients)
    if h_len > n:
        raise ValueError(f"key has {h_len} H points for a domain of {n}")
    return np.ascontiguousarray(h[:h_len])
