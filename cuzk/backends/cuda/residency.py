"""What the backend keeps per base array (a proving key's query) for its MSMs, as typed entries
keyed by the host array's identity (cuzk.identity_cache): its device copy, or its live bases
with their ranks, or a pinned host copy; its infinity mask; its window tables; the scan for
bases at infinity that sizes it. An entry goes when its array does, or on `release`.

The key's arrays never change between proofs, which is what makes identity a valid key.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.backends.base import Kept
from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.msm_plan import table_rows
from cuzk.identity_cache import IdentityCache

KEEP_MIN = 1 << 12  # arrays at least this long that are passed again stay on the device
NO_ROW = 0xFFFFFFFF  # kernels.cu NO_ROW: a rank array's mark for a base left out of the sort


@dataclass
class LiveBases:
    """An array resident as its live bases only (keep_on_device): `pts` in order, and the
    digit sort's rank array (ranks(live, compact=True)), NO_ROW for the `dead` at infinity."""

    pts: Any
    rank: Any
    dead: int

    @property
    def nbytes(self) -> int:
        return int(self.pts.nbytes + self.rank.nbytes)


@dataclass
class HostCopy:
    """An array kept in pinned host memory (keep_on_host): `pinned` holds its rows, or with
    `index` (device int32, increasing) only those at index, the others (`dead`) at infinity."""

    pinned: np.ndarray
    index: Any
    dead: int


@dataclass
class Mask:
    """Bases at infinity of an n-row device copy: their count, the device bool mask of the
    others and its rank array (ranks(live, compact=False)); mask and ranks None when none is."""

    n: int
    dead: int
    live: Any
    rank: Any


@dataclass
class Table:
    """Window tables of one base array (msm_table_build): `rows` rows per point, row r =
    2^(c·stride·r)·P, for scalars of nw windows of c bits. Stride 1: a row per window, one
    bucket set; stride k: every k-th window, k bucket sets in 1/k of the memory. With `rank`
    the table holds the array's live bases only, and every sort over it uses that rank."""

    table: Any
    n: int
    c: int
    nw: int
    stride: int = 1
    rank: Any = None

    @property
    def rows(self) -> int:
        return table_rows(self.nw, self.stride)

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)


@dataclass
class Scan:
    """A host array's scan for bases at infinity, kept from resident_bytes for the
    keep_on_device or keep_on_host call after it (~0.5 s per 2^24 query)."""

    live: np.ndarray
    dead: int


