"""snarkjs Groth16 `.zkey` files (iden3 container "zkey", version 1) <-> ProvingKey.

Sections: 1 protocol id (1 = Groth16); 2 header (n8q, q, n8r, r, nVars, nPublic, domainSize,
α₁, β₁, β₂, γ₂, δ₁, δ₂); 3 IC (nPublic+1 G1); 4 coefficients; 5 A (nVars G1); 6 B1 (nVars
G1); 7 B2 (nVars G2); 8 C = L query (nVars-nPublic-1 G1); 9 H (domainSize G1, for the odd coset
of the 2·domainSize-th roots); 10 MPC contributions (circuit hash + ceremony transcript).

Points are affine, little-endian Montgomery coordinates, infinity all zeros, G2 as (c0, c1):
exactly our array layout, so the point sections become numpy views of the memory-mapped file.

The coefficient section lists (matrix 0=A / 1=B, constraint, signal, value) for the circuit's
constraints followed by snarkjs's input-binding rows (see `r1cs.add_snarkjs_public_rows`).
Values are stored as v·R² mod r with R = 2^256 (zkey_new.js multiplies by R2r; readZKey
multiplies by R⁻²): snarkjs's prover multiplies them, in Montgomery arithmetic, by the raw
canonical witness, which yields v·w in Montgomery form. C is not stored; the prover uses
c = a∘b on the domain, exact for a satisfying witness (`pk.meta["c_from_ab"]`).
"""

from __future__ import annotations

import hashlib

import numpy as np

from cuzk.curves import Curve
from cuzk.formats._field import fr_mul_const
from cuzk.formats.binfile import (
    BinFile,
    BinWriter,
    PathLike,
    Reader,
    check_below,
    curve_from_q,
    le_bytes,
    read_binfile,
    u32,
)
from cuzk.formats.errors import FormatError
from cuzk.model.keys import ProvingKey, VerifyingKey
from cuzk.model.r1cs import CSR, R1CS

GROTH16_PROTOCOL_ID = 1
_PROTOCOLS = {1: "groth16", 2: "plonk", 10: "fflonk"}
_R = 1 << 256  # Montgomery radix of Fr in snarkjs (n8r = 32)

_COEF_DTYPE = np.dtype([("m", "<u4"), ("c", "<u4"), ("s", "<u4"), ("v", "<u8", (4,))])


def _aligned(a: np.ndarray) -> np.ndarray:
    """A view when the file offset is 8-byte aligned, else an aligned copy (native code and
    GPU transfers expect aligned uint64)."""
    return a if a.ctypes.data % 8 == 0 else a.copy()


class _Header:
    def __init__(self, bf: BinFile) -> None:
        sec = "section 1 (protocol)"
        rd = Reader(bf.section(1, "protocol"), bf.name, sec)
        proto = rd.u32("protocol id")
        rd.done()
        if proto != GROTH16_PROTOCOL_ID:
            kind = _PROTOCOLS.get(proto, f"unknown protocol id {proto}")
            raise FormatError(bf.name, f"not a Groth16 zkey ({kind})", sec)
        sec = "section 2 (Groth16 header)"
        rd = Reader(bf.section(2, "Groth16 header"), bf.name, sec)
        n8q = rd.u32("n8q")
        if n8q not in (32, 48):
            raise rd.fail(f"base field size n8q={n8q}; expected 32 or 48")
        q = rd.bigint(n8q, "q")
        self.curve: Curve = curve_from_q(q, bf.name, sec)
        c = self.curve
        if n8q != c.field_bytes:
            raise rd.fail(f"n8q={n8q} does not match {c.name} ({c.field_bytes})")
        n8r = rd.u32("n8r")
        if n8r != 32:
            raise rd.fail(f"scalar field size n8r={n8r}; expected 32")
        r = rd.bigint(n8r, "r")
        if r != c.r:
            raise rd.fail(f"scalar field prime does not match {c.name}")
        self.n_vars = rd.u32("nVars")
        self.n_public = rd.u32("nPublic")
        self.domain_size = rd.u32("domainSize")
        if self.n_vars < self.n_public + 1:
            raise rd.fail(f"nVars={self.n_vars} < nPublic+1={self.n_public + 1}")
        d = self.domain_size
        if d < 2 or d & (d - 1) or d.bit_length() - 1 > c.fr_two_adicity:
            raise rd.fail(f"domainSize={d} is not a power of two within Fr's two-adicity")
        L = c.limbs
        g1 = lambda what: rd.limbs(2, n8q, what).reshape(2, L).copy()  # noqa: E731
        g2 = lambda what: rd.limbs(4, n8q, what).reshape(2, 2, L).copy()  # noqa: E731
        self.alpha_g1 = g1("alpha1")
        self.beta_g1 = g1("beta1")
        self.beta_g2 = g2("beta2")
        self.gamma_g2 = g2("gamma2")
        self.delta_g1 = g1("delta1")
        self.delta_g2 = g2("delta2")
        rd.done()
        for what in ("alpha_g1", "beta_g1", "beta_g2", "gamma_g2", "delta_g1", "delta_g2"):
            check_below(getattr(self, what), c.p, bf.name, sec, f"{what} coordinate")


