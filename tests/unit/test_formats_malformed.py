"""Malformed and truncated key, circuit, witness and proof files give FormatError (a clear
message naming file and section), never a crash, a numpy error or a silent misread."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cuzk import formats as F

SEED = int.from_bytes(os.urandom(8), "little")
N_CUTS = 12


@pytest.fixture(scope="module", params=["bn254", "bls12_381"])
def files(request, circom_artifact, tmp_path_factory) -> dict[str, tuple[Path, Callable]]:
    curve = request.param
    art = circom_artifact(curve, "mul_chain_8")
    d = tmp_path_factory.mktemp(f"malformed-{curve}")
    pk = F.read_zkey(art.zkey)
    bpk = dataclasses.replace(pk, h_g1=np.array(pk.h_g1[:-1]), h_convention="bellman", r1cs=None)
    F.write_bellman_params(bpk, d / "p.params")
    F.write_bellman_vk(bpk, d / "vk.bin")
    F.save_key_cache(pk, d / "k.cuzkkey")
    dens = F.bellman_density(bpk)
    return {
        "r1cs": (art.r1cs, F.read_r1cs),
        "wtns": (art.wtns, F.read_wtns),
        "zkey": (art.zkey, F.read_zkey),
        "params": (d / "p.params", lambda p: F.read_bellman_params(p, curve, density=dens)),
        "vk": (d / "vk.bin", lambda p: F.read_bellman_vk(p, curve)),
        "cache": (d / "k.cuzkkey", F.load_key_cache),
    }


def _expect_error(reader: Callable, path: Path, what: str) -> str:
    try:
        reader(path)
    except F.FormatError as exc:
        msg = str(exc)
        assert str(path) in msg, msg  # the message names the file
        return msg
    raise AssertionError(f"{what}: no FormatError (seed {SEED})")


@pytest.mark.parametrize("kind", ["r1cs", "wtns", "zkey", "params", "vk", "cache"])
def test_truncated(files, kind: str, tmp_path: Path):
    src, reader = files[kind]
    reader(src)  # the intact file reads
    data = src.read_bytes()
    rnd = random.Random(f"{SEED}-{kind}")
    cuts = {0, 3, len(data) - 1} | {rnd.randrange(len(data)) for _ in range(N_CUTS)}
    for i, cut in enumerate(sorted(cuts)):
        bad = tmp_path / f"cut{i}.{kind}"
        bad.write_bytes(data[:cut])
        _expect_error(reader, bad, f"{kind} truncated to {cut} of {len(data)} bytes")


def _sections(data: bytes) -> list[tuple[int, int, int]]:
    """(header offset, id, size) of each section of an iden3 container."""
    out, pos = [], 12
    while pos < len(data):
        sid, size = struct.unpack_from("<IQ", data, pos)
        out.append((pos, sid, size))
        pos += 12 + size
    return out


@pytest.mark.parametrize("kind", ["r1cs", "wtns", "zkey"])
def test_iden3_container_damage(files, kind: str, tmp_path: Path):
    src, reader = files[kind]
    data = src.read_bytes()
    bad = tmp_path / f"bad.{kind}"

    def check(blob: bytes, what: str, match: str | None = None) -> None:
        bad.write_bytes(blob)
        msg = _expect_error(reader, bad, what)
        if match:
            assert match in msg, msg

    check(b"XXXX" + data[4:], "magic", "not a")
    check(data[:4] + struct.pack("<I", 99) + data[8:], "version", "version")
    check(data + b"\0" * 5, "trailing bytes", "stray")
    for pos, sid, size in _sections(data):
        for delta in (-1, 1, 44):
            blob = bytearray(data)
            struct.pack_into("<Q", blob, pos + 4, max(size + delta, 0))
            check(bytes(blob), f"section {sid} size {size}{delta:+d}")
    # a section missing entirely
    pos, sid, size = _sections(data)[-1]
    blob = bytearray(data[:pos])
    struct.pack_into("<I", blob, 8, len(_sections(data)) - 1)
    try:
        reader_result = reader(_write(bad, bytes(blob)))
    except F.FormatError as exc:
        assert "missing" in str(exc) or "section" in str(exc)
    else:  # only sections a prover does not need may go: an r1cs's wire->label map, a
        # zkey's ceremony transcript
        assert (kind, sid) in (("r1cs", 3), ("zkey", 10)), (kind, sid)
        assert kind != "r1cs" or "wire2label" not in reader_result.labels


def _write(path: Path, blob: bytes) -> Path:
    path.write_bytes(blob)
    return path


def test_content_errors(files, tmp_path: Path):
    # zkey of another protocol
    src, _ = files["zkey"]
    data = bytearray(src.read_bytes())
    pos, sid, _ = next(s for s in _sections(bytes(data)) if s[1] == 1)
    struct.pack_into("<I", data, pos + 12, 2)
    with pytest.raises(F.FormatError, match="plonk"):
        F.read_zkey(_write(tmp_path / "plonk.zkey", bytes(data)))
    # a witness value that is not reduced modulo r
    src, _ = files["wtns"]
    data = bytearray(src.read_bytes())
    pos, _, _ = next(s for s in _sections(bytes(data)) if s[1] == 2)
    data[pos + 12 + 32 : pos + 12 + 64] = b"\xff" * 32
    with pytest.raises(F.FormatError, match="not reduced"):
        F.read_wtns(_write(tmp_path / "big.wtns", bytes(data)))
    # an r1cs whose prime is no supported curve
    src, _ = files["r1cs"]
    data = bytearray(src.read_bytes())
    pos, _, _ = next(s for s in _sections(bytes(data)) if s[1] == 1)
    data[pos + 16] ^= 1
    with pytest.raises(F.FormatError, match="unsupported"):
        F.read_r1cs(_write(tmp_path / "prime.r1cs", bytes(data)))
    # bellman: a vk point knocked off the curve, a bad flag
    src, reader = files["params"]
    data = bytearray(src.read_bytes())
    data[20] ^= 0x01
    _expect_error(reader, _write(tmp_path / "offcurve.params", bytes(data)), "off-curve alpha")
    data = bytearray(src.read_bytes())
    data[0] |= 0x80
    _expect_error(reader, _write(tmp_path / "flag.params", bytes(data)), "compressed flag")
    # cache: bad magic, garbage header
    src, _ = files["cache"]
    data = bytearray(src.read_bytes())
    with pytest.raises(F.FormatError, match="not a cuzk key cache"):
        F.load_key_cache(_write(tmp_path / "m.cuzkkey", b"X" + bytes(data[1:])))
    data[30:40] = b"}}}}}}}}}}"
    with pytest.raises(F.FormatError, match="header"):
        F.load_key_cache(_write(tmp_path / "h.cuzkkey", bytes(data)))
    with pytest.raises(F.FormatError, match="cannot open"):
        F.read_zkey(tmp_path / "does-not-exist.zkey")


def test_json_errors(tmp_path: Path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    for reader in (F.read_proof_json, F.read_vk_json, F.read_public_json):
        with pytest.raises(F.FormatError, match="JSON"):
            reader(p)
    good = {"pi_a": ["1", "2", "1"], "pi_b": [["0", "0"], ["1", "0"], ["0", "0"]], "pi_c": ["0", "1", "0"],
            "protocol": "groth16", "curve": "bn128"}  # fmt: skip
    proof = F.read_proof_json(dict(good))
    assert not proof.c.any() and not proof.b.any() and proof.a.any()
    for change, match in (
        ({"pi_a": ["1", "3", "1"]}, "not on the curve"),
        ({"pi_a": ["1", "x", "1"]}, "not a decimal"),
        ({"curve": "secp256k1"}, "unsupported curve"),
        ({"protocol": "plonk"}, "groth16"),
        ({"pi_b": [["1"], ["2"]]}, "G2 point"),
    ):
        with pytest.raises(F.FormatError, match=match):
            F.read_proof_json({**good, **change})
    with pytest.raises(F.FormatError, match="missing"):
        F.read_proof_json({k: v for k, v in good.items() if k != "pi_c"})
    p.write_text(json.dumps(["1", "-2"]))
    with pytest.raises(F.FormatError, match="negative"):
        F.read_public_json(p)
    p.write_text(json.dumps([str(2**255)]))
    with pytest.raises(F.FormatError, match="scalar field"):
        F.read_public_json(p, "bn254")


def test_key_cache_writer_full_disk_is_an_error_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A disk without room for the file refuses it up front (OSError, nothing left behind)
    instead of faulting later on a page of the writable map."""
    import errno

    from cuzk.curves import get_curve

    def full(fd: int, offset: int, size: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    target = tmp_path / "k.cuzkkey"
    with pytest.raises(OSError, match=r"no space left in .* for the .* GiB key cache file k.cuzkkey"):
        F.KeyCacheWriter(target, curve=get_curve("bls12_381"), n_vars=64, n_public=2,
                         domain_size=64, h_convention="bellman")
    assert list(tmp_path.iterdir()) == []


def test_key_cache_writer_reserves_its_blocks(tmp_path: Path):
    """The blocks the fill will write are allocated before the map is written; with `rows`,
    the blocks of rows left at infinity stay holes (no disk for points a key does not have)."""
    from cuzk.curves import get_curve

    n = 1 << 16
    mask = np.zeros(n, dtype=bool)
    mask[:1000] = mask[-1000:] = True
    mask[n // 2] = True
    args = dict(curve=get_curve("bls12_381"), n_vars=n, n_public=2, domain_size=1024,
                h_convention="bellman")
    sizes = {}
    for name, rows in (("all", None), ("masked", {"a_g1": mask, "b_g1": mask, "b_g2": mask})):
        with F.KeyCacheWriter(tmp_path / f"{name}.cuzkkey", **args, rows=rows) as w:
            st = os.stat(w._tmp)
            sizes[name] = (st.st_size, st.st_blocks * 512)
            for arr_name in ("a_g1", "b_g1", "b_g2"):
                w.arrays[arr_name][mask] = 7
            w.commit()
        assert int(F.load_key_cache(tmp_path / f"{name}.cuzkkey").b_g2[n // 2].max()) == 7
    assert sizes["all"][1] >= sizes["all"][0]  # nothing sparse
    size, allocated = sizes["masked"]
    left_out = (n - int(mask.sum())) * (96 + 96 + 192)  # the rows at infinity of a, b_g1, b_g2
    # allocated: all but those rows, give or take the blocks they share with written rows
    # (two per run edge) and the filesystem's own rounding
    assert size - left_out <= allocated + 3 * 4 * 4096
    assert allocated <= size - left_out + 3 * 4 * 4096 + (1 << 20)
