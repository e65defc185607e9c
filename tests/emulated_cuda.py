"""An emulated CUDA device: the CUDA backend's own kernels compiled for the host, and a numpy
stand-in for CuPy, so that `CudaBackend` itself (and the engine over it) runs without a GPU.
(Long: the stand-in must cover all of CuPy that the backend calls, in one place.)

Kernels. Every module the backend loads (modules.MODULES on both curves: the MSM for G1 and
G2, aux, fr) is compiled by the host C++ compiler from kernels.cu (tests/native/
cuda_kernels_host.cpp shims CUDA's built-ins) with -DCUZK_EMULATE_DEVICE_PRODUCT, so every
field product is the exact emulation of the device's. Each kernel is wrapped as an extern "C"
function that runs its launch's grid one thread at a time (kernels with shared memory one
thread per block, whose stride loops then cover the tile). The libraries are built once, in
parallel, and cached under <CUZK_TEST_CACHE>/host-cuda keyed by a hash of the sources, the
compiler and its options; CUZK_HOST_MSM_DEFINES adds options (a kernel variant's -D define,
as NVRTC would get it through CUZK_NVRTC_OPTIONS).

Launches (HostKernel) check what the GPU would refuse or what CuPy would pass differently:
device arrays of the pointee type or the null pointer, numpy scalars of the parameter's exact
width, block and grid limits, dynamic shared memory within the kernel's opt-in; after each,
that const inputs came back unchanged (strict) and no write went past an array's end.

CuPy (EmulatedCupy, one device per instance): device arrays are numpy memory (DeviceArray,
with CuPy's .get()/.set(); mixing them with host arrays in arithmetic is a TypeError, as in
CuPy), allocations count against a configurable memory size and past it raise the stand-in
of cupy.cuda.memory.OutOfMemoryError, pinned host memory is known to pointerGetAttributes,
and `lose()` makes the sticky error a faulting kernel leaves (a CUDARuntimeError whose status
errors.py names lost) that every later launch, allocation, copy and synchronize raises.
Work runs at once on the calling thread: streams and events keep the order of the host code
(a wait for an event never recorded fails) and a log of copies, waits and launches.

What it cannot show: races between threads of a launch or between streams, and timing.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.backends.cuda import CudaBackend, Tuning, modules
from cuzk.curves import get_curve

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "tests" / "native" / "cuda_kernels_host.cpp"
CACHE_DIR = Path(os.environ.get("CUZK_TEST_CACHE", ROOT / ".cache" / "test-artifacts")) / "host-cuda"
CXX = shutil.which("g++") or shutil.which("clang++")
# -O1: these libraries are rebuilt whenever a kernel or header changes, and their run time at
# test sizes is small next to -O2's build time.
CXXFLAGS = ("-std=c++17", "-O1", "-fPIC", "-shared", "-fvisibility=hidden",
            "-DCUZK_EMULATE_DEVICE_PRODUCT")  # fmt: skip
# Every module the backend loads, as (curve, kind, group); "fr" has group 0.
ALL_MODULES = tuple((curve, kind, group) for curve in modules.CURVE_STRUCT
                    for kind, group in modules.MODULES)  # fmt: skip
SHARED_DEFAULT = 48 << 10  # dynamic shared memory a launch may use without the opt-in
SHARED_OPTIN_MAX = 227 << 10  # the most a kernel may opt in to
GUARD = 64  # bytes after every device allocation, checked after each launch
STICKY_STATUS = 700  # cudaErrorIllegalAddress


# ---- the kernels' signatures -------------------------------------------------------------------

_SIG = re.compile(
    r"template <[^>]*>\s*__global__ void\s+"
    r"(?:(?:__launch_bounds__\([^)]*\)|CUZK_ACC_BOUNDS\(G\))\s*)?"
    r"(\w+)\(([^)]*)\)\s*\{"
)


@dataclass(frozen=True)
class Signature:
    params: tuple[tuple[str, str], ...]  # (type, name), e.g. ("const uint64_t*", "scalars")
    shared: bool  # the body uses shared memory: one thread per block


def _body(text: str, open_brace: int) -> str:
    depth = 0
    for i in range(open_brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_brace : i + 1]
    raise ValueError("unbalanced braces in a kernel body")


@functools.cache
def kernel_signatures() -> dict[str, Signature]:
    """Every __global__ kernel template of kernels.cu and the headers it includes, read from the
    source, so the wrappers and the launch checks follow the kernels' signatures."""
    sigs = {}
    for path in (modules.KERNELS, *sorted(modules.KERNELS.parent.glob("*.cuh"))):
        text = path.read_text()
        for m in _SIG.finditer(text):
            params = []
            for p in m.group(2).split(","):
                typ, name = re.fullmatch(r"\s*(.*?)\s*(\w+)\s*", p, re.S).groups()
                params.append((" ".join(typ.split()), name))
            sigs[m.group(1)] = Signature(tuple(params), "__shared__" in _body(text, m.end() - 1))
    return sigs


