"""Square matrices over Fr (lists of rows of ints mod r) and the MDS matrices Poseidon uses.

Conventions follow neptune's: `mat_vec(m, v)` is M·v (row i dotted with v) and `vec_mat(v, m)`
is vᵀ·M (column j dotted with v). The hashers and the circuit apply the pre-sparse and sparse
matrices as vᵀ·M, the dense MDS matrix (symmetric) either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuzk.curves import BLS12_381

R = BLS12_381.r

Matrix = list[list[int]]


def identity(n: int) -> Matrix:
    return [[int(i == j) for j in range(n)] for i in range(n)]


def transpose(m: Matrix) -> Matrix:
    return [list(col) for col in zip(*m)]


def mat_mul(a: Matrix, b: Matrix) -> Matrix:
    bt = transpose(b)
    return [[sum(x * y for x, y in zip(row, col)) % R for col in bt] for row in a]


def mat_vec(m: Matrix, v: list[int]) -> list[int]:
    return [sum(x * y for x, y in zip(row, v)) % R for row in m]


def vec_mat(v: list[int], m: Matrix) -> list[int]:
    return mat_vec(transpose(m), v)


def minor(m: Matrix, i: int, j: int) -> Matrix:
    return [row[:j] + row[j + 1 :] for k, row in enumerate(m) if k != i]


def invert(m: Matrix) -> Matrix:
    """Gauss-Jordan inverse; raises ValueError for a singular matrix."""
    n = len(m)
    a = [list(row) + [int(i == j) for j in range(n)] for i, row in enumerate(m)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col] % R), None)
        if pivot is None:
            raise ValueError("singular matrix")
        a[col], a[pivot] = a[pivot], a[col]
        inv = pow(a[col][col], -1, R)
        a[col] = [x * inv % R for x in a[col]]
        for r in range(n):
            f = a[r][col]
            if r != col and f:
                pr = a[col]
                a[r] = [(x - f * y) % R for x, y in zip(a[r], pr)]
    return [row[n:] for row in a]


def cauchy_mds(t: int) -> Matrix:
    """neptune's MDS matrix: 1 / (x_i + y_j) with x = 0..t-1, y = t..2t-1 (symmetric)."""
    return [[pow(i + t + j, -1, R) for j in range(t)] for i in range(t)]


@dataclass(frozen=True)
class Sparse:
    """A matrix that is the identity but for a dense first row and column: `w_hat` is the
    first column (w_hat[0] the corner), `v_rest` the first row without the corner."""

    w_hat: tuple[int, ...]
    v_rest: tuple[int, ...]

    def to_matrix(self) -> Matrix:
        m = identity(len(self.w_hat))
        for i, x in enumerate(self.w_hat):
            m[i][0] = x
        m[0][1:] = list(self.v_rest)
        return m


def mat_pow(m: Matrix, e: int) -> Matrix:
    result = identity(len(m))
    base = m
    while e:
        if e & 1:
            result = mat_mul(result, base)
        e >>= 1
        if e:
            base = mat_mul(base, base)
    return result


def factor_to_sparse(base: Matrix, n: int) -> tuple[Matrix, list[Sparse]]:
    """The pre-sparse matrix and n sparse matrices that replace `base` in the last full round of
    the first half and the n partial rounds (in application order, all applied as vᵀ·M).

    neptune works back from the last partial round: the current matrix C (first `base`) is
    split into C = C'·C'' with C' = diag(1, Ĉ) (Ĉ its minor at (0, 0)) and C'' sparse (C's
    first row; below the corner of its first column Ĉ⁻¹·w, w being C's first column below the
    corner); C'' stays with that round and the round before gets base·C'. Since
    base·diag(1, X) keeps base's first column and has minor B̂·X, the k-th split (from 0) has
    Ĉ = B̂^(k+1), first row (b₀₀, b₀ᵀ·B̂^k) and w = base's own first column, which is what is
    computed here without the k matrix products.
    """
    t = len(base)
    b_hat = minor(base, 0, 0)
    b_hat_inv = invert(b_hat)
    w = [base[i][0] for i in range(1, t)]
    v = list(base[0][1:])
    w_hat = w
    sparse: list[Sparse] = []
    for _ in range(n):
        w_hat = mat_vec(b_hat_inv, w_hat)
        sparse.append(Sparse(w_hat=(base[0][0], *w_hat), v_rest=tuple(v)))
        v = vec_mat(v, b_hat)
    sparse.reverse()
    x = mat_pow(b_hat, n)
    pre_sparse = mat_mul(base, [[int(j == 0) for j in range(t)]] + [[0] + row for row in x])
    return pre_sparse, sparse
