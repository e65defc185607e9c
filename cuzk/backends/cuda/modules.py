"""The backend's kernels: their names, the NVRTC source and options, and the compiled modules
(NVRTC at first use, or a prebuilt cubin from the cache of cubin.py). No CuPy at import:
scripts/nvrtc_check.py enumerates the same modules without a GPU."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cuzk.backends.cuda import cubin
from cuzk.curves import Curve, get_curve

log = logging.getLogger(__name__)

NATIVE = Path(__file__).resolve().parents[2] / "native"
INCLUDE = NATIVE / "include"
KERNELS = NATIVE / "cuda" / "kernels.cu"

CURVE_STRUCT = {"bls12_381": "cuzk::bls12_381", "bn254": "cuzk::bn254"}

MSM_KERNELS = (
    "msm_histogram",
    "msm_scatter",
    "msm_acc_entries_tasks_inl",
    "msm_acc_entries_flat_inl",
    "msm_acc_entries_sorted_inl",
    "msm_acc_items_tasks_inl",
    "msm_acc_entries_buckets",
    "msm_acc_items_buckets",
    "msm_bucket_segments",
    "msm_reduce_groups",
    "msm_finish",
    "msm_table_build",
    "msm_aff_fwd",
    "msm_aff_bwd",
    "msm_aff_inv_reduce",
    "msm_aff_inv_invert",
    "msm_aff_inv_expand",
)
AUX_KERNELS = ("fixed_base_mul", "xyzz_sum_affine")
# The Fr module's kernels per curve (fr_kernels.cuh); ntt_tile has a template parameter RADIX
# (2 or 4): short names ntt_tile_r2 / ntt_tile_r4.
FR_KERNELS = ("fr_mul_canonical", "ntt_stage_twiddles", "ntt_tile_r2", "ntt_tile_r4", "csr_matvec")
NTT_TILE_RADICES = (2, 4)
_FR_INSTANCES = {f"ntt_tile_r{r}": ("ntt_tile", f", {r}") for r in NTT_TILE_RADICES}
# Every (kind, group) module the backend builds per curve (warm_up builds them all).
MODULES = (("fr", 0), ("msm", 1), ("msm", 2), ("aux", 1), ("aux", 2))

# (curve, kind, group) -> the module's kernels by short name. CudaBackend takes any such
# callable (the host-emulated tests pass kernels compiled for the CPU).
KernelSource = Callable[[Curve | str, str, int], Mapping[str, Any]]


def fr_name_expression(short: str, curve_struct: str) -> str:
    """NVRTC name expression of Fr kernel `short` for one curve: gpu::fr_mul_canonical<C>,
    gpu::ntt_tile<C, 4> for ntt_tile_r4."""
    base, extra = _FR_INSTANCES.get(short, (short, ""))
    return f"gpu::{base}<{curve_struct}{extra}>"


def module_names(curve: str, kind: str, group: int = 1) -> dict[str, str]:
    """Short kernel name -> NVRTC name expression of one module ("fr" ignores group)."""
    cs = CURVE_STRUCT[curve]
    if kind == "fr":
        return {k: fr_name_expression(k, cs) for k in FR_KERNELS}
    if kind in ("msm", "aux"):
        kernels = MSM_KERNELS if kind == "msm" else AUX_KERNELS
        return {k: f"gpu::{k}<{cs}, {group}>" for k in kernels}
    raise ValueError(f"unknown CUDA module kind {kind!r}")


def module_options(kind: str, group: int) -> tuple[str, ...]:
    """NVRTC options of one module beyond options(): G1's MSM module calls the base field's
    product and square instead of inlining them (ff.cuh CUZK_FP_NOINLINE: one copy per kernel,
    smaller and faster code); the Fr kernels, in their own module, keep theirs inlined."""
    if kind == "msm" and group == 1:
        return ("-DCUZK_FP_NOINLINE",)
    return ()


def module_label(curve: str, kind: str, group: int) -> str:
    """ "bls12_381 msm1", "bn254 fr": a module's name in logs."""
    return f"{curve} {kind}{group if kind != 'fr' else ''}"


def all_modules() -> list[tuple[str, str, int, dict[str, str]]]:
    """(curve, kind, group, names) of every module the backend can build."""
    return [
        (curve, kind, group, module_names(curve, kind, group))
        for curve in CURVE_STRUCT
        for kind, group in MODULES
    ]