def _base_name(expr: str) -> str:
    """gpu::ntt_tile<cuzk::bn254, 4> -> ntt_tile"""
    m = re.fullmatch(r"gpu::(\w+)<.*>", expr)
    assert m, expr
    return m.group(1)


def module_kernels(curve: str, kind: str, group: int) -> dict[str, tuple[str, Signature]]:
    """Short name -> (NVRTC name expression, signature) of one module's kernels."""
    sigs = kernel_signatures()
    out = {}
    for short, expr in modules.module_names(curve, kind, group).items():
        base = _base_name(expr)
        assert base in sigs, f"no `template <...> __global__` signature for {base}"
        out[short] = (expr, sigs[base])
    return out


def wrappers(curve: str, kind: str, group: int) -> str:
    lines = []
    for short, (expr, sig) in module_kernels(curve, kind, group).items():
        decl = ", ".join(f"{t} {n}" for t, n in sig.params)
        args = ", ".join(n for _, n in sig.params)
        macro = "WRAP_SHARED" if sig.shared else "WRAP"
        lines.append(f"{macro}({short}, ({decl}), ({expr}), ({args}))")
    return "\n".join(lines) + "\n"


# ---- building the libraries --------------------------------------------------------------------


def _extra_defines() -> list[str]:
    return os.environ.get("CUZK_HOST_MSM_DEFINES", "").split()


_compiler_id: str | None = None


def _compiler_version() -> str:
    global _compiler_id
    if _compiler_id is None:
        out = subprocess.run([CXX, "--version"], capture_output=True, text=True)
        _compiler_id = out.stdout
    return _compiler_id


def _sources_digest() -> bytes:
    h = hashlib.sha256()
    files = [HARNESS, *sorted(modules.INCLUDE.glob("cuzk/*")),
             *sorted(modules.KERNELS.parent.glob("*.cu*"))]  # fmt: skip
    for p in files:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.digest()


def module_label(curve: str, kind: str, group: int) -> str:
    return f"{curve}-{kind}{group if kind != 'fr' else ''}"


def library_path(curve: str, kind: str, group: int, digest: bytes | None = None) -> Path:
    """Where one module's library is cached (its name carries the hash of everything it is
    built from)."""
    h = hashlib.sha256(digest if digest is not None else _sources_digest())
    for part in (wrappers(curve, kind, group), _compiler_version(), *CXXFLAGS,
                 *_extra_defines()):  # fmt: skip
        h.update(part.encode())
    return CACHE_DIR / f"{module_label(curve, kind, group)}-{h.hexdigest()[:16]}.so"


def _compile(curve: str, kind: str, group: int, lib: Path) -> tuple[float, str]:
    """Build one library into the cache (atomically: a concurrent session builds its own copy
    and the last rename wins). Returns (seconds, compiler errors)."""
    tmp = Path(f"{lib}.tmp{os.getpid()}-{threading.get_ident()}")
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        (tmp / "kernel_wrappers.inc").write_text(wrappers(curve, kind, group))
        out = tmp / lib.name
        cmd = [CXX, *CXXFLAGS, *_extra_defines(), f"-I{modules.INCLUDE}",
               f"-I{modules.KERNELS.parent}", f"-I{tmp}", str(HARNESS), "-o", str(out)]  # fmt: skip
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            return time.perf_counter() - t0, res.stderr[-4000:]
        os.replace(out, lib)
        return time.perf_counter() - t0, ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _drop_stale(label: str, keep: Path, days: float = 3.0) -> None:
    """Other builds of the module not used for `days` (sources since changed)."""
    for p in CACHE_DIR.glob(f"{label}-*.so"):
        if p != keep and time.time() - p.stat().st_mtime > days * 86400:
            p.unlink(missing_ok=True)


