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

import dataclasses
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.filecoin.cs import synthesize_witness
from cuzk.filecoin.cs.record_cache import SUBDIR, cache_path, cached_r1cs
from cuzk.filecoin.params.dev import DEV_SUBDIR, NOTE, development_parameters
from cuzk.filecoin.params.files import (
    ParameterFiles,
    load_parameters,
    load_verifying_key,
    parameter_files,
)
from cuzk.filecoin.params.names import ParameterSet, porep_parameters
from cuzk.formats.proof_bytes import decode_proof, encode_proof
from cuzk.groth16.prover import prove
from cuzk.groth16.verifier import explain
from cuzk.model.density import Density
from cuzk.model.keys import ProvingKey, VerifyingKey
from cuzk.model.r1cs import R1CS

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


@dataclass
class Keys:
    """A circuit's keys: the proving key (its R1CS attached, for constraint evaluation), the
    verifying key, where they came from and whether they are development keys."""

    pk: ProvingKey
    vk: VerifyingKey
    files: ParameterFiles
    development: bool

    def describe(self) -> str:
        what = f"DEVELOPMENT keys ({NOTE})" if self.development else "published parameters"
        return f"{what}: {self.files.params}"


class PoRepCircuit:
    """One sector size's partition circuit: its shape, its matrices and its parameter files.

    `cache_dir` (default CUZK_CACHE_DIR, else ~/.cache/cuzk) holds what is made once per
    machine: the recorded matrices (r1cs/), development keys (filecoin-dev-parameters/) and
    the converted copies of parameter files."""

    def __init__(self, params: StackedCircuitParams, sector_size: int,
                 cache_dir: str | os.PathLike | None = None) -> None:
        self.params = params
        self.sector_size = sector_size
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._keys: dict[tuple[str, bool], Keys] = {}

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

    def _sub(self, name: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / name

    @property
    def name(self) -> str:
        p = self.params
        return f"porep-{p.nodes}n-{p.layers}l-{p.challenges}c-{p.tree}"

    @cached_property
    def parameter_set(self) -> ParameterSet:
        p = self.params
        return porep_parameters(PoRepConfig.test(p.nodes, p.layers, p.challenges, p.tree))

    def blank(self) -> StackedCircuit:
        """The circuit without values (what the matrices and the parameters are made from)."""
        return StackedCircuit(self.params)

    def r1cs(self) -> tuple[R1CS, Density]:
        """The matrices (bellperson's input rows appended) and density, recorded once per
        shape and mapped from the record cache."""
        return cached_r1cs(self.blank(), self.name, repr(self.params), CIRCUIT_SOURCES,
                           self._sub(SUBDIR))

    @property
    def r1cs_id(self) -> str:
        """The record-cache file's name: it changes whenever the matrices may (a new code
        version), and development keys are made again then."""
        return cache_path(self.name, repr(self.params), CIRCUIT_SOURCES, self._sub(SUBDIR)).name

    @property
    def n_inputs(self) -> int:
        """ONE and the public inputs."""
        return self.params.public_inputs + 1

    def keys(self, params_dir: str | os.PathLike | None = None, allow_dev: bool = True,
             backend: Any = None) -> Keys:
        """The published files when the parameter directory (FIL_PROOFS_PARAMETER_CACHE) has
        them, else, with allow_dev, development keys of this circuit (made once: the setup
        of a 2 KiB partition takes minutes on a few cores; then mapped)."""
        real = parameter_files(self.parameter_set, params_dir)
        dev = not real.exists("params")
        cache_key = (str(real.directory), dev)
        if cache_key in self._keys:
            return self._keys[cache_key]
        r1cs, density = self.r1cs()
        if dev:
            if not allow_dev:
                real.require("params")  # raises MissingParameterFile naming the file
            files = development_parameters(self.parameter_set, self.blank(),
                                           self._sub(DEV_SUBDIR), backend=backend, r1cs=r1cs,
                                           circuit_id=self.r1cs_id)
            log.warning("proving %s with DEVELOPMENT keys (%s): proofs will not verify on chain",
                        self.name, NOTE)
        else:
            files = real
        pk = load_parameters(self.parameter_set, density, files.directory,
                             cache_dir=self.cache_dir)
        pk = dataclasses.replace(pk, r1cs=r1cs, meta={**pk.meta, "development": dev})
        vk = load_verifying_key(self.parameter_set, files.directory)
        keys = Keys(pk, vk, files, dev)
        self._keys[cache_key] = keys
        return keys

    def verifying_key(self, params_dir: str | os.PathLike | None = None,
                      ) -> tuple[VerifyingKey, bool]:
        """The `.vk` alone (the published one, else the development one, made if absent)."""
        real = parameter_files(self.parameter_set, params_dir)
        if real.exists("vk"):
            return load_verifying_key(self.parameter_set, real.directory), False
        files = development_parameters(self.parameter_set, self.blank(), self._sub(DEV_SUBDIR),
                                       r1cs=self.r1cs()[0], circuit_id=self.r1cs_id)
        return load_verifying_key(self.parameter_set, files.directory), True

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
        if buf is None:
            buf = np.empty((self.r1cs()[0].n_vars, 4), dtype=np.uint64)
        return synthesize_witness(c1_partition_circuit(out, k), out=buf,
                                  n_inputs=self.n_inputs)

    def witness_fn(self) -> Callable[..., np.ndarray]:
        """(a checked C1 output, partition, out=buffer) -> witness: the engine's witness
        generator (CircuitSpec.witness_into: it writes into the partition's buffer)."""
        return lambda c1, k, **kw: self.witness(c1, k, kw.get("out"))

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
    from cuzk.formats.errors import FormatError

    for k in range(n):
        try:
            p = decode_proof("bls12_381", proof[k * size : (k + 1) * size], "proof")
        except FormatError as exc:
            return f"partition {k}: not a proof: {exc}"
        why = explain(vk, c1_public_inputs(out, k), p)
        if why is not None:
            return f"partition {k}: {why}"
    return None
