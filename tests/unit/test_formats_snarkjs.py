"""Formats against real snarkjs/circom artefacts on both curves: .r1cs, .wtns, .zkey,
proof/public/verification-key JSON, zkey writing accepted by snarkjs, key cache and bellman
params round trips built from real keys."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import CURVES
from conftest import read_wtns as conftest_read_wtns

from cuzk import formats as F
from cuzk.curves import get_curve
from cuzk.layout import fr_from_ints, fr_to_ints
from cuzk.model.r1cs import CSR
from cuzk.tools import snarkjs

CIRCUITS = ("mul_chain_8", "multi_io")
PARAMS = [(c, n) for c in CURVES for n in CIRCUITS]


@pytest.fixture(params=PARAMS, ids=[f"{c}-{n}" for c, n in PARAMS])
def art(request, circom_artifact):
    curve, name = request.param
    return circom_artifact(curve, name)


def _coo(m: CSR) -> set[tuple[int, int, int]]:
    rows = np.repeat(np.arange(m.n_rows), np.diff(m.indptr))
    return set(zip(rows.tolist(), m.indices.tolist(), fr_to_ints(m.values), strict=True))


def _matvec(m: CSR, w: list[int], r: int) -> list[int]:
    out = []
    vals = fr_to_ints(m.values)
    for i in range(m.n_rows):
        s = 0
        for k in range(m.indptr[i], m.indptr[i + 1]):
            s += vals[k] * w[m.indices[k]]
        out.append(s % r)
    return out


def _same_vk(a: F.zkey.VerifyingKey, b: F.zkey.VerifyingKey) -> bool:
    return a.curve == b.curve and all(
        np.array_equal(getattr(a, k), getattr(b, k))
        for k in ("alpha_g1", "beta_g2", "gamma_g2", "delta_g2", "ic")
    )


PK_ARRAYS = ("alpha_g1", "beta_g1", "beta_g2", "delta_g1", "delta_g2", "a_g1", "b_g1", "b_g2", "l_g1", "h_g1")


def _same_pk(a, b) -> bool:
    return (
        (a.curve, a.n_vars, a.n_public, a.domain_size, a.h_convention)
        == (b.curve, b.n_vars, b.n_public, b.domain_size, b.h_convention)
        and all(np.array_equal(getattr(a, k), getattr(b, k)) for k in PK_ARRAYS)
        and _same_vk(a.vk, b.vk)
    )


def test_r1cs_and_wtns_satisfy(art):
    r1cs = F.read_r1cs(art.r1cs)
    w, curve = F.read_wtns(art.wtns)
    assert curve == r1cs.curve == get_curve(art.curve)
    assert r1cs.n_constraints == art.n_constraints
    assert w.shape == (r1cs.n_vars, 4)
    prime, ref = conftest_read_wtns(art.wtns)
    assert prime == curve.r and fr_to_ints(w) == ref
    # public signals: outputs then public inputs, right after the constant one
    assert ref[0] == 1 and ref[1 : 1 + r1cs.n_public] == art.public
    a, b, c = (_matvec(getattr(r1cs, m), ref, curve.r) for m in "abc")
    assert all(x * y % curve.r == z for x, y, z in zip(a, b, c, strict=True))
    # a wrong witness value breaks some constraint (so the check above is not vacuous)
    bad = list(ref)
    bad[-1] = (bad[-1] + 1) % curve.r
    a, b, c = (_matvec(getattr(r1cs, m), bad, curve.r) for m in "abc")
    assert any(x * y % curve.r != z for x, y, z in zip(a, b, c, strict=True))


def test_wtns_write_read(art, tmp_path: Path):
    w, curve = F.read_wtns(art.wtns)
    out = tmp_path / "w.wtns"
    F.write_wtns(out, w, curve)
    assert out.read_bytes() == art.wtns.read_bytes()
    assert snarkjs.wtns_check(art.r1cs, out)


def test_zkey_matches_r1cs_and_snarkjs_vk(art):
    pk = F.read_zkey(art.zkey)
    r1cs = F.read_r1cs(art.r1cs)
    assert pk.curve == r1cs.curve
    assert (pk.n_vars, pk.n_public) == (r1cs.n_vars, r1cs.n_public)
    assert pk.domain_size == F.snarkjs_domain_size(r1cs.n_constraints, r1cs.n_public)
    assert pk.h_convention == "snarkjs" and len(pk.h_g1) == pk.domain_size
    assert len(pk.l_g1) == pk.n_vars - pk.n_public - 1
    full = F.add_snarkjs_public_rows(r1cs)
    assert pk.r1cs.n_constraints == r1cs.n_constraints
    assert _coo(pk.r1cs.a) == _coo(full.a)
    assert _coo(pk.r1cs.b) == _coo(full.b)
    assert pk.r1cs.c.nnz == 0 and pk.meta["c_from_ab"]
    vk_json = F.read_vk_json(art.vk_json)
    assert _same_vk(pk.vk, vk_json)
    assert _same_vk(F.read_zkey_vk(art.zkey), vk_json)


def test_json_round_trips_and_snarkjs_accepts(art, tmp_path: Path):
    vk = F.read_vk_json(art.vk_json)
    F.write_vk_json(tmp_path / "vk.json", vk)
    assert _same_vk(F.read_vk_json(tmp_path / "vk.json"), vk)
    ref = json.loads(art.vk_json.read_text())
    ref.pop("vk_alphabeta_12")
    assert json.loads((tmp_path / "vk.json").read_text()) == ref

    proof = F.read_proof_json(art.proof_json)
    F.write_proof_json(tmp_path / "proof.json", proof)
    assert json.loads((tmp_path / "proof.json").read_text()) == json.loads(art.proof_json.read_text())
    public = F.read_public_json(art.public_json, art.curve)
    F.write_public_json(tmp_path / "public.json", public)
    assert F.read_public_json(tmp_path / "public.json") == public == art.public
    assert snarkjs.groth16_verify(tmp_path / "vk.json", tmp_path / "public.json", tmp_path / "proof.json")
    # the compressed encoding carries the same proof
    back = F.decode_proof(art.curve, F.encode_proof(proof))
    assert all(np.array_equal(getattr(back, k), getattr(proof, k)) for k in "abc")


def test_zkey_write_read_and_snarkjs_proves(art, tmp_path: Path):
    pk = F.read_zkey(art.zkey)
    out = tmp_path / "ours.zkey"
    F.write_zkey(pk, out)
    back = F.read_zkey(out)
    assert _same_pk(pk, back)
    assert _coo(back.r1cs.a) == _coo(pk.r1cs.a) and _coo(back.r1cs.b) == _coo(pk.r1cs.b)
    snarkjs.export_vk(out, tmp_path / "vk.json")
    assert json.loads((tmp_path / "vk.json").read_text()) == json.loads(art.vk_json.read_text())
    snarkjs.groth16_prove(out, art.wtns, tmp_path / "proof.json", tmp_path / "public.json")
    assert snarkjs.groth16_verify(art.vk_json, tmp_path / "public.json", tmp_path / "proof.json")


def test_key_cache_round_trip(art, tmp_path: Path):
    pk = F.read_zkey(art.zkey)
    F.save_key_cache(pk, tmp_path / "k.cuzkkey")
    for mm in (True, False):
        back = F.load_key_cache(tmp_path / "k.cuzkkey", mmap=mm)
        assert _same_pk(pk, back)
        for m in "abc":
            x, y = getattr(pk.r1cs, m), getattr(back.r1cs, m)
            assert np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices)
            assert np.array_equal(x.values, y.values)
        assert back.meta["c_from_ab"] and back.r1cs.n_constraints == pk.r1cs.n_constraints
        assert all(getattr(back, k).ctypes.data % 64 == 0 for k in ("a_g1", "h_g1")) or not mm


def test_load_proving_key_caches(art, tmp_path: Path):
    cdir = tmp_path / "cache"
    first = F.load_proving_key(art.zkey, cache_dir=cdir)
    files = list(cdir.glob("*.cuzkkey"))
    assert len(files) == 1 and sorted(p.name for p in cdir.iterdir()) == [
        files[0].name, files[0].name + ".lock"]  # the writers' lock beside it, nothing else
    again = F.load_proving_key(art.zkey, cache_dir=cdir)
    assert again.meta["cache_path"] == str(files[0])
    assert _same_pk(first, again) and _same_pk(again, F.read_zkey(art.zkey))
    assert _same_pk(F.load_proving_key(files[0]), again)
    # a corrupt cache file is rebuilt, not trusted (replaced, not truncated in place: live
    # keys map the old file)
    head = files[0].read_bytes()[:200]
    files[0].unlink()
    files[0].write_bytes(head)
    assert _same_pk(F.load_proving_key(art.zkey, cache_dir=cdir), again)


def test_load_proving_key_removes_what_a_killed_writer_left(art, tmp_path: Path):
    """A daemon killed while writing a key cache leaves its temporary file (75 GB for a 32 GiB
    PoRep key); the next writer of that file removes it, and only that file's."""
    cdir = tmp_path / "cache"
    F.load_proving_key(art.zkey, cache_dir=cdir)
    target = next(cdir.glob("*.cuzkkey"))
    target.unlink()
    orphan = cdir / f".{target.name}.k1ll3d"
    orphan.write_bytes(b"\0" * 4096)
    other = cdir / ".another.cuzkkey.k1ll3d"  # another key's: not this writer's to judge
    other.write_bytes(b"x")
    pk = F.load_proving_key(art.zkey, cache_dir=cdir)
    assert target.exists() and not orphan.exists() and other.exists()
    assert _same_pk(pk, F.read_zkey(art.zkey))


