"""The digest bellpepper's TestConstraintSystem::hash() computes, over a recorded R1CS.

Rust tests assert this hex string for whole circuits; it covers the counts and every
constraint's terms (canonical: merged, zero coefficients dropped, inputs before aux in index
order — which is our CSR row order), so an equal digest means equal matrices. Layout: blake2s
of three big-endian u64 (inputs incl. ONE, aux, constraints), then for each constraint A, B, C
in turn: a big-endian u64 term count, and per term b'I' or b'A', a big-endian u64 index and
the coefficient's 32 big-endian bytes.
"""

from __future__ import annotations

import hashlib

import numpy as np

from cuzk.model.r1cs import CSR, R1CS

_TERM = 41


def _term_bytes(m: CSR, lo: int, hi: int, n_inputs: int) -> np.ndarray:
    cols = m.indices[lo:hi]
    out = np.empty((hi - lo, _TERM), dtype=np.uint8)
    is_in = cols < n_inputs
    out[:, 0] = np.where(is_in, ord("I"), ord("A"))
    idx = np.where(is_in, cols, cols - n_inputs).astype(">u8")
    out[:, 1:9] = idx.view(np.uint8).reshape(-1, 8)
    vals = np.ascontiguousarray(m.values[lo:hi, ::-1]).astype(">u8")
    out[:, 9:] = vals.view(np.uint8).reshape(-1, 32)
    return out


def bellpepper_hash(r1cs: R1CS, rows: int | None = None, chunk: int = 1 << 16) -> str:
    """Hex digest of the first `rows` constraints (all by default; the input constraints
    bellperson appends are not part of a TestConstraintSystem)."""
    n_rows = r1cs.n_constraints if rows is None else rows
    n_inputs = r1cs.n_public + 1
    h = hashlib.blake2s()
    h.update(np.array([n_inputs, r1cs.n_vars - n_inputs, n_rows], dtype=">u8").tobytes())
    mats = (r1cs.a, r1cs.b, r1cs.c)
    for r0 in range(0, n_rows, chunk):
        r1 = min(n_rows, r0 + chunk)
        lens = np.stack([np.diff(m.indptr[r0 : r1 + 1]) for m in mats], axis=1)  # (rows, 3)
        seg = 8 + _TERM * lens
        starts = np.zeros(seg.size, dtype=np.int64)
        np.cumsum(seg.ravel()[:-1], out=starts[1:])
        starts = starts.reshape(seg.shape)
        buf = np.zeros(int(seg.sum()), dtype=np.uint8)
        pos_len = starts.ravel()[:, None] + np.arange(8)
        buf[pos_len] = lens.ravel().astype(">u8").view(np.uint8).reshape(-1, 8)
        for k, m in enumerate(mats):
            lo, hi = int(m.indptr[r0]), int(m.indptr[r1])
            if hi == lo:
                continue
            row_of = np.repeat(np.arange(r1 - r0), lens[:, k])
            within = np.arange(lo, hi) - m.indptr[r0 : r1][row_of]
            pos = starts[row_of, k] + 8 + _TERM * within
            buf[pos[:, None] + np.arange(_TERM)] = _term_bytes(m, lo, hi, n_inputs)
        h.update(buf.tobytes())
    return h.hexdigest()
