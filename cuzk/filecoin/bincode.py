"""bincode 1 (the `bincode::serialize` / `deserialize` functions) for the vanilla proofs the
Filecoin API passes as bytes: PoSt's `FallbackPoStSectorProof` and SnapDeals' `PartitionProof`
(filecoin-proofs-api post.rs / update.rs serialize them, filecoin-ffi and Curio pass the bytes
through unchanged).

bincode 1's default encoding, as serde drives it for these types:
- integers little-endian at their width; `usize` as u64;
- a struct is its fields in declaration order, nothing between them; `#[serde(skip)]` and
  PhantomData fields take no bytes;
- a sequence (`Vec`) is a u64 length, then the items;
- `[u8; 32]` (Sha256Domain, PoseidonDomain, commitments) is 32 raw bytes, little-endian
  field elements;
- an enum is its variant index as u32, then the variant's content.

storage-proofs-core's `MerkleProof { data: ProofData }` is such an enum: `Single { root, leaf,
path }` (0), `Sub { base_proof, sub_proof, root, leaf }` (1), `Top { base_proof, sub_proof,
top_proof, root, leaf }` (2); an `InclusionPath` is `Vec<PathElement { hashes: Vec<Domain>,
index: usize }>`.

Reading is stricter than bincode where the circuit needs it: every domain must be a canonical
field element (rust-fil-proofs' conversion to Fr would panic on one that is not), lengths must
fit the bytes left, and trailing bytes are refused (bincode 1 ignores them; the API never
writes any).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TypeVar

from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.porep.proof import MerkleProof, PathElement

T = TypeVar("T")

MERKLE_VARIANTS = ("Single", "Sub", "Top")


class BincodeError(ValueError):
    """Bytes that are not the serialization of the expected type; the message names where."""


class Reader:
    """A cursor over bincode bytes; every read names its field path in errors."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data = memoryview(bytes(data))
        self.pos = 0
        self.what = what

    def fail(self, path: str, msg: str) -> BincodeError:
        return BincodeError(f"{self.what}: {path}: {msg} (at byte {self.pos} of {len(self.data)})")

    def raw(self, n: int, path: str) -> bytes:
        if self.pos + n > len(self.data):
            raise self.fail(path, f"needs {n} more bytes, {len(self.data) - self.pos} left")
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def u32(self, path: str) -> int:
        return struct.unpack("<I", self.raw(4, path))[0]

    def u64(self, path: str) -> int:
        return struct.unpack("<Q", self.raw(8, path))[0]

    def domain(self, path: str) -> int:
        v = int.from_bytes(self.raw(32, path), "little")
        if v >= R:
            self.pos -= 32
            raise self.fail(path, f"{v:#x} is not a field element (not below r)")
        return v

    def seq(self, path: str, item: Callable[[str], T], min_item_size: int = 1) -> list[T]:
        """A Vec: the u64 length, then the items (each read by `item(path[i])`)."""
        n = self.u64(f"{path}.len")
        left = len(self.data) - self.pos
        if n * max(1, min_item_size) > left:
            self.pos -= 8
            raise self.fail(path, f"claims {n} items, only {left} bytes left")
        return [item(f"{path}[{i}]") for i in range(n)]

    def domains(self, path: str) -> list[int]:
        return self.seq(path, self.domain, 32)

    def finish(self) -> None:
        if self.pos != len(self.data):
            raise self.fail("end", f"{len(self.data) - self.pos} trailing bytes")


class Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def u32(self, v: int) -> None:
        self.parts.append(struct.pack("<I", v))

    def u64(self, v: int) -> None:
        self.parts.append(struct.pack("<Q", v))

    def domain(self, v: int) -> None:
        self.parts.append(int(v).to_bytes(32, "little"))

    def domains(self, vs: list[int]) -> None:
        self.u64(len(vs))
        for v in vs:
            self.domain(v)

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def _read_path(r: Reader, path: str) -> list[PathElement]:
    def element(p: str) -> PathElement:
        hashes = r.domains(f"{p}.hashes")
        return PathElement(hashes, r.u64(f"{p}.index"))

    return r.seq(f"{path}.path", element, 16)


def read_merkle_proof(r: Reader, path: str) -> MerkleProof:
    variant = r.u32(f"{path}.data")
    if variant == 0:
        root = r.domain(f"{path}.Single.root")
        leaf = r.domain(f"{path}.Single.leaf")
        return MerkleProof(root, leaf, _read_path(r, f"{path}.Single.path"))
    if variant == 1:
        base = _read_path(r, f"{path}.Sub.base_proof")
        sub = _read_path(r, f"{path}.Sub.sub_proof")
        root, leaf = r.domain(f"{path}.Sub.root"), r.domain(f"{path}.Sub.leaf")
        return MerkleProof(root, leaf, base, sub)
    if variant == 2:
        base = _read_path(r, f"{path}.Top.base_proof")
        sub = _read_path(r, f"{path}.Top.sub_proof")
        top = _read_path(r, f"{path}.Top.top_proof")
        root, leaf = r.domain(f"{path}.Top.root"), r.domain(f"{path}.Top.leaf")
        return MerkleProof(root, leaf, base, sub, top)
    r.pos -= 4
    raise r.fail(f"{path}.data", f"unknown ProofData variant {variant} (0 Single, 1 Sub, 2 Top)")


def _write_path(w: Writer, levels: list[PathElement]) -> None:
    w.u64(len(levels))
    for e in levels:
        w.domains(e.hashes)
        w.u64(e.index)


def write_merkle_proof(w: Writer, p: MerkleProof) -> None:
    kind = p.kind
    w.u32(MERKLE_VARIANTS.index(kind))
    if kind == "Single":
        w.domain(p.root)
        w.domain(p.leaf)
        _write_path(w, p.base)
        return
    _write_path(w, p.base)
    _write_path(w, p.sub or [])
    if kind == "Top":
        _write_path(w, p.top or [])
    w.domain(p.root)
    w.domain(p.leaf)