def build(wanted: Iterable[tuple[str, str, int]] = ALL_MODULES,
          log: Callable[[str], None] = print) -> dict[tuple[str, str, int], Path]:
    """The libraries of the wanted modules, compiling the missing ones side by side (one
    compiler per core)."""
    if CXX is None:
        raise RuntimeError("no host C++ compiler")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    digest = _sources_digest()
    paths = {m: library_path(*m, digest=digest) for m in wanted}
    missing = [m for m, p in paths.items() if not p.exists()]
    if missing:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
            done = list(pool.map(lambda m: _compile(*m, paths[m]), missing))
        errs = [f"{module_label(*m)}:\n{err}" for m, (_, err) in zip(missing, done, strict=True)
                if err]  # fmt: skip
        if errs:
            raise RuntimeError("host build of the CUDA kernels failed:\n" + "\n".join(errs))
        log(f"emulated CUDA kernels: {len(missing)} modules compiled in "
            f"{time.perf_counter() - t0:.1f} s (" + ", ".join(
                f"{module_label(*m)} {s:.0f} s" for m, (s, _) in zip(missing, done, strict=True))
            + ")")  # fmt: skip
    for m, p in paths.items():
        os.utime(p)
        _drop_stale(module_label(*m), p)
    return paths


class Libraries:
    """The loaded libraries by module; one launch at a time per library (a launch's block and
    thread indices are the library's globals)."""

    def __init__(self, paths: dict[tuple[str, str, int], Path]) -> None:
        self.paths = paths
        self._libs: dict[tuple[str, str, int], ctypes.CDLL] = {}
        self.locks: dict[tuple[str, str, int], threading.Lock] = {}
        self._lock = threading.Lock()

    def __call__(self, curve: str, kind: str, group: int) -> ctypes.CDLL:
        key = (curve, kind, group if kind != "fr" else 0)
        with self._lock:
            lib = self._libs.get(key)
            if lib is None:
                lib = self._libs[key] = ctypes.CDLL(str(self.paths[key]))
                for f in ("h_dropped_carries", "h_warp_faults", "h_shared_bytes"):
                    getattr(lib, f).restype = ctypes.c_ulonglong
                self.locks[key] = threading.Lock()
            return lib

    def loaded(self) -> dict[tuple[str, str, int], ctypes.CDLL]:
        with self._lock:
            return dict(self._libs)

    def emulation_counts(self) -> dict[tuple[str, str, int], tuple[int, int]]:
        """(carries the emulated product dropped, warp intrinsics that read another lane) of
        every loaded library: both must stay where they were."""
        return {k: (lib.h_dropped_carries(), lib.h_warp_faults())
                for k, lib in self.loaded().items()}

    def set_reverse(self, on: bool) -> None:
        """Every later launch runs its blocks and threads in reverse order."""
        for key in ALL_MODULES:
            self(*key).h_set_reverse(int(on))


# ---- device memory and arrays ------------------------------------------------------------------


class OutOfMemoryError(MemoryError):
    """cupy.cuda.memory.OutOfMemoryError."""

    def __init__(self, size: int, total: int) -> None:
        super().__init__(f"Out of memory allocating {size:,} bytes "
                         f"(allocated so far: {total:,} bytes).")  # fmt: skip
        self.size, self.total = size, total


class CUDARuntimeError(RuntimeError):
    """cupy.cuda.runtime.CUDARuntimeError: `status` is the CUDA error code."""

    def __init__(self, status: int) -> None:
        super().__init__(f"cudaError {status}")
        self.status = status


class CUDADriverError(RuntimeError):
    """cupy.cuda.driver.CUDADriverError."""

    def __init__(self, status: int) -> None:
        super().__init__(f"CUDA_ERROR {status}")
        self.status = status


