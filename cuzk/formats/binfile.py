"""The iden3 binary container shared by `.r1cs`, `.wtns`, `.zkey` and `.ptau` files.

Layout: 4-byte magic, u32 version, u32 section count, then per section u32 type, u64 size and
the section's bytes (all little-endian). Readers here work on a memory map and hand out numpy
views of sections, so large files are never copied.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuzk.curves import CURVES, Curve
from cuzk.formats.errors import FormatError

PathLike = str | os.PathLike


def open_bytes(path: PathLike | bytes | bytearray | memoryview) -> tuple[memoryview, str]:
    """Bytes of a file (memory-mapped, read-only) or of a buffer, and a name for messages."""
    if isinstance(path, bytes | bytearray | memoryview):
        return memoryview(path).cast("B"), "<bytes>"
    name = str(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return memoryview(b""), name
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise FormatError(name, f"cannot open: {exc.strerror or exc}") from None
    return memoryview(mm), name


@dataclass
class BinFile:
    name: str
    magic: str
    version: int
    data: memoryview
    sections: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # type -> (pos, size)

    def section(self, sid: int, label: str, required: bool = True) -> memoryview | None:
        """The bytes of the single section `sid`."""
        found = self.sections.get(sid)
        if not found:
            if required:
                raise FormatError(self.name, "section is missing", f"section {sid} ({label})")
            return None
        if len(found) > 1:
            raise FormatError(self.name, "section appears more than once", f"section {sid} ({label})")
        pos, size = found[0]
        return self.data[pos : pos + size]


def read_binfile(path: PathLike | bytes, magic: str, max_version: int) -> BinFile:
    data, name = open_bytes(path)
    if len(data) < 12:
        raise FormatError(name, f"file too short ({len(data)} bytes) for a {magic!r} header")
    got = bytes(data[:4])
    if got != magic.encode():
        raise FormatError(name, f"not a {magic} file (magic {got!r}, expected {magic.encode()!r})")
    version, n_sections = struct.unpack_from("<II", data, 4)
    if version < 1 or version > max_version:
        raise FormatError(name, f"unsupported {magic} version {version} (supported: 1..{max_version})")
    bf = BinFile(name, magic, version, data)
    pos = 12
    for i in range(n_sections):
        if pos + 12 > len(data):
            raise FormatError(name, f"truncated: header of section #{i} of {n_sections} is cut off")
        sid, size = struct.unpack_from("<IQ", data, pos)
        pos += 12
        if pos + size > len(data):
            raise FormatError(
                name,
                f"truncated: section claims {size} bytes but only {len(data) - pos} remain",
                f"section {sid}",
            )
        bf.sections.setdefault(sid, []).append((pos, size))
        pos += size
    if pos != len(data):
        raise FormatError(name, f"{len(data) - pos} stray bytes after the last section")
    return bf


class Reader:
    """Sequential little-endian reads inside one section, with bounds checks that name it."""

    def __init__(self, data: memoryview, name: str, section: str) -> None:
        self.data = data
        self.pos = 0
        self.name = name
        self.section = section

    def fail(self, what: str) -> FormatError:
        return FormatError(self.name, what, self.section)

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(
                f"truncated: {what} needs {n} bytes at offset {self.pos}, "
                f"section has {len(self.data)}"
            )

    def u32(self, what: str = "u32") -> int:
        self.need(4, what)
        (v,) = struct.unpack_from("<I", self.data, self.pos)
        self.pos += 4
        return v

    def u64(self, what: str = "u64") -> int:
        self.need(8, what)
        (v,) = struct.unpack_from("<Q", self.data, self.pos)
        self.pos += 8
        return v

    def bigint(self, n8: int, what: str) -> int:
        self.need(n8, what)
        v = int.from_bytes(self.data[self.pos : self.pos + n8], "little")
        self.pos += n8
        return v

    def take(self, n: int, what: str) -> memoryview:
        self.need(n, what)
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def limbs(self, count: int, n8: int, what: str) -> np.ndarray:
        """`count` little-endian n8-byte elements as a uint64 (count, n8/8) view."""
        if count < 0:
            raise self.fail(f"negative count for {what}")
        raw = self.take(count * n8, f"{count} × {what}")
        return np.frombuffer(raw, dtype="<u8").reshape(count, n8 // 8)

    def done(self) -> None:
        if self.pos != len(self.data):
            raise self.fail(
                f"section size mismatch: {len(self.data)} bytes, contents end at {self.pos}"
            )


def n8_of(modulus: int) -> int:
    """Bytes per element as iden3 tools size them (whole 64-bit words)."""
    return ((modulus.bit_length() - 1) // 64 + 1) * 8


def curve_from_r(r: int, name: str, section: str) -> Curve:
    for c in CURVES.values():
        if c.r == r:
            return c
    raise FormatError(name, f"unsupported scalar field prime {r} (not BN254 or BLS12-381)", section)


def curve_from_q(q: int, name: str, section: str) -> Curve:
    for c in CURVES.values():
        if c.p == q:
            return c
    raise FormatError(name, f"unsupported base field prime {q} (not BN254 or BLS12-381)", section)


def check_below(arr: np.ndarray, modulus: int, name: str, section: str, what: str) -> None:
    """Raise unless every little-endian limb row of `arr` is below `modulus` (vectorized)."""
    if arr.size == 0:
        return
    a = arr.reshape(-1, arr.shape[-1])
    n = a.shape[-1]
    m = np.array([(modulus >> (64 * j)) & ((1 << 64) - 1) for j in range(n)], dtype=np.uint64)
    less = np.zeros(len(a), dtype=bool)
    equal = np.ones(len(a), dtype=bool)
    for j in range(n - 1, -1, -1):
        less |= equal & (a[:, j] < m[j])
        equal &= a[:, j] == m[j]
    bad = np.flatnonzero(~less)
    if len(bad):
        raise FormatError(
            name, f"{what} #{int(bad[0])} is not reduced modulo {modulus:#x}", section
        )


class BinWriter:
    """Builds an iden3 container in memory-friendly pieces and writes it out once."""

    def __init__(self, magic: str, version: int) -> None:
        self.magic = magic
        self.version = version
        self.sections: list[tuple[int, list[bytes | memoryview | np.ndarray]]] = []

    def add(self, sid: int, parts: Iterable[bytes | memoryview | np.ndarray]) -> None:
        self.sections.append((sid, list(parts)))

    def write(self, path: PathLike) -> None:
        with open(path, "wb") as f:
            f.write(self.magic.encode() + struct.pack("<II", self.version, len(self.sections)))
            for sid, parts in self.sections:
                size = sum(_nbytes(p) for p in parts)
                f.write(struct.pack("<IQ", sid, size))
                for p in parts:
                    f.write(np.ascontiguousarray(p) if isinstance(p, np.ndarray) else p)


def _nbytes(p: bytes | memoryview | np.ndarray) -> int:
    return p.nbytes if isinstance(p, np.ndarray | memoryview) else len(p)


def le_bytes(value: int, n8: int) -> bytes:
    return value.to_bytes(n8, "little")


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def path_name(path: PathLike) -> str:
    return str(Path(path))
