"""bellperson's parameter format read without an R1CS: the a/b points placed by the circuit's
density (from shape mode), in memory and converted chunk by chunk into the key cache; count,
point and density mismatches give clear errors. Also where the files are looked for, .meta
and digests."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from filecoin_params_circuit import PARAMS, circuit

from cuzk.backends.cpu import native_module
from cuzk.filecoin.cs import synthesize_density, synthesize_r1cs
from cuzk.filecoin.params import files
from cuzk.formats import bellman
from cuzk.formats.cache import load_proving_key
from cuzk.formats.errors import FormatError
from cuzk.groth16.setup import setup
from cuzk.model.density import Density

BACKEND = "cpu" if native_module() is not None else "reference"
ARRAYS = ("alpha_g1", "beta_g1", "beta_g2", "delta_g1", "delta_g2", "a_g1", "b_g1", "b_g2",
          "l_g1", "h_g1")


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    shape, density = synthesize_density(circuit)
    r1cs = synthesize_r1cs(circuit)
    pk = setup(r1cs, "cuzk params test", convention="bellman", backend=BACKEND)
    path = tmp_path_factory.mktemp("params") / "k.params"
    bellman.write_bellman_params(pk, path, density=density)
    return shape, density, r1cs, pk, path


def _same(pk, other) -> None:
    for k in ARRAYS:
        assert np.array_equal(getattr(pk, k), getattr(other, k)), k
    for k in ("alpha_g1", "beta_g2", "gamma_g2", "delta_g2", "ic"):
        assert np.array_equal(getattr(pk.vk, k), getattr(other.vk, k)), k
    assert (pk.n_vars, pk.n_public, pk.domain_size) == (other.n_vars, other.n_public,
                                                        other.domain_size)


def test_shape_density_matches_the_matrices(key) -> None:
    shape, density, r1cs, pk, _ = key
    assert Density.from_r1cs(r1cs) == density
    assert Density.from_points(pk.a_g1, pk.b_g1, shape.inputs) == density
    assert (density.aux_in_a, density.aux_in_b, density.inputs_in_b) == (
        shape.aux_in_a, shape.aux_in_b, shape.inputs_in_b)
    aux_a, aux_b = density.a[shape.inputs:], density.b[shape.inputs:]
    # the circuit has every case: aux in A only, in B only, in both, in neither
    assert all(m.any() for m in (aux_a & ~aux_b, ~aux_a & aux_b, aux_a & aux_b, ~aux_a & ~aux_b))


def test_file_layout_leaves_infinity_out(key) -> None:
    shape, density, _, pk, path = key
    lay = bellman.scan_bellman_params(path)
    assert lay.count("a") == shape.inputs + shape.aux_in_a
    assert lay.count("b_g1") == lay.count("b_g2") == shape.inputs_in_b + shape.aux_in_b
    assert lay.count("l") == shape.aux and lay.n_inputs == shape.inputs
    assert lay.count("h") == pk.domain_size - 1
    g1, g2 = 96, 192
    body = sum(lay.count(s) * (g2 if s == "b_g2" else g1) + 4 for s in bellman.SECTIONS)
    vk = 3 * g1 + 3 * g2 + 4 + shape.inputs * g1
    assert path.stat().st_size == vk + body
    assert 868 + 96 * shape.inputs == vk  # FILECOIN.md: 868 + 96·(inputs, ONE included) bytes


def test_read_with_density_in_memory_and_converted(key, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _, density, r1cs, pk, path = key
    _same(pk, bellman.read_bellman_params(path, density=density))
    _same(pk, bellman.read_bellman_params(path, density=density.masks()))
    monkeypatch.setattr(bellman, "CHUNK", 5)  # many chunks, boundaries everywhere
    converted = load_proving_key(path, density=density, cache_dir=tmp_path)
    _same(pk, converted)
    assert converted.r1cs is None and "cache_path" in converted.meta
    assert len(list(tmp_path.glob("*.cuzkkey"))) == 1
    _same(pk, load_proving_key(path, density=density, cache_dir=tmp_path))  # the mapped copy
    # the older path: an R1CS places the points and stays on the key
    with_r1cs = load_proving_key(path, density=r1cs, cache_dir=tmp_path / "r")
    _same(pk, with_r1cs)
    assert with_r1cs.r1cs is not None and with_r1cs.r1cs.n_constraints == r1cs.n_constraints


def test_no_density_is_refused_with_a_hint(key) -> None:
    _, _, _, _, path = key
    with pytest.raises(FormatError, match="pass the circuit's density"):
        bellman.read_bellman_params(path)


def test_density_of_another_circuit(key) -> None:
    shape, density, _, _, path = key
    a = density.a.copy()
    a[np.flatnonzero(~a)[0]] = True
    with pytest.raises(FormatError, match=r"\[a\].*density marks .* not this circuit's key"):
        bellman.read_bellman_params(path, density=Density(a, density.b, shape.inputs))
    b = density.b.copy()
    b[shape.inputs + int(np.flatnonzero(b[shape.inputs:])[0])] = False
    with pytest.raises(FormatError, match=r"\[b_g1\].*aux variables in B"):
        bellman.read_bellman_params(path, density=Density(density.a, b, shape.inputs))
    short = Density(density.a[:-1], density.b[:-1], shape.inputs)
    with pytest.raises(FormatError, match="another circuit's key"):
        bellman.read_bellman_params(path, density=short)


def test_damaged_points(key, tmp_path: Path) -> None:
    _, density, _, _, path = key
    data = path.read_bytes()
    lay = bellman.scan_bellman_params(path)

    def damaged(section: str, index: int, edit) -> Path:
        off = lay.sections[section][0] + index * (192 if section == "b_g2" else 96)
        blob = bytearray(data)
        edit(blob, off)
        out = tmp_path / f"{section}{index}.params"
        out.write_bytes(bytes(blob))
        return out

    def infinity(blob: bytearray, off: int) -> None:
        blob[off] = 0x40
        blob[off + 1 : off + 96] = bytes(95)

    def off_curve(blob: bytearray, off: int) -> None:
        blob[off + 95] ^= 1

    with pytest.raises(FormatError, match=r"\[a\].*point #3 is the point at infinity"):
        bellman.read_bellman_params(damaged("a", 3, infinity), density=density)
    with pytest.raises(FormatError, match=r"\[h\].*point #7 is not on the curve"):
        bellman.read_bellman_params(damaged("h", 7, off_curve), density=density)
    with pytest.raises(FormatError, match=r"\[b_g2\].*is not on the curve"):
        bellman.read_bellman_params(damaged("b_g2", 1, off_curve), density=density)
    # a count changed: the sections no longer tile the file
    blob = bytearray(data)
    pos = lay.sections["l"][0] - 4
    struct.pack_into(">I", blob, pos, lay.count("l") - 1)
    (tmp_path / "count.params").write_bytes(bytes(blob))
    with pytest.raises(FormatError, match="stray bytes|truncated|not a power of two"):
        bellman.read_bellman_params(tmp_path / "count.params", density=density)


def test_writer_checks_the_density(key, tmp_path: Path) -> None:
    shape, density, _, pk, _ = key
    b = density.b.copy()
    j = shape.inputs + int(np.flatnonzero(~b[shape.inputs:])[0])
    b[j] = True
    with pytest.raises(ValueError, match=f"variable {j}: the key has no point in B"):
        bellman.write_bellman_params(pk, tmp_path / "x.params",
                                     density=Density(density.a, b, shape.inputs))
    assert not list(tmp_path.iterdir())  # nothing half-written
    l_g1 = np.array(pk.l_g1)
    l_g1[4] = 0
    with pytest.raises(ValueError, match="l point #4 is at infinity"):
        bellman.write_bellman_params(dataclasses.replace(pk, l_g1=l_g1), tmp_path / "y.params")


def test_density_checks_itself(key) -> None:
    shape, density, _, _, _ = key
    a = density.a.copy()
    a[1] = False
    with pytest.raises(ValueError, match="every input"):
        Density(a, density.b, shape.inputs)
    with pytest.raises(ValueError, match="shape"):
        Density(density.a, density.b[:-1], shape.inputs)
    assert Density(density.a.view(np.uint8), density.b, shape.inputs) == density
    assert density.digest() != Density(density.a, ~density.b, shape.inputs).digest()


# --- location, .meta, digests -----------------------------------------------------------------


def test_parameter_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FIL_PROOFS_PARAMETER_CACHE", raising=False)
    assert files.parameter_dir() == Path("/var/tmp/filecoin-proof-parameters")
    monkeypatch.setenv("FIL_PROOFS_PARAMETER_CACHE", str(tmp_path))
    assert files.parameter_dir() == tmp_path
    assert files.parameter_dir(tmp_path / "x") == tmp_path / "x"
    f = files.parameter_files(PARAMS)
    assert f.params == tmp_path / f"{PARAMS.stem}.params" and f.sector_size == 2048
    assert files.parameter_files(PARAMS.stem + ".vk").stem == PARAMS.stem


def test_missing_file_names_file_and_directory(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("FIL_PROOFS_PARAMETER_CACHE", str(tmp_path))
    with pytest.raises(files.MissingParameterFile) as exc:
        files.load_verifying_key(PARAMS)
    msg = str(exc.value)
    assert f"{PARAMS.stem}.vk" in msg and f"{tmp_path} (FIL_PROOFS_PARAMETER_CACHE)" in msg
    monkeypatch.delenv("FIL_PROOFS_PARAMETER_CACHE")
    with pytest.raises(FileNotFoundError, match="the default; FIL_PROOFS_PARAMETER_CACHE is unset"):
        files.parameter_files(PARAMS).require("params")  # our test names are never there


def test_meta(tmp_path: Path) -> None:
    p = tmp_path / "x.meta"
    files.write_meta(p, 34359738368)
    assert p.read_bytes() == b'{"sector_size":34359738368}'
    assert files.read_meta(p) == 34359738368
    for bad in (b"{}", b"[1]", b'{"sector_size": "2KiB"}', b"nope"):
        p.write_bytes(bad)
        with pytest.raises(FormatError, match=str(p)):
            files.read_meta(p)


def test_digests(tmp_path: Path) -> None:
    data = bytes(range(256)) * 1000
    p = tmp_path / "x.params"
    p.write_bytes(data)
    assert files.file_digest(p, chunk=1000) == hashlib.blake2b(data).hexdigest()[:32]
    assert files.check_digest(p) is False  # no manifest lists it
    (tmp_path / "parameters.json").write_text(json.dumps({"x.params": {"digest": "00" * 16}}))
    with pytest.raises(FormatError, match=r"parameters.json records 0000"):
        files.check_digest(p)
    # a file under a published name is checked against the published manifest
    real = tmp_path / "pub"
    real.mkdir()
    name = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-" \
           "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f.vk"
    shutil.copy(p, real / name)
    with pytest.raises(FormatError, match="published parameters.json records dc1ade9929ade170"):
        files.check_digest(real / name)


def test_unwritable_cache_reads_in_memory_only_where_it_fits(key, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A key cache that cannot be written (a full disk): a key that fits in memory is read
    there; one that does not is a clear error naming both, not a process killed for memory."""
    import errno

    from cuzk.formats import cache

    _, density, _, pk, path = key

    def full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bellman, "convert_bellman_params", full)
    monkeypatch.setattr(cache, "available_memory", lambda: 1 << 40)
    _same(pk, load_proving_key(path, density=density, cache_dir=tmp_path / "a"))
    monkeypatch.setattr(cache, "available_memory", lambda: path.stat().st_size)
    with pytest.raises(OSError, match=r"cannot write the key cache .*No space left.*needs about "
                                      r"[0-9.]+ GiB, more than the [0-9.]+ GiB available"):
        load_proving_key(path, density=density, cache_dir=tmp_path / "b")
