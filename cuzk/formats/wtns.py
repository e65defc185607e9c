"""iden3 `.wtns` witness files (version 2): section 1 (n8, prime, nWitness), section 2 (values,
n8-byte canonical little-endian each). Values come back as canonical Fr limbs (n, 4)."""

from __future__ import annotations

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.formats.binfile import (
    BinWriter,
    PathLike,
    Reader,
    check_below,
    curve_from_r,
    le_bytes,
    n8_of,
    read_binfile,
    u32,
)


def read_wtns(path: PathLike | bytes) -> tuple[np.ndarray, Curve]:
    bf = read_binfile(path, "wtns", 2)
    hdr = Reader(bf.section(1, "header"), bf.name, "section 1 (header)")
    n8 = hdr.u32("n8")
    if n8 != 32:
        raise hdr.fail(f"field element size {n8} bytes; expected 32")
    q = hdr.bigint(n8, "prime")
    curve = curve_from_r(q, bf.name, "section 1 (header)")
    n = hdr.u32("nWitness")
    hdr.done()
    body = Reader(bf.section(2, "witness"), bf.name, "section 2 (witness)")
    if len(body.data) != n * n8:
        raise body.fail(
            f"size {len(body.data)} bytes does not match nWitness={n} × {n8} = {n * n8}"
        )
    values = body.limbs(n, n8, "witness value")
    check_below(values, curve.r, bf.name, "section 2 (witness)", "witness value")
    return values, curve


def write_wtns(path: PathLike, witness: np.ndarray, curve: Curve | str) -> None:
    c = get_curve(curve)
    w = np.ascontiguousarray(witness, dtype="<u8").reshape(-1, 4)
    bw = BinWriter("wtns", 2)
    n8 = n8_of(c.r)
    bw.add(1, [u32(n8), le_bytes(c.r, n8), u32(len(w))])
    bw.add(2, [w])
    bw.write(path)
