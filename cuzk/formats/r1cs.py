"""circom `.r1cs` files (iden3 r1csfile format, version 1) -> `cuzk.model.r1cs.R1CS`.

Sections: 1 header (n8, prime, nWires, nPubOut, nPubIn, nPrvIn, nLabels u64, nConstraints),
2 constraints (per constraint three linear combinations A, B, C, each a u32 term count then
(u32 wire, n8-byte canonical little-endian coefficient) terms), 3 wire -> label map (u64 per
wire). Custom-gate sections (4, 5, PLONK only) are rejected.

Wire order is circom's: 0 = constant one, then public outputs, public inputs, private inputs,
intermediates; so `n_public = nPubOut + nPubIn` and public signals list outputs first, as
snarkjs's public.json does.
"""

from __future__ import annotations

import struct

import numpy as np

from cuzk.formats.binfile import PathLike, Reader, check_below, curve_from_r, read_binfile
from cuzk.formats.errors import FormatError
from cuzk.layout import fr_from_ints
from cuzk.model.r1cs import CSR, R1CS


def read_r1cs(path: PathLike | bytes, with_labels: bool = True) -> R1CS:
    bf = read_binfile(path, "r1cs", 1)
    name = bf.name
    if 4 in bf.sections or 5 in bf.sections:
        raise FormatError(name, "custom gates (PLONK-only circom feature) are not supported for Groth16")

    hdr = Reader(bf.section(1, "header"), name, "section 1 (header)")
    n8 = hdr.u32("field size n8")
    if n8 != 32:
        raise hdr.fail(f"field element size {n8} bytes; expected 32 (BN254 or BLS12-381 scalar field)")
    prime = hdr.bigint(n8, "prime")
    curve = curve_from_r(prime, name, "section 1 (header)")
    n_wires = hdr.u32("nWires")
    n_pub_out = hdr.u32("nPubOut")
    n_pub_in = hdr.u32("nPubIn")
    n_prv_in = hdr.u32("nPrvIn")
    n_labels = hdr.u64("nLabels")
    n_constraints = hdr.u32("nConstraints")
    hdr.done()
    n_public = n_pub_out + n_pub_in
    if n_wires < 1 or 1 + n_public + n_prv_in > n_wires:
        raise hdr.fail(
            f"inconsistent counts: nWires={n_wires}, nPubOut={n_pub_out}, nPubIn={n_pub_in}, "
            f"nPrvIn={n_prv_in}"
        )

    a, b, c = _read_constraints(
        bf.section(2, "constraints"), name, n_constraints, n_wires, n8, curve.r
    )
    labels: dict = {
        "n_pub_out": n_pub_out,
        "n_pub_in": n_pub_in,
        "n_prv_in": n_prv_in,
        "n_labels": n_labels,
    }
    sec3 = bf.section(3, "wire2label", required=False)
    if with_labels and sec3 is not None:
        rd = Reader(sec3, name, "section 3 (wire2label)")
        labels["wire2label"] = rd.limbs(n_wires, 8, "label id").reshape(-1)
        rd.done()
    return R1CS(
        curve=curve,
        n_vars=n_wires,
        n_public=n_public,
        a=a,
        b=b,
        c=c,
        n_constraints=n_constraints,
        labels=labels,
    )


