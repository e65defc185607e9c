"""neptune's `PoseidonConstants::new()` for an arity over BLS12-381 Fr: round numbers, Grain
round constants, the Cauchy MDS matrix, and the preprocessing its optimized hasher and the
legacy circuit consume (compressed round constants, pre-sparse and sparse matrices).

Generation takes up to ~1 s per arity in Python; `constants()` caches per process.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from .grain import round_constants
from .matrices import Matrix, R, Sparse, cauchy_mds, factor_to_sparse, invert, mat_vec
from .rounds import round_numbers

# The arities Filecoin uses: Merkle trees 2 / 4 / 8 (and 16, 24 in neptune's tests), columns of
# 11 layer labels, and 36 for hash_md.
ARITIES = (2, 4, 8, 11, 16, 24, 36)
FIELD_BITS = 255
MD_ARITY = 36  # filecoin-hashers' PoseidonMDArity


@dataclass(frozen=True)
class PoseidonConstants:
    arity: int
    full_rounds: int
    partial_rounds: int
    domain_tag: int  # state[0] before the permutation
    round_constants: tuple[int, ...]  # (RF + RP)·t, round r at [r·t, (r+1)·t)
    mds: Matrix
    mds_inv: Matrix
    compressed_round_constants: tuple[int, ...]  # RF·t + RP
    pre_sparse: Matrix
    sparse: tuple[Sparse, ...]  # one per partial round

    @property
    def width(self) -> int:
        return self.arity + 1

    @property
    def half_full_rounds(self) -> int:
        return self.full_rounds // 2

    def round_keys(self, r: int) -> list[int]:
        t = self.width
        return list(self.round_constants[r * t : (r + 1) * t])


def merkle_tree_tag(arity: int) -> int:
    """neptune's HashType::MerkleTree domain tag, 2^arity − 1."""
    return (1 << arity) - 1


def custom_tag(identifier: int) -> int:
    """neptune's HashType::Custom(CType::Arbitrary(id)) domain tag, id · 2^40 (id in 1..256).
    storage-proofs-update draws its randomness with id 1."""
    if not 1 <= identifier <= 256:
        raise ValueError(f"a custom domain tag id is 1..256, not {identifier}")
    return identifier << 40


def compress_round_constants(
    rc: list[int], t: int, full_rounds: int, partial_rounds: int, mds_inv: Matrix
) -> list[int]:
    """Round constants rearranged so that, but for the first row, each is added after an S-box.

    A key added before round r+1's S-boxes equals M⁻¹·key added before round r's matrix. The
    partial rounds' keys are pushed back, last to first, through M⁻¹: of each, only the entry
    on the S-box lane (element 0) stays with its round; the rest joins the round before. The
    sum that reaches the last full round of the first half goes in as its post-S-box key.
    Layout: first round's keys as is; M⁻¹·keys of full rounds 1..h−1; M⁻¹·(accumulated partial
    keys); one key per partial round; M⁻¹·keys of the second half's rounds 1..h−1 (its first
    round's keys were absorbed; the last round adds none).
    """
    half = full_rounds // 2

    def keys(r: int) -> list[int]:
        return rc[r * t : (r + 1) * t]

    out = list(keys(0))
    for r in range(1, half):
        out += mat_vec(mds_inv, keys(r))
    acc = keys(half + partial_rounds)
    single: list[int] = []  # per partial round, last round first
    for r in reversed(range(half, half + partial_rounds)):
        inv = mat_vec(mds_inv, acc)
        single.append(inv[0])
        inv[0] = 0
        acc = [(a + b) % R for a, b in zip(keys(r), inv)]
    out += mat_vec(mds_inv, acc)
    out += reversed(single)
    for r in range(half + partial_rounds + 1, full_rounds + partial_rounds):
        out += mat_vec(mds_inv, keys(r))
    assert len(out) == full_rounds * t + partial_rounds
    return out


def constants(arity: int, strengthened: bool = False, domain_tag: int | None = None) -> PoseidonConstants:
    """Constants for `arity` with the Merkle-tree domain tag (filecoin-hashers' choice for every
    arity, hash_md's included) unless `domain_tag` names another (only the tag differs:
    neptune's round constants and matrices depend on the width and strength alone).
    `strengthened` selects neptune's Strength::Strengthened."""
    c = _constants(int(arity), bool(strengthened))
    if domain_tag is None or domain_tag % R == c.domain_tag:
        return c
    return _tagged(int(arity), bool(strengthened), domain_tag % R)


@cache
def _tagged(arity: int, strengthened: bool, tag: int) -> PoseidonConstants:
    return replace(_constants(arity, strengthened), domain_tag=tag)


@cache
def _constants(arity: int, strengthened: bool) -> PoseidonConstants:
    if not 1 <= arity <= 36:
        raise ValueError(f"Poseidon arity {arity} is outside neptune's 1..36")
    t = arity + 1
    rf, rp = round_numbers(arity, strengthened)
    rc = round_constants(R, FIELD_BITS, t, rf, rp)
    mds = cauchy_mds(t)
    mds_inv = invert(mds)
    compressed = compress_round_constants(rc, t, rf, rp, mds_inv)
    # neptune factors the transpose of M (the same matrix: the Cauchy matrix is symmetric).
    pre_sparse, sparse = factor_to_sparse([list(c) for c in zip(*mds)], rp)
    return PoseidonConstants(
        arity=arity,
        full_rounds=rf,
        partial_rounds=rp,
        domain_tag=merkle_tree_tag(arity),
        round_constants=tuple(rc),
        mds=mds,
        mds_inv=mds_inv,
        compressed_round_constants=tuple(compressed),
        pre_sparse=pre_sparse,
        sparse=tuple(sparse),
    )
