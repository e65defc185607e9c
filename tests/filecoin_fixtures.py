"""Session fixtures of the Filecoin tests (loaded by tests/conftest.py): one sealed 2 KiB
sector and one set of 2 KiB development keys for every test that proves.

What is made once per machine (the recorded matrices, the development keys: minutes of setup
on 2 cores, and the converted key) lives under .cache/filecoin-c2 in the checkout; its files
are named by the circuit's code version, so an edit of the circuit makes new ones."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

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
