"""Session fixtures of the Filecoin tests (loaded by tests/conftest.py): one sealed 2 KiB
sector and one set of 2 KiB development keys for every test that proves; and the PoSt and
SnapDeals jobs the CPU, daemon and device tests share.

What is made once per machine (the recorded matrices, the development keys: minutes of setup
on 2 cores, and the converted key) lives under .cache/filecoin-c2 in the checkout; its files
are named by the circuit's code version, so an edit of the circuit makes new ones."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

if TYPE_CHECKING:
    from cuzk.filecoin.post.job import PoStJob
    from cuzk.filecoin.update.job import UpdateJob

ROOT = Path(__file__).resolve().parents[1]
C2_CACHE = ROOT / ".cache" / "filecoin-c2"


@dataclass
class Sealed:
    out: object  # SealCommitPhase1Output
    c1: bytes  # Curio's c1.json
    path: Path  # where c1 is written
    sector_id: int


@pytest.fixture(scope="session")
def c2_cache() -> Path:
    C2_CACHE.mkdir(parents=True, exist_ok=True)
    return C2_CACHE


@pytest.fixture(scope="session")
def no_params(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty parameter directory: the published files are absent, development keys stand in."""
    return tmp_path_factory.mktemp("no-params")


@pytest.fixture(scope="session")
def sealed_2k(tmp_path_factory: pytest.TempPathFactory) -> Sealed:
    from cuzk.filecoin.porep import CurioC1, RegisteredSealProof
    from cuzk.filecoin.porep.seal import seal

    proof = RegisteredSealProof.StackedDrg2KiBV1_1
    out, _, inputs = seal(proof, rng=np.random.default_rng(2048), sector_id=7)
    c1 = CurioC1(inputs.sector_id, out, proof.sector.size).to_json()
    path = tmp_path_factory.mktemp("sealed-2k") / "c1.json"
    path.write_bytes(c1)
    return Sealed(out, c1, path, inputs.sector_id)


@pytest.fixture(scope="session")
def circuit_2k(c2_cache: Path):  # noqa: ANN201 - PoRepCircuit
    from cuzk.filecoin.porep.c2 import PoRepCircuit

    return PoRepCircuit.for_sector("2KiB", cache_dir=c2_cache)


@pytest.fixture(scope="session")
def keys_2k(circuit_2k, no_params: Path):  # noqa: ANN001, ANN201 - Keys
    return circuit_2k.keys(no_params)


# --- jobs shared by the CPU, daemon and device tests ------------------------------------------


def window_post_jobs(randomness: bytes, prover_id: bytes, sectors: int = 3,
                     seed: int = 21) -> list[PoStJob]:
    """WindowPoSt 2 KiB over `sectors` sealed test sectors: a job per partition (two sectors
    each, the last padded with its last sector), as Curio sends them."""
    from cuzk.filecoin.post import RegisteredPoStProof
    from cuzk.filecoin.post.generate import seal_sectors, window_vanilla_proofs
    from cuzk.filecoin.post.job import PoStJob

    rp = RegisteredPoStProof.StackedDrgWindow2KiBV1_2
    parts = window_vanilla_proofs(rp.config(), randomness, seal_sectors(rp.config(), sectors, seed=seed))
    return [PoStJob(rp, randomness, prover_id, blobs, k) for k, blobs in enumerate(parts)]


def winning_post_job(randomness: bytes, prover_id: bytes, seed: int = 22) -> PoStJob:
    """WinningPoSt 2 KiB: the sector it picks of two sealed test sectors, 66 challenges."""
    from cuzk.filecoin.post import RegisteredPoStProof
    from cuzk.filecoin.post.generate import seal_sectors, winning_vanilla_proofs
    from cuzk.filecoin.post.job import PoStJob

    rp = RegisteredPoStProof.StackedDrgWinning2KiBV1
    _, blobs = winning_vanilla_proofs(rp.config(), randomness, prover_id,
                                      seal_sectors(rp.config(), 2, seed=seed))
    return PoStJob(rp, randomness, prover_id, blobs)


def update_job(poseidon: bool, seed: int = 23) -> UpdateJob:
    """A 2 KiB SnapDeals update of a test sector (SHA-256 comm_d, or the Poseidon variant)."""
    from cuzk.filecoin.update.constants import RegisteredUpdateProof
    from cuzk.filecoin.update.generate import make_test_update
    from cuzk.filecoin.update.job import UpdateJob

    rp = RegisteredUpdateProof.StackedDrg2KiBV1
    u = make_test_update(rp.params(poseidon), seed=seed)
    return UpdateJob(rp, *u.commitments(), u.vanilla_proofs(), poseidon)


def changed_input(inputs: list[int]) -> list[int]:
    """The public inputs with one of them (the same one every run) one larger: a proof must
    not verify with them."""
    bad = list(inputs)
    bad[random.Random(1).randrange(len(bad))] += 1
    return bad
