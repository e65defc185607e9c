"""The job input of a PoSt or SnapDeals job (the daemon's `job_input` bytes, the CLI's job
files): one line of JSON naming the proof and its fields, then the vanilla proofs' bytes.

    {"format":"cuzk-filecoin-job/1","proof":"window-post","registered_proof":10,
     "randomness":"<64 hex>","prover_id":"<64 hex>","partition_index":0,
     "vanilla_proofs":[3081,3081]}\\n
    <vanilla proof 0: 3081 bytes><vanilla proof 1: 3081 bytes>

`vanilla_proofs` lists the blobs' lengths; the blobs follow the newline in that order, nothing
after them. 32-byte values are hex of the bytes as Curio passes them (field elements
little-endian). The blobs stay binary: a 32 GiB WindowPoSt partition's are ~100 MB.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

FORMAT = "cuzk-filecoin-job/1"
# A header is small; a missing newline in the first bytes is not a job input.
MAX_HEADER = 1 << 16


class JobInputError(ValueError):
    """A job input that is not one: malformed envelope, missing or ill-typed fields."""


def pack(header: dict[str, Any], blobs: Sequence[bytes]) -> bytes:
    """The envelope of `header` (format and blob lengths added) and the blobs."""
    head = {"format": FORMAT, **header, "vanilla_proofs": [len(b) for b in blobs]}
    return json.dumps(head, separators=(",", ":")).encode() + b"\n" + b"".join(blobs)


def unpack(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """The header and the blobs; JobInputError saying what is wrong."""
    data = bytes(data)
    nl = data.find(b"\n", 0, MAX_HEADER)
    if nl < 0:
        raise JobInputError(f"not a {FORMAT} job input: no JSON header line")
    try:
        head = json.loads(data[:nl])
    except ValueError as exc:
        raise JobInputError(f"job input header is not JSON: {exc}") from None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        got = head.get("format") if isinstance(head, dict) else type(head).__name__
        raise JobInputError(f"job input format {got!r}, expected {FORMAT!r}")
    lengths = head.get("vanilla_proofs")
    if not isinstance(lengths, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in lengths):
        raise JobInputError("job input header: vanilla_proofs must list the blobs' byte lengths")
    body = memoryview(data)[nl + 1 :]
    if sum(lengths) != len(body):
        raise JobInputError(f"job input: the header lists {sum(lengths)} bytes of vanilla proofs, "
                            f"{len(body)} follow")
    blobs, at = [], 0
    for n in lengths:
        blobs.append(bytes(body[at : at + n]))
        at += n
    return head, blobs


def field(head: dict[str, Any], name: str, kind: type | tuple[type, ...],
          default: Any = ...) -> Any:
    """A header field of a type (bool is not an int here); JobInputError when absent or not."""
    if name not in head:
        if default is not ...:
            return default
        raise JobInputError(f"job input header: {name} is missing")
    v = head[name]
    if isinstance(v, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)) \
            or not isinstance(v, kind):
        raise JobInputError(f"job input header: {name} = {v!r} is not a "
                            f"{getattr(kind, '__name__', kind)}")
    return v


def hex_bytes(head: dict[str, Any], name: str) -> bytes:
    """A hex field's bytes (its length is checked by whoever uses it, with the rule's words)."""
    text = field(head, name, str)
    try:
        return bytes.fromhex(text[2:] if text[:2] in ("0x", "0X") else text)
    except ValueError:
        raise JobInputError(f"job input header: {name} is not hex: {text!r}") from None
