"""The record cache: a circuit's R1CS and density recorded once, written to disk, and mapped
by every later load (the same matrices, labels and density as a fresh recording); its file
name follows the key and the code version; a damaged file is recorded again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from filecoin_params_circuit import circuit

from cuzk.filecoin.cs import record_cache, synthesize_density, synthesize_r1cs
from cuzk.formats.errors import FormatError
from cuzk.formats.r1cs_cache import load_r1cs, save_r1cs
from cuzk.groth16.qap import has_public_rows, with_public_rows


def _same_matrices(a, b) -> None:  # noqa: ANN001
    assert (a.n_vars, a.n_public, a.n_constraints, a.n_rows) == \
        (b.n_vars, b.n_public, b.n_constraints, b.n_rows)
    for m in "abc":
        x, y = getattr(a, m), getattr(b, m)
        assert x.n_cols == y.n_cols
        for k in ("indptr", "indices", "values"):
            assert np.array_equal(np.asarray(getattr(x, k)), np.asarray(getattr(y, k))), (m, k)


def test_round_trip_maps_the_same_matrices(tmp_path: Path) -> None:
    record_cache.forget()
    calls = []

    def counted(cs):  # noqa: ANN001, ANN202
        calls.append(1)
        return circuit(cs)

    r1cs, density = record_cache.cached_r1cs(counted, "gadgets", "k1", cache_dir=tmp_path)
    assert len(calls) == 1
    files = sorted(p.name for p in tmp_path.iterdir() if p.suffix == record_cache.SUFFIX)
    assert len(files) == 1 and files[0].startswith("gadgets-")
    fresh = with_public_rows(synthesize_r1cs(circuit))
    _same_matrices(r1cs, fresh)
    assert has_public_rows(r1cs)  # bellperson's input rows are stored: nothing to add per proof
    assert density == synthesize_density(circuit)[1]
    # mapped, read-only views of the file
    assert not r1cs.a.values.flags.writeable and not r1cs.a.values.flags.owndata
    labels = r1cs.labels["constraints"]
    assert [labels[i] for i in range(r1cs.n_constraints)] == \
        [fresh.labels["constraints"][i] for i in range(r1cs.n_constraints)]

    # the same process: the memo; a new process (forget): the file, not a recording
    assert record_cache.cached_r1cs(counted, "gadgets", "k1", cache_dir=tmp_path)[0] is r1cs
    record_cache.forget()
    again, d2 = record_cache.cached_r1cs(counted, "gadgets", "k1", cache_dir=tmp_path)
    assert len(calls) == 1 and again is not r1cs
    _same_matrices(again, fresh)
    assert d2 == density

    # another key (other circuit parameters), other sources: other files
    assert record_cache.cache_path("gadgets", "k2", cache_dir=tmp_path).name != files[0]
    assert record_cache.cache_path("gadgets", "k1", ("porep/circuit.py",),
                                   cache_dir=tmp_path).name != files[0]
    assert record_cache.cache_path("gadgets", "k1", cache_dir=tmp_path).name == files[0]


def test_damaged_file_is_recorded_again(tmp_path: Path) -> None:
    record_cache.forget()
    record_cache.cached_r1cs(circuit, "gadgets", "k", cache_dir=tmp_path)
    path = record_cache.cache_path("gadgets", "k", cache_dir=tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(FormatError):
        load_r1cs(path)
    record_cache.forget()
    r1cs, _ = record_cache.cached_r1cs(circuit, "gadgets", "k", cache_dir=tmp_path)
    _same_matrices(r1cs, with_public_rows(synthesize_r1cs(circuit)))
    record_cache.forget()


def test_file_format(tmp_path: Path) -> None:
    r1cs = with_public_rows(synthesize_r1cs(circuit))
    _, density = synthesize_density(circuit)
    p = tmp_path / "x.cuzkr1cs"
    save_r1cs(p, r1cs, density, meta={"what": "test"}, extra={"blob": np.arange(5, dtype=np.uint8)})
    f = load_r1cs(p)
    _same_matrices(f.r1cs, r1cs)
    assert f.density == density and f.meta == {"what": "test"}
    assert f.extra["blob"].tolist() == [0, 1, 2, 3, 4]
    key = tmp_path / "not-r1cs"
    key.write_bytes(b"CUZKKEY\0" + bytes(100))
    with pytest.raises(FormatError, match="not a cuzk R1CS cache"):
        load_r1cs(key)


def test_a_killed_recorders_temporary_file_is_removed(tmp_path: Path) -> None:
    """A recorder killed while writing leaves `.<name>.<random>` (32 GB for a 32 GiB PoRep
    partition's matrices); the next recorder of that file removes it, and no other file."""
    record_cache.forget()
    path = record_cache.cache_path("gadgets", "k9", (), tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    orphan = path.with_name(f".{path.name}.k1ll3d")
    orphan.write_bytes(b"\0" * 4096)
    other = path.with_name(f".other{record_cache.SUFFIX}.k1ll3d")
    other.write_bytes(b"x")
    record_cache.cached_r1cs(circuit, "gadgets", "k9", cache_dir=tmp_path)
    assert path.exists() and not orphan.exists() and other.exists()
