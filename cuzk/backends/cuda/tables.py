"""Precomputed window tables for a fixed base array (a proving key's query): built once, used by
every later MSM over that same array."""

from __future__ import annotations

from typing import Any

from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.launch import NULL, grid, i32, u32
from cuzk.backends.cuda.msm_plan import choose_table_shape, table_rows
from cuzk.backends.cuda.residency import Residency, Table
from cuzk.curves import Curve

MAX_ROWS = 40  # kernels.cu TABLE_MAX_WINDOWS


def precompute(device: Device, residency: Residency, c: Curve, points: Any, reserve: int,
               group: int = 1, window: int | None = None, stride: int | None = None) -> int:  # fmt: skip
    """Build the tables; returns their bytes, or 0 when they would leave less than `reserve`
    bytes of device memory free (or the array is kept on the host).

    The tables hold 2^(c·w)·P for every window w: nw times the points' memory (13x for
    BLS12-381 G1 at c = 20). When those do not fit, every k-th window's (a stride: k bucket
    sets instead of one), if the cost model says that still beats no tables. window / stride
    force a shape. When the MSMs over the array leave its bases at infinity out (a key's A or
    B query), the table holds the live bases only."""
    cp = device.cp
    fw = c.limbs * group
    n = int(points.shape[0])
    if n == 0:
        return 0
    hit = residency.built_table(points)
    if hit is not None:
        return hit.nbytes
    if residency.host_copy(points) is not None:
        return 0  # it did not fit on the device itself
    comp = residency.live_copy(points)
    mask = None
    if comp is not None:  # the live bases already, in order
        pts = comp.pts.reshape(-1, 2 * fw)
    else:
        pts = residency.bases(points, 2 * fw)
        mask = residency.left_out(points, pts)
    m = int(pts.shape[0]) if mask is None else n - mask.dead
    row_bytes = m * 2 * fw * 8
    room = device.free_bytes() - reserve
    if window:
        cw, k = window, stride or 1
    else:
        # every window a row when that fits; else a stride: fewer rows, more bucket sets
        cw, k = choose_table_shape(m, c.fr_r_bits, None)
        if table_rows(c.fr_r_bits // cw + 1, k) * row_bytes > room:
            cw, k = choose_table_shape(m, c.fr_r_bits, max(0, room) // max(1, row_bytes))
        if stride:
            k = stride
        if not cw:
            return 0
    nw = c.fr_r_bits // cw + 1
    k = min(k, nw)
    rows = table_rows(nw, k)
    if rows * m >= 1 << 31 or rows > MAX_ROWS:
        raise ValueError(f"window tables of {rows} x {m} rows are too large")
    need = rows * row_bytes
    if need > room:
        return 0
    rank = idx = None
    if comp is not None:
        rank = comp.rank
    elif mask is not None:
        rank = residency.ranks(mask.live, True)
        idx = cp.flatnonzero(mask.live).astype(cp.uint32)
    table = cp.empty((rows * m, 2 * fw), dtype=cp.uint64)
    # rows 2^(cw·k·r)·P: the build's row step is cw·k doublings
    device.kernels(c, "msm", group)["msm_table_build"](
        grid(m, 64), (64,),
        (pts, NULL if idx is None else idx, u32(m), i32(cw * k), i32(rows), table),
    )  # fmt: skip
    del idx
    # One-time work (seconds at 2^24+): wait for it, so callers can time and report it.
    cp.cuda.get_current_stream().synchronize()
    residency.put_table(points, Table(table, n, cw, nw, k, rank))
    return need
