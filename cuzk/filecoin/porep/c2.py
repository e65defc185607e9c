"""PoRep C2: a C1 output in, its Groth16 proof out (rust-fil-proofs seal_commit_phase2).

    circuit = PoRepCircuit.for_c1(out)          # the sector size's partition circuit
    check_c1(out)                               # vanilla proofs, before anything is proved
    keys = circuit.keys(params_dir)             # published .params/.vk, else development keys
    proof = prove_c1(out, keys)                 # 192 bytes per partition, concatenated
    verify_c1_proof(out, proof, keys.vk)        # None, or why not

Every registered seal proof of a sector size (V1, V1_1, synthetic, non-interactive) proves
with the same circuit and parameter files: a partition has 2 (test sizes) or 18 challenges in
every mode; the modes differ only in the partition count and how challenges are drawn, which
the vanilla side (challenges.py) and the public inputs (public_inputs.py) handle.

The circuit's matrices come from the record cache (cuzk/filecoin/cs/record_cache.py: recorded
once per shape, memory-mapped after); each partition's witness is synthesized natively from
the C1 output (witness mode, native programs); the public inputs a verifier uses are computed
from the C1 output alone (`c1_public_inputs`), never taken from the witness.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk.filecoin.circuit_keys import CircuitKeys, Keys, first_failing_partition
from cuzk.filecoin.params.names import porep_parameters
from cuzk.formats.proof_bytes import encode_proof
from cuzk.groth16.prover import prove
from cuzk.model.keys import VerifyingKey

from .c1json import load
from .circuit import StackedCircuit, c1_partition_circuit
from .circuit_params import StackedCircuitParams
from .constants import SINGLE_PARTITION_PROOF_LEN, PoRepConfig, RegisteredSealProof, SectorSize
from .proof import SealCommitPhase1Output
from .public_inputs import c1_public_inputs
from .verify import VanillaProofError, verify_c1

log = logging.getLogger(__name__)

# The modules (relative to cuzk/filecoin) the PoRep circuit's constraints come from, besides
# the constraint system and gadgets: part of the record cache's code version.
CIRCUIT_SOURCES = ("porep/circuit.py", "porep/circuit_params.py", "porep/label.py",
                   "porep/constants.py")


class C2Error(ValueError):
    """A C1 output that is not proved: malformed, of another circuit, or whose vanilla proofs
    do not verify. One line saying what, and where (partition, challenge) when it is known."""


class PoRepCircuit(CircuitKeys):
    """One sector size's partition circuit: its shape, and (CircuitKeys) its matrices and its
    parameter files.

    `cache_dir` (default CUZK_CACHE_DIR, else ~/.cache/cuzk) holds what is made once per
    machine: the recorded matrices (r1cs/), development keys (filecoin-dev-parameters/) and
    the converted copies of parameter files."""

    def __init__(self, params: StackedCircuitParams, sector_size: int,
                 cache_dir: str | os.PathLike | None = None) -> None:
        self.params = params
        self.sector_size = sector_size
        p = params
        super().__init__(f"porep-{p.nodes}n-{p.layers}l-{p.challenges}c-{p.tree}", repr(p),
                         CIRCUIT_SOURCES, lambda: StackedCircuit(p),
                         porep_parameters(PoRepConfig.test(p.nodes, p.layers, p.challenges, p.tree)),
                         p.public_inputs, cache_dir)

    @classmethod
    def for_config(cls, config: PoRepConfig, cache_dir: str | os.PathLike | None = None,
                   ) -> PoRepCircuit:
        return cls(StackedCircuitParams.from_config(config), config.sector_size, cache_dir)

    @classmethod
    def for_sector(cls, size: SectorSize | int | str,
                   cache_dir: str | os.PathLike | None = None) -> PoRepCircuit:
        sec = size.size if isinstance(size, SectorSize) else size
        return cls.for_config(PoRepConfig.for_proof(RegisteredSealProof.for_size(sec)), cache_dir)

    @classmethod
    def for_c1(cls, out: SealCommitPhase1Output,
               cache_dir: str | os.PathLike | None = None) -> PoRepCircuit:
        return cls.for_config(out.config, cache_dir)

    def check(self, out: SealCommitPhase1Output) -> None:
        """A C1 output this circuit proves: its registered proof has this shape."""
        other = StackedCircuitParams.from_config(out.config)
        if other != self.params or out.config.sector_size != self.sector_size:
            raise C2Error(f"registered proof {out.registered_proof.name} is a "
                          f"{out.config.sector.name if out.config.sector else out.config.sector_size} "
                          f"sector's circuit ({other.describe()}); this circuit is "
                          f"{self.params.describe()}")

    def witness(self, out: SealCommitPhase1Output, k: int,
                buf: np.ndarray | None = None) -> np.ndarray:
        """Partition k's assignment [ONE, inputs, aux] (canonical limbs), written into `buf`
        ((n_vars, 4) uint64; allocated here when not given, at its final size: a witness
        grown by doubling would peak at ~2.5 times its size)."""
        return self.witness_of(c1_partition_circuit(out, k), buf)

    def witness_fn(self) -> Callable[..., np.ndarray]:
        """(a checked C1 output, partition, out=buffer) -> witness: the engine's witness
        generator (CircuitSpec.witness_into: it writes into the partition's buffer)."""
        # the engine passes the buffer as out=: the C1 output must not be a parameter named out
        return lambda c1, k, out=None: self.witness(c1, k, out)

    def split_job(self, c1: bytes | str | SealCommitPhase1Output) -> list[SealCommitPhase1Output]:
        """A job's C1 output read and checked (check_c1), once per partition: the engine's
        `job_input` (each partition's input is the output itself; `witness` picks its part)."""
        out = read_c1(c1)
        check_c1(out, self)
        return [out] * len(out.vanilla_proofs)


def read_c1(data: bytes | str | SealCommitPhase1Output) -> SealCommitPhase1Output:
    """A C1 output from its JSON (bare, or Curio's c1.json wrapper); C2Error when malformed."""
    if isinstance(data, SealCommitPhase1Output):
        return data
    from .c1json import C1FormatError

    try:
        out, _ = load(data)
    except C1FormatError as exc:
        raise C2Error(f"malformed C1 output: {exc}") from None
    return out


def check_c1(out: SealCommitPhase1Output, circuit: PoRepCircuit | None = None) -> None:
    """What C2 checks before proving: the circuit's shape (when one is given) and every
    partition's vanilla proofs against comm_r, comm_d, replica_id and the seed. C2Error
    naming the partition and challenge of the first failure."""
    if circuit is not None:
        circuit.check(out)
    try:
        verify_c1(out)
    except VanillaProofError as exc:
        raise C2Error(f"vanilla proof does not verify: {exc}") from None
    except ValueError as exc:
        raise C2Error(f"C1 output refused: {exc}") from None


def prove_c1(out: SealCommitPhase1Output, keys: Keys, circuit: PoRepCircuit | None = None,
             backend: Any = None, checked: bool = False,
             on_partition: Callable[[int, float], None] | None = None) -> bytes:
    """The concatenated proof (192 bytes per partition, in partition order). Checks the C1
    output first unless `checked`; a partition's witness must give the public inputs a
    verifier computes from the C1 output, and satisfy the constraints, before it is proved."""
    import time

    circuit = circuit or PoRepCircuit.for_c1(out)
    if not checked:
        check_c1(out, circuit)
    n_pub = keys.pk.n_public
    parts = []
    for k in range(len(out.vanilla_proofs)):
        t0 = time.perf_counter()
        w = circuit.witness(out, k)
        got = [int.from_bytes(w[i].tobytes(), "little") for i in range(1, n_pub + 1)]
        if got != c1_public_inputs(out, k):
            raise C2Error(f"partition {k}: the circuit's public inputs differ from those "
                          "computed from the C1 output")
        proof = prove(keys.pk, w, backend=backend)
        blob = encode_proof(proof)
        assert len(blob) == SINGLE_PARTITION_PROOF_LEN
        parts.append(blob)
        if on_partition is not None:
            on_partition(k, time.perf_counter() - t0)
    return b"".join(parts)


def verify_c1_proof(out: SealCommitPhase1Output, proof: bytes, vk: VerifyingKey) -> str | None:
    """None when every partition's proof verifies against the public inputs computed from the
    C1 output, else why not (the first partition that fails)."""
    n = len(out.vanilla_proofs)
    size = SINGLE_PARTITION_PROOF_LEN
    if len(proof) != n * size:
        return (f"the proof is {len(proof)} bytes; {out.registered_proof.name} with {n} "
                f"partition(s) has {n * size} ({size} per partition)")
    return first_failing_partition(proof, n, lambda k: c1_public_inputs(out, k), vk)