def _points(bf: BinFile, sid: int, label: str, count: int, curve: Curve, g2: bool) -> np.ndarray:
    sec = f"section {sid} ({label})"
    data = bf.section(sid, label)
    L = curve.limbs
    per = curve.field_bytes * (4 if g2 else 2)
    if len(data) != count * per:
        raise FormatError(
            bf.name,
            f"size {len(data)} bytes, expected {count} points × {per} = {count * per}",
            sec,
        )
    arr = np.frombuffer(data, dtype="<u8").reshape((count, 2, 2, L) if g2 else (count, 2, L))
    check_below(arr, curve.p, bf.name, sec, "point coordinate")
    return _aligned(arr)


def read_zkey_vk(path: PathLike | bytes) -> VerifyingKey:
    """The verifying key alone (sections 1-3), as `snarkjs zkey export verificationkey` reads it."""
    bf = read_binfile(path, "zkey", 2)
    h = _Header(bf)
    ic = _points(bf, 3, "IC", h.n_public + 1, h.curve, False)
    return VerifyingKey(h.curve, h.alpha_g1, h.beta_g2, h.gamma_g2, h.delta_g2, np.array(ic))


def read_zkey(path: PathLike | bytes) -> ProvingKey:
    bf = read_binfile(path, "zkey", 2)
    h = _Header(bf)
    c = h.curve
    ic = _points(bf, 3, "IC", h.n_public + 1, c, False)
    r1cs = _read_coefficients(bf, h)
    pk = ProvingKey(
        curve=c,
        n_vars=h.n_vars,
        n_public=h.n_public,
        domain_size=h.domain_size,
        alpha_g1=h.alpha_g1,
        beta_g1=h.beta_g1,
        beta_g2=h.beta_g2,
        delta_g1=h.delta_g1,
        delta_g2=h.delta_g2,
        a_g1=_points(bf, 5, "A", h.n_vars, c, False),
        b_g1=_points(bf, 6, "B1", h.n_vars, c, False),
        b_g2=_points(bf, 7, "B2", h.n_vars, c, True),
        l_g1=_points(bf, 8, "C", h.n_vars - h.n_public - 1, c, False),
        h_g1=_points(bf, 9, "H", h.domain_size, c, False),
        h_convention="snarkjs",
        vk=VerifyingKey(c, h.alpha_g1, h.beta_g2, h.gamma_g2, h.delta_g2, np.array(ic)),
        r1cs=r1cs,
        meta={"source": "zkey", "path": bf.name, "c_from_ab": True},
    )
    return pk


def _read_coefficients(bf: BinFile, h: _Header) -> R1CS:
    sec = "section 4 (coefficients)"
    data = bf.section(4, "coefficients")
    rd = Reader(data, bf.name, sec)
    n = rd.u32("coefficient count")
    if len(data) != 4 + n * _COEF_DTYPE.itemsize:
        raise rd.fail(
            f"size {len(data)} bytes, expected 4 + {n} × {_COEF_DTYPE.itemsize} = "
            f"{4 + n * _COEF_DTYPE.itemsize}"
        )
    coefs = np.frombuffer(data[4:], dtype=_COEF_DTYPE, count=n)
    m = coefs["m"].astype(np.int64)
    row = coefs["c"].astype(np.int64)
    col = coefs["s"].astype(np.int64)
    vals = np.ascontiguousarray(coefs["v"])
    for bad, what in (
        (m > 1, "matrix id is not 0 (A) or 1 (B)"),
        (row >= h.domain_size, f"constraint index beyond domainSize={h.domain_size}"),
        (col >= h.n_vars, f"signal index beyond nVars={h.n_vars}"),
    ):
        idx = np.flatnonzero(bad)
        if len(idx):
            raise rd.fail(f"coefficient #{int(idx[0])}: {what}")
    check_below(vals, h.curve.r, bf.name, sec, "coefficient value")
    canon = fr_mul_const(h.curve, vals, pow(_R * _R, -1, h.curve.r))
    n_rows = int(row.max()) + 1 if n else 0
    n_rows = max(n_rows, h.n_public + 1)
    mats = []
    for k in (0, 1):
        sel = np.flatnonzero(m == k)
        order = sel[np.argsort(row[sel], kind="stable")]
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(row[order], minlength=n_rows), out=indptr[1:])
        mats.append(CSR(indptr=indptr, indices=col[order], values=canon[order], n_cols=h.n_vars))
    empty = CSR(
        indptr=np.zeros(n_rows + 1, dtype=np.int64),
        indices=np.zeros(0, dtype=np.int64),
        values=np.zeros((0, 4), dtype=np.uint64),
        n_cols=h.n_vars,
    )
    return R1CS(
        curve=h.curve,
        n_vars=h.n_vars,
        n_public=h.n_public,
        a=mats[0],
        b=mats[1],
        c=empty,
        n_constraints=n_rows - (h.n_public + 1),
    )


