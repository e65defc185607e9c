"""Development keys written as Filecoin parameter files and read back by the same loader: a
proof made with the reloaded key verifies with the VK read from the `.vk` file alone, and a
tampered file is refused."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from filecoin_params_circuit import PARAMS, circuit, public_inputs

from cuzk.backends.cpu import native_module
from cuzk.filecoin.cs import synthesize_density, synthesize_r1cs, synthesize_witness
from cuzk.filecoin.params import dev, files
from cuzk.formats import bellman
from cuzk.formats.errors import FormatError
from cuzk.groth16.prover import prove
from cuzk.groth16.verifier import verify

BACKEND = "cpu" if native_module() is not None else "reference"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    d = tmp_path_factory.mktemp("dev-params")
    f = dev.development_parameters(PARAMS, circuit, directory=d, backend=BACKEND)
    shape, density = synthesize_density(circuit)
    return d, f, shape, density


def test_files_as_rust_fil_proofs_names_them(made) -> None:
    d, f, _, _ = made
    assert f.directory == d and f.stem == PARAMS.stem and f.stem.startswith("v28-")
    assert {p.name for p in d.iterdir()} == {PARAMS.filename(e) for e in ("params", "vk", "meta")} \
        | {"parameters.json"}
    assert f.meta.read_bytes() == b'{"sector_size":2048}'
    manifest = json.loads((d / "parameters.json").read_text())
    for p in (f.params, f.vk):
        entry = manifest[p.name]
        assert entry["digest"] == files.file_digest(p) and entry["sector_size"] == 2048
        assert "NOT FOR PRODUCTION" in entry["note"]
    # the .vk file is the params file's head (bellperson writes the same VerifyingKey)
    assert f.params.read_bytes().startswith(f.vk.read_bytes())
    before = f.params.stat().st_mtime_ns
    assert dev.development_parameters(PARAMS, circuit, directory=d) == f  # made once
    assert f.params.stat().st_mtime_ns == before


def test_reloaded_key_proves_and_vk_file_verifies(made, tmp_path: Path) -> None:
    d, _, shape, density = made
    r1cs = synthesize_r1cs(circuit)
    pk = files.load_parameters(PARAMS, density, directory=d, r1cs=r1cs, cache_dir=tmp_path)
    assert pk.meta.get("cache_path")  # converted once into the key cache, mapped from there
    w = synthesize_witness(circuit, n_inputs=shape.inputs)
    proof = prove(pk, w, backend=BACKEND)
    vk = files.load_verifying_key(PARAMS, directory=d)
    public = public_inputs()
    assert verify(vk, public, proof)
    bad = list(public)
    bad[random.randrange(len(bad))] += 1
    assert not verify(vk, bad, proof)
    head = files.params_verifying_key(PARAMS, directory=d)
    assert all((getattr(head, k) == getattr(vk, k)).all()
               for k in ("alpha_g1", "beta_g2", "gamma_g2", "delta_g2", "ic"))


def test_density_alone_gives_the_same_key(made, tmp_path: Path) -> None:
    d, _, _, density = made
    a = files.load_parameters(PARAMS, density, directory=d, cache=False)
    b = files.load_parameters(PARAMS, directory=d, r1cs=synthesize_r1cs(circuit),
                              cache_dir=tmp_path)
    for k in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1"):
        assert (getattr(a, k) == getattr(b, k)).all()
    with pytest.raises(ValueError, match="density"):
        files.load_parameters(PARAMS, directory=d)


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for p in src.iterdir():
        shutil.copy(p, dst / p.name)
    return dst


def test_tampering_is_detected(made, tmp_path: Path) -> None:
    d, f, _, density = made
    t = _copy(d, tmp_path / "t")
    params = t / f.params.name
    blob = bytearray(params.read_bytes())
    lay = bellman.scan_bellman_params(f.params)
    pos = lay.sections["l"][0] + 5 * 96 + 60  # a byte of l's sixth point
    blob[pos] ^= 0x10
    params.write_bytes(bytes(blob))
    with pytest.raises(FormatError, match=r"digest [0-9a-f]{32} but .*parameters.json records"):
        files.load_parameters(PARAMS, density, directory=t, cache_dir=tmp_path / "c")
    # without the manifest the damaged point itself is caught
    (t / "parameters.json").unlink()
    with pytest.raises(FormatError, match=r"\[l\].*point #5 is not on the curve"):
        files.load_parameters(PARAMS, density, directory=t, cache_dir=tmp_path / "c")
    # no half-converted copy left (the writers' lock file stays)
    assert [p.name for p in (tmp_path / "c").iterdir() if p.suffix != ".lock"] == []
    # the .vk file alone
    v = _copy(d, tmp_path / "v")
    vk = v / f.vk.name
    blob = bytearray(vk.read_bytes())
    blob[-3] ^= 0x01
    vk.write_bytes(bytes(blob))
    with pytest.raises(FormatError, match="digest"):
        files.load_verifying_key(PARAMS, directory=v)
    with pytest.raises(FormatError, match=r"\[vk ic\].*not in the prime-order subgroup"):
        files.load_verifying_key(PARAMS, directory=v, verify=False)
    # a .meta of another sector size
    m = _copy(d, tmp_path / "m")
    files.write_meta(m / f.meta.name, 4096)
    with pytest.raises(FormatError, match="records sector size 4096, the circuit's is 2048"):
        files.load_verifying_key(PARAMS, directory=m)


def test_published_files_win_over_development(made, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    d, f, _, density = made
    real = tmp_path / "real"
    real.mkdir()
    monkeypatch.setenv("FIL_PROOFS_PARAMETER_CACHE", str(real))
    got, is_dev = dev.parameters_or_development(PARAMS, circuit, dev_directory=d)
    assert is_dev and got == f
    for e in ("params", "vk"):
        shutil.copy(f.path(e), real / f.path(e).name)
    got, is_dev = dev.parameters_or_development(PARAMS, circuit, dev_directory=d)
    assert not is_dev and got.directory == real
    # found through the environment, with no manifest there (nothing to check against)
    pk = files.load_parameters(PARAMS, density, cache_dir=tmp_path / "c")
    assert pk.n_vars == density.n_vars
