"""Filecoin proof kinds of the cuzk.v1 wire (what Curio sends) mapped onto registered circuits.

A reference client names no circuit: it sends proof_kind, registered_proof (and sector_size)
and the vanilla proof(s). The kind picks the `filecoin = { proof = ... }` circuits that can
prove it, the sector size picks one of them, and the request's Filecoin fields become the job
input that circuit's `job_input` splits into partitions:

    kind                   [srs.circuits] filecoin.proof   job input          circuit id by convention
    POREP_SEAL_COMMIT (1)  "porep"                         vanilla_proof      porep-32g
    SNAP_DEALS_UPDATE (2)  "snap-update"                   UpdateJob          snap-32g
    WINDOW_POST (3)        "window-post"                   PoStJob            wpost-32g
    WINNING_POST (4)       "winning-post"                  PoStJob            winning-32g

A PoRep circuit takes the C1 output bytes (bare or Curio's wrapper); the other kinds' circuits
take the request's fields as the Filecoin side's job objects (cuzk.filecoin.post.job.PoStJob,
cuzk.filecoin.update.job.UpdateJob: vanilla proofs, randomness, prover id from the miner id,
partition index, commitments), which they check as they would a job-input file. A kind with no circuit registered for the size is refused
with FAILED_PRECONDITION naming the table to add.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cuzk.engine.types import Priority

# cuzk.v1.ProofKind values (the reference's numbering).
POREP_SEAL_COMMIT = 1
SNAP_DEALS_UPDATE = 2
WINDOW_POST_PARTITION = 3
WINNING_POST = 4


class RouteError(ValueError):
    """A Filecoin request that cannot be routed; `precondition` when the daemon lacks the
    circuit (the request itself may be fine), else the request is malformed."""

    def __init__(self, message: str, precondition: bool = False) -> None:
        super().__init__(message)
        self.precondition = precondition


@dataclass(frozen=True)
class FilecoinRequest:
    """A reference SubmitProofRequest's Filecoin fields, as plain Python."""

    proof_kind: int
    registered_proof: int
    sector_size: int  # bytes (the registered proof's when the request left it 0)
    vanilla_proof: bytes = b""  # PoRep: the C1 output JSON
    vanilla_proofs: list[bytes] = field(default_factory=list)  # PoSt: per sector; Snap: per partition
    sector_number: int = 0
    miner_id: int = 0
    randomness: bytes = b""  # PoSt challenge seed (32 bytes)
    partition_index: int = 0  # WindowPoSt
    comm_r_old: bytes = b""  # SnapDeals commitments, 32 raw bytes each
    comm_r_new: bytes = b""
    comm_d_new: bytes = b""

    @property
    def kind(self) -> ProofKind:
        return KINDS[self.proof_kind]


@dataclass(frozen=True)
class ProofKind:
    value: int
    label: str  # the reference's name for it in status (GPUStatus.current_proof_kind, queues)
    proofs: tuple[str, ...]  # `filecoin.proof` values of circuits that prove it
    prefix: str  # circuit id prefix by convention: porep-32g
    default_priority: Priority
    registered: Callable[[int], tuple[str, int]]  # registered_proof -> (its name, sector bytes)
    job_input: Callable[[FilecoinRequest], Any]


def _seal(v: int) -> tuple[str, int]:
    from cuzk.filecoin.porep.constants import RegisteredSealProof

    p = RegisteredSealProof(v)
    return p.name, p.sector.size


def _post(typ: str) -> Callable[[int], tuple[str, int]]:
    def registered(v: int) -> tuple[str, int]:
        from cuzk.filecoin.post.constants import RegisteredPoStProof

        p = RegisteredPoStProof(v)
        if p.typ.value != typ:
            raise ValueError(f"{p.name} is a {p.typ.value} PoSt proof, not {typ}")
        return p.name, p.sector.size

    return registered


def _update(v: int) -> tuple[str, int]:
    from cuzk.filecoin.update.constants import RegisteredUpdateProof

    p = RegisteredUpdateProof(v)
    return p.name, p.sector_size


