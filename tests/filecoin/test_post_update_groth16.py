"""Groth16 proofs over the PoSt and SnapDeals circuits with development keys (NOT FOR
PRODUCTION): generated vanilla proofs → checked inputs → witness → proof → verification with
the public inputs rust-fil-proofs computes; proofs do not verify against other inputs.

WindowPoSt goes through development parameter files under the published names (the loader
rust-fil-proofs' files use); the rest use the development setup directly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from filecoin_fixtures import changed_input

from cuzk.backends.cpu import native_module
from cuzk.filecoin.cs import synthesize_density, synthesize_r1cs, synthesize_witness
from cuzk.filecoin.params import dev, files, names
from cuzk.filecoin.post import (
    PublicSector,
    RegisteredPoStProof,
    window_partition,
    winning_partition,
)
from cuzk.filecoin.post.circuit import FallbackPoStCircuit, partition_circuit
from cuzk.filecoin.post.generate import (
    field_bytes,
    seal_sectors,
    window_vanilla_proofs,
    winning_vanilla_proofs,
)
from cuzk.filecoin.post.public_inputs import generate_public_inputs
from cuzk.filecoin.update import circuit as sha_circuit
from cuzk.filecoin.update import poseidon_circuit
from cuzk.filecoin.update.constants import RegisteredUpdateProof, UpdateParams
from cuzk.filecoin.update.generate import make_test_update
from cuzk.filecoin.update.public_inputs import public_inputs
from cuzk.filecoin.update.vanilla import update_inputs
from cuzk.groth16.prover import prove
from cuzk.groth16.setup import setup
from cuzk.groth16.verifier import verify

pytestmark = pytest.mark.skipif(native_module() is None, reason="needs the native CPU backend")

RNG = np.random.default_rng(31)
RANDOMNESS, PROVER_ID = field_bytes(RNG), field_bytes(RNG)


def test_window_post_2kib(tmp_path: Path) -> None:
    """Development parameter files under WindowPoSt 2 KiB's published names; both partitions
    of three sealed sectors prove, each proof verifies with its partition's inputs only."""
    proof_type = RegisteredPoStProof.StackedDrgWindow2KiBV1_2
    cfg = proof_type.config()
    pset = names.window_post(2048)
    blank = FallbackPoStCircuit(cfg.fallback_params())
    dev.development_parameters(pset, blank, directory=tmp_path / "params", backend="cpu")
    _, density = synthesize_density(blank)
    pk = files.load_parameters(pset, density, directory=tmp_path / "params", cache_dir=tmp_path / "cache",
                               r1cs=synthesize_r1cs(blank, labels=False))
    vk = files.load_verifying_key(pset, directory=tmp_path / "params")
    secs = seal_sectors(cfg, 3, seed=8)
    pubs = [PublicSector(s.sector_id, s.comm_r) for s in secs]
    proofs, inputs = [], []
    for k, blobs in enumerate(window_vanilla_proofs(cfg, RANDOMNESS, secs)):
        circ = partition_circuit(window_partition(proof_type, RANDOMNESS, PROVER_ID, blobs, k))
        w = synthesize_witness(circ, n_inputs=pk.vk.n_public + 1)
        proofs.append(prove(pk, w, backend="cpu"))
        inputs.append(generate_public_inputs(cfg, RANDOMNESS, pubs, k))
    assert all(verify(vk, i, p) for i, p in zip(inputs, proofs))
    assert not verify(vk, inputs[1], proofs[0])
    assert not verify(vk, changed_input(inputs[0]), proofs[0])
    other = field_bytes(np.random.default_rng(2))
    assert not verify(vk, generate_public_inputs(cfg, other, pubs, 0), proofs[0])


def test_winning_post_2kib() -> None:
    proof_type = RegisteredPoStProof.StackedDrgWinning2KiBV1
    cfg = proof_type.config()
    pk = setup(synthesize_r1cs(FallbackPoStCircuit(cfg.fallback_params()), labels=False),
               "cuzk winning-post test", convention="bellman", backend="cpu")
    chosen, blobs = winning_vanilla_proofs(cfg, RANDOMNESS, PROVER_ID, seal_sectors(cfg, 2, seed=9))
    circ = partition_circuit(winning_partition(proof_type, RANDOMNESS, PROVER_ID, blobs))
    proof = prove(pk, synthesize_witness(circ, n_inputs=pk.vk.n_public + 1), backend="cpu")
    good = generate_public_inputs(cfg, RANDOMNESS, [PublicSector(chosen.sector_id, chosen.comm_r)], 0)
    assert verify(pk.vk, good, proof)
    assert not verify(pk.vk, changed_input(good), proof)
    wrong_id = generate_public_inputs(cfg, RANDOMNESS, [PublicSector(chosen.sector_id + 1, chosen.comm_r)], 0)
    assert not verify(pk.vk, wrong_id, proof)


def _update_proof(params: UpdateParams, seed: int) -> None:
    """The SHA-256 variant's 2 KiB proof is tests/filecoin/test_post_update_cli.py's
    (its development keys are kept in the session's cache)."""
    blank = (poseidon_circuit.PoseidonUpdateCircuit if params.poseidon else sha_circuit.EmptySectorUpdateCircuit)(params)
    pk = setup(synthesize_r1cs(blank, labels=False), f"cuzk update test {params}", convention="bellman",
               backend="cpu")
    u = make_test_update(params, seed=seed)
    ins = update_inputs(params, u.vanilla_proofs(), *u.commitments())
    pub = ins.public
    if params.poseidon:
        circ = poseidon_circuit.partition_circuit(params, pub.h, pub.comm_r_old, pub.comm_d_new,
                                                  pub.comm_r_new, ins.proofs[0])  # type: ignore[arg-type]
    else:
        circ = sha_circuit.partition_circuit(params, 0, pub.h, pub.comm_r_old, pub.comm_d_new,
                                             pub.comm_r_new, ins.proofs[0])  # type: ignore[arg-type]
    proof = prove(pk, synthesize_witness(circ, n_inputs=5), backend="cpu")
    good = public_inputs(params, 0, pub.h, pub.comm_r_old, pub.comm_d_new, pub.comm_r_new)
    assert verify(pk.vk, good, proof)
    assert not verify(pk.vk, changed_input(good), proof)
    swapped = public_inputs(params, 0, pub.h, pub.comm_r_new, pub.comm_d_new, pub.comm_r_old)
    assert not verify(pk.vk, swapped, proof)


def test_snap_update_poseidon_2kib() -> None:
    _update_proof(RegisteredUpdateProof.StackedDrg2KiBV1.params(poseidon=True), 11)

