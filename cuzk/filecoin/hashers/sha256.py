"""SHA-256 as filecoin-hashers' Sha256Hasher uses it: the digest with its last byte's two top
bits cleared (`trim_to_fr32`), read as a little-endian field element (a Sha256Domain)."""

from __future__ import annotations

import hashlib

from cuzk.filecoin.cs.lc import R

DOMAIN_BYTES = 32


def trim_to_fr32(digest: bytes) -> bytes:
    """Clear the two top bits of byte 31, so the little-endian value is below 2^254 < r."""
    if len(digest) != DOMAIN_BYTES:
        raise ValueError(f"a domain is {DOMAIN_BYTES} bytes, not {len(digest)}")
    return digest[:31] + bytes([digest[31] & 0x3F])


def sha256_domain(data: bytes) -> bytes:
    """Sha256Function::hash: the trimmed digest (32 bytes)."""
    return trim_to_fr32(hashlib.sha256(data).digest())


def hash2(a: bytes, b: bytes) -> bytes:
    """Sha256Function::hash2 / a Merkle node: the trimmed digest of two domains."""
    for x in (a, b):
        if len(x) != DOMAIN_BYTES:
            raise ValueError(f"a domain is {DOMAIN_BYTES} bytes, not {len(x)}")
    return sha256_domain(a + b)


def domain_to_fr(domain: bytes) -> int:
    """The field element a domain encodes (little-endian); must be below r."""
    if len(domain) != DOMAIN_BYTES:
        raise ValueError(f"a domain is {DOMAIN_BYTES} bytes, not {len(domain)}")
    v = int.from_bytes(domain, "little")
    if v >= R:
        raise ValueError("domain is not a canonical field element")
    return v


def fr_to_domain(x: int) -> bytes:
    if not 0 <= x < R:
        raise ValueError("not a field element")
    return x.to_bytes(DOMAIN_BYTES, "little")


def sha256_fr(data: bytes) -> int:
    """SHA-256 of data truncated to a field element, as filecoin-hashers computes it."""
    return int.from_bytes(sha256_domain(data), "little")
