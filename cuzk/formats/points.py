"""Byte encodings of curve points: big-endian with flag bits in the top bits of the first byte.

BLS12-381 follows zcash's encoding (bellman, blst, arkworks, Filecoin): coordinates
big-endian, G2 coordinates written c1 then c0; the first byte's top three bits are
0x80 compressed, 0x40 point at infinity (all other bits zero), 0x20 (compressed only) y is
the lexicographically largest of ±y (for Fq2: decided by c1, or by c0 when c1 = 0).

BN254's base field has 254 bits, so only the top two bits of a 32-byte coordinate are free.
We use the same layout with: 0x40 point at infinity, and, in compressed form, 0x80 y is the
lexicographically largest (the compressed/uncompressed kind is told by the length, as with
arkworks' BN254 flags). Uncompressed BN254 points therefore carry only the 0x40 flag.

Bulk conversions (key files) are vectorized numpy byte shuffles; single points (proofs,
verifying keys) use Python ints with full on-curve and subgroup checks when decoded.
"""

from __future__ import annotations

import numpy as np

from cuzk.curves import Curve
from cuzk.formats.binfile import check_below
from cuzk.formats.errors import FormatError
from cuzk.layout import G1Ints, G2Ints, fq_from_mont, fq_to_mont, g1_to_ints, g2_to_ints
from cuzk.reference import ec

INFINITY = 0x40


def _fq_is_largest(y: int, p: int) -> bool:
    """zcash's 'lexicographically largest': y > (p-1)/2, i.e. y > -y."""
    return y > (p - 1) // 2


def _fq2_is_largest(y: tuple[int, int], p: int) -> bool:
    return _fq_is_largest(y[1], p) if y[1] != 0 else _fq_is_largest(y[0], p)


def _in_g1(curve: Curve, pt: G1Ints) -> bool:
    """In G1's prime-order subgroup; BN254's G1 has cofactor 1, so any curve point is."""
    return curve.name == "bn254" or ec.g1(curve).in_subgroup(pt)


def _flags(curve: Curve) -> tuple[int, int, int]:
    """(compression flag, sign flag, mask of all flag bits) for the curve's first byte."""
    if curve.name == "bls12_381":
        return 0x80, 0x20, 0xE0
    return 0, 0x80, 0xC0


def g1_size(curve: Curve, compressed: bool) -> int:
    return curve.field_bytes * (1 if compressed else 2)


def g2_size(curve: Curve, compressed: bool) -> int:
    return curve.field_bytes * (2 if compressed else 4)


# --- bulk uncompressed ------------------------------------------------------------------------


def _to_be(curve: Curve, arr: np.ndarray, g2: bool) -> np.ndarray:
    a = np.asarray(arr, dtype=np.uint64)
    L = curve.limbs
    a = a.reshape((-1, 2, 2, L) if g2 else (-1, 2, L))
    inf = ~a.reshape(len(a), -1).any(axis=1)
    canon = fq_from_mont(curve, a)
    if g2:
        canon = canon[:, :, ::-1, :]  # zcash order: c1 before c0
    be = np.ascontiguousarray(canon[..., ::-1]).astype(">u8")
    if inf.any():
        be[inf] = 0
        first = be.reshape(len(be), -1)
        first[inf, 0] = np.uint64(INFINITY) << np.uint64(56)
    return be


def g1_to_uncompressed(curve: Curve, arr: np.ndarray) -> bytes:
    """(n, 2, L) Montgomery points -> n × 2·field_bytes big-endian uncompressed encodings."""
    return _to_be(curve, arr, g2=False).tobytes()


def g2_to_uncompressed(curve: Curve, arr: np.ndarray) -> bytes:
    return _to_be(curve, arr, g2=True).tobytes()


def _from_be(
    curve: Curve, raw: bytes | memoryview, count: int, g2: bool, name: str, section: str
) -> np.ndarray:
    L = curve.limbs
    size = (g2_size if g2 else g1_size)(curve, False)
    if len(raw) != count * size:
        raise FormatError(name, f"expected {count} points of {size} bytes, got {len(raw)} bytes", section)
    shape = (count, 2, 2, L) if g2 else (count, 2, L)
    be = np.frombuffer(raw, dtype=">u8").reshape(shape)
    flat_be = be.reshape(count, -1)
    top = (flat_be[:, 0] >> np.uint64(56)).astype(np.uint8) if count else np.zeros(0, np.uint8)
    _, _, fmask = _flags(curve)
    flags = top & fmask
    bad = np.flatnonzero((flags != 0) & (flags != INFINITY))
    if len(bad):
        raise FormatError(
            name,
            f"point #{int(bad[0])}: flag bits {int(flags[bad[0]]):#04x} invalid for an uncompressed point",
            section,
        )
    inf = flags == INFINITY
    le = be.astype(np.uint64)  # byte-swapped copy, limbs still most significant first
    le = le.reshape(count, -1)
    le[:, 0] &= np.uint64((1 << 56) * (0xFF & ~fmask) + ((1 << 56) - 1))
    if inf.any():
        rest = le[inf]
        nz = np.flatnonzero(rest.any(axis=1))
        if len(nz):
            raise FormatError(
                name,
                f"point #{int(np.flatnonzero(inf)[nz[0]])}: infinity flag with non-zero coordinates",
                section,
            )
    le = le.reshape(shape)
    if g2:
        le = le[:, :, ::-1, :]
    canon = np.ascontiguousarray(le[..., ::-1])
    check_below(canon, curve.p, name, section, "coordinate (of point #/coord)")
    mont = fq_to_mont(curve, canon)
    mont[inf] = 0
    return mont


