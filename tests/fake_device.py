"""One fake device for the engine tests: `base.DeviceBackend` over the CPU backend.

numpy arrays stand in for device arrays (the arithmetic is the CPU backend's, so proofs are
byte-identical to it). The fake keeps what the engine asks it to keep (resident or streamed
queries, matrices, MSM tables) by identity and forgets it on `release`; its free memory is a
capacity minus what it keeps. Tests watch it through its record of operations (`calls`) and
a few questions (`kept_as`, `share`, `has_table`, `tables`, `holds`, `holding`), and change its behaviour
with hooks run before an operation (`before`), e.g. injected out-of-memory or device-lost
failures (`fail`).

Operations recorded, with the fields a hook receives and `calls(op)` returns:
  to_device           arr, rows, keep, pooled (arr came from alloc_host), addr
  keep_on_device      points, bytes          keep_on_host    points, bytes
  keep_matrix         array, rows (each array of keep_r1cs's matrices)
  msm_infinity_share  points                 precompute_msm  points, reserve
  evaluate_r1cs       rows                   run_concurrently  tasks, width
  g1_msm, g2_msm      points, rows, tabled, kept, thread
  release, release_tables  arrays

Its copies go through the transfer inventory (cuzk.backends.transfers) as the CUDA backend's
do: a partition's vectors up (`witness`), a key's queries up when kept or when an MSM reads
one that is not kept or is streamed from pinned memory (`key`), every MSM sum back (`result`).
Arrays it returned (to_device, evaluate_r1cs, groth16_h) count as on the device.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from cuzk.backends import transfers
from cuzk.backends.base import Backend, DeviceBackend, Kept
from cuzk.backends.cpu import CpuBackend
from cuzk.groth16 import qap
from cuzk.identity_cache import IdentityCache

MIN_STREAM_ROWS = 1 << 18  # the smallest chunk streamed MSMs upload


class FakeOutOfMemory(MemoryError):
    """A failed allocation on the fake device (is_out_of_memory)."""


class FakeDeviceLost(RuntimeError):
    """An error that leaves the fake device unusable (is_device_lost)."""


class FakeStream:
    def __enter__(self) -> FakeStream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def synchronize(self) -> None:
        return None


class FakeDevice(CpuBackend):
    name = "fakedev"

    def __init__(self, capacity: int = 1 << 40, *, concurrent: bool = False,
                 stream_rows: int = 1 << 20, tables: Sequence[int | BaseException] = (),
                 live_bases: Callable[[np.ndarray], bool] | None = None) -> None:
        """capacity: device bytes; concurrent: run_concurrently runs tasks side by side in
        threads; stream_rows: the chunk of streamed MSMs; tables: precompute_msm's replies in
        order (bytes, 0 for no room, or an exception to raise; none left: 0); live_bases:
        which arrays keep_on_device keeps as their live bases (a third of their bytes)."""
        super().__init__()
        self.capacity = capacity
        self.stream_rows = stream_rows
        self.table_replies: list[int | BaseException] = list(tables)
        self.max_width = 0  # run_concurrently's configured width (0: every task at once)
        self.width = 0  # msm_width's setting inside its block (0: as configured)
        self.allocated: list[np.ndarray] = []  # from alloc_host
        self.cached_releases = 0  # release_cached_memory calls
        self.pinned_releases = 0  # release_pinned_memory calls
        self._concurrent = concurrent
        self._live_bases = live_bases or (lambda _a: False)
        self._oom_reruns = 0
        self._lock = threading.RLock()
        self._ops: list[tuple[str, dict[str, Any]]] = []
        self._hooks: dict[str, list[Callable[..., None]]] = {}
        self._kept: IdentityCache[tuple[Kept, int]] = IdentityCache()
        self._measured: IdentityCache[float] = IdentityCache()
        self._tables: IdentityCache[int] = IdentityCache()
        self._matrices: IdentityCache[int] = IdentityCache()
        self._copies: IdentityCache[np.ndarray] = IdentityCache()  # to_device(keep=True)
        self._device_arrays: dict[int, weakref.ref] = {}  # what it returned, by id
        self._cpu = CpuBackend()

    # --- what tests ask -------------------------------------------------------------------

    def calls(self, op: str) -> list[dict[str, Any]]:
        with self._lock:
            return [ctx for name, ctx in self._ops if name == op]

    def clear_calls(self) -> None:
        with self._lock:
            self._ops.clear()

    def share(self, points: Any) -> float | None:
        """The array's share of bases at infinity as measured (None: not, or released)."""
        return self._measured.get(points)

    def has_table(self, points: Any) -> bool:
        return points in self._tables

    def holds(self, arr: Any) -> bool:
        """Whether anything is kept for the array (copies, matrices, tables, its share)."""
        return any(arr in c for c in (self._kept, self._matrices, self._copies, self._tables,
                                      self._measured))

    def holding(self) -> int:
        """How many things are kept, for any array."""
        return sum(len(c) for c in (self._kept, self._matrices, self._copies, self._tables,
                                    self._measured))

    def tables(self) -> int:
        """How many arrays have MSM tables."""
        return len(self._tables)

    def kept_on_host(self) -> int:
        """How many arrays are kept in (fake) pinned host memory."""
        return sum(1 for how, _ in self._kept.values() if how is Kept.HOST)

    # --- behaviour --------------------------------------------------------------------------

    def before(self, op: str, hook: Callable[..., None]) -> None:
        """Run hook(**fields) before every `op` (it may raise)."""
        with self._lock:
            self._hooks.setdefault(op, []).append(hook)

    def fail(self, op: str, exc: BaseException, times: int | None = 1,
             when: Callable[..., bool] | None = None) -> None:
        """`op` raises a copy of exc (`times` times, None: always) where when(**fields)."""
        left = [times]

        def hook(**ctx: Any) -> None:
            if when is not None and not when(**ctx):
                return
            with self._lock:
                if left[0] is not None:
                    if left[0] <= 0:
                        return
                    left[0] -= 1
            raise type(exc)(*exc.args)

        self.before(op, hook)

    def _op(self, op: str, **ctx: Any) -> None:
        with self._lock:
            self._ops.append((op, ctx))
            hooks = list(self._hooks.get(op, ()))
        for h in hooks:
            h(**ctx)

    # --- the device, its streams and transfers -------------------------------------------------

    def device_scope(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def new_stream(self) -> FakeStream:
        return FakeStream()

    def synchronize(self) -> None:
        return None

    def alloc_host(self, shape: int | tuple[int, ...], dtype: Any = np.uint64) -> np.ndarray:
        arr = np.empty(shape, dtype=dtype)
        with self._lock:
            self.allocated.append(arr)
        return arr

    def to_device(self, arr: Any, keep: bool = False) -> Any:
        with self._lock:
            pooled = any(arr is p for p in self.allocated)
        self._op("to_device", arr=arr, rows=int(arr.shape[0]), keep=keep, pooled=pooled,
                 addr=int(np.asarray(arr).__array_interface__["data"][0]))
        hit = self._copies.get(arr) if keep else None
        if hit is not None:
            return hit
        if self.on_device(arr):  # a device-side copy: nothing crosses
            out = self._device(np.array(arr, copy=True))
        else:
            with transfers.timed("key" if keep else "witness", transfers.H2D,
                                 int(arr.nbytes), pooled):  # fmt: skip
                out = self._device(np.array(arr, copy=True))
        return self._copies.put(arr, out) if keep else out

    def on_device(self, x: Any) -> bool:
        """Whether x (or the array it views) is one the fake returned as a device array."""
        while isinstance(x, np.ndarray):
            ref = self._device_arrays.get(id(x))
            if ref is not None and ref() is x:
                return True
            x = x.base
        return False

    def _device(self, arr: np.ndarray) -> np.ndarray:
        with self._lock:
            self._device_arrays[id(arr)] = weakref.ref(arr)
            if len(self._device_arrays) > 4096:  # forget the dead
                self._device_arrays = {k: r for k, r in self._device_arrays.items()
                                       if r() is not None}
        return arr

    def _up(self, kind: str, arr: Any, pinned: bool = False) -> None:
        """An array an operation reads, copied up unless on the device already."""
        if not self.on_device(arr):
            transfers.record(kind, transfers.H2D, int(np.asarray(arr).nbytes), pinned, 0.0)

    def _back(self, out: np.ndarray) -> np.ndarray:
        transfers.record("result", transfers.D2H, int(out.nbytes), False, 0.0)
        return out

    # --- device memory ----------------------------------------------------------------------

    def device_free_bytes(self) -> int:
        used = sum(n for how, n in self._kept.values() if how is not Kept.HOST)
        used += sum(self._matrices.values()) + sum(self._tables.values())
        used += sum(int(c.nbytes) for c in self._copies.values())
        return self.capacity - used

    def release_cached_memory(self) -> None:
        with self._lock:
            self.cached_releases += 1

    def release_pinned_memory(self) -> None:
        with self._lock:
            self.pinned_releases += 1

    def is_out_of_memory(self, exc: BaseException) -> bool:
        return isinstance(exc, FakeOutOfMemory)

    def is_device_lost(self, exc: BaseException) -> bool:
        return isinstance(exc, FakeDeviceLost)

    # --- a proving key's residency ------------------------------------------------------------

    def resident_bytes(self, points: np.ndarray) -> int:
        return int(points.nbytes) // 3 if self._live_bases(points) else int(points.nbytes)

    def keep_on_device(self, points: np.ndarray) -> int:
        nbytes = self.resident_bytes(points)
        self._op("keep_on_device", points=points, bytes=nbytes)
        transfers.record("key", transfers.H2D, nbytes, False, 0.0)
        how = Kept.LIVE_BASES if self._live_bases(points) else Kept.DEVICE
        self._kept.put(points, (how, nbytes))
        return nbytes

    def keep_on_host(self, points: np.ndarray) -> int:
        nbytes = int(points.nbytes)
        self._op("keep_on_host", points=points, bytes=nbytes)
        self._kept.put(points, (Kept.HOST, nbytes))
        return nbytes

    def kept_as(self, points: np.ndarray) -> Kept | None:
        hit = self._kept.get(points)
        return None if hit is None else hit[0]

    def msm_infinity_share(self, points: np.ndarray) -> float:
        self._op("msm_infinity_share", points=points)
        share = float((~np.asarray(points).reshape(len(points), -1).any(axis=1)).mean())
        return self._measured.put(points, share)

    def precompute_msm(self, curve: Any, points: np.ndarray, reserve: int) -> int:
        self._op("precompute_msm", points=points, reserve=reserve)
        with self._lock:
            reply = self.table_replies.pop(0) if self.table_replies else 0
        if isinstance(reply, BaseException):
            raise reply
        if reply > 0:
            self._tables.put(points, int(reply))
        return int(reply)

    def keep_r1cs(self, r1cs: Any) -> int:
        total = 0
        for m in (r1cs.a, r1cs.b, r1cs.c):
            if not m.nnz:
                continue
            for x in (m.indptr, m.indices, m.values):
                self._op("keep_matrix", array=x, rows=len(x))
                transfers.record("key", transfers.H2D, int(x.nbytes), False, 0.0)
                self._matrices.put(x, int(x.nbytes))
                total += int(x.nbytes)
        return total

    def release(self, arrays: Iterable[Any]) -> None:
        arrays = list(arrays)
        self._op("release", arrays=arrays)
        for a in arrays:
            for c in (self._kept, self._measured, self._tables, self._matrices, self._copies):
                c.pop(a)

    def release_tables(self, arrays: Iterable[Any]) -> None:
        arrays = list(arrays)
        self._op("release_tables", arrays=arrays)
        for a in arrays:
            self._tables.pop(a)

    # --- a partition's arithmetic ---------------------------------------------------------------

    def evaluate_r1cs(self, r1cs: Any, w: Any, domain_size: int) -> tuple[Any, Any, Any]:
        self._op("evaluate_r1cs", rows=int(domain_size))
        self._up("witness", w)
        a, b, c = qap.evaluate(r1cs, np.asarray(w), self._cpu, domain_size)
        return tuple(x if x is None else self._device(x) for x in (a, b, c))  # type: ignore[return-value]

    def groth16_h(self, curve: Any, a: Any, b: Any, c: Any, omega: int, shift: int,
                  coefficients: bool) -> Any:  # fmt: skip
        for v in (a, b, c):
            self._up("witness", v)
        return self._device(super().groth16_h(curve, a, b, c, omega, shift, coefficients))

    def fr_mul(self, curve: Any, a: Any, b: Any) -> Any:
        return qap.fr_mul_arrays(curve, a, b)

    def fr_first_mismatch(self, curve: Any, a: Any, b: Any, c: Any) -> int:
        return qap._first_mismatch(curve, a, b, c)

    def g1_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        self._msm("g1_msm", points, scalars)
        return self._back(super().g1_msm(curve, np.asarray(points), np.asarray(scalars)))

    def g2_msm(self, curve: Any, points: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        self._msm("g2_msm", points, scalars)
        return self._back(super().g2_msm(curve, np.asarray(points), np.asarray(scalars)))

    def _msm(self, op: str, points: Any, scalars: Any) -> None:
        kept = self.kept_as(points)
        self._op(op, points=points, rows=int(scalars.shape[0]), tabled=self.has_table(points),
                 kept=kept, thread=threading.get_ident())
        if kept is Kept.HOST:  # streamed up from pinned memory by every MSM
            transfers.record("key", transfers.H2D, int(points.nbytes), True, 0.0)
        elif kept is None and points not in self._copies:
            self._up("key", points)
        self._up("witness", scalars)

    def g1_msm_tasks(self, curve: Any, point_sets: Sequence[Any],
                     scalars: Any) -> list[Callable[[], Any]]:
        n = int(scalars.shape[0])
        return [functools.partial(self.g1_msm, curve, p, scalars[n - len(p):])
                for p in point_sets]

    def run_concurrently(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        width = (self.width or self.max_width or len(tasks)) if self._concurrent else 1
        self._op("run_concurrently", tasks=len(tasks), width=width)
        if width <= 1:
            return [t() for t in tasks]
        out: list[Any] = [None] * len(tasks)
        again: list[int] = []
        with ThreadPoolExecutor(width) as pool:
            futures = [pool.submit(transfers.run_in_context(t)) for t in tasks]
            for i, f in enumerate(futures):
                try:
                    out[i] = f.result()
                except FakeOutOfMemory:
                    again.append(i)
        for i in again:  # out of memory beside the others: alone
            with self._lock:
                self._oom_reruns += 1
            out[i] = tasks[i]()
        return out

    # --- recovering from running out of memory ------------------------------------------------

    @contextlib.contextmanager
    def msm_width(self, width: int) -> Iterator[None]:
        old, self.width = self.width, width
        try:
            yield
        finally:
            self.width = old

    @property
    def concurrent(self) -> bool:
        return self._concurrent

    @property
    def oom_reruns(self) -> int:
        return self._oom_reruns

    @property
    def streams_host_bases(self) -> bool:
        return self.kept_on_host() > 0

    def shrink_stream_chunks(self) -> int:
        with self._lock:
            if self.stream_rows <= MIN_STREAM_ROWS:
                return 0
            self.stream_rows = max(MIN_STREAM_ROWS, self.stream_rows // 2)
            return self.stream_rows


CONTRACT = frozenset(n for cls in (Backend, DeviceBackend)
                     for n in (*vars(cls), *cls.__annotations__) if not n.startswith("_"))


class ContractOnly:
    """A device that answers only base.DeviceBackend's members (and refuses writes): the
    engine and the prover's device path must need nothing else (around the fake device here,
    or the real CudaBackend on the emulated device)."""

    def __init__(self, inner: Any) -> None:
        object.__setattr__(self, "_inner", inner)

    def __getattr__(self, name: str) -> Any:
        if name not in CONTRACT:
            raise AssertionError(f"asked the device for {name!r}, not in base.DeviceBackend")
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AssertionError(f"set the device's {name!r}")
