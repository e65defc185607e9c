"""SRS (proving key) manager: tiers, a memory budget, preload/evict and reference counts.

Tiers, per circuit:
- COLD: known by its source (a key-cache path or a loader), nothing in memory.
- WARM: loaded as memory-mapped arrays (pages come from the page cache on demand); a key given
  as an object is WARM when nobody has made it resident.
- HOT: resident: every array in process memory and, with a `prepare` hook (the engine's, on
  device backends), placed on the devices. Only HOT bytes count against the budget.

A key in use (reference count > 0) is never demoted. Making a key HOT demotes least recently
used idle HOT keys until the budget fits; if it cannot fit because the others are in use, the
key still goes HOT (a job needs it) and `over_budget` is reported rather than failing the job.
"""

from __future__ import annotations

import enum
import mmap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.engine.device_key import DeviceKeys
from cuzk.engine.status import KeyStatus
from cuzk.model.keys import ProvingKey


class KeyTier(enum.StrEnum):
    HOT = "HOT"
    WARM = "WARM"
    COLD = "COLD"


_POINT_FIELDS = ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1")


def load_key_path(path: str | Path) -> ProvingKey:
    """Load a key file (zkey, bellman params or cache file) memory-mapped: the WARM tier."""
    from cuzk.formats.cache import load_proving_key

    return load_proving_key(path)


def _file_backed(arr: np.ndarray) -> bool:
    obj: Any = arr
    while obj is not None:
        if isinstance(obj, (np.memmap, mmap.mmap)):
            return True
        obj = getattr(obj, "base", None)
    return False


def _resident(pk: ProvingKey) -> ProvingKey:
    """A copy whose point arrays live in process memory (not file-backed mmap pages)."""
    changes: dict[str, Any] = {}
    for name in _POINT_FIELDS:
        arr = getattr(pk, name)
        if _file_backed(arr):
            changes[name] = np.array(arr, copy=True, order="C")
    if not changes:
        return pk
    kwargs = {f.name: getattr(pk, f.name) for f in fields(pk)}
    kwargs.update(changes)
    return ProvingKey(**kwargs)


@dataclass
class _Entry:
    circuit_id: str
    source: Any
    tier: KeyTier = KeyTier.COLD
    warm: ProvingKey | None = None  # mmap'd or caller-owned object
    hot: ProvingKey | None = None  # resident copy
    device_handle: DeviceKeys | None = None
    nbytes: int = 0
    refs: int = 0
    last_used: float = 0.0
    loads: int = 0
    load_ms: float = 0.0


