"""A synthetic Filecoin-like circuit for scaling studies: any size, built vectorized.

The constraint system is a tiling of one *unit* that mimics the SHA-256-heavy PoRep circuit:

- 64 booleanity constraints `b·b = b` over two 32-bit words of bits `a`, `b`;
- 32 XOR constraints `(2a)·b = a + b − c` giving the bits `c = a ⊕ b`;
- 3 bit-packing constraints `(Σ 2^i·bit_i)·1 = word` (32-term linear combinations);
- `mults` multiplication constraints `x·y = z` with x, y < 2^126, so z < 2^252 is a
  full-width field element computed exactly in integers (no modular reduction needed).

So the witness is mostly 0/1 (~78 % with the default 8 multiplications), some 32-bit words,
and a minority of 126-bit and ~252-bit values, like PoRep's. Public input j equals the packed
word `a` of unit j (one extra constraint each). Constraints left over after the last whole
unit are booleanity constraints on extra bits. A, B, C are built directly as CSR arrays by
tiling the unit's template with numpy; the witness for (seed, partition) is drawn with numpy
and the products are exact 128×128-bit multiplications in 32-bit limbs, so building and
witness generation stay vectorized at 2^27.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.model.r1cs import CSR, R1CS

_BITS = 32  # bits per packed word
_ONE = -1  # template column marker for the constant-one wire (column 0, not offset)
_M32 = np.uint64(0xFFFFFFFF)


@dataclass
class _Template:
    rows: int
    row_len: np.ndarray  # (rows,) terms per row
    cols: np.ndarray  # (nnz,) unit-relative variable offsets, _ONE for wire 0
    coeffs: list[int]  # (nnz,) coefficients as ints (reduced mod r at build time)


@dataclass
class SyntheticCircuit:
    curve: Curve
    n_constraints: int  # the circuit's own constraints (the key adds n_public + 1 rows)
    n_public: int = 2
    mults: int = 8  # multiplication constraints per unit

    def __post_init__(self) -> None:
        self.curve = get_curve(self.curve)
        if self.n_public < 0 or self.mults < 0:
            raise ValueError("n_public and mults must be >= 0")
        if self.units < max(1, self.n_public):
            raise ValueError(
                f"{self.n_constraints} constraints are too few: need at least "
                f"{self.n_public + self.unit_rows * max(1, self.n_public)}"
            )

    # --- shape ----------------------------------------------------------------------------

    @property
    def unit_vars(self) -> int:
        return 3 * _BITS + 3 + 3 * self.mults

    @property
    def unit_rows(self) -> int:
        return 2 * _BITS + _BITS + 3 + self.mults

    @property
    def units(self) -> int:
        return max(0, (self.n_constraints - self.n_public) // self.unit_rows)

    @property
    def pad(self) -> int:
        return self.n_constraints - self.n_public - self.units * self.unit_rows

    @property
    def n_vars(self) -> int:
        return 1 + self.n_public + self.units * self.unit_vars + self.pad

    @property
    def domain_size(self) -> int:
        rows = self.n_constraints + self.n_public + 1
        return 1 << max(1, (rows - 1).bit_length())

    @property
    def _unit_base(self) -> int:
        return 1 + self.n_public

    @property
    def _pad_base(self) -> int:
        return self._unit_base + self.units * self.unit_vars

    def describe(self) -> dict[str, Any]:
        return {"curve": self.curve.name, "constraints": self.n_constraints,
                "n_public": self.n_public, "mults": self.mults, "units": self.units,
                "pad": self.pad, "n_vars": self.n_vars, "domain_size": self.domain_size}

    # --- constraint matrices -----------------------------------------------------------------

    def _templates(self) -> tuple[_Template, _Template, _Template]:
        B, M = _BITS, self.mults
        a0, b0, c0, w0 = 0, B, 2 * B, 3 * B  # offsets of a, b, c bits and the 3 words
        x0, y0, z0 = w0 + 3, w0 + 3 + M, w0 + 3 + 2 * M
        A: list[list[tuple[int, int]]] = []
        Bm: list[list[tuple[int, int]]] = []
        C: list[list[tuple[int, int]]] = []
        for i in range(2 * B):  # booleanity of a and b bits
            A.append([(i, 1)])
            Bm.append([(i, 1)])
            C.append([(i, 1)])
        for i in range(B):  # xor: (2a)·b = a + b − c
            A.append([(a0 + i, 2)])
            Bm.append([(b0 + i, 1)])
            C.append([(a0 + i, 1), (b0 + i, 1), (c0 + i, -1)])
        for k, base in enumerate((a0, b0, c0)):  # packing: (Σ 2^i bit_i)·1 = word
            A.append([(base + i, 1 << i) for i in range(B)])
            Bm.append([(_ONE, 1)])
            C.append([(w0 + k, 1)])
        for k in range(M):  # x·y = z
            A.append([(x0 + k, 1)])
            Bm.append([(y0 + k, 1)])
            C.append([(z0 + k, 1)])

        def pack(rows: list[list[tuple[int, int]]]) -> _Template:
            return _Template(
                rows=len(rows),
                row_len=np.array([len(r) for r in rows], dtype=np.int64),
                cols=np.array([c for r in rows for c, _ in r], dtype=np.int64),
                coeffs=[v for r in rows for _, v in r],
            )

        return pack(A), pack(Bm), pack(C)

    def _coeff_limbs(self, coeffs: list[int]) -> np.ndarray:
        r = self.curve.r
        vals = [c % r for c in coeffs]
        out = np.zeros((len(vals), 4), dtype=np.uint64)
        for i, v in enumerate(vals):  # template-sized (a few hundred entries)
            for j in range(4):
                out[i, j] = (v >> (64 * j)) & 0xFFFFFFFFFFFFFFFF
        return out

    def _matrix(self, t: _Template, which: str) -> CSR:
        U, V, P, npub = self.units, self.unit_vars, self.pad, self.n_public
        ub, pb = self._unit_base, self._pad_base
        one = self._coeff_limbs([1])[0]
        lens, idx, vals = [], [], []
        # Public-input rows: pub_j · 1 = word a of unit j.
        if npub:
            lens.append(np.ones(npub, dtype=np.int64))
            j = np.arange(npub, dtype=np.int64)
            if which == "a":
                idx.append(1 + j)
            elif which == "b":
                idx.append(np.zeros(npub, dtype=np.int64))
            else:
                idx.append(ub + j * V + 3 * _BITS)
            vals.append(np.tile(one, (npub, 1)))
        # Units: the template tiled with per-unit variable offsets.
        lens.append(np.tile(t.row_len, U))
        bases = ub + np.arange(U, dtype=np.int64) * V
        cols = np.where(t.cols[None, :] == _ONE, 0, t.cols[None, :] + bases[:, None])
        idx.append(cols.reshape(-1))
        vals.append(np.tile(self._coeff_limbs(t.coeffs), (U, 1)))
        # Padding rows: booleanity of extra bits.
        if P:
            lens.append(np.ones(P, dtype=np.int64))
            idx.append(pb + np.arange(P, dtype=np.int64))
            vals.append(np.tile(one, (P, 1)))
        row_len = np.concatenate(lens)
        indptr = np.zeros(len(row_len) + 1, dtype=np.int64)
        np.cumsum(row_len, out=indptr[1:])
        return CSR(
            indptr=indptr,
            indices=np.ascontiguousarray(np.concatenate(idx), dtype=np.int64),
            values=np.ascontiguousarray(np.concatenate(vals), dtype=np.uint64),
            n_cols=self.n_vars,
        )

    @cached_property
    def r1cs(self) -> R1CS:
        ta, tb, tc = self._templates()
        return R1CS(
            curve=self.curve,
            n_vars=self.n_vars,
            n_public=self.n_public,
            a=self._matrix(ta, "a"),
            b=self._matrix(tb, "b"),
            c=self._matrix(tc, "c"),
            n_constraints=self.n_constraints,
            labels={"synthetic": json.dumps(self.describe())},
        )

    # --- witness --------------------------------------------------------------------------

    def witness(self, seed: int, partition: int = 0) -> np.ndarray:
        """A satisfying witness (n_vars, 4) canonical Fr, determined by (seed, partition)."""
        rng = np.random.default_rng([int(seed) & (2**64 - 1), int(partition)])
        U, V, M, B = self.units, self.unit_vars, self.mults, _BITS
        w = np.zeros((self.n_vars, 4), dtype=np.uint64)
        w[0, 0] = 1
        unit = w[self._unit_base : self._pad_base].reshape(U, V, 4)
        a = rng.integers(0, 2, size=(U, B), dtype=np.uint64)
        b = rng.integers(0, 2, size=(U, B), dtype=np.uint64)
        c = a ^ b
        shifts = np.arange(B, dtype=np.uint64)
        unit[:, 0:B, 0] = a
        unit[:, B : 2 * B, 0] = b
        unit[:, 2 * B : 3 * B, 0] = c
        words = [(bits << shifts).sum(axis=1, dtype=np.uint64) for bits in (a, b, c)]
        for k, word in enumerate(words):
            unit[:, 3 * B + k, 0] = word
        if M:
            x = _rand126(rng, (U, M))
            y = _rand126(rng, (U, M))
            z = _mul128(x, y)
            x0 = 3 * B + 3
            unit[:, x0 : x0 + M, 0:2] = x
            unit[:, x0 + M : x0 + 2 * M, 0:2] = y
            unit[:, x0 + 2 * M : x0 + 3 * M, :] = z
        if self.pad:
            w[self._pad_base :, 0] = rng.integers(0, 2, size=self.pad, dtype=np.uint64)
        w[1 : 1 + self.n_public, 0] = words[0][: self.n_public]
        return w

    def public_inputs(self, seed: int, partition: int = 0) -> list[int]:
        w = self.witness(seed, partition)
        return [int(v) for v in w[1 : 1 + self.n_public, 0]]

    def witness_fn(self) -> Callable[[Any, int], np.ndarray]:
        """For the engine's CircuitSpec: inputs (an int seed, {"seed": int}, or seed bytes) → witness."""

        def gen(inputs: Any, partition: int) -> np.ndarray:
            return self.witness(seed_of(inputs), partition)

        return gen

    # --- keys -------------------------------------------------------------------------------

    def cache_name(self, convention: str, setup_seed: str) -> str:
        """The file name of its development key (cuzk.groth16.dev_keys), unique per shape."""
        tag = json.dumps([self.describe(), convention, setup_seed], sort_keys=True)
        digest = hashlib.sha256(tag.encode()).hexdigest()[:12]
        return f"synthetic-{self.curve.name}-{self.n_constraints}-{convention}-{digest}"