def _porep_input(req: FilecoinRequest) -> bytes:
    if not req.vanilla_proof:
        raise RouteError("vanilla_proof is empty: a PoRep C2 request carries the C1 output")
    return req.vanilla_proof


def _vanilla_proofs(req: FilecoinRequest) -> list[bytes]:
    if not req.vanilla_proofs:
        raise RouteError(f"vanilla_proofs is empty: a {req.kind.label} request carries its "
                         "vanilla proofs (one per sector, or per partition for SnapDeals)")
    return [bytes(v) for v in req.vanilla_proofs]


def _post_input(req: FilecoinRequest) -> Any:
    """The PoSt job (cuzk.filecoin.post.job) of a request; its circuit checks the rest."""
    from cuzk.filecoin.porep.challenges import prover_id_from_miner
    from cuzk.filecoin.post.constants import RegisteredPoStProof
    from cuzk.filecoin.post.job import PoStJob

    try:
        prover_id = prover_id_from_miner(req.miner_id)
    except ValueError as exc:
        raise RouteError(f"miner_id: {exc}") from None
    return PoStJob(RegisteredPoStProof(req.registered_proof), bytes(req.randomness), prover_id,
                   _vanilla_proofs(req), req.partition_index)


def _update_input(req: FilecoinRequest) -> Any:
    """The SnapDeals job (cuzk.filecoin.update.job, the SHA-256 comm_d variant Curio proves)."""
    from cuzk.filecoin.update.constants import RegisteredUpdateProof
    from cuzk.filecoin.update.job import UpdateJob

    for value, wire in ((req.comm_r_old, "sector_key_cid (comm_r_old)"),
                        (req.comm_r_new, "new_sealed_cid (comm_r_new)"),
                        (req.comm_d_new, "new_unsealed_cid (comm_d_new)")):
        if not value:
            raise RouteError(f"{wire} is empty: a snap-update request carries the three "
                             "commitments (32 bytes or their CIDs)")
    return UpdateJob(RegisteredUpdateProof(req.registered_proof), req.comm_r_old, req.comm_r_new,
                     req.comm_d_new, _vanilla_proofs(req))


KINDS: dict[int, ProofKind] = {k.value: k for k in (
    ProofKind(POREP_SEAL_COMMIT, "porep-c2", ("porep",), "porep", Priority.NORMAL, _seal,
              _porep_input),
    ProofKind(SNAP_DEALS_UPDATE, "snap-update", ("snap-update",), "snap",
              Priority.NORMAL, _update, _update_input),
    ProofKind(WINDOW_POST_PARTITION, "window-post", ("window-post",), "wpost",
              Priority.HIGH, _post("window"), _post_input),
    ProofKind(WINNING_POST, "winning-post", ("winning-post",), "winning",
              Priority.CRITICAL, _post("winning"), _post_input),
)}
_BY_PROOF = {p: k for k in KINDS.values() for p in k.proofs}


