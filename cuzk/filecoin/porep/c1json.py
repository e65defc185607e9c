"""C1 output JSON: `SealCommitPhase1Output` exactly as serde_json writes it (filecoin-ffi and
filecoin-proofs-api pass it as `serde_json::to_vec`), and Curio's c1.json wrapper.

serde's rules, applied to these types:
- structs are objects with the fields in declaration order; `#[serde(skip)]` fields are absent,
  but `Column`'s PhantomData `_h` is not skipped and is written as `null`;
- unit enum variants are strings (`"StackedDrg2KiBV1_1"`), newtype variants one-key objects
  (`{"StackedDrg2KiBV1": [[proof, ...], ...]}`, MerkleProof's `{"data": {"Single": {...}}}`);
- [u8; 32] values (commitments, seed, ticket, Sha256Domain, PoseidonDomain) are arrays of 32
  integers, little-endian for field elements; integers are plain JSON numbers;
- compact output: no whitespace.
Reading ignores unknown object keys (serde's default) and names the path of anything missing
or malformed. Curio's wrapper is `{"SectorNum": n, "Phase1Out": base64(JSON), "SectorSize": n}`
(Go's encoding/json writes []byte as padded standard base64).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from . import proof as pm
from .constants import SECTOR_SIZES, RegisteredSealProof

VARIANTS = tuple(s.vanilla_variant for s in SECTOR_SIZES.values())


class C1FormatError(ValueError):
    """A C1 output that is not what serde would accept; the message names the JSON path."""


# -- writing ----------------------------------------------------------------------------------

_BYTE_STR = [str(i) for i in range(256)]


def _dom(x: int) -> str:
    try:
        raw = x.to_bytes(32, "little")
    except OverflowError:
        raise ValueError(f"domain value {x:#x} does not fit 32 bytes") from None
    return "[" + ",".join(_BYTE_STR[b] for b in raw) + "]"


def _bytes32(b: bytes) -> str:
    return "[" + ",".join(_BYTE_STR[v] for v in b) + "]"


def _doms(xs: list[int]) -> str:
    return "[" + ",".join(_dom(x) for x in xs) + "]"


def _inclusion_path(levels: list[pm.PathElement]) -> str:
    return '{"path":[' + ",".join(
        f'{{"hashes":{_doms(e.hashes)},"index":{int(e.index)}}}' for e in levels) + "]}"


def _merkle(p: pm.MerkleProof) -> str:
    root, leaf = _dom(p.root), _dom(p.leaf)
    base = _inclusion_path(p.base)
    if p.kind == "Single":
        body = f'{{"root":{root},"leaf":{leaf},"path":{base}}}'
    elif p.kind == "Sub":
        body = (f'{{"base_proof":{base},"sub_proof":{_inclusion_path(p.sub or [])},'
                f'"root":{root},"leaf":{leaf}}}')
    else:
        body = (f'{{"base_proof":{base},"sub_proof":{_inclusion_path(p.sub or [])},'
                f'"top_proof":{_inclusion_path(p.top or [])},"root":{root},"leaf":{leaf}}}')
    return f'{{"data":{{"{p.kind}":{body}}}}}'


def _column_proof(c: pm.ColumnProof) -> str:
    col = c.column
    return (f'{{"column":{{"index":{int(col.index)},"rows":{_doms(col.rows)},"_h":null}},'
            f'"inclusion_proof":{_merkle(c.inclusion_proof)}}}')


def _labeling(p: pm.LabelingProof | pm.EncodingProof) -> str:
    return f'{{"parents":{_doms(p.parents)},"layer_index":{int(p.layer_index)},"node":{int(p.node)}}}'


def proof_to_json(p: pm.Proof) -> str:
    rcp = p.replica_column_proofs
    return (
        f'{{"comm_d_proofs":{_merkle(p.comm_d_proofs)},'
        f'"comm_r_last_proof":{_merkle(p.comm_r_last_proof)},'
        f'"replica_column_proofs":{{"c_x":{_column_proof(rcp.c_x)},'
        f'"drg_parents":[{",".join(_column_proof(c) for c in rcp.drg_parents)}],'
        f'"exp_parents":[{",".join(_column_proof(c) for c in rcp.exp_parents)}]}},'
        f'"labeling_proofs":[{",".join(_labeling(x) for x in p.labeling_proofs)}],'
        f'"encoding_proof":{_labeling(p.encoding_proof)}}}'
    )


def to_json(out: pm.SealCommitPhase1Output) -> bytes:
    """serde_json::to_vec of the SealCommitPhase1Output."""
    parts = ",".join("[" + ",".join(proof_to_json(p) for p in part) + "]"
                     for part in out.vanilla_proofs)
    text = (f'{{"registered_proof":"{out.registered_proof.name}",'
            f'"vanilla_proofs":{{"{out.variant}":[{parts}]}},'
            f'"comm_r":{_bytes32(out.comm_r)},"comm_d":{_bytes32(out.comm_d)},'
            f'"replica_id":{_bytes32(out.replica_id)},"seed":{_bytes32(out.seed)},'
            f'"ticket":{_bytes32(out.ticket)}}}')
    return text.encode()


# -- reading ----------------------------------------------------------------------------------


def _fail(path: str, msg: str) -> C1FormatError:
    return C1FormatError(f"{path}: {msg}")


def _obj(v: Any, path: str) -> dict:
    if not isinstance(v, dict):
        raise _fail(path, f"expected an object, got {_kind(v)}")
    return v


def _get(d: dict, key: str, path: str) -> Any:
    if key not in d:
        raise _fail(path, f"missing field `{key}`")
    return d[key]


def _list(v: Any, path: str) -> list:
    if not isinstance(v, list):
        raise _fail(path, f"expected an array, got {_kind(v)}")
    return v


def _uint(v: Any, path: str, bits: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(path, f"expected an unsigned integer, got {_kind(v)}")
    if not 0 <= v < 1 << bits:
        raise _fail(path, f"{v} does not fit a u{bits}")
    return v


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return f"the number {v}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, list):
        return f"an array of {len(v)}"
    return "an object"


def _raw32(v: Any, path: str) -> bytes:
    arr = _list(v, path)
    if len(arr) != 32:
        raise _fail(path, f"expected 32 bytes, got an array of {len(arr)}")
    for i, b in enumerate(arr):
        if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= 255:
            raise _fail(f"{path}[{i}]", f"expected a byte (0..255), got {_kind(b)}")
    return bytes(arr)


def _domain(v: Any, path: str) -> int:
    return int.from_bytes(_raw32(v, path), "little")


def _domains(v: Any, path: str) -> list[int]:
    return [_domain(x, f"{path}[{i}]") for i, x in enumerate(_list(v, path))]


def _inclusion_path_from(v: Any, path: str) -> list[pm.PathElement]:
    els = _list(_get(_obj(v, path), "path", path), f"{path}.path")
    out = []
    for i, e in enumerate(els):
        p = f"{path}.path[{i}]"
        e = _obj(e, p)
        out.append(pm.PathElement(_domains(_get(e, "hashes", p), f"{p}.hashes"),
                               _uint(_get(e, "index", p), f"{p}.index", 64)))
    return out


def _merkle_from(v: Any, path: str) -> pm.MerkleProof:
    data = _obj(_get(_obj(v, path), "data", path), f"{path}.data")
    if len(data) != 1:
        raise _fail(f"{path}.data", f"expected one of Single, Sub, Top, got keys {sorted(data)}")
    (kind, body), = data.items()
    if kind not in ("Single", "Sub", "Top"):
        raise _fail(f"{path}.data", f"unknown variant `{kind}` (expected Single, Sub or Top)")
    p = f"{path}.data.{kind}"
    body = _obj(body, p)
    root = _domain(_get(body, "root", p), f"{p}.root")
    leaf = _domain(_get(body, "leaf", p), f"{p}.leaf")
    if kind == "Single":
        return pm.MerkleProof(root, leaf, _inclusion_path_from(_get(body, "path", p), f"{p}.path"))
    base = _inclusion_path_from(_get(body, "base_proof", p), f"{p}.base_proof")
    sub = _inclusion_path_from(_get(body, "sub_proof", p), f"{p}.sub_proof")
    top = _inclusion_path_from(_get(body, "top_proof", p), f"{p}.top_proof") if kind == "Top" else None
    return pm.MerkleProof(root, leaf, base, sub, top)


def _column_proof_from(v: Any, path: str) -> pm.ColumnProof:
    v = _obj(v, path)
    cp = f"{path}.column"
    col = _obj(_get(v, "column", path), cp)
    column = pm.Column(_uint(_get(col, "index", cp), f"{cp}.index", 32),
                    _domains(_get(col, "rows", cp), f"{cp}.rows"))
    if "_h" in col and col["_h"] is not None:
        raise _fail(f"{cp}._h", f"expected null, got {_kind(col['_h'])}")
    return pm.ColumnProof(column, _merkle_from(_get(v, "inclusion_proof", path), f"{path}.inclusion_proof"))


def _labeling_from(v: Any, path: str, cls: type) -> Any:
    v = _obj(v, path)
    return cls(_domains(_get(v, "parents", path), f"{path}.parents"),
               _uint(_get(v, "layer_index", path), f"{path}.layer_index", 32),
               _uint(_get(v, "node", path), f"{path}.node", 64))


def proof_from_obj(v: Any, path: str = "proof") -> pm.Proof:
    v = _obj(v, path)
    rp = f"{path}.replica_column_proofs"
    r = _obj(_get(v, "replica_column_proofs", path), rp)
    rcp = pm.ReplicaColumnProof(
        _column_proof_from(_get(r, "c_x", rp), f"{rp}.c_x"),
        [_column_proof_from(x, f"{rp}.drg_parents[{i}]")
         for i, x in enumerate(_list(_get(r, "drg_parents", rp), f"{rp}.drg_parents"))],
        [_column_proof_from(x, f"{rp}.exp_parents[{i}]")
         for i, x in enumerate(_list(_get(r, "exp_parents", rp), f"{rp}.exp_parents"))],
    )
    lp = f"{path}.labeling_proofs"
    return pm.Proof(
        _merkle_from(_get(v, "comm_d_proofs", path), f"{path}.comm_d_proofs"),
        _merkle_from(_get(v, "comm_r_last_proof", path), f"{path}.comm_r_last_proof"),
        rcp,
        [_labeling_from(x, f"{lp}[{i}]", pm.LabelingProof)
         for i, x in enumerate(_list(_get(v, "labeling_proofs", path), lp))],
        _labeling_from(_get(v, "encoding_proof", path), f"{path}.encoding_proof", pm.EncodingProof),
    )


def _parse_json(data: bytes | str, what: str) -> Any:
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise C1FormatError(f"{what} is not UTF-8 text: {exc}") from None
    except json.JSONDecodeError as exc:
        # a cut-off file ends inside a value: the error is at its end, or a string never closes
        cut = exc.pos >= len(data) - 1 or exc.msg.startswith("Unterminated")
        hint = " (truncated?)" if cut else ""
        raise C1FormatError(f"{what} is not valid JSON{hint}: {exc.msg} at line {exc.lineno} "
                            f"column {exc.colno} (byte {exc.pos} of {len(data)})") from None


def from_obj(v: Any) -> pm.SealCommitPhase1Output:
    top = _obj(v, "SealCommitPhase1Output")
    path = "SealCommitPhase1Output"
    rp = _get(top, "registered_proof", path)
    if not isinstance(rp, str):
        raise _fail(f"{path}.registered_proof", f"expected a variant name, got {_kind(rp)}")
    try:
        proof = RegisteredSealProof[rp]
    except KeyError:
        raise _fail(f"{path}.registered_proof",
                    f"unknown registered seal proof `{rp}` (known: "
                    f"{', '.join(p.name for p in RegisteredSealProof)})") from None
    vp = _obj(_get(top, "vanilla_proofs", path), f"{path}.vanilla_proofs")
    if len(vp) != 1:
        raise _fail(f"{path}.vanilla_proofs", f"expected one variant of {', '.join(VARIANTS)}, "
                    f"got keys {sorted(vp)}")
    (variant, partitions), = vp.items()
    if variant not in VARIANTS:
        raise _fail(f"{path}.vanilla_proofs", f"unknown variant `{variant}` "
                    f"(expected one of {', '.join(VARIANTS)})")
    if variant != proof.sector.vanilla_variant:
        raise _fail(f"{path}.vanilla_proofs", f"registered_proof {proof.name} is a "
                    f"{proof.sector.name} proof, but vanilla_proofs is `{variant}`")
    vpath = f"{path}.vanilla_proofs.{variant}"
    proofs = [[proof_from_obj(p, f"{vpath}[{k}][{i}]")
               for i, p in enumerate(_list(part, f"{vpath}[{k}]"))]
              for k, part in enumerate(_list(partitions, vpath))]
    vals = {name: _raw32(_get(top, name, path), f"{path}.{name}")
            for name in ("comm_r", "comm_d", "replica_id", "seed", "ticket")}
    return pm.SealCommitPhase1Output(proof, proofs, variant=variant, **vals)


def from_json(data: bytes | str) -> pm.SealCommitPhase1Output:
    """serde_json::from_slice::<SealCommitPhase1Output>."""
    return from_obj(_parse_json(data, "the C1 output"))


# -- Curio's wrapper ----------------------------------------------------------------------------


@dataclass
class CurioC1:
    """Curio's c1.json: the sector number, the C1 output and the sector size in bytes."""

    sector_num: int
    output: pm.SealCommitPhase1Output
    sector_size: int

    def to_json(self) -> bytes:
        b64 = base64.b64encode(to_json(self.output)).decode()
        return (f'{{"SectorNum":{self.sector_num},"Phase1Out":"{b64}",'
                f'"SectorSize":{self.sector_size}}}').encode()


