"""Poseidon round constants from the Grain LFSR in self-shrinking mode (the Poseidon paper's
appendix F / generate_parameters_grain.sage), with the header neptune feeds it.

neptune's header: field type 1 (prime field), S-box type 1 (its own code for x^5, not the
paper's 0), the field size 255, then t, RF, RP. Each constant is the next 255 output bits read
big-endian; values >= r are discarded and the next 255 bits taken.
"""

from __future__ import annotations

import numpy as np

FIELD_PRIME = 1
SBOX_NEPTUNE = 1
_TAPS = (62, 51, 38, 23, 13, 0)  # b[i+80] = b[i+62] ^ b[i+51] ^ b[i+38] ^ b[i+23] ^ b[i+13] ^ b[i]
_STEP = 18  # 80 - 62: this many new bits depend only on the current 80-bit window
_MASK = (1 << _STEP) - 1


def _header(field_size: int, t: int, rf: int, rp: int) -> int:
    """The 80 initial state bits as an int whose bit i is b_i (b_0 first in time)."""
    fields = ((2, FIELD_PRIME), (4, SBOX_NEPTUNE), (12, field_size), (12, t), (10, rf), (10, rp))
    bits: list[int] = []
    for width, value in fields:
        bits.extend((value >> k) & 1 for k in reversed(range(width)))  # most significant first
    bits.extend([1] * 30)
    assert len(bits) == 80
    return sum(b << i for i, b in enumerate(bits))


class _Lfsr:
    """The raw Grain bit stream, produced 18 bits per step."""

    def __init__(self, state: int) -> None:
        self.state = state
        self.spare = np.zeros(0, dtype=np.uint8)  # generated, not yet returned
        self.raw(160)  # the first 160 bits are discarded

    def raw(self, n: int) -> np.ndarray:
        steps = max(0, -(-(n - len(self.spare)) // _STEP))
        words = np.empty(steps, dtype=np.uint32)
        s = self.state
        for k in range(steps):
            new = ((s >> 62) ^ (s >> 51) ^ (s >> 38) ^ (s >> 23) ^ (s >> 13) ^ s) & _MASK
            s = (s >> _STEP) | (new << 62)
            words[k] = new
        self.state = s
        bits = ((words[:, None] >> np.arange(_STEP, dtype=np.uint32)) & 1).astype(np.uint8)
        stream = np.concatenate([self.spare, bits.reshape(-1)])
        self.spare = stream[n:]
        return stream[:n]


def round_constants(modulus: int, field_size: int, t: int, rf: int, rp: int) -> list[int]:
    """The (RF + RP)·t round constants, in round order, as ints below `modulus`."""
    count = (rf + rp) * t
    lfsr = _Lfsr(_header(field_size, t, rf, rp))
    out: list[int] = []
    pending = np.zeros(0, dtype=np.uint8)  # shrunk bits not yet consumed
    while len(out) < count:
        # About 4 raw bits per kept bit; rejection (r / 2^255 is ~0.45 here) roughly doubles it.
        need = (count - len(out)) * field_size * 2 * 4
        raw = lfsr.raw(max(1 << 16, need + (need & 1)))
        pairs = raw.reshape(-1, 2)
        kept = pairs[pairs[:, 0] == 1, 1]
        pending = np.concatenate([pending, kept])
        whole = len(pending) // field_size
        chunks = np.packbits(
            np.concatenate(
                [
                    np.zeros((whole, 256 - field_size), np.uint8),
                    pending[: whole * field_size].reshape(whole, field_size),
                ],
                axis=1,
            ),
            axis=1,
        )
        pending = pending[whole * field_size :]
        for row in chunks:
            value = int.from_bytes(row.tobytes(), "big")
            if value < modulus:
                out.append(value)
                if len(out) == count:
                    break
    return out
