"""filecoin-hashers' SHA-256: the digest with its top two bits cleared, as a field element."""

from __future__ import annotations

import hashlib

import pytest

from cuzk.filecoin.cs import R
from cuzk.filecoin.hashers.sha256 import (
    domain_to_fr,
    fr_to_domain,
    hash2,
    sha256_domain,
    sha256_fr,
    trim_to_fr32,
)

# Zero-piece commitments (binary SHA-256 tree of zero leaves, trimmed at every node), as
# Filecoin implementations list them by tree level: 4 leaves (128 bytes), 8, 16, and
# 2^30 leaves (a 32 GiB sector's comm_d of zeros).
ZERO_COMMS = {
    2: "3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333",
    3: "642a607ef886b004bf2c1978463ae1d4693ac0f410eb2d1b7a47fe205e5e750f",
    4: "57a2381a28652bf47f6bef7aca679be4aede5871ab5cf3eb2c08114488cb8526",
    30: "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e",
}


def test_trim_to_fr32_known_answers() -> None:
    # FIPS 180-2: SHA-256("abc") = ba7816bf...f20015ad; the last byte 0xad becomes 0x2d
    d = sha256_domain(b"abc")
    assert d.hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f200152d"
    assert sha256_fr(b"abc") == 0x2D1500F261FF10B49C7A1796A36103B02322AE5DDE404141EACF018FBF1678BA
    assert trim_to_fr32(b"\xff" * 32) == b"\xff" * 31 + b"\x3f"
    assert int.from_bytes(trim_to_fr32(b"\xff" * 32), "little") < R
    with pytest.raises(ValueError):
        trim_to_fr32(b"\x00" * 31)


def test_zero_piece_commitments() -> None:
    node = bytes(32)
    for level in range(1, max(ZERO_COMMS) + 1):
        node = hash2(node, node)
        if level in ZERO_COMMS:
            assert node.hex() == ZERO_COMMS[level], level


def test_domains() -> None:
    x = sha256_fr(b"filecoin")
    assert domain_to_fr(fr_to_domain(x)) == x
    assert hash2(fr_to_domain(1), fr_to_domain(2)) == sha256_domain(fr_to_domain(1) + fr_to_domain(2))
    with pytest.raises(ValueError):
        domain_to_fr(R.to_bytes(32, "little"))
    with pytest.raises(ValueError):
        fr_to_domain(R)
    with pytest.raises(ValueError):
        hash2(b"\x00" * 32, b"\x00" * 33)
    with pytest.raises(ValueError):
        domain_to_fr(b"\x00")
    assert hashlib.sha256(b"").digest()[:31] == sha256_domain(b"")[:31]