class DeviceArray(np.ndarray):
    """A device array: numpy memory with CuPy's .get() and .set(). An element or a reduction is
    a 0-d device array, as in CuPy; arithmetic with a host array is a TypeError, as in CuPy."""

    def get(self, stream: Any = None) -> np.ndarray:
        return np.array(self.view(np.ndarray))

    def set(self, host: np.ndarray, stream: Any = None) -> None:
        """An upload (cupy.ndarray.set): same shape and dtype, C-contiguous host memory."""
        assert not isinstance(host, DeviceArray), "set() from a device array"
        assert host.shape == self.shape and host.dtype == self.dtype, (host.shape, self.shape)
        assert host.flags.c_contiguous and self.flags.c_contiguous
        emu = _owner(self)
        if emu is not None:
            emu.check()
            emu.copied(stream, host)
        self.view(np.ndarray)[...] = host

    def __getitem__(self, key: Any) -> Any:
        r = super().__getitem__(key)
        return r if isinstance(r, np.ndarray) else _dev(r)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        def plain(x: Any) -> Any:
            if isinstance(x, DeviceArray):
                return x.view(np.ndarray)
            if isinstance(x, np.ndarray) and x.ndim > 0:
                raise TypeError(f"{ufunc.__name__}: a host array ({type(x).__name__}) with a "
                                "device array")  # fmt: skip
            return x

        args = [plain(x) for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(plain(x) for x in kwargs["out"])
        res = getattr(ufunc, method)(*args, **kwargs)
        if isinstance(res, tuple):
            return tuple(_dev(r) for r in res)
        return _dev(res)


def _dev(x: Any) -> DeviceArray:
    return np.asarray(x).view(DeviceArray)


# The device a buffer was allocated on, by the buffer's id (weakly: gone with the buffer).
_owners: dict[int, tuple[weakref.ref, weakref.ref]] = {}


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _owner(a: np.ndarray) -> EmulatedCupy | None:
    hit = _owners.get(id(_root(a)))
    if hit is None or hit[0]() is not _root(a):
        return None
    return hit[1]()


def _guard_ok(a: np.ndarray) -> bool:
    root = _root(a)
    hit = _owners.get(id(root))
    if hit is None or hit[0]() is not root:
        return True  # not allocated by a device (a derived array)
    return bool((root[-GUARD:] == 0x5A).all())


class MemoryPool:
    """cupy.get_default_memory_pool(): blocks are not cached (freed memory goes back at once),
    so it holds no free bytes; free_all_blocks is counted."""

    def __init__(self, emu: EmulatedCupy) -> None:
        self._emu = emu
        self.releases = 0

    def free_bytes(self) -> int:
        return 0

    def used_bytes(self) -> int:
        return self._emu.used

    def total_bytes(self) -> int:
        return self._emu.used

    def free_all_blocks(self, stream: Any = None) -> None:
        self.releases += 1


class PinnedMemoryPool:
    def __init__(self) -> None:
        self.releases = 0

    def free_all_blocks(self) -> None:
        self.releases += 1


# ---- streams, events, the device ---------------------------------------------------------------


class Stream:
    """cupy.cuda.Stream: entering it makes it the thread's current stream."""

    def __init__(self, emu: EmulatedCupy, label: str) -> None:
        self._emu = emu
        self.label = label
        self.copies = 0  # uploads queued on it (ndarray.set(stream=...))
        self.waits = 0  # events waited for

    def synchronize(self) -> None:
        self._emu.check()

    def wait_event(self, event: Event) -> None:
        assert event.recorded, "waiting for an event never recorded"
        self._emu.check()
        self.waits += 1
        self._emu.log.append(f"wait {self.label}")

    def record(self, event: Event | None = None) -> Event:
        ev = event if event is not None else Event(self._emu)
        ev.record(self)
        return ev

    def __enter__(self) -> Stream:
        self._emu._stack().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        popped = self._emu._stack().pop()
        assert popped is self, "streams left out of order"


class Event:
    def __init__(self, emu: EmulatedCupy, disable_timing: bool = False) -> None:
        self._emu = emu
        self.recorded = False
        self.t = 0.0

    def record(self, stream: Stream | None = None) -> None:
        self._emu.check()
        self.recorded = True
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        self._emu.check()

    def query(self) -> bool:
        return True

    @property
    def done(self) -> bool:
        return True


class Device:
    """cupy.cuda.Device: this emulated GPU (its index), as a scope and for synchronize."""

    def __init__(self, emu: EmulatedCupy, index: int | None = None) -> None:
        if index is not None and int(index) != emu.index:
            raise CUDARuntimeError(101)  # cudaErrorInvalidDevice: not this device
        self._emu = emu
        self.id = emu.index
        self.compute_capability = "90"

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        self._emu.check()

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class _Attributes:
    def __init__(self, kind: int) -> None:
        self.type = kind


class _Runtime:
    """cupy.cuda.runtime"""

    CUDARuntimeError = CUDARuntimeError

    def __init__(self, emu: EmulatedCupy) -> None:
        self._emu = emu

    def memGetInfo(self) -> tuple[int, int]:  # noqa: N802 (CuPy's name)
        emu = self._emu
        emu.check()
        return max(0, emu.capacity - emu.used), emu.capacity

    def pointerGetAttributes(self, ptr: int) -> _Attributes:  # noqa: N802
        return _Attributes(1 if self._emu.is_pinned_address(ptr) else 0)

    def getDeviceCount(self) -> int:  # noqa: N802
        return 1

    def getDevice(self) -> int:  # noqa: N802
        return self._emu.index

    def deviceGetAttribute(self, attr: int, device: int) -> int:  # noqa: N802
        return 50 << 20 if attr == 38 else 0  # cudaDevAttrL2CacheSize


class _Driver:
    CUDADriverError = CUDADriverError


class _MemoryModule:
    OutOfMemoryError = OutOfMemoryError


class _Cuda:
    """cupy.cuda"""

    def __init__(self, emu: EmulatedCupy) -> None:
        self._emu = emu
        self.runtime = _Runtime(emu)
        self.driver = _Driver()
        self.memory = _MemoryModule()

    def Device(self, index: int | None = None) -> Device:  # noqa: N802 (CuPy's name)
        return Device(self._emu, index)

    def Stream(self, null: bool = False, non_blocking: bool = False) -> Stream:  # noqa: N802
        emu = self._emu
        emu.check()
        s = Stream(emu, f"stream{len(emu.streams)}")
        emu.streams.append(s)
        return s

    def Event(self, block: bool = False, disable_timing: bool = False,  # noqa: N802
              interprocess: bool = False) -> Event:  # fmt: skip
        return Event(self._emu, disable_timing)

    def get_current_stream(self) -> Stream:
        return self._emu.current_stream()

    @staticmethod
    def get_elapsed_time(start: Event, end: Event) -> float:
        return (end.t - start.t) * 1e3


class EmulatedCupy:
    """The bits of CuPy the CUDA backend uses, for one emulated device of `capacity` bytes.

    Tests watch it through `used`, `peak`, `log` (uploads from pinned memory "copy", stream
    waits "wait <label>" and kernel launches by short name, in order), `uploads` (every host
    array copied up: its id and bytes), `streams` (every Stream made) and the pools'
    `releases`; they change it with `capacity`, `occupy` (memory held outside the pool),
    `fail_alloc` (injected out-of-memory errors), `on_launch` hooks (a launch's error, a
    wait) and `lose` / `lose_on` (a sticky error)."""

    uint32, uint64, int32, int64, bool_ = np.uint32, np.uint64, np.int32, np.int64, np.bool_
    ndarray = DeviceArray

    def __init__(self, capacity: int = 80 << 30, index: int = 0) -> None:
        self.capacity = capacity
        self.index = index
        self.used = 0
        self.peak = 0
        self.log: list[str] = []
        self.uploads: list[tuple[int, int]] = []  # (id of the host array, bytes) per upload
        self.streams: list[Stream] = []
        self.cuda = _Cuda(self)
        self.lost: int | None = None  # the sticky error's status once lost
        self._mem_lock = threading.Lock()
        self._pool = MemoryPool(self)
        self._pinned_pool = PinnedMemoryPool()
        self._pinned: dict[int, tuple[int, weakref.ref]] = {}  # address -> (bytes, buffer)
        self._local = threading.local()
        self._null = Stream(self, "null")
        self._oom: list[list[int]] = []  # injected: [times left, min bytes]
        self._hooks: list[Callable[[str], None]] = []

    # -- failures ------------------------------------------------------------------------------

    def check(self) -> None:
        """Raise the sticky error once the device is lost."""
        if self.lost is not None:
            raise CUDARuntimeError(self.lost)

    def lose(self, status: int = STICKY_STATUS) -> CUDARuntimeError:
        """Leave the device unusable: every later launch, allocation, copy and synchronize
        raises CUDARuntimeError(status). Returns that error."""
        self.lost = status
        return CUDARuntimeError(status)

    def on_launch(self, hook: Callable[[str], None]) -> None:
        """Run hook(kernel's short name) before every launch on this device; it may raise (a
        launch's error) or wait."""
        self._hooks.append(hook)

    def lose_on(self, kernel: str | None = None, after: int = 0,
                then: Callable[[], None] | None = None) -> None:  # fmt: skip
        """The (after+1)-th launch of `kernel` (None: of any kernel) from now faults: the device
        is lost, then() is called and that launch raises the sticky error."""
        left = [after]
        guard = threading.Lock()

        def hook(name: str) -> None:
            if kernel is not None and name != kernel:
                return
            with guard:
                fire = left[0] == 0
                left[0] -= 1
            if fire:
                err = self.lose()
                if then is not None:
                    then()
                raise err

        self.on_launch(hook)

    def fail_alloc(self, times: int = 1, min_bytes: int = 0) -> None:
        """The next `times` allocations of at least min_bytes raise OutOfMemoryError."""
        with self._mem_lock:
            self._oom.append([times, min_bytes])

    def launching(self, name: str) -> None:
        """Before a launch: the sticky error, then the hooks."""
        self.check()
        for hook in list(self._hooks):
            hook(name)
        self.log.append(name)

    # -- memory --------------------------------------------------------------------------------

    def _take(self, nbytes: int) -> None:
        with self._mem_lock:
            for inj in self._oom:
                if inj[0] > 0 and nbytes >= inj[1]:
                    inj[0] -= 1
                    raise OutOfMemoryError(nbytes, self.used)
            if self.used + nbytes > self.capacity:
                raise OutOfMemoryError(nbytes, self.used)
            self.used += nbytes
            self.peak = max(self.peak, self.used)

    def _give(self, nbytes: int) -> None:
        with self._mem_lock:
            self.used -= nbytes

    def occupy(self, free_left: int) -> Callable[[], None]:
        """Hold all but `free_left` of the free memory outside the pool (another process's
        allocations); returns the call that gives it back."""
        with self._mem_lock:
            held = max(0, self.capacity - self.used - int(free_left))
            self.used += held
        done = [False]

        def give_back() -> None:
            if not done[0]:
                done[0] = True
                self._give(held)

        return give_back

    def reset_peak(self) -> None:
        with self._mem_lock:
            self.peak = self.used

    def _alloc(self, shape: Any, dtype: Any, fill: int) -> DeviceArray:
        self.check()
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        self._take(nbytes)
        buf = np.full(nbytes + GUARD, 0x5A, dtype=np.uint8)
        buf[:nbytes] = fill
        weakref.finalize(buf, self._give, nbytes)
        key = id(buf)
        _owners[key] = (weakref.ref(buf), weakref.ref(self))
        weakref.finalize(buf, _owners.pop, key, None)
        return buf[:nbytes].view(dtype).reshape(shape).view(DeviceArray)

    def _adopt(self, host: np.ndarray) -> DeviceArray:
        """A device copy of a host result (counted as an allocation)."""
        out = self._alloc(host.shape, host.dtype, 0)
        out.view(np.ndarray)[...] = host
        return out

    def empty(self, shape: Any, dtype: Any = np.float64) -> DeviceArray:
        # not zeros: a kernel that reads memory nobody wrote gets garbage, as on the device
        return self._alloc(shape, dtype, 0xA5)

    def zeros(self, shape: Any, dtype: Any = np.float64) -> DeviceArray:
        return self._alloc(shape, dtype, 0)

    def full(self, shape: Any, value: Any, dtype: Any = None) -> DeviceArray:
        return self._adopt(np.full(shape, value, dtype=dtype))

    def asarray(self, a: Any, dtype: Any = None) -> DeviceArray:
        if isinstance(a, DeviceArray) and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        return self._upload(a, np.asarray(_plain(a), dtype=dtype))

    def ascontiguousarray(self, a: Any, dtype: Any = None) -> DeviceArray:
        if isinstance(a, DeviceArray) and a.flags.c_contiguous and (
                dtype is None or np.dtype(dtype) == a.dtype):  # fmt: skip
            return a
        return self._upload(a, np.ascontiguousarray(_plain(a), dtype=dtype))

    def _upload(self, src: Any, host: np.ndarray) -> DeviceArray:
        """A device copy of host (src converted); a host source is an upload (`uploads`)."""
        out = self._adopt(host)
        if isinstance(src, np.ndarray) and not isinstance(src, DeviceArray):
            self.uploads.append((id(src), int(host.nbytes)))
        return out

    @staticmethod
    def asnumpy(a: Any) -> np.ndarray:
        return np.array(_plain(a))

    def cumsum(self, a: Any, dtype: Any = None, out: Any = None) -> DeviceArray:
        if out is not None:
            np.cumsum(_plain(a), dtype=dtype, out=_plain(out))
            return out
        return self._adopt(np.cumsum(_plain(a), dtype=dtype))

    def where(self, cond: Any, a: Any, b: Any) -> DeviceArray:
        return self._adopt(np.where(_plain(cond), _plain(a), _plain(b)))

    def arange(self, *args: Any, dtype: Any = None) -> DeviceArray:
        return self._adopt(np.arange(*args, dtype=dtype))

    def flatnonzero(self, a: Any) -> DeviceArray:
        return self._adopt(np.flatnonzero(_plain(a)))

    def argsort(self, a: Any) -> DeviceArray:
        return self._adopt(np.argsort(_plain(a), kind="stable"))

    def argmax(self, a: Any) -> DeviceArray:
        return _dev(np.argmax(_plain(a)))

    def stack(self, arrays: Sequence[Any]) -> DeviceArray:
        return self._adopt(np.stack([_plain(a) for a in arrays]))

    def concatenate(self, arrays: Sequence[Any]) -> DeviceArray:
        return self._adopt(np.concatenate([_plain(a) for a in arrays]))

    def get_default_memory_pool(self) -> MemoryPool:
        return self._pool

    def get_default_pinned_memory_pool(self) -> PinnedMemoryPool:
        return self._pinned_pool

    # -- pinned host memory --------------------------------------------------------------------

    def alloc_pinned(self, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
        """cupyx.empty_pinned: a host array pointerGetAttributes calls page-locked."""
        arr = np.empty(shape, dtype=dtype)
        addr = int(arr.__array_interface__["data"][0])
        if arr.nbytes:
            self._pinned[addr] = (int(arr.nbytes), weakref.ref(arr))
            weakref.finalize(arr, self._pinned.pop, addr, None)
        return arr

    def is_pinned_address(self, ptr: int) -> bool:
        for addr, (n, ref) in list(self._pinned.items()):
            if addr <= ptr < addr + n and ref() is not None:
                return True
        return False

    # -- streams -------------------------------------------------------------------------------

    def _stack(self) -> list[Stream]:
        st = getattr(self._local, "streams", None)
        if st is None:
            st = self._local.streams = []
        return st

    def current_stream(self) -> Stream:
        st = self._stack()
        return st[-1] if st else self._null

    def copied(self, stream: Stream | None, host: np.ndarray) -> None:
        """An upload from pinned memory queued on `stream` (None: the current one)."""
        (stream if stream is not None else self.current_stream()).copies += 1
        self.log.append("copy")
        self.uploads.append((id(host), int(host.nbytes)))


def _plain(a: Any) -> Any:
    return a.view(np.ndarray) if isinstance(a, DeviceArray) else a


# ---- launches ----------------------------------------------------------------------------------

_SCALARS = {"uint32_t": (np.uint32, ctypes.c_uint32), "int": (np.int32, ctypes.c_int32)}
_POINTEE = {"uint64_t": np.uint64, "uint32_t": np.uint32, "int64_t": np.int64}


class HostKernel:
    """A launcher with RawKernel's call over one wrapped kernel; see the module docstring for
    what it checks."""

    def __init__(self, owner: EmulatedKernels, key: tuple[str, str, int], short: str,
                 sig: Signature) -> None:  # fmt: skip
        self.owner, self.key, self.name, self.sig = owner, key, short, sig
        lib = owner.libraries(*key)
        self._fn = getattr(lib, f"h_{short}")
        self._fn.restype = None
        self._lib_lock = owner.libraries.locks[key]
        self._shared_cap = int(lib.h_shared_bytes())
        self._optin = SHARED_DEFAULT

    # CuPy's RawKernel attribute (cudaFuncAttributeMaxDynamicSharedMemorySize)
    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        return self._optin

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        if value > SHARED_OPTIN_MAX:
            raise CUDARuntimeError(1)  # cudaErrorInvalidValue
        self._optin = int(value)

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: Sequence[Any],
                 shared_mem: int = 0) -> None:  # fmt: skip
        emu = self.owner.cupy
        params = self.sig.params
        assert len(args) == len(params), self.name
        # the device's launch limits: a launch the GPU would refuse fails here too
        assert 1 <= block[0] <= 1024 and 1 <= grid[0] < 2**31, (self.name, grid, block)
        assert shared_mem <= self._optin, (self.name, shared_mem, self._optin)
        assert shared_mem <= self._shared_cap and (shared_mem == 0 or self.sig.shared), self.name
        conv, const, arrays, written = [], [], [], []
        for (typ, pname), a in zip(params, args, strict=True):
            where = f"{self.name}({pname})"
            if typ.endswith("*"):
                if isinstance(a, np.uint64) and int(a) == 0:  # launch.NULL
                    conv.append(ctypes.c_void_p(None))
                    continue
                assert isinstance(a, DeviceArray), f"{where}: not a device array"
                owner = _owner(a)
                assert owner is None or owner is emu, f"{where}: another device's array"
                pointee = typ.removeprefix("const ").removesuffix("*").strip()
                assert a.dtype == _POINTEE[pointee] and a.flags.c_contiguous, where
                conv.append(ctypes.c_void_p(a.ctypes.data))
                arrays.append(a)
                if not typ.startswith("const "):
                    written.append(a)
                elif self.owner.strict:
                    const.append((a, np.array(a.view(np.ndarray))))
            else:
                want, ct = _SCALARS[typ]
                assert type(a) is want, f"{where}: {type(a).__name__}, not {want.__name__}"
                conv.append(ct(int(a)))
        emu.launching(self.name)
        self.owner.launched[self.name] += 1
        with self._lib_lock:
            self._fn(ctypes.c_uint32(grid[0]), ctypes.c_uint32(block[0]), *conv)
        for a, before in const:
            if any(np.may_share_memory(a, w) for w in written):
                continue  # in place: the same memory is also the kernel's output
            assert np.array_equal(a.view(np.ndarray), before), f"{self.name} wrote a const input"
        for a in arrays:
            assert _guard_ok(a), f"{self.name} wrote past the end of an array"
        for watch in self.owner.watchers:
            watch(self.name, args)


class EmulatedKernels:
    """The backend's KernelSource over the host libraries: (curve, kind, group) -> launchers by
    short name. Counts launches by name (`launched`) and calls each watcher(name, args) after
    a launch. strict: also check that const inputs come back unchanged (a copy per launch)."""

    def __init__(self, libraries: Libraries, cupy: EmulatedCupy, strict: bool = True) -> None:
        self.libraries = libraries
        self.cupy = cupy
        self.strict = strict
        self.launched: Counter[str] = Counter()
        self.watchers: list[Callable[[str, Sequence[Any]], None]] = []
        self._mods: dict[tuple[str, str, int], dict[str, HostKernel]] = {}
        self._lock = threading.Lock()
        self._counts = libraries.emulation_counts()

    def __call__(self, curve: Any, kind: str, group: int = 1) -> dict[str, HostKernel]:
        c = get_curve(curve)
        key = (c.name, kind, group if kind != "fr" else 0)
        with self._lock:
            mod = self._mods.get(key)
            if mod is None:
                self.cupy.check()  # a module load on a lost device fails too
                mod = self._mods[key] = {
                    short: HostKernel(self, key, short, sig)
                    for short, (_, sig) in module_kernels(*key).items()
                }
        return mod

    def warm_up(self, curves: Sequence[str] = ("bls12_381", "bn254")) -> None:
        for name in curves:
            for kind, group in modules.MODULES:
                self(name, kind, group)

    def check_emulation(self) -> None:
        """No carry the emulated device product cannot hold was dropped and no warp intrinsic
        read a lane that was not running, since these kernels were made."""
        for key, (carries, faults) in self.libraries.emulation_counts().items():
            carries0, faults0 = self._counts.get(key, (0, 0))
            assert carries == carries0, f"{key}: the emulated product dropped a carry"
            assert faults == faults0, f"{key}: a warp intrinsic read another lane"


class EmulatedCudaBackend(CudaBackend):
    """CudaBackend itself on one emulated device: `emu` (its CuPy), `kernels` (launch counts,
    watchers, check_emulation)."""

    def __init__(self, libraries: Libraries, *, memory: int = 80 << 30, index: int = 0,
                 strict: bool = True, tuning: Tuning | None = None, **knobs: Any) -> None:  # fmt: skip
        self.emu = EmulatedCupy(memory, index)
        self.kernels = EmulatedKernels(libraries, self.emu, strict)
        super().__init__(index, tuning=tuning if tuning is not None else Tuning(**knobs),
                         cupy=self.emu, kernels=self.kernels,
                         alloc_pinned=self.emu.alloc_pinned)  # fmt: skip
        self.libraries = libraries
        self.launched = self.kernels.launched

    def check_emulation(self) -> None:
        self.kernels.check_emulation()
