"""A Filecoin circuit proved on CudaBackend itself, on the emulated device of
tests/emulated_cuda.py, with the checks tests/gpu/test_gpu_filecoin.py makes of the 2 KiB
circuits on a GPU (tests/device_agreement.py): a WindowPoSt 2 KiB partition with one challenge
per sector instead of ten (2 sectors, 2,750 constraints), its development key loaded as a
daemon loads parameter files (mapped read-only, the recorded matrices attached), the padded
second partition of three sealed sectors. The proof equals the CPU backend's byte for byte,
by prover.prove and by an engine on the device, and verifies with the public inputs
rust-fil-proofs computes.

Unlike the GPU test, the key is made on the CPU and the engine builds no window tables and
proves no warm-up partition: each takes a minute or more on the emulated device at 4,096 rows
(test_emulated_prove.py and test_emulated_engine.py check them at 2^7)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from device_agreement import assert_proves_alike
from emulated_cuda import EmulatedCudaBackend

from cuzk.engine import CircuitSpec
from cuzk.filecoin.circuit_keys import CircuitKeys
from cuzk.filecoin.params.names import ParameterSet
from cuzk.filecoin.post import PublicSector, RegisteredPoStProof, window_partition
from cuzk.filecoin.post.circuit import FallbackPoStCircuit, partition_circuit
from cuzk.filecoin.post.generate import field_bytes, seal_sectors, window_vanilla_proofs
from cuzk.filecoin.post.prove import CIRCUIT_SOURCES
from cuzk.filecoin.post.public_inputs import generate_public_inputs

RNG = np.random.default_rng(51)
RANDOMNESS, PROVER_ID = field_bytes(RNG), field_bytes(RNG)


def test_window_post_partition_proves_alike(cuda_host_kernels, cpu, tmp_path: Path) -> None:
    cfg = dataclasses.replace(RegisteredPoStProof.StackedDrgWindow2KiBV1_2.config(),
                              challenge_count=1)  # fmt: skip
    p = cfg.fallback_params()
    # the circuit as PoStCircuit makes it, under parameter file names of this test shape
    pset = ParameterSet("window-post", "proof-of-spacetime-fallback-test", p.identifier(),
                        p.sector_size)  # fmt: skip
    circuit = CircuitKeys("window-post-test", repr(p), CIRCUIT_SOURCES,
                          lambda: FallbackPoStCircuit(p), pset,
                          p.sector_count * (1 + p.challenge_count), tmp_path / "cache")  # fmt: skip
    keys = circuit.keys(tmp_path / "no-params", backend=cpu)
    pk = keys.pk
    assert keys.development and not pk.a_g1.flags.writeable
    assert pk.r1cs.n_constraints + pk.n_public + 1 <= pk.domain_size == 4096
    sectors = seal_sectors(cfg, 3, seed=5)
    blobs = window_vanilla_proofs(cfg, RANDOMNESS, sectors)[1]  # one sector, padded
    ins = window_partition(cfg, RANDOMNESS, PROVER_ID, blobs, 1)
    public = generate_public_inputs(cfg, RANDOMNESS,
                                    [PublicSector(s.sector_id, s.comm_r) for s in sectors], 1)  # fmt: skip
    # as PoStCircuit's split_job and witness_fn serve a daemon's engine
    spec = CircuitSpec(key=pk, job_input=lambda _job: [ins], witness_into=True,
                       witness_fn=lambda i, k, out=None: circuit.witness_of(partition_circuit(i), out))  # fmt: skip
    be = EmulatedCudaBackend(cuda_host_kernels)
    assert_proves_alike(spec, b"job", public, be, cpu, msm_tables=False, warm_up=False)
    assert be.launched["csr_matvec"] > 0 and be.launched["fr_mul_canonical"] > 0  # evaluated, checked
    be.check_emulation()