def scan_live(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """(mask of the rows not all zero, the count that are: bases at infinity)."""
    live = rows.any(axis=1)
    return live, int(rows.shape[0]) - int(np.count_nonzero(live))


class Residency:
    """Every entry kept per base array, and the uploads that make them."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self._copies: IdentityCache[Any] = IdentityCache()  # to_device(keep=True)
        self._live: IdentityCache[LiveBases] = IdentityCache()
        self._host: IdentityCache[HostCopy] = IdentityCache()
        self._masks: IdentityCache[Mask] = IdentityCache()
        self._tables: IdentityCache[Table] = IdentityCache()
        self._scans: IdentityCache[Scan] = IdentityCache()

    # -- copies ------------------------------------------------------------------------------

    def to_device(self, arr: Any, keep: bool = False, dtype: Any = np.uint64,
                  kind: str | None = None) -> Any:  # fmt: skip
        """A C-contiguous device copy of arr (a device array passes through); keep=True keeps
        it for as long as the host array lives, so later calls skip the transfer (kept or not:
        an array shorter than KEEP_MIN that a caller chose to keep is found too). The copy
        counts as `kind` (default: a kept array is a key's, any other a proof's input)."""
        dev = self.device
        if dev.is_device_array(arr):
            return dev.cp.ascontiguousarray(arr, dtype=dtype)
        hit = self._copies.get(arr)
        if hit is not None:
            return hit
        out = dev.upload(arr, dtype, kind or ("key" if keep else "witness"))
        if keep:
            self._copies.put(arr, out)
        return out

    def bases(self, points: Any, width: int = -1) -> Any:
        """points as device rows of `width` words, a long array kept on the device."""
        n = int(points.shape[0])
        return self.to_device(points, keep=n >= KEEP_MIN, kind="key").reshape(n, width)

    def live_copy(self, points: Any) -> LiveBases | None:
        return None if self.device.is_device_array(points) else self._live.get(points)

    def host_copy(self, points: Any) -> HostCopy | None:
        return None if self.device.is_device_array(points) else self._host.get(points)

    def kept_as(self, points: Any) -> Kept | None:
        if self.host_copy(points) is not None:
            return Kept.HOST
        if self.live_copy(points) is not None:
            return Kept.LIVE_BASES
        if not self.device.is_device_array(points) and points in self._copies:
            return Kept.DEVICE
        return None

    def has_host_copies(self) -> bool:
        return len(self._host) > 0

    def _live_split(self, points: Any, keep: bool = False
                    ) -> tuple[np.ndarray, np.ndarray | None, int]:  # fmt: skip
        """(points as contiguous rows, the live rows' indices when a copy should hold only
        those, the count at infinity): only when at least msm_mask_min of the bases are at
        infinity, the share from which the MSMs leave them out. keep: remember the scan for the
        keep_on_device or keep_on_host that follows resident_bytes."""
        src = np.ascontiguousarray(points, dtype=np.uint64)
        n = int(src.shape[0])
        if n == 0:
            return src.reshape(0, 0), None, 0
        src = src.reshape(n, -1)
        hit = self._scans.get(points)
        if hit is not None:
            live, dead = hit.live, hit.dead
            if not keep:
                self._scans.pop(points)
        else:
            live, dead = scan_live(src)
            if keep:
                self._scans.put(points, Scan(live, dead))
        mask_min = self.device.tuning.msm_mask_min
        if dead and mask_min > 0 and dead >= mask_min * n:
            return src, np.flatnonzero(live), dead
        return src, None, dead

    def resident_bytes(self, points: Any) -> int:
        hit = self.live_copy(points)
        if hit is not None:
            return hit.nbytes
        src, keep, _ = self._live_split(points, keep=True)
        if keep is None:
            return int(src.nbytes)
        return int(keep.size * src.shape[1] * 8 + src.shape[0] * 4)  # live rows + ranks

    def keep_on_device(self, points: Any) -> int:
        """Resident for its MSMs; with at least msm_mask_min of its bases at infinity (a key's
        A or B query) as its live bases only, with the rank array its sorts and tables use."""
        hit = self.live_copy(points)
        if hit is not None:
            return hit.nbytes
        src, keep, dead = self._live_split(points)
        if keep is None:
            return int(self.to_device(points, keep=True, kind="key").nbytes)
        for cache in (self._copies, self._tables, self._masks):
            cache.pop(points)
        cp = self.device.cp
        pts = self.device.upload(np.take(src, keep, axis=0), np.uint64, "key")
        live = cp.zeros(src.shape[0], dtype=bool)
        live[self.device.upload(keep, keep.dtype, "key")] = True
        entry = self._live.put(points, LiveBases(pts, self.ranks(live, True), dead))
        return entry.nbytes

    def keep_on_host(self, points: Any) -> int:
        """In pinned host memory, streamed up by its MSMs; with at least msm_mask_min of its
        bases at infinity the copy holds the others only, their MSMs gathering their scalars
        through a device index. Any device copy or table of the array is dropped."""
        hit = self.host_copy(points)
        if hit is not None:
            return int(hit.pinned.nbytes)
        for cache in (self._copies, self._tables, self._masks, self._live):
            cache.pop(points)
        dev = self.device
        src, keep, dead = self._live_split(points)
        idx = None
        if keep is not None:
            pinned = dev.alloc_host((keep.size, src.shape[1]))
            np.take(src, keep, axis=0, out=pinned, mode="clip")  # clip: unbuffered
            idx = dev.upload(keep, np.int32, "key")
        else:
            pinned = src if src.size == 0 or dev.is_pinned(src) else dev.alloc_host(src.shape)
            if pinned is not src:
                np.copyto(pinned, src)
        self._host.put(points, HostCopy(pinned, idx, dead))
        return int(pinned.nbytes)

    # -- bases at infinity -------------------------------------------------------------------

    def ranks(self, live: Any, compact: bool) -> Any:
        """The digit sort's rank array for a live mask: each live base's row (its index, or
        with compact its index among the live bases), NO_ROW elsewhere."""
        cp = self.device.cp
        idx = cp.cumsum(live, dtype=cp.uint32) - 1 if compact else cp.arange(
            live.shape[0], dtype=cp.uint32)  # fmt: skip
        return cp.where(live, idx, cp.uint32(NO_ROW)).astype(cp.uint32, copy=False)

    def mask(self, points: Any, pts: Any) -> Mask:
        """The bases at infinity of pts (the device copy of points), computed once per array."""
        n = int(pts.shape[0])
        hit = self._masks.get(points)
        if hit is not None and hit.n == n:
            return hit
        live = (pts != 0).any(axis=1)
        dead = n - int(live.sum())
        entry = Mask(n, dead, live if dead else None, self.ranks(live, False) if dead else None)
        return self._masks.put(points, entry)

    def left_out(self, points: Any, pts: Any) -> Mask | None:
        """mask() when at least msm_mask_min of the bases are at infinity (the MSMs then leave
        them out), else None."""
        n = int(pts.shape[0])
        mask_min = self.device.tuning.msm_mask_min
        if mask_min <= 0 or n == 0:
            return None
        m = self.mask(points, pts)
        return m if m.dead >= mask_min * n else None

    def sort_ranks(self, points: Any, pts: Any, tab: Table | None) -> Any:
        """The rank array an MSM over points sorts with: its compacted table's, else the bases'
        own rows with those at infinity left out, else None."""
        if tab is not None and tab.rank is not None:
            return tab.rank
        m = self.left_out(points, pts)
        return None if m is None else m.rank

    def infinity_share(self, points: Any) -> float:
        n = int(points.shape[0])
        if n == 0:
            return 0.0
        hit = self.host_copy(points) or self.live_copy(points)
        if hit is not None:
            return hit.dead / n
        return self.mask(points, self.bases(points)).dead / n

    # -- window tables -----------------------------------------------------------------------

    def table(self, points: Any, n: int | None = None) -> Table | None:
        """points' window tables (when built for n rows, and msm_tables is on)."""
        tab = self._tables.get(points) if self.device.tuning.msm_tables else None
        if tab is None or (n is not None and tab.n != n):
            return None
        return tab

    def put_table(self, points: Any, table: Table) -> None:
        self._tables.put(points, table)

    def built_table(self, points: Any) -> Table | None:
        """points' tables whatever msm_tables says."""
        return self._tables.get(points)

    # -- forgetting --------------------------------------------------------------------------

    def release(self, arrays: Iterable[Any]) -> None:
        for arr in arrays:
            for cache in (self._copies, self._live, self._host, self._masks, self._tables,
                          self._scans):  # fmt: skip
                cache.pop(arr)

    def release_tables(self, arrays: Iterable[Any]) -> None:
        for arr in arrays:
            self._tables.pop(arr)

    def drop_tables(self) -> None:
        self._tables.clear()

    def drop_device_copies(self) -> None:
        """Forget every device copy (whole or live bases); later calls upload again."""
        self._copies.clear()
        self._live.clear()