def size_tag(size: int) -> str:
    """32 GiB -> '32g', 512 MiB -> '512m', 2 KiB -> '2k' (the circuit id suffix)."""
    for unit, tag in ((1 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")):
        if size >= unit and size % unit == 0:
            return f"{size // unit}{tag}"
    return str(size)


def conventional_id(kind: ProofKind, size: int) -> str:
    return f"{kind.prefix}-{size_tag(size)}"


def _table_size(value: Any) -> int | None:
    """A circuit table's sector_size ('32GiB', '2KiB', 2048) in bytes; None when unreadable."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    m = re.fullmatch(r"\s*(\d+)\s*([kmg]i?b?)?\s*", str(value), re.I)
    if m is None:
        return None
    unit = (m.group(2) or "").lower()[:1]
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[unit]


def circuit_kind(filecoin: Mapping[str, Any] | None) -> ProofKind | None:
    """The proof kind a circuit's `filecoin` table proves (None: not a Filecoin circuit)."""
    if not filecoin:
        return None
    return _BY_PROOF.get(str(filecoin.get("proof", "")))


def kind_label(circuit_id: str, filecoin: Mapping[str, Any] | None) -> str:
    """What status shows as a job's proof kind: the reference's name for Filecoin circuits,
    the circuit id for any other."""
    kind = circuit_kind(filecoin)
    return kind.label if kind is not None else circuit_id


# Filecoin commitment CIDs (go-fil-commcid): CIDv1, codec, multihash code, digest length 32.
SEALED_CODEC, UNSEALED_CODEC = 0xF102, 0xF101  # fil-commitment-sealed / -unsealed
_MULTIHASH = {SEALED_CODEC: 0xB401, UNSEALED_CODEC: 0x1012}  # poseidon-bls12_381-a2-fc1, sha2-256-trunc254-padded
_CODEC_NAME = {SEALED_CODEC: "fil-commitment-sealed", UNSEALED_CODEC: "fil-commitment-unsealed"}


def _uvarints(raw: bytes, count: int) -> tuple[list[int], int] | None:
    """`count` unsigned varints from the start of raw and where they end; None if cut short."""
    out, pos = [], 0
    for _ in range(count):
        value = shift = 0
        while True:
            if pos >= len(raw) or shift > 63:
                return None
            b = raw[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        out.append(value)
    return out, pos


def commitment(raw: bytes, what: str, codec: int | None = None) -> bytes:
    """A 32-byte commitment from the raw digest or its CID (as Curio's `cid.Bytes()` sends it:
    version 1, the commitment codec, its multihash code, length 32, the digest). `codec`
    (SEALED_CODEC, UNSEALED_CODEC) is the one the field holds; None takes either."""
    if len(raw) in (0, 32):
        return bytes(raw)
    head = _uvarints(bytes(raw), 4)
    if len(raw) < 32 or head is None or head[1] != len(raw) - 32 or head[0][0] != 1 or head[0][3] != 32:
        raise RouteError(f"{what} is {len(raw)} bytes: send the 32-byte commitment or its CID")
    _, got, mh, _ = head[0]
    want = (codec,) if codec is not None else tuple(_MULTIHASH)
    if got not in want:
        raise RouteError(f"{what} is a CID of codec {got:#x}, not {' or '.join(_CODEC_NAME[c] for c in want)}")
    if mh != _MULTIHASH[got]:
        raise RouteError(f"{what}: a {_CODEC_NAME[got]} CID with multihash {mh:#x}, not {_MULTIHASH[got]:#x}")
    return bytes(raw[-32:])


def route(proof_kind: int, registered_proof: int, sector_size: int,
          circuits: Mapping[str, Any]) -> tuple[ProofKind, str, int]:
    """(the kind, the circuit id that proves it, the sector size) for a request; `circuits`
    maps ids to objects with a `filecoin` table attribute (None for other circuits)."""
    kind = KINDS.get(proof_kind)
    if kind is None:
        raise RouteError(f"proof_kind {proof_kind} is not a Filecoin proof kind "
                         f"(known: {', '.join(f'{k.value} {k.label}' for k in KINDS.values())}); "
                         "or name a circuit with circuit_id")
    try:
        name, reg_size = kind.registered(int(registered_proof))
    except ValueError as exc:
        why = str(exc) if "proof" in str(exc) else f"unknown id {registered_proof}"
        raise RouteError(f"registered_proof {registered_proof} for {kind.label}: {why}") from None
    if sector_size and sector_size != reg_size:
        raise RouteError(f"sector_size {sector_size} disagrees with registered_proof {name} "
                         f"({reg_size} bytes)")
    serving = sorted(cid for cid, info in circuits.items()
                     if circuit_kind(getattr(info, "filecoin", None)) is kind
                     and _table_size(info.filecoin.get("sector_size")) == reg_size)
    if not serving:
        want = conventional_id(kind, reg_size)
        have = sorted(cid for cid, info in circuits.items()
                      if circuit_kind(getattr(info, "filecoin", None)) is kind)
        raise RouteError(
            f"no circuit proves {kind.label} ({name}) for {size_tag(reg_size)} sectors: register "
            f"[srs.circuits.{want}] filecoin = {{ proof = \"{kind.proofs[0]}\", sector_size = "
            f"{reg_size} }}" + (f" (registered for this kind: {', '.join(have)})" if have else ""),
            precondition=True,
        )
    want = conventional_id(kind, reg_size)
    return kind, (want if want in serving else serving[0]), reg_size

