"""Cross-checks against snarkjs: every proof of ours verifies with snarkjs, and the reverse."""

from __future__ import annotations

import pytest
from conftest import CIRCUIT_NAMES, CURVES, read_wtns, write_wtns

from cuzk.tools import snarkjs

pytestmark = pytest.mark.parametrize("curve", CURVES)


@pytest.mark.parametrize("name", CIRCUIT_NAMES)
def test_harness_snarkjs_roundtrip(curve, name, circom_artifact, rng, tmp_path):
    art = circom_artifact(curve, name)
    assert snarkjs.wtns_check(art.r1cs, art.wtns)
    assert snarkjs.groth16_verify(art.vk_json, art.public_json, art.proof_json)
    prime, w = read_wtns(art.wtns)
    bad = tmp_path / "bad.wtns"
    w[-1] = (w[-1] + 1 + rng.randrange(prime - 1)) % prime
    write_wtns(bad, prime, w)
    assert not snarkjs.wtns_check(art.r1cs, bad)