def write_zkey(pk: ProvingKey, path: PathLike) -> None:
    """Write a Groth16 zkey that snarkjs proves and exports a verification key from.

    Needs the snarkjs H convention and `pk.r1cs` with the input-binding rows (section 4).
    The contributions section holds a BLAKE2b-512 digest of the key's sections and no
    contributions: `snarkjs zkey verify` will not accept it (it re-derives the key from a
    ptau), which is expected for keys from our development setup.
    """
    c = pk.curve
    if pk.h_convention != "snarkjs":
        raise ValueError("a zkey holds snarkjs-convention H points; this key is " + pk.h_convention)
    if pk.r1cs is None:
        raise ValueError("write_zkey needs pk.r1cs (A and B with the input-binding rows)")
    if pk.r1cs.a.n_rows != pk.r1cs.n_constraints + pk.n_public + 1:
        raise ValueError(
            f"pk.r1cs has {pk.r1cs.a.n_rows} rows for {pk.r1cs.n_constraints} constraints and "
            f"{pk.n_public} public inputs: snarkjs keys need the input-binding rows "
            "(cuzk.formats.add_snarkjs_public_rows)"
        )
    if len(pk.h_g1) != pk.domain_size:
        raise ValueError(f"H has {len(pk.h_g1)} points, expected domain_size={pk.domain_size}")
    n8q = c.field_bytes
    L = c.limbs

    def pts(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        arr = np.ascontiguousarray(a, dtype="<u8")
        if arr.shape[1:] != shape[1:] or (shape[0] >= 0 and len(arr) != shape[0]):
            raise ValueError(f"point array of shape {arr.shape}, expected {shape}")
        return arr

    g1 = (2, L)
    g2 = (2, 2, L)
    header = [u32(n8q), le_bytes(c.p, n8q), u32(32), le_bytes(c.r, 32)]
    header += [u32(pk.n_vars), u32(pk.n_public), u32(pk.domain_size)]
    header += [
        pts(pk.alpha_g1.reshape(1, *g1), (1, *g1)),
        pts(pk.beta_g1.reshape(1, *g1), (1, *g1)),
        pts(pk.beta_g2.reshape(1, *g2), (1, *g2)),
        pts(pk.vk.gamma_g2.reshape(1, *g2), (1, *g2)),
        pts(pk.delta_g1.reshape(1, *g1), (1, *g1)),
        pts(pk.delta_g2.reshape(1, *g2), (1, *g2)),
    ]
    sections: list[tuple[int, list]] = [(1, [u32(GROTH16_PROTOCOL_ID)]), (2, header)]
    sections.append((3, [pts(pk.vk.ic, (pk.n_public + 1, *g1))]))
    sections.append((4, _coefficients(pk)))
    sections.append((5, [pts(pk.a_g1, (pk.n_vars, *g1))]))
    sections.append((6, [pts(pk.b_g1, (pk.n_vars, *g1))]))
    sections.append((7, [pts(pk.b_g2, (pk.n_vars, *g2))]))
    sections.append((8, [pts(pk.l_g1, (pk.n_vars - pk.n_public - 1, *g1))]))
    sections.append((9, [pts(pk.h_g1, (pk.domain_size, *g1))]))
    digest = hashlib.blake2b(digest_size=64)
    for _, parts in sections:
        for p in parts:
            digest.update(memoryview(np.ascontiguousarray(p)).cast("B") if isinstance(p, np.ndarray) else p)
    sections.append((10, [digest.digest(), u32(0)]))
    bw = BinWriter("zkey", 1)
    for sid, parts in sections:
        bw.add(sid, parts)
    bw.write(path)


def _coefficients(pk: ProvingKey) -> list:
    r1cs = pk.r1cs
    assert r1cs is not None
    recs = []
    for k, mat in ((0, r1cs.a), (1, r1cs.b)):
        rows = np.repeat(np.arange(mat.n_rows, dtype=np.int64), np.diff(mat.indptr))
        if len(rows) and int(rows.max()) >= pk.domain_size:
            raise ValueError(f"R1CS has {mat.n_rows} rows, more than domain_size={pk.domain_size}")
        rec = np.zeros(mat.nnz, dtype=_COEF_DTYPE)
        rec["m"] = k
        rec["c"] = rows
        rec["s"] = mat.indices
        rec["v"] = fr_mul_const(pk.curve, mat.values, _R * _R)
        recs.append(rec)
    allrec = np.concatenate(recs)
    # snarkjs writes its coefficients sorted by constraint (zkey_utils.writeZKey)
    allrec = allrec[np.argsort(allrec["c"], kind="stable")]
    return [u32(len(allrec)), allrec]
