"""Making a proving key HOT on the devices (the SRS manager's prepare hook).

On every device backend: its constraint matrices (evaluate_on device), its query points
resident while a proof's room is left beside them (the others in pinned host memory, streamed
by each MSM), their shares at infinity, MSM window tables while they fit, and whether the
device has room for every GPU worker to upload ahead of the lock. Then the partition buffer
sets its proofs can hold at once are allocated, and one throwaway partition warms each device
up, so that a proof then moves only its partition's vectors.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from cuzk.backends.base import DeviceBackend, alloc_host, is_device_backend
from cuzk.engine.buffers import HostBufferPool
from cuzk.engine.config import EngineConfig
from cuzk.engine.device_key import DeviceKey, DeviceKeys
from cuzk.engine.devices import Devices
from cuzk.engine.memory import (
    MemoryPolicy,
    in_turn_after_oom,
    proof_reserve_bytes,
    table_reserve_bytes,
)
from cuzk.identity_cache import IdentityCache
from cuzk.settings import ConfigError

log = logging.getLogger("cuzk.engine")

# H first: its scalars are uniform (no small or zero witness values), so tables gain most.
TABLE_ORDER = ("h_g1", "l_g1", "a_g1", "b_g1")


def takes_out(fn: Any) -> bool:
    """Whether a phases step (synthesize, pending) accepts out= (writes into given buffers)."""
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def resolve_evaluate_on(config: EngineConfig, phases: Any, devices: Devices) -> bool:
    """Whether GPU workers evaluate the constraints (config evaluate_on): every device's
    backend must be a device backend, and the phases must have a pending step."""
    want = config.evaluate_on
    can = (callable(getattr(phases, "pending", None))
           and all(is_device_backend(b) for b in devices.backends.values()))
    if want == "device" and not can:
        raise ConfigError("evaluate_on = 'device' needs device backends that evaluate "
                          "constraints (CUDA) on every device")
    on = can and want != "host"
    log.info("constraint evaluation on the %s", "device" if on else "host")
    return on


class HotKeys:
    def __init__(self, config: EngineConfig, devices: Devices, memory: MemoryPolicy,
                 host_buffers: HostBufferPool, phases: Any, evaluate_on_device: bool) -> None:
        self._config = config
        self._devices = devices
        self._memory = memory
        self._buffers = host_buffers
        self.evaluate_on_device = evaluate_on_device
        self._synth_out = takes_out(phases.synthesize)
        self._pending_out = takes_out(getattr(phases, "pending", None))
        self._alloc_backend = devices.alloc_backend()
        # keys whose matrices did not fit a device: their constraints are evaluated on the host
        self._host_evaluated: IdentityCache[bool] = IdentityCache()
        # partition buffer shape -> HOT keys whose reserved sets it serves; a lock of its own
        # (a leaf): a demoted key reports here from inside the SRS manager's lock
        self._shape_users: dict[Hashable, int] = {}
        self._shape_lock = threading.Lock()

    def prepare(self, pk: Any) -> DeviceKeys | None:
        """The SRS manager's HOT hook: the key on every device backend, its partition buffers
        reserved, a warm-up partition on each device. None without a device backend."""
        keys = []
        for d, be in self._devices.device_backends():
            with self._devices.scope(d):
                keys.append(self._place(d, be, pk))
        if not keys:
            return None
        hot = DeviceKeys(keys)
        shape = self._reserve_buffers(pk)
        if shape is not None:
            hot.on_release = functools.partial(self._shape_released, shape)
        if self._config.warm_up:
            for d, be in self._devices.device_backends():
                self._warm_up(d, be, pk)
        return hot

    def evaluates_on_device(self, pk: Any) -> bool:
        """Whether this key's partitions leave the constraint evaluation to the GPU workers:
        evaluate_on device, unless its matrices did not fit a device."""
        return self.evaluate_on_device and pk not in self._host_evaluated

    # --- one device -------------------------------------------------------------------------

    def _place(self, device: str, be: DeviceBackend, pk: Any) -> DeviceKey:
        """The key on one device: matrices, points, shares at infinity, tables."""
        fields = ["a_g1", "b_g1", "l_g1", "h_g1"]
        if not self._config.g2_on_cpu:
            fields.append("b_g2")
        arrays = [getattr(pk, f) for f in fields]
        matrices: list[Any] = []
        if self.evaluates_on_device(pk) and getattr(pk, "r1cs", None) is not None:
            kept = self._keep_matrices(device, be, pk)
            if kept is None:  # no room: this key's constraints are evaluated on the host
                self._host_evaluated.put(pk, True)
            else:
                matrices = kept
        key = DeviceKey(be, arrays + matrices)
        key.host_bytes = self._keep_points(device, be, fields, arrays, proof_reserve_bytes(pk, 1))
        key.kept = {f: be.kept_as(a) for f, a in zip(fields, arrays, strict=True)}
        self._note_infinity(device, be, fields, arrays)
        self._build_msm_tables(device, be, pk, key)
        be.synchronize()
        key.uploads_in_turn = self._uploads_in_turn(device, be, pk)
        return key

    @staticmethod
    def _keep_points(device: str, be: DeviceBackend, fields: list[str], arrays: list[Any],
                     reserve: int) -> dict[str, int]:
        """Each query resident on the device while that leaves `reserve` bytes free for the
        proofs (sized as the backend keeps it: a key's A and B hold their live bases only).
        The others, and any whose upload runs out of device memory, stay in pinned host
        memory, streamed by each MSM in chunks. Returns {query: pinned bytes}."""
        on_host: dict[str, int] = {}
        for name, arr in zip(fields, arrays, strict=True):
            if be.device_free_bytes() - int(be.resident_bytes(arr)) >= reserve:
                try:
                    be.keep_on_device(arr)
                    continue
                except Exception as exc:
                    if not be.is_out_of_memory(exc):
                        raise
                    be.release_cached_memory()
            on_host[name] = int(be.keep_on_host(arr))
        if on_host:
            log.warning("%s: %s stay in pinned host memory (%.2f GiB), streamed to the device "
                        "by each MSM: they do not fit beside the %.2f GiB its proofs need",
                        device, ", ".join(on_host), sum(on_host.values()) / 2**30,
                        reserve / 2**30)
        return on_host

    def _uploads_in_turn(self, device: str, be: DeviceBackend, pk: Any) -> bool:
        """Whether the device, with the key in place, lacks room for a kernel region and the
        inputs every GPU worker uploads ahead of its turn: then each worker uploads its
        partition holding the device lock, so one partition's inputs are there at a time."""
        workers = int(self._config.gpu_workers_per_device)
        if workers < 2:
            return False
        need = proof_reserve_bytes(pk, workers)
        room = int(be.device_free_bytes())
        if room >= need:
            return False
        log.warning("%s: %.2f GiB free beside the key, %.2f GiB needed for %d GPU workers to "
                    "upload ahead of their turn: uploads hold the device lock", device,
                    room / 2**30, need / 2**30, workers)
        return True

    @staticmethod
    def _keep_matrices(device: str, be: DeviceBackend, pk: Any) -> list[Any] | None:
        """The key's constraint matrices resident for evaluate_on device; returns their host
        arrays (demotion releases them with the key's points), or None when the device runs
        out of memory for them."""
        from cuzk.groth16.prover import key_r1cs

        r1cs = key_r1cs(pk.r1cs)
        arrays = [x for m in (r1cs.a, r1cs.b, r1cs.c) for x in (m.indptr, m.indices, m.values)]
        try:
            nbytes = be.keep_r1cs(r1cs)
        except Exception as exc:
            if not be.is_out_of_memory(exc):
                raise
            be.release(arrays)  # whatever went up before the failure
            be.release_cached_memory()
            log.warning("%s: the key's constraint matrices do not fit on the device; its "
                        "partitions evaluate their constraints on the host", device)
            return None
        log.info("%s: constraint matrices resident: %.2f GiB", device, nbytes / 2**30)
        return arrays

    @staticmethod
    def _note_infinity(device: str, be: DeviceBackend, fields: list[str],
                       arrays: list[Any]) -> None:
        """The share of each query's points at infinity (variables absent from A, resp. B),
        measured now so the first proof does not pay for it; the digit sorts leave those
        bases out."""
        parts = []
        for name, arr in zip(fields, arrays, strict=True):
            f = be.msm_infinity_share(arr)
            if f > 0:
                parts.append(f"{name} {100 * f:.0f} %")
        if parts:
            log.info("%s: points at infinity: %s", device, ", ".join(parts))

    def _build_msm_tables(self, device: str, be: DeviceBackend, pk: Any, key: DeviceKey) -> None:
        """Window tables for the key's G1 queries while they fit beside the reserve
        (table_reserve_bytes) of free device memory; recorded on the key."""
        cfg = self._config
        if not cfg.msm_tables:
            return
        reserve = table_reserve_bytes(cfg.msm_table_reserve_bytes, pk)
        for name in TABLE_ORDER:
            arr = getattr(pk, name)
            if int(arr.shape[0]) == 0:
                continue  # nothing to precompute; 0 from the backend would mean "no room"
            t0 = time.monotonic()
            try:
                nbytes = int(be.precompute_msm(pk.curve, arr, reserve=reserve))
                # No room: take the tables of idle HOT keys (least recently used first); the
                # key being loaded is about to be used, they are not.
                while nbytes <= 0 and self._memory.drop_idle_tables(device, be):
                    nbytes = int(be.precompute_msm(pk.curve, arr, reserve=reserve))
            except Exception as exc:  # tables only speed proofs up: the key still goes HOT
                log.warning("%s: MSM table for %s failed: %s: %s", device, name,
                            type(exc).__name__, str(exc))
                break
            if nbytes <= 0:
                log.info("%s: no MSM table for %s (would leave less than %.1f GiB free)",
                         device, name, reserve / 2**30)
                break
            key.add_table(name, arr, nbytes)
            # Large tables take seconds each: say each one as it lands.
            log.info("%s: MSM table for %s: %.2f GiB in %.1f s", device, name, nbytes / 2**30,
                     time.monotonic() - t0)
        if key.table_bytes:
            log.info("%s: MSM tables %s (%.2f GiB in all)", device,
                     ", ".join(f"{k} {v / 2**30:.2f} GiB" for k, v in key.table_bytes.items()),
                     sum(key.table_bytes.values()) / 2**30)

    def _warm_up(self, device: str, be: DeviceBackend, pk: Any) -> None:
        """One throwaway partition's device work as the key goes HOT: a random witness, its
        constraints evaluated unchecked (or random a, b, c with evaluate_on host), uploads and
        the kernel region under the device lock. Module loads, twiddle tables, memory-pool
        growth and first launches are paid here instead of by the first job's partitions. A
        failure is logged, never fatal: the proofs would meet it and report it themselves."""
        from cuzk.groth16 import prover

        if getattr(pk, "r1cs", None) is None or not hasattr(pk, "n_vars"):
            return
        lock = self._devices.locks.get(device)
        kstream = self._devices.kernel_stream(device)
        rng = np.random.default_rng()

        def rand(rows: int) -> np.ndarray:
            x = rng.integers(0, 2**64, size=(rows, 4), dtype=np.uint64)
            x[:, 3] &= np.uint64(0x0FFFFFFFFFFFFFFF)  # below r on both curves
            return x

        w = rand(int(pk.n_vars))
        w[0] = (1, 0, 0, 0)
        g2 = not self._config.g2_on_cpu
        t0 = time.monotonic()
        t_acq = lock.acquire("warm-up") if lock is not None else None
        try:
            with self._devices.scope(device), \
                    (kstream if kstream is not None else contextlib.nullcontext()):
                if self.evaluates_on_device(pk):
                    syn = prover.evaluate_on_device(pk, prover.pending(pk, w), be, check=False)
                else:
                    d = int(pk.domain_size)
                    syn = prover.upload(prover.Synthesized(a=rand(d), b=rand(d), c=rand(d),
                                                           witness=w), be)
                in_turn_after_oom(be, functools.partial(prover.kernels, pk, syn, be, g2=g2))
                del syn
                be.synchronize()
            log.info("%s: warm-up proof of the key's kernels in %.2f s", device,
                     time.monotonic() - t0)
        except Exception as exc:
            # Logged as text: a kept record (a log capture) holding the exception would hold
            # its frames, and the key's device copies with them.
            log.warning("%s: warm-up proof failed (%s: %s); the key stays HOT", device,
                        type(exc).__name__, str(exc))
        finally:
            if lock is not None and t_acq is not None:
                lock.release("warm-up", t_acq)

    # --- partition buffers ------------------------------------------------------------------

    def buffer_shape(self, pk: Any) -> tuple[Hashable, Callable[[], Any]] | None:
        """The pool key and allocator of one partition's host buffers for this key: the
        witness alone (evaluate_on device) or a, b, c and the witness; None when synthesis
        does not write into given buffers."""
        from cuzk.groth16 import prover

        backend = self._alloc_backend
        if not hasattr(pk, "n_vars"):
            return None
        n = int(pk.n_vars)
        if self.evaluates_on_device(pk):
            if not self._pending_out:
                return None
            return ("witness", n), lambda: alloc_host(backend, (n, 4))
        if not (self._synth_out and hasattr(pk, "domain_size")):
            return None
        return (int(pk.domain_size), n), lambda: prover.host_buffers(pk, backend)

    def _reserve_buffers(self, pk: Any) -> Hashable | None:
        """Every buffer set this key's partitions can hold at once, allocated as it goes HOT
        (pinned pages: allocating them mid-proof stalls kernel regions); returns the pool's
        shape key (None: synthesis writes no given buffers)."""
        shape = self.buffer_shape(pk)
        if shape is None:
            return None
        key, make = shape
        with self._shape_lock:
            self._shape_users[key] = self._shape_users.get(key, 0) + 1
        t0 = time.monotonic()
        try:
            made = self._buffers.reserve(key, make, self._buffers.bound)
        except Exception as exc:  # e.g. page-locked memory refused: proofs allocate lazily
            log.warning("partition buffers for %s not reserved: %s", key, str(exc))
            return key
        if made:
            st = self._buffers.shape_stats(key)
            log.info("partition buffers for %s: %d sets allocated in %.2f s (%d in the pool)",
                     key, made, time.monotonic() - t0, st["allocated"])
        return key

    def _shape_released(self, shape: Hashable) -> None:
        """A HOT key left its devices: when no other HOT key uses its buffer shape, the idle
        sets of that shape are freed, and the device backends' cached pinned blocks."""
        with self._shape_lock:
            users = self._shape_users.get(shape, 0) - 1
            if users > 0:
                self._shape_users[shape] = users
                return
            self._shape_users.pop(shape, None)
        n = self._buffers.trim(shape)
        for _, be in self._devices.device_backends():
            be.release_pinned_memory()
        log.info("partition buffers for %s: %d idle sets freed (no HOT key uses them)", shape, n)