def for_domain(curve: Curve | str, log2: int, **kw: Any) -> SyntheticCircuit:
    """The largest synthetic circuit whose key has a domain of 2^log2."""
    n_public = kw.get("n_public", 2)
    return SyntheticCircuit(get_curve(curve), (1 << log2) - n_public - 1, **kw)


def seed_of(inputs: Any) -> int:
    if inputs is None:
        return 0
    if isinstance(inputs, dict):
        return int(inputs.get("seed", 0))
    if isinstance(inputs, (bytes, bytearray)):
        return int.from_bytes(hashlib.sha256(bytes(inputs)).digest()[:8], "little")
    return int(inputs)


def witness_mix(w: np.ndarray) -> dict[str, float]:
    """Fractions of witness values that are 0/1, fit in 64 bits, 128 bits, or wider."""
    w = np.asarray(w)
    hi = (w[:, 1] | w[:, 2] | w[:, 3]) != 0
    wide = (w[:, 2] | w[:, 3]) != 0
    full = w[:, 3] >= np.uint64(1 << 58)  # ≥ 2^250: full-width field elements
    binary = ~hi & (w[:, 0] <= 1)
    n = len(w)
    return {
        "binary": float(binary.sum()) / n,
        "u64": float((~hi & ~binary).sum()) / n,
        "u128": float((hi & ~wide).sum()) / n,
        "wide": float(wide.sum()) / n,
        "full": float(full.sum()) / n,
    }