class SrsManager:
    def __init__(
        self,
        budget_bytes: int = 0,
        loader: Callable[[str | Path], ProvingKey] = load_key_path,
        prepare: Callable[[ProvingKey], DeviceKeys | None] | None = None,
    ) -> None:
        self.budget_bytes = budget_bytes
        self._loader = loader
        # places a key going HOT on the devices; the handle it returns is released on demotion
        self.prepare = prepare
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.RLock()
        self._loading: dict[str, threading.Event] = {}
        self.over_budget = False

    # --- registration -------------------------------------------------------------------

    def register(self, circuit_id: str, source: Any) -> None:
        with self._lock:
            old = self._entries.get(circuit_id)
            if old is not None and old.refs > 0:
                raise RuntimeError(f"key {circuit_id!r} is in use; cannot re-register it")
            if old is not None:
                _release(old)
            e = _Entry(circuit_id, source)
            if isinstance(source, ProvingKey):
                e.warm = source
                e.tier = KeyTier.WARM
                e.nbytes = source.nbytes()
            self._entries[circuit_id] = e

    def unregister(self, circuit_id: str) -> None:
        with self._lock:
            e = self._get(circuit_id)
            if e.refs > 0:
                raise RuntimeError(f"key {circuit_id!r} is in use")
            _release(e)
            del self._entries[circuit_id]

    def _get(self, circuit_id: str) -> _Entry:
        try:
            return self._entries[circuit_id]
        except KeyError:
            raise KeyError(f"unknown circuit {circuit_id!r}") from None

    # --- use ------------------------------------------------------------------------------

    def acquire(self, circuit_id: str) -> tuple[ProvingKey, float]:
        """Make the key HOT, take a reference, return (key, milliseconds spent loading)."""
        t0 = time.monotonic()
        with self._lock:
            e = self._get(circuit_id)
            e.refs += 1
        try:
            pk = self._make_hot(e)
        except BaseException:
            with self._lock:
                e.refs -= 1
            raise
        return pk, (time.monotonic() - t0) * 1000.0

    def release(self, circuit_id: str) -> None:
        with self._lock:
            e = self._get(circuit_id)
            if e.refs <= 0:
                raise RuntimeError(f"release of {circuit_id!r} without acquire")
            e.refs -= 1
            e.last_used = time.monotonic()

    def device_handle(self, circuit_id: str) -> DeviceKeys | None:
        with self._lock:
            return self._get(circuit_id).device_handle

    def preload(self, circuit_id: str) -> KeyTier:
        with self._lock:
            e = self._get(circuit_id)
            e.refs += 1  # hold it while loading so a concurrent evict cannot race us
        try:
            self._make_hot(e)
        finally:
            self.release(circuit_id)
        return e.tier

    def evict(self, circuit_id: str, to: KeyTier = KeyTier.COLD) -> bool:
        """Demote a key; False (and nothing changes) while it is in use."""
        with self._lock:
            e = self._get(circuit_id)
            if e.refs > 0:
                return False
            self._demote(e, to)
            return True

    # --- internals --------------------------------------------------------------------------

    def _make_hot(self, e: _Entry) -> ProvingKey:
        # One loader per key at a time; others wait for it instead of loading twice.
        while True:
            with self._lock:
                if e.tier == KeyTier.HOT and e.hot is not None:
                    e.last_used = time.monotonic()
                    return e.hot
                ev = self._loading.get(e.circuit_id)
                if ev is None:
                    ev = threading.Event()
                    self._loading[e.circuit_id] = ev
                    break
            ev.wait()
        try:
            t0 = time.monotonic()
            warm = e.warm
            if warm is None:
                source = e.source
                warm = source() if callable(source) else self._loader(source)
                if not isinstance(warm, ProvingKey):
                    raise TypeError(f"key source of {e.circuit_id!r} gave {type(warm).__name__}")
            hot = _resident(warm)
            handle = self.prepare(hot) if self.prepare is not None else None
            with self._lock:
                e.warm = warm if not isinstance(e.source, ProvingKey) else e.source
                e.hot = hot
                e.device_handle = handle
                e.nbytes = hot.nbytes()
                e.tier = KeyTier.HOT
                e.loads += 1
                e.load_ms = (time.monotonic() - t0) * 1000.0
                e.last_used = time.monotonic()
                self._fit_budget(keep=e)
            return hot
        finally:
            with self._lock:
                self._loading.pop(e.circuit_id).set()

    def _fit_budget(self, keep: _Entry) -> None:
        if self.budget_bytes <= 0:
            self.over_budget = False
            return
        hot = [x for x in self._entries.values() if x.tier == KeyTier.HOT]
        used = sum(x.nbytes for x in hot)
        for victim in sorted(hot, key=lambda x: x.last_used):
            if used <= self.budget_bytes:
                break
            if victim is keep or victim.refs > 0:
                continue
            self._demote(victim, KeyTier.WARM)
            used -= victim.nbytes
        self.over_budget = used > self.budget_bytes

    def _demote(self, e: _Entry, to: KeyTier) -> None:
        if to == KeyTier.HOT:
            raise ValueError("evict demotes to WARM or COLD")
        _release(e)
        e.hot = None
        if to == KeyTier.COLD and not isinstance(e.source, ProvingKey):
            e.warm = None
            e.tier = KeyTier.COLD
        else:
            # A caller-owned object cannot go colder than WARM: we cannot reload it.
            e.tier = KeyTier.WARM if e.warm is not None else KeyTier.COLD

    # --- reporting --------------------------------------------------------------------------

    def hot_bytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values() if e.tier == KeyTier.HOT)

    def tier(self, circuit_id: str) -> KeyTier:
        with self._lock:
            return self._get(circuit_id).tier

    def refs(self, circuit_id: str) -> int:
        with self._lock:
            return self._get(circuit_id).refs

    def idle_device_handles(self) -> list[DeviceKeys]:
        """Device handles of HOT keys that no job holds, least recently used first (the
        engine takes their MSM tables when a key going HOT has no room for its own)."""
        with self._lock:
            idle = [e for e in self._entries.values()
                    if e.tier == KeyTier.HOT and e.refs == 0 and e.device_handle is not None]
            return [e.device_handle for e in sorted(idle, key=lambda x: x.last_used)]

    def status(self) -> list[KeyStatus]:
        with self._lock:
            return [
                KeyStatus(
                    circuit_id=e.circuit_id,
                    tier=e.tier.value,
                    bytes=e.nbytes,
                    refs=e.refs,
                    loads=e.loads,
                    load_ms=round(e.load_ms, 3),
                    device_table_bytes=h.table_bytes if h is not None else 0,
                    streamed_bytes=h.streamed_bytes if h is not None else 0,
                    uploads_in_turn=h.uploads_in_turn if h is not None else False,
                    msms_in_turn=h.msms_in_turn if h is not None else False,
                    msm_width=h.msm_width if h is not None else 0,
                )
                for e in self._entries.values()
                for h in (e.device_handle,)
            ]

    def __contains__(self, circuit_id: str) -> bool:
        with self._lock:
            return circuit_id in self._entries


def _release(e: _Entry) -> None:
    """The key leaves its devices (demotion, re-registration): they forget its copies."""
    handle, e.device_handle = e.device_handle, None
    if handle is not None:
        handle.release()