def _read_constraints(
    data: memoryview, name: str, m: int, n_wires: int, n8: int, r: int
) -> tuple[CSR, CSR, CSR]:
    section = "section 2 (constraints)"
    term = 4 + n8
    size = len(data)
    counts = np.empty(3 * m, dtype=np.int64)
    starts = np.empty(3 * m, dtype=np.int64)
    pos = 0
    unpack = struct.Struct("<I").unpack_from
    # Only the term counts need a sequential walk; the terms themselves are gathered below.
    for k in range(3 * m):
        if pos + 4 > size:
            raise FormatError(
                name, f"truncated in constraint {k // 3} ({'ABC'[k % 3]}): no term count", section
            )
        (n,) = unpack(data, pos)
        pos += 4
        counts[k] = n
        starts[k] = pos
        pos += n * term
        if pos > size:
            raise FormatError(
                name,
                f"truncated in constraint {k // 3} ({'ABC'[k % 3]}): {n} terms run past the section end",
                section,
            )
    if pos != size:
        raise FormatError(name, f"section size mismatch: {size} bytes, constraints end at {pos}", section)

    raw = np.frombuffer(data, dtype=np.uint8)
    out = []
    for mat in range(3):
        cnt = counts[mat::3]
        st = starts[mat::3]
        total = int(cnt.sum())
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(cnt, out=indptr[1:])
        within = np.arange(total, dtype=np.int64) - np.repeat(indptr[:-1], cnt)
        offs = np.repeat(st, cnt) + within * term
        idx_bytes = raw[offs[:, None] + np.arange(4)]
        wires = np.ascontiguousarray(idx_bytes).view("<u4").reshape(-1).astype(np.int64)
        vals = np.ascontiguousarray(raw[offs[:, None] + 4 + np.arange(n8)]).view("<u8").reshape(total, n8 // 8)
        vals = vals.astype(np.uint64)
        bad = np.flatnonzero(wires >= n_wires)
        if len(bad):
            row = int(np.searchsorted(indptr, bad[0], side="right") - 1)
            raise FormatError(
                name,
                f"constraint {row} ({'ABC'[mat]}) references wire {int(wires[bad[0]])} "
                f"but the circuit has {n_wires} wires",
                section,
            )
        check_below(vals, r, name, section, f"{'ABC'[mat]} coefficient")
        out.append(CSR(indptr=indptr, indices=wires, values=vals, n_cols=n_wires))
    return out[0], out[1], out[2]


def snarkjs_domain_size(n_constraints: int, n_public: int) -> int:
    """snarkjs's domain: the smallest power of two above n_constraints + n_public.

    (zkey_new.js: power = log2(nConstraints + nPublic) + 1 with a floor log2, so the
    n_public + 1 binding rows always fit.)
    """
    return 1 << (max(n_constraints + n_public, 1)).bit_length()


def add_snarkjs_public_rows(r1cs: R1CS) -> R1CS:
    """The R1CS with snarkjs's input-binding rows appended after the circuit's constraints.

    For s = 0 .. n_public (the constant-one wire included) snarkjs adds row
    n_constraints + s with A = w_s (coefficient 1) and B = C = 0 (zkey_new.js,
    processConstraints). They make the A polynomials of the public wires linearly independent,
    which Groth16's soundness needs, and every snarkjs zkey's coefficient section holds them.
    """
    if r1cs.a.n_rows != r1cs.n_constraints:
        raise ValueError(
            f"R1CS already has {r1cs.a.n_rows - r1cs.n_constraints} rows beyond its constraints"
        )
    extra = r1cs.n_public + 1
    one = fr_from_ints(r1cs.curve, [1] * extra)
    cols = np.arange(extra, dtype=np.int64)

    def grow(m: CSR, with_terms: bool) -> CSR:
        if with_terms:
            indptr = np.concatenate([m.indptr, m.indptr[-1] + 1 + cols])
            return CSR(
                indptr=indptr,
                indices=np.concatenate([m.indices, cols]),
                values=np.concatenate([m.values.reshape(-1, 4), one]),
                n_cols=m.n_cols,
            )
        indptr = np.concatenate([m.indptr, np.full(extra, m.indptr[-1], dtype=np.int64)])
        return CSR(indptr=indptr, indices=m.indices, values=m.values, n_cols=m.n_cols)

    return R1CS(
        curve=r1cs.curve,
        n_vars=r1cs.n_vars,
        n_public=r1cs.n_public,
        a=grow(r1cs.a, True),
        b=grow(r1cs.b, False),
        c=grow(r1cs.c, False),
        n_constraints=r1cs.n_constraints,
        labels=r1cs.labels,
    )