def g1_from_uncompressed(
    curve: Curve, raw: bytes | memoryview, count: int, name: str = "<bytes>", section: str = "G1"
) -> np.ndarray:
    """count uncompressed big-endian G1 encodings -> (count, 2, L) Montgomery (no curve check)."""
    return _from_be(curve, raw, count, False, name, section)


def g2_from_uncompressed(
    curve: Curve, raw: bytes | memoryview, count: int, name: str = "<bytes>", section: str = "G2"
) -> np.ndarray:
    return _from_be(curve, raw, count, True, name, section)


def check_points(curve: Curve, arr: np.ndarray, g2: bool, name: str, section: str, subgroup: bool) -> None:
    """On-curve (and optionally subgroup) check of every point, in Python ints: for small arrays."""
    pts = (g2_to_ints if g2 else g1_to_ints)(curve, arr)
    group = ec.g2(curve) if g2 else ec.g1(curve)
    for i, pt in enumerate(pts):
        if pt is None:
            continue
        if not subgroup:
            ok = group.is_on_curve(pt)
        else:
            ok = group.in_subgroup(pt) if g2 else group.is_on_curve(pt) and _in_g1(curve, pt)
        if not ok:
            what = "not in the prime-order subgroup" if subgroup else "not on the curve"
            raise FormatError(name, f"point #{i} is {what}", section)


# --- single compressed points -----------------------------------------------------------------


def encode_g1_compressed(curve: Curve, pt: G1Ints) -> bytes:
    comp, sign, _ = _flags(curve)
    n = curve.field_bytes
    if pt is None:
        out = bytearray(n)
        out[0] = comp | INFINITY
        return bytes(out)
    x, y = pt
    out = bytearray(x.to_bytes(n, "big"))
    out[0] |= comp | (sign if _fq_is_largest(y, curve.p) else 0)
    return bytes(out)


def encode_g2_compressed(curve: Curve, pt: G2Ints) -> bytes:
    comp, sign, _ = _flags(curve)
    n = curve.field_bytes
    if pt is None:
        out = bytearray(2 * n)
        out[0] = comp | INFINITY
        return bytes(out)
    (x0, x1), y = pt
    out = bytearray(x1.to_bytes(n, "big") + x0.to_bytes(n, "big"))
    out[0] |= comp | (sign if _fq2_is_largest(y, curve.p) else 0)
    return bytes(out)


def _split_flags(curve: Curve, data: bytes, name: str, section: str) -> tuple[bool, bool, bytes]:
    comp, sign, fmask = _flags(curve)
    flags = data[0] & fmask
    if comp and not flags & comp:
        raise FormatError(name, "compression flag not set on a compressed point", section)
    body = bytes([data[0] & ~fmask & 0xFF]) + bytes(data[1:])
    infinity = bool(flags & INFINITY)
    largest = bool(flags & sign)
    if infinity and (largest or any(body)):
        raise FormatError(name, "infinity flag with a sign flag or non-zero coordinate bits", section)
    return infinity, largest, body


def decode_g1_compressed(curve: Curve, data: bytes, name: str = "<bytes>", section: str = "G1") -> G1Ints:
    """A compressed G1 point, checked to be on the curve and in the prime-order subgroup."""
    if len(data) != curve.field_bytes:
        raise FormatError(name, f"compressed G1 point needs {curve.field_bytes} bytes, got {len(data)}", section)
    infinity, largest, body = _split_flags(curve, data, name, section)
    if infinity:
        return None
    p = curve.p
    x = int.from_bytes(body, "big")
    if x >= p:
        raise FormatError(name, "x coordinate is not reduced modulo p", section)
    G1 = ec.g1(curve)
    y = G1.F.sqrt(x * x * x + curve.b)
    if y is None:
        raise FormatError(name, "x is not the abscissa of a curve point", section)
    if _fq_is_largest(y, p) != largest:
        y = (p - y) % p
    if not _in_g1(curve, (x, y)):
        raise FormatError(name, "point is not in the prime-order subgroup", section)
    return (x, y)


def decode_g2_compressed(curve: Curve, data: bytes, name: str = "<bytes>", section: str = "G2") -> G2Ints:
    n = curve.field_bytes
    if len(data) != 2 * n:
        raise FormatError(name, f"compressed G2 point needs {2 * n} bytes, got {len(data)}", section)
    infinity, largest, body = _split_flags(curve, data, name, section)
    if infinity:
        return None
    p = curve.p
    x1 = int.from_bytes(body[:n], "big")
    x0 = int.from_bytes(body[n:], "big")
    if x0 >= p or x1 >= p:
        raise FormatError(name, "x coordinate is not reduced modulo p", section)
    x = (x0, x1)
    G2 = ec.g2(curve)
    F = G2.F
    y = F.sqrt(F.add(F.mul(F.sqr(x), x), G2.b))
    if y is None:
        raise FormatError(name, "x is not the abscissa of a curve point", section)
    if _fq2_is_largest(y, p) != largest:
        y = F.neg(y)
    if not G2.in_subgroup((x, y)):
        raise FormatError(name, "point is not in the prime-order subgroup", section)
    return (x, y)
