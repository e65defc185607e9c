"""ChaCha keystreams as the Rust crates Filecoin uses draw them.

- `ChaCha8Rng` (rand_chacha 0.3 `from_seed`): 8 rounds, the 32-byte seed as key, a 64-bit block
  counter from 0 and a zero stream id; `next_u64` joins two consecutive output words, low first.
  BucketGraph draws its DRG parents from one per node.
- `chacha20_keystream` (the chacha20 crate, RFC 8439): 20 rounds, 32-bit counter, 96-bit nonce;
  synthetic PoRep challenges come from it.
- `chacha_blocks_np`: many independent keys at once (numpy), for every node's DRG parents.
"""

from __future__ import annotations

import numpy as np

_SIGMA = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)  # "expand 32-byte k"
_M32 = 0xFFFFFFFF


def _rotl(x: int, n: int) -> int:
    return ((x << n) | (x >> (32 - n))) & _M32


def _quarter(s: list[int], a: int, b: int, c: int, d: int) -> None:
    s[a] = (s[a] + s[b]) & _M32
    s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & _M32
    s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & _M32
    s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & _M32
    s[b] = _rotl(s[b] ^ s[c], 7)


def chacha_block(key: bytes, tail: tuple[int, int, int, int], rounds: int) -> list[int]:
    """One 64-byte block as 16 little-endian words; `tail` is state words 12..15 (counter and
    nonce, laid out by the caller's variant)."""
    if len(key) != 32:
        raise ValueError(f"a ChaCha key is 32 bytes, not {len(key)}")
    init = [*_SIGMA, *(int.from_bytes(key[4 * i : 4 * i + 4], "little") for i in range(8)), *tail]
    s = list(init)
    for _ in range(rounds // 2):
        _quarter(s, 0, 4, 8, 12)
        _quarter(s, 1, 5, 9, 13)
        _quarter(s, 2, 6, 10, 14)
        _quarter(s, 3, 7, 11, 15)
        _quarter(s, 0, 5, 10, 15)
        _quarter(s, 1, 6, 11, 12)
        _quarter(s, 2, 7, 8, 13)
        _quarter(s, 3, 4, 9, 14)
    return [(x + y) & _M32 for x, y in zip(s, init, strict=True)]


class ChaCha8Rng:
    """rand_chacha's ChaCha8Rng::from_seed, drawing u64s."""

    def __init__(self, seed: bytes) -> None:
        if len(seed) != 32:
            raise ValueError(f"a ChaCha8Rng seed is 32 bytes, not {len(seed)}")
        self._key = seed
        self._block = 0
        self._words: list[int] = []
        self._pos = 0

    def next_u32(self) -> int:
        if self._pos >= len(self._words):
            c = self._block
            self._words = chacha_block(self._key, (c & _M32, c >> 32, 0, 0), 8)
            self._block += 1
            self._pos = 0
        w = self._words[self._pos]
        self._pos += 1
        return w

    def next_u64(self) -> int:
        # Blocks hold an even number of words, so a u64 never straddles two refills here.
        lo = self.next_u32()
        return lo | self.next_u32() << 32


def chacha20_keystream(key: bytes, nonce: bytes, offset: int, length: int) -> bytes:
    """`length` bytes of the RFC 8439 ChaCha20 keystream from byte `offset` (seek then apply)."""
    if len(nonce) != 12:
        raise ValueError(f"a ChaCha20 nonce is 12 bytes, not {len(nonce)}")
    n = [int.from_bytes(nonce[4 * i : 4 * i + 4], "little") for i in range(3)]
    out = bytearray()
    block, skip = divmod(offset, 64)
    while len(out) < skip + length:
        if block > _M32:
            raise ValueError("seeking past the ChaCha20 keystream's end")
        words = chacha_block(key, (block, n[0], n[1], n[2]), 20)
        out += b"".join(w.to_bytes(4, "little") for w in words)
        block += 1
    return bytes(out[skip : skip + length])


def _rotl_np(x: np.ndarray, n: int) -> np.ndarray:
    return (x << np.uint32(n)) | (x >> np.uint32(32 - n))


def chacha_blocks_np(keys: np.ndarray, counter: int, rounds: int) -> np.ndarray:
    """Block `counter` (64-bit counter, zero stream) for each of `keys` ((n, 8) uint32 key
    words) -> (n, 16) uint32 output words."""
    keys = np.ascontiguousarray(keys, dtype=np.uint32)
    n = keys.shape[0]
    init = np.empty((16, n), dtype=np.uint32)
    init[:4] = np.array(_SIGMA, dtype=np.uint32)[:, None]
    init[4:12] = keys.T
    init[12] = counter & _M32
    init[13] = counter >> 32
    init[14:] = 0
    s = [init[i].copy() for i in range(16)]

    def q(a: int, b: int, c: int, d: int) -> None:
        s[a] += s[b]
        s[d] = _rotl_np(s[d] ^ s[a], 16)
        s[c] += s[d]
        s[b] = _rotl_np(s[b] ^ s[c], 12)
        s[a] += s[b]
        s[d] = _rotl_np(s[d] ^ s[a], 8)
        s[c] += s[d]
        s[b] = _rotl_np(s[b] ^ s[c], 7)

    for _ in range(rounds // 2):
        q(0, 4, 8, 12)
        q(1, 5, 9, 13)
        q(2, 6, 10, 14)
        q(3, 7, 11, 15)
        q(0, 5, 10, 15)
        q(1, 6, 11, 12)
        q(2, 7, 8, 13)
        q(3, 4, 9, 14)
    return (np.stack(s) + init).T.copy()
