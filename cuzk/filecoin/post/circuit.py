"""The fallback PoSt circuit (WinningPoSt and WindowPoSt), as rust-fil-proofs synthesizes it
(storage-proofs-post fallback/circuit.rs FallbackPoStCircuit, Sector::synthesize): the same
variables in the same order, the same constraints in the same order, the same public inputs.

    per sector i ("outer namespace" / "sector_{i}"):
      comm_r_last, comm_c   allocated (private)
      comm_r                allocated, inputized                         input: comm_r
      comm_r == Poseidon2(comm_c, comm_r_last)
      per challenge j ("challenge_inclusion_{j}"): the PoR circuit of the challenged leaf
        (allocated) in tree_r_last, rooted at the allocated comm_r_last, private root
                                                                         input: the leaf index

rust's prover may synthesize groups of sectors in separate constraint systems and append
them (synthesize_extendable); the result is the same rows in the same order. The circuit runs
in every mode of cuzk.filecoin.cs; its structure depends only on the parameters. Each path
level after its allocations is one template (gadgets/por.py), so a 32 GiB WindowPoSt
partition (23,490 paths) counts in shape mode without Python per constraint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.gadgets.constraint import equal
from cuzk.filecoin.gadgets.hash_functions import PoseidonFunction
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.por import AuthPath, Root, por_circuit

from .constants import FallbackParams
from .proof import SectorProof
from .vanilla import PartitionInputs, PublicSector


@dataclass
class SectorWitness:
    """circuit.rs Sector: one sector's values (None everywhere: the blank circuit)."""

    comm_r: int | None
    comm_c: int | None
    comm_r_last: int | None
    leafs: list[int | None]
    paths: list[AuthPath]

    @classmethod
    def blank(cls, params: FallbackParams) -> SectorWitness:
        n = params.challenge_count
        return cls(None, None, None, [None] * n,
                   [AuthPath.blank(params.shape, params.leaves) for _ in range(n)])

    @classmethod
    def of(cls, params: FallbackParams, sector: PublicSector, proof: SectorProof) -> SectorWitness:
        """Sector::circuit: comm_r from the public sector, the rest from its proof."""
        return cls(sector.comm_r, proof.comm_c, proof.comm_r_last, proof.leafs(),
                   [AuthPath.from_levels(params.shape, p.path()) for p in proof.inclusion_proofs])

    def check(self, params: FallbackParams) -> None:
        if len(self.leafs) != params.challenge_count or len(self.paths) != params.challenge_count:
            raise ValueError(f"a sector has {params.challenge_count} challenge(s), got "
                             f"{len(self.leafs)} leaves and {len(self.paths)} paths")
        want = params.shape.path_arities(params.leaves)
        for p in self.paths:
            got = [params.shape.base] * len(p.base) + ([params.shape.sub] if p.sub else []) \
                + ([params.shape.top] if p.top else [])
            if got != want or p.shape != params.shape:
                raise ValueError(f"a path of {len(got)} level(s), the tree {params.shape} of "
                                 f"{params.leaves} leaves has {len(want)}")


def synthesize_sector(cs: ConstraintSystem, s: SectorWitness) -> None:
    """Sector::synthesize."""
    want = cs.wants_values
    with cs.namespace("comm_r_last"):
        comm_r_last = AllocatedNum.alloc(cs, s.comm_r_last if want else None)
    with cs.namespace("comm_c"):
        comm_c = AllocatedNum.alloc(cs, s.comm_c if want else None)
    with cs.namespace("comm_r"):
        comm_r = AllocatedNum.alloc(cs, s.comm_r if want else None)
    with cs.namespace("comm_r_input"):
        comm_r.inputize(cs)
    with cs.namespace("H_comm_c_comm_r_last"):
        h = PoseidonFunction.hash2_circuit(cs, comm_c, comm_r_last)
    equal(cs, "enforce_comm_c_comm_r_last_hash_comm_r", comm_r, h)
    for i, (leaf, path) in enumerate(zip(s.leafs, s.paths)):
        with cs.namespace(f"challenge_inclusion_{i}"):
            por_circuit(cs, Root.val(leaf), path, Root.var(comm_r_last), True, PoseidonFunction)


class FallbackPoStCircuit:
    """One partition's circuit: `circuit(cs)` for any mode; without sectors, the blank circuit
    bellperson's parameter generation synthesizes."""

    def __init__(self, params: FallbackParams, sectors: Sequence[SectorWitness] | None = None) -> None:
        self.params = params
        self.sectors = list(sectors) if sectors is not None else \
            [SectorWitness.blank(params) for _ in range(params.sector_count)]
        if len(self.sectors) != params.sector_count:
            raise ValueError(f"vanilla proofs must equal sector_count: {params.sector_count} != "
                             f"{len(self.sectors)}")
        for s in self.sectors:
            s.check(params)

    def __call__(self, cs: ConstraintSystem) -> None:
        with cs.namespace("outer namespace"):
            for i, s in enumerate(self.sectors):
                with cs.namespace(f"sector_{i}"):
                    synthesize_sector(cs, s)


def partition_circuit(inputs: PartitionInputs) -> FallbackPoStCircuit:
    """FallbackPoStCompound::circuit: a padded position takes the last public sector."""
    params = inputs.params
    pub = inputs.padded_sectors()
    return FallbackPoStCircuit(params, [SectorWitness.of(params, s, p)
                                        for s, p in zip(pub, inputs.proof.sectors)])
