"""Poseidon hashes in plain Python, two ways: the textbook permutation over the round constants
and the MDS matrix, and neptune's optimized schedule (compressed constants, sparse matrices)
that the native hasher and the circuit follow. Both must agree everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from .matrices import R, mat_vec, vec_mat
from .params import MD_ARITY, PoseidonConstants, constants


def _sbox(x: int) -> int:
    return pow(x, 5, R)


def _check(values: Sequence[int], arity: int) -> list[int]:
    if len(values) != arity:
        raise ValueError(f"Poseidon arity {arity} takes {arity} values, got {len(values)}")
    for v in values:
        if not 0 <= v < R:
            raise ValueError(f"value {v:#x} is not below the BLS12-381 scalar field modulus")
    return [int(v) for v in values]


def permutation_plain(state: Sequence[int], c: PoseidonConstants) -> list[int]:
    """Each round: add its keys, S-box (all lanes in full rounds, lane 0 in partial ones),
    multiply by M."""
    s = list(state)
    half = c.half_full_rounds
    for r in range(c.full_rounds + c.partial_rounds):
        s = [(x + k) % R for x, k in zip(s, c.round_keys(r))]
        if half <= r < half + c.partial_rounds:
            s[0] = _sbox(s[0])
        else:
            s = [_sbox(x) for x in s]
        s = mat_vec(c.mds, s)
    return s


def permutation_optimized(state: Sequence[int], c: PoseidonConstants) -> list[int]:
    """The same permutation on neptune's preprocessed constants: keys after the S-boxes, the
    pre-sparse matrix closing the first half, one sparse matrix per partial round."""
    t = c.width
    k = c.compressed_round_constants
    half, rp = c.half_full_rounds, c.partial_rounds
    s = [(x + y) % R for x, y in zip(state, k[:t])]
    off = t
    for r in range(c.full_rounds + rp):
        if half <= r < half + rp:
            s[0] = (_sbox(s[0]) + k[off]) % R
            off += 1
        elif r == c.full_rounds + rp - 1:
            s = [_sbox(x) for x in s]
        else:
            s = [(_sbox(x) + y) % R for x, y in zip(s, k[off : off + t])]
            off += t
        if r == half - 1:
            s = vec_mat(s, c.pre_sparse)
        elif half <= r < half + rp:
            m = c.sparse[r - half]
            s0 = s[0]
            first = sum(w * x for w, x in zip(m.w_hat, s)) % R
            s = [first] + [(x + v * s0) % R for x, v in zip(s[1:], m.v_rest)]
        else:
            s = mat_vec(c.mds, s)
    assert off == len(k)
    return s


def hash_plain(values: Sequence[int], arity: int | None = None,
               domain_tag: int | None = None) -> int:
    """neptune's Poseidon of `arity` values (Merkle-tree tag unless `domain_tag`), by the
    textbook permutation."""
    c = constants(arity if arity is not None else len(values), domain_tag=domain_tag)
    return permutation_plain([c.domain_tag, *_check(values, c.arity)], c)[1]


def hash_optimized(values: Sequence[int], arity: int | None = None,
                   domain_tag: int | None = None) -> int:
    """The same hash by neptune's optimized schedule (`domain_tag`: another than the Merkle-tree
    tag)."""
    c = constants(arity if arity is not None else len(values), domain_tag=domain_tag)
    return permutation_optimized([c.domain_tag, *_check(values, c.arity)], c)[1]


def poseidon(values: Sequence[int], domain_tag: int | None = None) -> int:
    """Poseidon of len(values) values (the arity), as filecoin-hashers computes it; with
    `domain_tag`, as neptune hashes under that tag."""
    return hash_optimized(values, domain_tag=domain_tag)


def hash_md(values: Sequence[int]) -> int:
    """filecoin-hashers' `hash_md`: a chain of arity-36 hashes, each over the previous digest
    (the first value to start) and the next 35 values; the last chunk is zero-padded."""
    if len(values) < 2:
        raise ValueError("hash_md needs at least two values")
    _check(values, len(values))
    acc = values[0]
    step = MD_ARITY - 1
    for i in range(1, len(values), step):
        chunk = list(values[i : i + step])
        acc = hash_optimized([acc, *chunk, *[0] * (step - len(chunk))], MD_ARITY)
    return acc