def wrapper_from_obj(v: dict) -> CurioC1:
    path = "c1.json"
    num = _uint(_get(v, "SectorNum", path), f"{path}.SectorNum", 64)
    size = _uint(_get(v, "SectorSize", path), f"{path}.SectorSize", 64)
    b64 = _get(v, "Phase1Out", path)
    if not isinstance(b64, str):
        raise _fail(f"{path}.Phase1Out", f"expected a base64 string, got {_kind(b64)}")
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _fail(f"{path}.Phase1Out", f"not valid base64: {exc}") from None
    out = from_obj(_parse_json(raw, "the C1 output inside Phase1Out"))
    if out.registered_proof.sector.size != size:
        raise _fail(f"{path}.SectorSize", f"{size} bytes, but the C1 output is a "
                    f"{out.registered_proof.name} ({out.registered_proof.sector.size} bytes) proof")
    return CurioC1(num, out, size)


def load(data: bytes | str) -> tuple[pm.SealCommitPhase1Output, CurioC1 | None]:
    """Either form: Curio's wrapper (returned as the second value) or the bare C1 output."""
    v = _parse_json(data, "the C1 file")
    if isinstance(v, dict) and "Phase1Out" in v:
        w = wrapper_from_obj(v)
        return w.output, w
    return from_obj(v), None
