"""CPU checks of the ahead-of-time kernel cache (cuzk/backends/cuda/cubin.py): the key, the
module enumeration that scripts/nvrtc_check.py --cubin-dir shares with the backend, and the
module cache's load-or-compile choice against a stand-in for CuPy. Needs no GPU and no CuPy; the
one NVRTC compile skips without libnvrtc.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from cuzk.backends.cuda import Tuning, modules
from cuzk.backends.cuda import cubin as cuda_cubin
from cuzk.backends.cuda.modules import FR_KERNELS

ROOT = Path(__file__).resolve().parents[2]

SRC = "// headers abc\n__global__ void k() {}\n"
OPTS = ("--std=c++17", "-I/home/a/cuzk/native/include", "-I/home/a/native/cuda", "-DX")
NAMES = ["gpu::a<cuzk::bn254>", "gpu::b<cuzk::bn254>"]


def _script():
    spec = importlib.util.spec_from_file_location("nvrtc_check", ROOT / "scripts/nvrtc_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_key_changes_with_every_input():
    base = cuda_cubin.cache_key(SRC, OPTS, NAMES, "sm_90")
    assert base == cuda_cubin.cache_key(SRC, OPTS, NAMES, "sm_90")
    others = [
        cuda_cubin.cache_key(SRC + " ", OPTS, NAMES, "sm_90"),
        cuda_cubin.cache_key(SRC, OPTS + ("-DCUZK_ACC_MIN_BLOCKS=1",), NAMES, "sm_90"),
        cuda_cubin.cache_key(SRC, OPTS[:-1], NAMES, "sm_90"),
        cuda_cubin.cache_key(SRC, OPTS, NAMES[:1], "sm_90"),
        cuda_cubin.cache_key(SRC, OPTS, NAMES + ["gpu::c"], "sm_90"),
        cuda_cubin.cache_key(SRC, OPTS, NAMES, "sm_80"),
        cuda_cubin.cache_key(SRC, OPTS, NAMES, "sm_100"),
    ]
    assert len(set(others + [base])) == len(others) + 1


def test_key_ignores_include_paths_and_name_order():
    base = cuda_cubin.cache_key(SRC, OPTS, NAMES, "sm_90")
    moved = ("--std=c++17", "-I/opt/x/include", "-I/opt/x/cuda", "-DX")
    assert cuda_cubin.cache_key(SRC, moved, NAMES, "sm_90") == base
    split = ("-I", "/srv/inc", "--std=c++17", "--include-path=/q", "-DX")
    assert cuda_cubin.cache_key(SRC, split, NAMES, "sm_90") == base
    assert cuda_cubin.cache_key(SRC, OPTS, NAMES[::-1], "sm_90") == base
    assert cuda_cubin.portable_options(modules.options()) == [
        o for o in modules.options() if not o.startswith("-I")
    ]
    assert cuda_cubin.arch_of("90") == "sm_90"


def test_write_and_lookup(tmp_path):
    key = cuda_cubin.cache_key(SRC, OPTS, NAMES, "sm_90")
    assert cuda_cubin.lookup(tmp_path, key, NAMES) is None
    lowered = {n: f"_Z{i}" for i, n in enumerate(NAMES)}
    path = cuda_cubin.write(tmp_path / "sub", key, b"\x7fELF...", lowered)
    assert path.read_bytes() == b"\x7fELF..."
    assert cuda_cubin.lookup(tmp_path / "sub", key, NAMES) == (path, lowered)
    assert cuda_cubin.lookup(tmp_path / "sub", key, NAMES + ["gpu::other"]) is None
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == [f"{key}.cubin", f"{key}.json"]


def _expected(curve: str, kind: str, group: int) -> dict[str, str]:
    cs = {"bls12_381": "cuzk::bls12_381", "bn254": "cuzk::bn254"}[curve]
    if kind == "fr":  # ntt_tile's two radix instantiations: ntt_tile_r2 / ntt_tile_r4
        tmpl = {"ntt_tile_r2": "ntt_tile<{}, 2>", "ntt_tile_r4": "ntt_tile<{}, 4>"}
        assert set(tmpl) <= set(FR_KERNELS)
        return {k: "gpu::" + tmpl.get(k, k + "<{}>").format(cs) for k in FR_KERNELS}
    ks = modules.MSM_KERNELS if kind == "msm" else modules.AUX_KERNELS
    return {k: f"gpu::{k}<{cs}, {group}>" for k in ks}


class _Recorder:
    """Stands in for modules.Module: records the names and options a module is built from."""

    built: list[tuple[str, dict[str, str], tuple[str, ...]]] = []

    def __init__(self, cp, names: dict[str, str], label: str, opts: tuple[str, ...],
                 cubin_dir: str = "") -> None:  # fmt: skip
        self.names, self.opts = names, opts
        _Recorder.built.append((label, names, opts))

    def load_all(self) -> None:
        pass


def test_script_enumerates_what_the_backend_builds(monkeypatch):
    script = _script()
    jobs = script.module_jobs("sm_90", "/tmp/x", SRC, OPTS)
    monkeypatch.setattr(modules, "Module", _Recorder)
    _Recorder.built = []
    cache = modules.ModuleCache(None, ("-DX",))  # no device: only which modules it builds
    built, extras = [], []
    for curve, kind, group, names in modules.all_modules():
        assert names == _expected(curve, kind, group)
        mod = cache(curve, kind, group)
        built.append((modules.module_label(curve, kind, group), list(mod.names.values())))
        base = modules.options(("-DX",))
        assert mod.opts[: len(base)] == base
        extras.append(mod.opts[len(base) :])
    assert [(j[0], j[1]) for j in jobs] == built
    # each cubin is built with the options its module compiles with (a module's own included)
    assert [j[5] for j in jobs] == [OPTS + e for e in extras]
    assert extras.count(("-DCUZK_FP_NOINLINE",)) == 2  # G1's MSM module of each curve
    assert len(jobs) == len({j[0] for j in jobs}) == 2 * len(modules.MODULES)
    # warm_up builds exactly these modules
    _Recorder.built = []
    modules.ModuleCache(None).warm_up()
    warm = {(label, tuple(n.values())) for label, n, _ in _Recorder.built}
    assert warm == {(label, tuple(names)) for label, names in built}


def test_module_options():
    assert modules.module_options("msm", 1) == ("-DCUZK_FP_NOINLINE",)
    assert modules.module_options("msm", 2) == modules.module_options("fr", 0) == ()
    assert modules.module_options("aux", 1) == ()
    assert "-DCUZK_PTX_MUL" in modules.options()
    assert modules.options(("-DX=1", "-lineinfo"))[-2:] == ("-DX=1", "-lineinfo")
    assert Tuning.from_env({"CUZK_NVRTC_OPTIONS": " -DX=1  -lineinfo"}).nvrtc_options == (
        "-DX=1", "-lineinfo")


class _FakeRaw:
    """cupy.RawModule stand-in: path= modules resolve lowered names, unless told to fail."""

    fail = False
    made: list[dict] = []

    def __init__(self, code=None, options=None, name_expressions=None, path=None) -> None:
        self.kw = {"code": code, "options": options, "names": name_expressions, "path": path}
        _FakeRaw.made.append(self.kw)

    def get_function(self, name: str) -> str:
        if self.kw["path"] is not None and _FakeRaw.fail:
            raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")
        return f"fn:{name}"


@pytest.fixture
def fake_cp():
    _FakeRaw.fail, _FakeRaw.made = False, []
    dev = SimpleNamespace(compute_capability="90")
    return SimpleNamespace(RawModule=_FakeRaw, cuda=SimpleNamespace(Device=lambda: dev))


def test_module_loads_cubin_or_compiles(tmp_path, fake_cp, caplog):
    caplog.set_level(logging.INFO, logger="cuzk.backends.cuda")
    names = modules.module_names("bn254", "aux", 1)
    opts = modules.options()

    def module(cubin_dir: str = "") -> modules.Module:
        return modules.Module(fake_cp, names, "bn254 aux1", opts, cubin_dir)

    mod = module()
    assert not mod.cached and _FakeRaw.made[-1]["code"] == modules.source()
    assert mod["fixed_base_mul"] == "fn:gpu::fixed_base_mul<cuzk::bn254, 1>"

    assert not module(str(tmp_path)).cached  # empty cache: compiled
    assert Tuning.from_env({"CUZK_CUDA_CUBIN_DIR": str(tmp_path)}).cubin_dir == str(tmp_path)
    key = cuda_cubin.cache_key(modules.source(), opts, names.values(), "sm_90")
    lowered = {e: f"_Z{i}" for i, e in enumerate(names.values())}
    cuda_cubin.write(tmp_path, key, b"cubin", lowered)
    mod = module(str(tmp_path))
    assert mod.cached and _FakeRaw.made[-1]["path"] == str(tmp_path / f"{key}.cubin")
    assert mod["xyzz_sum_affine"] == "fn:" + lowered[names["xyzz_sum_affine"]]
    assert "loaded from cubin cache" in caplog.text

    fake_cp.cuda.Device().compute_capability = "100"  # another arch: another key
    assert not module(str(tmp_path)).cached
    fake_cp.cuda.Device().compute_capability = "90"
    _FakeRaw.fail = True  # the driver refuses the cubin: warn and compile
    mod = module(str(tmp_path))
    assert not mod.cached and _FakeRaw.made[-1]["code"] is not None
    assert any(r.levelno == logging.WARNING and "did not load" in r.message for r in caplog.records)


def test_nvrtc_cubin_of_smallest_module(tmp_path):
    script = _script()
    if script.find_lib() is None:
        pytest.skip("libnvrtc not found")
    curve, kind, group, names = next(m for m in modules.all_modules() if m[:3] == ("bn254", "aux", 1))
    source, options = modules.source(), modules.options()
    label, rc, log, _secs, written = script._job(
        ("x", list(names.values()), "sm_90", str(tmp_path), source, options)
    )
    assert rc == 0, log
    key = cuda_cubin.cache_key(source, options, names.values(), "sm_90")
    cubin, meta = cuda_cubin.paths(tmp_path, key)
    assert written == str(cubin) and cubin.read_bytes()[:4] == b"\x7fELF"
    lowered = json.loads(meta.read_text())
    assert set(lowered) == set(names.values())
    assert all(v.startswith("_Z") or v == e.split("::")[-1] for e, v in lowered.items())
    assert cuda_cubin.lookup(tmp_path, key, names.values()) == (cubin, lowered)