def source() -> str:
    """kernels.cu with the headers' hash in front: CuPy's on-disk cache keys on the source
    text only, so an edit of a header recompiles."""
    h = hashlib.sha256()
    for p in sorted(INCLUDE.glob("cuzk/*")) + sorted(KERNELS.parent.glob("*.cuh")):
        h.update(p.read_bytes())
    return f"// headers {h.hexdigest()}\n" + KERNELS.read_text()


def options(extra: Sequence[str] = ()) -> tuple[str, ...]:
    """NVRTC options of every module, then `extra` (Tuning.nvrtc_options). -DCUZK_PTX_MUL: the
    device product on 32-bit PTX carry chains (ff.cuh), bit-identical to the portable code and
    much faster."""
    opts = ["--std=c++17", f"-I{INCLUDE}", f"-I{KERNELS.parent}", "--device-int128",
            "-DCUZK_PTX_MUL"]  # fmt: skip
    return tuple(opts) + tuple(extra)


class Module:
    """One compiled module with a fixed set of instantiated kernels, by short name."""

    def __init__(self, cp: Any, names: dict[str, str], label: str, opts: tuple[str, ...],
                 cubin_dir: str = "") -> None:  # fmt: skip
        self._names = names
        self._fns: dict[str, Any] = {}
        self.label = label
        self.cached = False  # loaded from the cubin cache
        src = source()
        d = cubin.cache_dir(cubin_dir)
        if d is not None and self._load_cached(cp, d, src, opts):
            return
        self._mod = cp.RawModule(code=src, options=opts, name_expressions=list(names.values()))

    def _load_cached(self, cp: Any, d: Path, src: str, opts: tuple[str, ...]) -> bool:
        """Load the module's cubin from d: True when every kernel resolved."""
        arch = cubin.arch_of(cp.cuda.Device().compute_capability)
        key = cubin.cache_key(src, opts, self._names.values(), arch)
        hit = cubin.lookup(d, key, self._names.values())
        if hit is None:
            log.info("CUDA module %s: no cubin in %s for %s, compiling", self.label, d, arch)
            return False
        path, lowered = hit
        try:
            mod = cp.RawModule(path=str(path))
            fns = {s: mod.get_function(lowered[e]) for s, e in self._names.items()}
        except Exception as e:  # e.g. a cubin from a toolkit newer than the driver
            log.warning(
                "CUDA module %s: cached cubin %s did not load (%s), compiling", self.label, path, e
            )
            return False
        self._mod, self._fns, self.cached = mod, fns, True
        log.info("CUDA module %s loaded from cubin cache %s", self.label, path)
        return True

    @property
    def names(self) -> dict[str, str]:
        return dict(self._names)

    def load_all(self) -> None:
        for short in self._names:
            self[short]

    def __getitem__(self, short: str) -> Any:
        fn = self._fns.get(short)
        if fn is None:
            fn = self._fns[short] = self._mod.get_function(self._names[short])
        return fn


class ModuleCache:
    """The modules of one backend, built on first use (a KernelSource)."""

    def __init__(self, cp: Any, nvrtc_options: Sequence[str] = (), cubin_dir: str = "") -> None:
        self._cp = cp
        self._extra = tuple(nvrtc_options)
        self._cubin_dir = cubin_dir
        self._lock = threading.Lock()
        self._modules: dict[tuple[str, str, int], Module] = {}

    def __call__(self, curve: Curve | str, kind: str, group: int = 1) -> Module:
        c = get_curve(curve)
        key = (c.name, kind, group if kind != "fr" else 0)
        with self._lock:
            mod = self._modules.get(key)
            if mod is None:
                mod = self._modules[key] = Module(
                    self._cp, module_names(c.name, kind, group), module_label(c.name, kind, group),
                    options(self._extra) + module_options(kind, group), self._cubin_dir,
                )  # fmt: skip
        return mod

    def warm_up(self, curves: Sequence[str] = ("bls12_381", "bn254")) -> None:
        """Compile (or load from CuPy's or the cubin cache) every module for these curves."""
        for name in curves:
            for kind, group in MODULES:
                self(name, kind, group).load_all()
