"""What a HOT proving key holds on each device, and letting it go.

A `DeviceKey` is one device's part: how each query is kept there (`base.Kept`), its MSM window
tables, the pinned bytes of queries streamed from the host, and what the out-of-memory ladder
has learnt about the key on that device (uploads in turn, fewer MSMs at once). `DeviceKeys`,
one per device, is the SRS manager's device handle of the key; demotion releases it, and the
backend forgets the key's copies (`release`) and tables (`release_tables`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from cuzk.backends.base import DeviceBackend, Kept
from cuzk.identity_cache import ref

log = logging.getLogger("cuzk.engine")


class DeviceKey:
    """A HOT key on one device. The arrays are held weakly: the key's record holds them."""

    def __init__(self, backend: DeviceBackend, arrays: list[Any]) -> None:
        self.backend = backend
        self._refs = [ref(a) for a in arrays]  # points (and matrices) the backend keeps
        self._table_refs: list[Any] = []
        self._lock = threading.Lock()
        self._released = False
        self.kept: dict[str, Kept | None] = {}  # query name -> how the backend keeps it
        self.table_bytes: dict[str, int] = {}  # query name -> MSM table bytes on the device
        self.host_bytes: dict[str, int] = {}  # query name -> pinned bytes (streamed, not resident)
        self.uploads_in_turn = False  # partitions upload under the device lock (no room)
        # Kernel regions run at most this many MSMs at once (0: all; fewer once they ran out
        # of device memory side by side).
        self.msm_width = 0

    @property
    def msms_in_turn(self) -> bool:
        return self.msm_width == 1

    @property
    def streamed_bytes(self) -> int:
        return sum(self.host_bytes.values())

    def add_table(self, name: str, arr: Any, nbytes: int) -> None:
        with self._lock:
            self._table_refs.append(ref(arr))
            self.table_bytes[name] = nbytes

    def drop_tables(self) -> int:
        """Free this key's MSM tables (the resident points stay); returns their bytes."""
        with self._lock:
            freed = sum(self.table_bytes.values())
            arrays = _live(self._table_refs)
            self._table_refs, self.table_bytes = [], {}
            if self._released:
                return freed
        self.backend.release_tables(arrays)
        return freed

    def release(self) -> None:
        """Let the backend forget everything it keeps for the key; once."""
        with self._lock:
            if self._released:
                return
            self._released = True
            arrays = _live(self._refs)
            self._table_refs = []
        # A dead array's entries went with it; its id may since name another key's array.
        self.backend.release(arrays)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # never from a finalizer
            log.exception("releasing a demoted key's device copies failed")


class DeviceKeys:
    """A HOT key's DeviceKey on every device backend (the SRS manager's device handle)."""

    def __init__(self, keys: list[DeviceKey]) -> None:
        self.keys = keys
        # called once on release: the engine frees the key's idle partition buffers
        self.on_release: Callable[[], None] | None = None
        self._released = False
        self._lock = threading.Lock()

    def on(self, backend: Any) -> DeviceKey | None:
        """The key's part on this backend's device (None: it has none there)."""
        return next((k for k in self.keys if k.backend is backend), None)

    def __iter__(self) -> Iterator[DeviceKey]:
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def table_bytes(self) -> int:
        return sum(sum(k.table_bytes.values()) for k in self.keys)

    @property
    def streamed_bytes(self) -> int:
        return sum(k.streamed_bytes for k in self.keys)

    @property
    def uploads_in_turn(self) -> bool:
        return any(k.uploads_in_turn for k in self.keys)

    @property
    def msms_in_turn(self) -> bool:
        return any(k.msms_in_turn for k in self.keys)

    @property
    def msm_width(self) -> int:
        """The fewest MSMs a device's kernel regions run at once for this key (0: all)."""
        return min((k.msm_width for k in self.keys if k.msm_width > 0), default=0)

    def release(self) -> None:
        """Demotion: every device forgets the key; then on_release, once."""
        with self._lock:
            if self._released:
                return
            self._released = True
        for k in self.keys:
            k.release()
        if self.on_release is not None:
            self.on_release()

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # never from a finalizer
            log.exception("freeing a demoted key's partition buffers failed")


def _live(refs: list[Any]) -> list[Any]:
    return [a for a in (r() for r in refs) if a is not None]
