"""Bulk Poseidon on the CPU extension (cuzk._native.PoseidonHasher): Merkle-tree layers and
column hashes of one arity, and hash_md. Values travel as canonical little-endian u64 limbs,
arrays of shape (..., 4); `to_limbs` / `from_limbs` convert Python ints."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from .params import MD_ARITY, constants

_MASK = (1 << 64) - 1


def to_limbs(values: Sequence[int]) -> np.ndarray:
    """Python ints (below 2^256) -> (n, 4) uint64 little-endian limbs."""
    out = np.empty((len(values), 4), dtype=np.uint64)
    for i, v in enumerate(values):
        out[i] = [(v >> (64 * k)) & _MASK for k in range(4)]
    return out


def from_limbs(limbs: np.ndarray) -> list[int]:
    """(..., 4) uint64 limbs -> flat list of Python ints."""
    rows = np.ascontiguousarray(limbs, dtype=np.uint64).reshape(-1, 4)
    return [int.from_bytes(r.tobytes(), "little") for r in rows]


@cache
def hasher(arity: int, domain_tag: int | None = None) -> Any:
    """The native hasher for `arity` (and a domain tag other than the Merkle-tree one), built
    once per process from `constants(arity, domain_tag=...)`."""
    from cuzk import _native

    c = constants(arity, domain_tag=domain_tag)
    t = c.width
    sparse = [x for s in c.sparse for x in (*s.w_hat, *s.v_rest)]
    return _native.PoseidonHasher(
        t,
        c.full_rounds,
        c.partial_rounds,
        to_limbs([c.domain_tag]),
        to_limbs(c.compressed_round_constants),
        to_limbs([x for row in c.mds for x in row]),
        to_limbs([x for row in c.pre_sparse for x in row]),
        to_limbs(sparse),
    )


def hash_batch(inputs: np.ndarray, threads: int = 0, domain_tag: int | None = None) -> np.ndarray:
    """Hashes of (n, arity, 4) canonical limbs -> (n, 4); the arity is the middle dimension.
    Raises ValueError for a value not below r."""
    inputs = np.ascontiguousarray(inputs, dtype=np.uint64)
    if inputs.ndim != 3 or inputs.shape[2] != 4:
        raise ValueError(f"inputs must have shape (n, arity, 4), got {inputs.shape}")
    return hasher(inputs.shape[1], domain_tag).hash(inputs, threads)


def hash_md(values: np.ndarray) -> np.ndarray:
    """filecoin-hashers' hash_md over (k, 4) canonical limbs (k >= 2) -> (4,)."""
    return hasher(MD_ARITY).hash_md(np.ascontiguousarray(values, dtype=np.uint64))


def poseidon(values: Sequence[int], domain_tag: int | None = None) -> int:
    """One hash of Python ints (arity = len(values)) on the native hasher."""
    return from_limbs(hash_batch(to_limbs(values)[None], domain_tag=domain_tag))[0]
