"""Filecoin's circuits proved on the CUDA backend: 2 KiB WinningPoSt, WindowPoSt (one
partition), SnapDeals (Poseidon and SHA-256) and PoRep C2 (the sealed test sector's C1
output). Each circuit's development key is made on the GPU; each job input goes to the
daemon's circuit spec for it (server/circuits.py: the key loaded from the parameter files, the
input checked and split, the witness written into the partition's pinned buffer). Proved on
the CPU backend, on the GPU by prover.prove with the same key, witness, r and s, and by an
engine on the GPU as a daemon runs it (the key HOT with its window tables, a warm-up
partition, the constraints evaluated on the device): the 192-byte proofs are identical and
verify with the public inputs rust-fil-proofs computes, not with a changed one
(tests/device_agreement.py; tests/emulated/test_emulated_filecoin.py makes the same checks on
the emulated device). Skipped without CuPy or a GPU.

Setup and the CPU proofs dominate: the PoRep circuit (2.7 M constraints, domain 2^22) is last."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from device_agreement import assert_proves_alike
from filecoin_fixtures import update_job, window_post_jobs, winning_post_job

from cuzk.filecoin.porep.c2 import PoRepCircuit
from cuzk.filecoin.porep.public_inputs import c1_public_inputs
from cuzk.filecoin.post.generate import field_bytes
from cuzk.filecoin.post.prove import PoStCircuit
from cuzk.filecoin.update.prove import UpdateCircuit
from cuzk.server import circuits

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
from cuzk.backends import cuda  # noqa: E402

if not cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

RNG = np.random.default_rng(41)
RANDOMNESS, PROVER_ID = field_bytes(RNG), field_bytes(RNG)


def _prove(proof: str, circuit: PoStCircuit | UpdateCircuit | PoRepCircuit, job_input: bytes,
           public: list[int], gpu: Any, cpu: Any, cache: Path, no_params: Path) -> None:
    """The key made on the GPU, then the job proved through the daemon's spec of `proof`."""
    assert circuit.keys(no_params, backend=gpu).development
    table = {"filecoin": {"proof": proof, "sector_size": "2KiB", "dev_keys": True,
                          "params": str(no_params), "cache_dir": str(cache)}}
    assert_proves_alike(circuits.build(proof, table).spec, job_input, public, gpu, cpu)


@pytest.mark.parametrize("proof", ("winning-post", "window-post"))
def test_post_proves_alike(proof: str, gpu, cpu, c2_cache: Path, no_params: Path) -> None:
    job = (winning_post_job(RANDOMNESS, PROVER_ID) if proof == "winning-post"
           else window_post_jobs(RANDOMNESS, PROVER_ID)[1])  # the padded partition
    circuit = PoStCircuit.for_proof(job.registered_proof, c2_cache)
    _prove(proof, circuit, job.to_bytes(), circuit.public_inputs(job), gpu, cpu, c2_cache,
           no_params)


@pytest.mark.parametrize("proof", ("snap-update-poseidon", "snap-update"))
def test_update_proves_alike(proof: str, gpu, cpu, c2_cache: Path, no_params: Path) -> None:
    job = update_job(poseidon=proof == "snap-update-poseidon")
    circuit = UpdateCircuit.for_job(job, c2_cache)
    _prove(proof, circuit, job.to_bytes(), circuit.public_inputs(job, 0), gpu, cpu, c2_cache,
           no_params)


def test_porep_c2_proves_alike(sealed_2k, circuit_2k, gpu, cpu, c2_cache: Path,
                               no_params: Path) -> None:  # fmt: skip
    """The C1 output's one partition (Curio's c1.json, its vanilla proofs checked)."""
    _prove("porep", circuit_2k, sealed_2k.c1, c1_public_inputs(sealed_2k.out, 0), gpu, cpu,
           c2_cache, no_params)
