"""MSMs over bases kept in pinned host memory (keep_on_host): streamed up in chunks, each
chunk's copy overlapping the sort and sums of the one before."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cuzk.backends import transfers
from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.msm_plan import point_shape
from cuzk.backends.cuda.tuning import STREAM_ROWS_MIN
from cuzk.curves import Curve

if TYPE_CHECKING:
    from cuzk.backends.cuda.msm import Msm


class StreamedMsm:
    """`rows`: bases per chunk (Tuning.msm_stream_rows; shrink() halves it)."""

    def __init__(self, device: Device, msm: Msm) -> None:
        self.device = device
        self._sums = msm  # the digit sorts and bucket sums of each chunk
        self.rows = device.tuning.msm_stream_rows

    def shrink(self) -> int:
        """Halve the chunk, down to STREAM_ROWS_MIN bases; the new chunk, or 0 when it already
        was at the minimum."""
        if self.rows <= STREAM_ROWS_MIN:
            return 0
        self.rows = max(STREAM_ROWS_MIN, self.rows // 2)
        return self.rows

    def msm(self, c: Curve, group: int, host: np.ndarray, scalars: Any, index: Any = None) -> Any:
        """Σ s·P for bases in pinned host memory: chunks go up on a copy stream into two device
        buffers in turn, the current stream summing one chunk while the next is copied; the
        chunks' sums are then summed on the device. index: the host rows' positions among the
        scalars (a copy of the live bases only)."""
        cp, msm = self.device.cp, self._sums
        n, width = int(host.shape[0]), int(host.shape[1])
        if n == 0:  # every base at infinity
            return cp.zeros(point_shape(c, group), dtype=cp.uint64)
        sc = msm.residency.to_device(scalars).reshape(-1, 4)
        rows = max(1, min(n, self.rows))
        chunks = [(i0, min(rows, n - i0)) for i0 in range(0, n, rows)]
        main = cp.cuda.get_current_stream()
        copy = cp.cuda.Stream(non_blocking=True)
        bufs = [cp.empty((rows, width), dtype=cp.uint64) for _ in range(min(2, len(chunks)))]
        # The pool hands out blocks in this stream's order: work queued here before may still
        # use them (say the NTT's buffers), so the first copies wait for it as later copies
        # wait for the sums of the buffer's previous chunk.
        ready = cp.cuda.Event(disable_timing=True)
        ready.record(main)
        freed: list[Any] = [ready] * len(bufs)
        up: list[Any] = []

        def start_copy(k: int) -> None:
            (i0, m), b = chunks[k], k % len(bufs)
            with copy:
                copy.wait_event(freed[b])
                start = cp.cuda.Event()
                start.record(copy)
                bufs[b][:m].set(host[i0 : i0 + m], stream=copy)
                ev = cp.cuda.Event()  # timing on: it also times the copy
                ev.record(copy)
            transfers.record("key", transfers.H2D, m * width * 8, True,
                             transfers.event_timer(cp, start, ev))
            up.append(ev)

        mod = self.device.kernels(c, "msm", group)
        parts = []
        start_copy(0)
        for k, (i0, m) in enumerate(chunks):
            # Queued before this chunk's sort: the sort and the G2 host finish wait on the host
            # for the device, and the next copy must not wait with them.
            if k + 1 < len(chunks):
                start_copy(k + 1)
            # a chunk's scalars gathered by index, not all at once: a tight card's room
            chunk_sc = sc[i0 : i0 + m] if index is None else sc[index[i0 : i0 + m]]
            marks = msm.marks()
            # the digit sort reads scalars only: it runs while the chunk's points arrive
            dg = msm.sort_digits(mod, chunk_sc, m, msm.windows(c, group, m, None, chunk_sc), marks)
            main.wait_event(up[k])
            out = msm.bucket_sums(c, group, mod, bufs[k % len(bufs)][:m], dg, 0, marks, m)
            parts.append(out.reshape(1, width))
            freed[k % len(bufs)] = cp.cuda.Event(disable_timing=True)
            freed[k % len(bufs)].record(main)
        if len(parts) == 1:
            return parts[0].reshape(point_shape(c, group))
        ones = cp.zeros((len(parts), 4), dtype=cp.uint64)
        ones[:, 0] = 1
        out = msm.plain(c, group, cp.ascontiguousarray(cp.concatenate(parts)), ones)
        return out.reshape(point_shape(c, group))