def test_load_proving_key_one_writer_across_processes(art, tmp_path: Path):
    """Two processes loading the same new key: one converts, the other waits for the lock and
    maps the result (the file is written once)."""
    import subprocess
    import sys

    cdir = tmp_path / "cache"
    code = """
import sys, time
import cuzk.formats as F
from cuzk.formats import cache
build = cache._build
def slow_build(*a, **k):  # a wide window for the other process to start a second build
    print("built", flush=True)
    time.sleep(1.0)
    return build(*a, **k)
cache._build = slow_build
pk = F.load_proving_key(sys.argv[1], cache_dir=sys.argv[2])
print(pk.meta["cache_path"])
"""
    procs = [subprocess.Popen([sys.executable, "-c", code, str(art.zkey), str(cdir)],
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    files = list(cdir.glob("*.cuzkkey"))
    assert len(files) == 1 and all(o[-1] == str(files[0]) for o in outs)
    assert sum(o.count("built") for o in outs) == 1
    assert not list(cdir.glob(".*"))  # no temporary file left


def _as_bellman(pk):
    """A bellman-convention key with the zkey's points (the H points are only data here)."""
    import dataclasses

    return dataclasses.replace(pk, h_g1=np.array(pk.h_g1[:-1]), h_convention="bellman", r1cs=None, meta={})


def test_bellman_params_round_trip(art, tmp_path: Path):
    pk = _as_bellman(F.read_zkey(art.zkey))
    out = tmp_path / "p.params"
    F.write_bellman_params(pk, out)
    a_mask, b_mask = F.bellman_density(pk)
    assert not b_mask.all()  # real circuits leave some B columns empty: exercises filtering
    back = F.read_bellman_params(out, art.curve, density=(a_mask, b_mask))
    assert _same_pk(pk, back)
    F.write_bellman_params(back, tmp_path / "again.params")
    assert (tmp_path / "again.params").read_bytes() == out.read_bytes()
    # the density from the circuit's R1CS places the points the same way
    r1cs = F.add_snarkjs_public_rows(F.read_r1cs(art.r1cs))
    assert _same_pk(pk, F.read_bellman_params(out, art.curve, density=r1cs))
    with pytest.raises(F.FormatError, match="density|omits points at infinity"):
        F.read_bellman_params(out, art.curve)
    F.write_bellman_vk(pk, tmp_path / "vk.bin")
    assert _same_vk(F.read_bellman_vk(tmp_path / "vk.bin", art.curve), pk.vk)
    assert out.read_bytes().startswith((tmp_path / "vk.bin").read_bytes())


def test_bellman_uncompressed_matches_arkworks(circom_artifact):
    ark = pytest.importorskip("py_arkworks_bls12381")
    pk = F.read_zkey(circom_artifact("bls12_381", "mul_chain_8").zkey)
    from cuzk.formats import points

    raw = points.g1_to_uncompressed(pk.curve, pk.h_g1[:4])
    for i in range(4):
        p = ark.G1Point.from_xy_bytes_be(raw[96 * i : 96 * (i + 1)])
        assert bytes(p.to_xy_bytes_be()) == raw[96 * i : 96 * (i + 1)]
    assert np.array_equal(points.g1_from_uncompressed(pk.curve, raw, 4), pk.h_g1[:4])
    # G2 writes c1 before c0 (zcash order); arkworks' xy bytes are c0 ‖ c1 per coordinate
    i = int(np.flatnonzero(pk.b_g2.reshape(len(pk.b_g2), -1).any(axis=1))[0])
    raw2 = points.g2_to_uncompressed(pk.curve, pk.b_g2[i : i + 1])
    swapped = raw2[48:96] + raw2[:48] + raw2[144:] + raw2[96:144]
    q = ark.G2Point.from_xy_bytes_be(swapped)
    assert bytes(q.to_xy_bytes_be()) == swapped


def test_public_rows_order():
    from cuzk.model.r1cs import R1CS

    c = get_curve("bn254")
    empty = CSR(np.zeros(3, np.int64), np.zeros(0, np.int64), np.zeros((0, 4), np.uint64), 5)
    one = fr_from_ints(c, [3])
    a = CSR(np.array([0, 1, 1]), np.array([4]), one, 5)
    r = F.add_snarkjs_public_rows(R1CS(c, 5, 2, a, empty, empty, 2))
    assert r.n_rows == 5 and r.n_constraints == 2
    assert _coo(r.a) == {(0, 4, 3), (2, 0, 1), (3, 1, 1), (4, 2, 1)}
    assert r.b.nnz == 0 and r.b.n_rows == 5 and r.c.n_rows == 5
