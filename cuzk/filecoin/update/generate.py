"""A test generator for SnapDeals: a sector sealed by the PoRep test sealer is the sector key;
new data is encoded into it as rust-fil-proofs' encode_into does (storage-proofs-update
vanilla.rs EmptySectorUpdate::encode_into), and the partitions' vanilla proofs are made as
prove_inner makes them, as the bincode bytes Curio passes.

    comm_d_new   TreeD over the new data (binary SHA-256; the Poseidon variant: a Poseidon
                 tree of tree_r's shape)
    phi          H_tag(comm_d_new, comm_r_old)
    replica_new  node i: sector_key_i + data_i · rho(i's h high bits)
    comm_r_new   Poseidon2(comm_c, root of tree_r_last over replica_new)

For sizes the sealer handles (1 KiB to 32 KiB test shapes, 2 KiB, 8 MiB).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuzk.filecoin.merkle import MerkleTree, TreeShape, ints_to_limbs, limbs_to_ints
from cuzk.filecoin.porep.seal import fr32_pad, poseidon2, seal_sector, tree_proof, unpadded_capacity
from cuzk.filecoin.post.generate import seal_config

from .challenges import challenges, phi, rho
from .constants import UpdateParams
from .proof import ChallengeProof, PartitionProof, PoseidonPartitionProof
from .vanilla import UpdatePublic

R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001


@dataclass
class SectorKey:
    """The sealed sector an update starts from: its replica's tree_r_last and comm_c."""

    tree_r: MerkleTree
    comm_c: int

    @property
    def comm_r_old(self) -> int:
        return poseidon2(self.comm_c, self.tree_r.root)


def _fr_mul_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a + b·c elementwise over (n, 4) canonical limbs."""
    try:
        from cuzk import _native

        return _native.fr_add("bls12_381", a, _native.fr_mul("bls12_381", b, c))
    except (ImportError, AttributeError):
        x, y, z = limbs_to_ints(a), limbs_to_ints(b), limbs_to_ints(c)
        return ints_to_limbs([(p + q * s) % R for p, q, s in zip(x, y, z)])


@dataclass
class UpdatedSector:
    params: UpdateParams
    key: SectorKey
    h: int
    data: np.ndarray          # (nodes, 4) the new data, fr32-padded nodes
    tree_d_new: MerkleTree
    tree_r_new: MerkleTree

    @property
    def comm_d_new(self) -> int:
        return self.tree_d_new.root

    @property
    def comm_r_new(self) -> int:
        return poseidon2(self.key.comm_c, self.tree_r_new.root)

    @property
    def public(self) -> UpdatePublic:
        return UpdatePublic(self.key.comm_r_old, self.comm_d_new, self.comm_r_new, self.h)

    def commitments(self) -> tuple[bytes, bytes, bytes]:
        """comm_r_old, comm_r_new, comm_d_new as the 32 bytes Curio passes."""
        return tuple(v.to_bytes(32, "little") for v in  # type: ignore[return-value]
                     (self.key.comm_r_old, self.comm_r_new, self.comm_d_new))

    def apex_leafs(self, k: int) -> list[int]:
        p = self.params
        height = p.challenge_bit_len - p.partition_bit_len - p.apex_leaf_bit_len
        row = self.tree_d_new.levels[height]
        return limbs_to_ints(row[k * p.apex_leaf_count : (k + 1) * p.apex_leaf_count])

    def challenge_proof(self, c: int) -> ChallengeProof:
        return ChallengeProof(tree_proof(self.key.tree_r, c), tree_proof(self.tree_d_new, c),
                              tree_proof(self.tree_r_new, c))

    def partition_proof(self, k: int) -> PartitionProof | PoseidonPartitionProof:
        """prove_inner: partition k's apex leaves and its challenges' proofs."""
        proofs = [self.challenge_proof(c) for c in challenges(self.params, self.comm_r_new, k)]
        if self.params.poseidon:
            return PoseidonPartitionProof(self.key.comm_c, proofs)
        return PartitionProof(self.key.comm_c, self.apex_leafs(k), proofs)

    def vanilla_proofs(self) -> list[bytes]:
        """Every partition's proof, bincode (generate_partition_proofs)."""
        return [self.partition_proof(k).to_bytes() for k in range(self.params.partition_count)]


def encode(params: UpdateParams, key: SectorKey, data: np.ndarray, h: int | None = None) -> UpdatedSector:
    """encode_into: the new replica and its trees."""
    h = params.h_default if h is None else h
    if h not in params.hs:
        raise ValueError(f"invalid h {h} (allowed: {sorted(set(params.hs))})")
    n = params.nodes
    if data.shape != (n, 4):
        raise ValueError(f"data must be ({n}, 4) limbs, got {data.shape}")
    tree_d = MerkleTree(data, params.shape, "poseidon") if params.poseidon else \
        MerkleTree(data, TreeShape(2), "sha256")
    f = phi(tree_d.root, key.comm_r_old)
    shr = params.challenge_bit_len - h
    rhos = ints_to_limbs([rho(f, high) for high in range(1 << h)])
    coeff = np.repeat(rhos, 1 << shr, axis=0)
    replica_new = _fr_mul_add(key.tree_r.levels[0], data, coeff)
    tree_r_new = MerkleTree(replica_new, params.shape, "poseidon")
    return UpdatedSector(params, key, h, data, tree_d, tree_r_new)


def make_test_update(params: UpdateParams, seed: int = 0, h: int | None = None) -> UpdatedSector:
    """A sector sealed by the test sealer (2-layer test shape, or the registered size's
    configuration), then updated with random data (deterministic in `seed`)."""
    cfg = seal_config(params.sector_size, params.shape)
    rng = np.random.default_rng(seed)
    n = params.nodes
    sealed = seal_sector(cfg, fr32_pad(rng.bytes(unpadded_capacity(n)), n), rng.bytes(32), 1, rng.bytes(32))
    key = SectorKey(sealed.tree_r, sealed.comm_c)
    return encode(params, key, fr32_pad(rng.bytes(unpadded_capacity(n)), n), h)