def _rand126(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform values below 2^126 as (…, 2) uint64 limbs."""
    lo = rng.integers(0, 2**64 - 1, size=shape, dtype=np.uint64, endpoint=True)
    hi = rng.integers(0, 2**62 - 1, size=shape, dtype=np.uint64, endpoint=True)
    return np.stack([lo, hi], axis=-1)


def _mul128(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Exact products of (…, 2)-limb 128-bit numbers as (…, 4) limbs, with 32-bit digits so
    every partial product fits in uint64."""
    xd = [(x[..., i // 2] >> np.uint64(32 * (i % 2))) & _M32 for i in range(4)]
    yd = [(y[..., i // 2] >> np.uint64(32 * (i % 2))) & _M32 for i in range(4)]
    cols = [np.zeros(x.shape[:-1], dtype=np.uint64) for _ in range(9)]
    for i in range(4):
        for j in range(4):
            p = xd[i] * yd[j]
            cols[i + j] += p & _M32
            cols[i + j + 1] += p >> np.uint64(32)
    digits = []
    carry = np.zeros(x.shape[:-1], dtype=np.uint64)
    for k in range(8):
        v = cols[k] + carry
        digits.append(v & _M32)
        carry = v >> np.uint64(32)
    out = np.empty(x.shape[:-1] + (4,), dtype=np.uint64)
    for k in range(4):
        out[..., k] = digits[2 * k] | (digits[2 * k + 1] << np.uint64(32))
    return out
