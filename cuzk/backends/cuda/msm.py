"""The CUDA MSM (Pippenger with signed digits): the digit sort by bucket, the bucket sums (batch-
affine rounds, chunked XYZZ partial sums), Σ k·B_k per window and the windows combined; and the
tasks of a proof's A, B and L, which share one sort of their common scalars."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from cuzk.backends.cuda import msm_plan
from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.launch import BLOCK, NULL, grid, i32, u32
from cuzk.backends.cuda.msm_plan import Windows, point_shape
from cuzk.backends.cuda.msm_streamed import StreamedMsm
from cuzk.backends.cuda.residency import NO_ROW, Residency, Table
from cuzk.curves import Curve

AFF_K = 8  # pairs per thread in a batch-affine round (msm_affine.cuh AFF_K_MAX)
AFF_G = 16  # values per group of the batch inversion (AFF_G_MAX)
AFF_TOP = 4096  # at most this many Fermat inversions per batch inversion
AFF_FREE = 1 << 30  # device bytes an affine round leaves free, else the rounds stop


class Marks:
    """CUDA events between the phases of one MSM, when profiling (CudaBackend.msm_profile)."""

    def __init__(self, cp: Any, on: bool) -> None:
        self.cp, self.on = cp, on
        self.events: list[tuple[str, Any]] = []
        if on:
            self("start")

    def __call__(self, name: str) -> None:
        if self.on:
            ev = self.cp.cuda.Event()
            ev.record()
            self.events.append((name, ev))

    def seen(self, name: str) -> bool:
        return any(n == name for n, _ in self.events)

    def times(self) -> dict[str, float]:
        self.events[-1][1].synchronize()
        out: dict[str, float] = {}
        for (_, a), (name, b) in zip(self.events, self.events[1:], strict=False):
            out[name] = out.get(name, 0.0) + self.cp.cuda.get_elapsed_time(a, b)
        return out


class Digits:
    """One sort of an MSM's signed digits by bucket: bucket counts, offsets (nb + 1) and the
    entries (row | sign << 31), their total and the largest count. Read-only once made:
    g1_msm_tasks shares one between base arrays over the same scalars."""

    def __init__(self, w: Windows, counts: Any, off: Any, entries: Any, total: int,
                 maxcnt: int) -> None:  # fmt: skip
        self.w = w
        self.counts, self.off, self.entries = counts, off, entries
        self.total, self.maxcnt = total, maxcnt


def task_runs(cp: Any, counts: Any, nb: int, T: int) -> tuple[Any, Any]:
    """(full_off, short_ids) for msm_acc_entries_sorted_inl: the exclusive prefix of each
    bucket's full tasks (count // T), and the bucket ids by their short task's length, longest
    first (buckets whose count T divides, which have none, last)."""
    nfull = counts // T
    full_off = cp.zeros(nb + 1, dtype=cp.uint32)
    cp.cumsum(nfull, dtype=cp.uint32, out=full_off[1:])
    key = T - (counts - nfull * T)  # T - remainder: 1..T-1 for a short task, T for none
    return full_off, cp.argsort(key).astype(cp.uint32)


def dense_fraction(dev: Device, sc: Any, n: int, rank: Any = None, sample: int = 4096) -> float:
    """Fraction of the scalars above 1 (of bases the sort keeps: rank), from an evenly strided
    sample (one small read)."""
    if n == 0:
        return 1.0
    cp = dev.cp
    step = max(1, n // sample)
    h = dev.read(cp.ascontiguousarray(sc[::step][:sample]))
    big = (h[:, 1:] != 0).any(axis=1) | (h[:, 0] > 1)
    if rank is not None:
        big &= dev.read(cp.ascontiguousarray(rank[::step][:sample])) != NO_ROW
    return float(np.count_nonzero(big)) / h.shape[0]


def _native_horner(c: Curve, group: int, windows: np.ndarray, cw: int) -> np.ndarray:
    """Σ_w 2^(cw·w)·W_w of XYZZ window sums on the host, as the affine point msm_finish writes."""
    from cuzk import _native

    f = _native.g1_xyzz_horner if group == 1 else _native.g2_xyzz_horner
    return f(c.name, np.ascontiguousarray(windows, dtype=np.uint64), int(cw))


class Msm:
    """MSMs over device, resident, live-bases and (through StreamedMsm) host-kept arrays."""

    def __init__(self, device: Device, residency: Residency) -> None:
        self.device = device
        self.residency = residency
        self.streamed = StreamedMsm(device, self)
        self.profile: list[dict[str, float]] | None = None  # per-phase CUDA-event times (ms)

    def marks(self) -> Marks:
        return Marks(self.device.cp, self.profile is not None)

    def _mod(self, c: Curve, group: int) -> Mapping[str, Any]:
        return self.device.kernels(c, "msm", group)

    # -- one MSM -------------------------------------------------------------------------------

    def msm(self, c: Curve, group: int, points: Any, scalars: Any) -> Any:
        """Σ s·P on the device (affine point)."""
        cp = self.device.cp
        fw = c.limbs * group  # words per coordinate
        n = int(scalars.shape[0]) if scalars.ndim else 0
        if int(points.shape[0]) != n:
            raise ValueError(f"{points.shape[0]} points but {n} scalars")
        if n == 0:
            return cp.zeros(point_shape(c, group), dtype=cp.uint64)
        if n >= 1 << 31:
            raise ValueError("MSM larger than 2^31 points")
        res = self.residency
        hit = res.host_copy(points)
        if hit is not None:
            host = hit.pinned.reshape(-1, 2 * fw)
            return self.streamed.msm(c, group, host, scalars, hit.index)
        tab = res.table(points, n)
        comp = res.live_copy(points)
        if comp is not None:  # its live bases only: their rows through the ranks
            pts, rank = comp.pts.reshape(-1, 2 * fw), comp.rank
        else:
            pts = res.bases(points, 2 * fw)
            rank = res.sort_ranks(points, pts, tab)
        sc = res.to_device(scalars).reshape(n, 4)
        mod = self._mod(c, group)
        marks = self.marks()
        dg = self.sort_digits(mod, sc, n, self.windows(c, group, n, tab, sc, rank), marks, rank)
        src = tab.table if tab is not None else pts
        return self.bucket_sums(c, group, mod, src, dg, 0, marks, n)

    def plain(self, c: Curve, group: int, pts: Any, sc: Any) -> Any:
        """Σ s·P for device arrays without tables or masks (bases at infinity summed as such)."""
        n = int(sc.shape[0])
        mod = self._mod(c, group)
        marks = self.marks()
        dg = self.sort_digits(mod, sc, n, self.windows(c, group, n, None, sc), marks)
        return self.bucket_sums(c, group, mod, pts, dg, 0, marks, n)

    def windows(self, c: Curve, group: int, n: int, tab: Table | None, sc: Any = None,
                rank: Any = None) -> Windows:  # fmt: skip
        """The bucket layout of an MSM over n scalars: the table's, or the cost model's window
        (sc sampled for the share of scalars above 1 among those rank keeps, G2 only)."""
        if tab is not None:
            return msm_plan.table_windows(tab.c, tab.nw, tab.stride)
        t = self.device.tuning
        cw = t.msm_window
        if not cw:
            dense = t.msm_dense
            if dense is None:
                sampled = sc is not None and group == 2
                dense = dense_fraction(self.device, sc, n, rank) if sampled else 1.0
            cw = msm_plan.choose_window(n, c.fr_r_bits, group, dense)
        return msm_plan.plain_windows(cw, c.fr_r_bits, n)

    def sort_digits(self, mod: Mapping[str, Any], sc: Any, n: int, w: Windows, marks: Marks,
                    rank: Any = None) -> Digits:  # fmt: skip
        """Counting sort of the scalars' signed digits by bucket (histogram, scan, scatter);
        rank (kernels.cu NO_ROW) names each scalar's base row and leaves some out."""
        cp = self.device.cp
        rk = NULL if rank is None else rank
        counts = cp.zeros(w.nb, dtype=cp.uint32)
        mod["msm_histogram"](
            grid(n), (BLOCK,), (sc, u32(n), i32(w.c), i32(w.nw), i32(w.shared), rk, counts)
        )
        marks("histogram")
        off = cp.zeros(w.nb + 1, dtype=cp.uint32)
        cp.cumsum(counts, dtype=cp.uint32, out=off[1:])
        total, maxcnt = (int(v) for v in self.device.read(cp.stack([off[-1], counts.max()])))
        marks("scan")
        cursor = off[: w.nb].copy()
        entries = cp.empty(max(total, 1), dtype=cp.uint32)
        passes = self.device.tuning.msm_scatter_passes or msm_plan.scatter_passes(
            w.nb, total, n, self.device.l2_bytes())
        passes = max(1, min(passes, w.nb))
        for k in range(passes):
            lo, hi = w.nb * k // passes, w.nb * (k + 1) // passes
            mod["msm_scatter"](
                grid(n), (BLOCK,),
                (sc, u32(n), i32(w.c), i32(w.nw), i32(w.shared), rk, u32(lo), u32(hi), cursor,
                 entries),
            )  # fmt: skip
        marks("scatter")
        return Digits(w, counts, off, entries, total, maxcnt)

    def bucket_sums(self, c: Curve, group: int, mod: Mapping[str, Any], src: Any, dg: Digits,
                    skip: int, marks: Marks, n: int) -> Any:  # fmt: skip
        """The MSM from sorted digits: bucket sums over src's rows (entry row − skip; rows
        below skip add nothing), Σ k·B_k per window, the windows combined (affine result)."""
        cp, t = self.device.cp, self.device.tuning
        fw = c.limbs * group
        xw = 4 * fw  # words per XYZZ point
        w = dg.w
        nb, M = w.nb, 1 << (w.c - 1)
        off, counts, maxcnt, total = dg.off, dg.counts, dg.maxcnt, dg.total
        # Affine rounds pay when one bucket holds a large share of all entries (the ones of a
        # mostly-binary witness); on uniform scalars their memory passes cost more.
        if t.msm_affine_rounds > 0 and msm_plan.affine_pays(maxcnt, total, nb, t.msm_affine_min):
            src, ents, off, counts, maxcnt = self.affine_rounds(
                mod, fw, src, dg.entries, skip, off, counts, maxcnt, nb
            )
            skip = 0
            marks("affine")
        else:
            ents = dg.entries
        buckets = cp.empty((nb, xw), dtype=cp.uint64)
        T = t.msm_chunk
        if maxcnt <= T:
            mod["msm_acc_entries_buckets"](
                grid(nb), (BLOCK,), (src, ents, u32(skip), off, u32(nb), buckets)
            )
        else:
            # Chunked sums until every bucket has one partial; heavy buckets (scalars 1 of a
            # mostly-binary witness) become many parallel tasks instead of one long thread.
            items, first = None, True
            use_flat = t.msm_flat
            if use_flat is None:
                use_flat = msm_plan.flat_pays(maxcnt, total, nb)
            # the first level's tasks in two runs (full, then short ones longest first)
            sorted_tasks = not use_flat and t.msm_task_chunk > 0
            ab = t.msm_acc_block if group == 1 else t.msm_acc_block_g2
            while maxcnt > T:
                flat = first and use_flat
                Tl = T
                if first and sorted_tasks:
                    Tl = t.msm_task_chunk
                elif flat:
                    Tl = t.msm_flat_chunk or T
                if flat:  # partials per bucket: the Tl-chunks of the whole list it overlaps
                    lo, hi = off[:-1], off[1:]
                    ntasks = ((hi > lo) * ((hi - 1) // Tl - lo // Tl + 1)).astype(cp.uint32)
                else:
                    ntasks = (counts + (Tl - 1)) // Tl
                toff = cp.zeros(nb + 1, dtype=cp.uint32)
                cp.cumsum(ntasks, dtype=cp.uint32, out=toff[1:])
                nt = int(self.device.read(toff[-1]))
                part = cp.empty((nt, xw), dtype=cp.uint64)
                if first:
                    g = grid((total + Tl - 1) // Tl if flat else nt, ab)
                    if sorted_tasks:
                        mod["msm_acc_entries_sorted_inl"](
                            g, (ab,), (src, ents, u32(skip), off, toff,
                                       *task_runs(cp, counts, nb, Tl), u32(nb), u32(Tl), part)
                        )  # fmt: skip
                    else:
                        name = "msm_acc_entries_flat_inl" if flat else "msm_acc_entries_tasks_inl"
                        mod[name](g, (ab,), (src, ents, u32(skip), off, toff, u32(nb), u32(Tl),
                                             part))  # fmt: skip
                else:
                    mod["msm_acc_items_tasks_inl"](
                        grid(nt, ab), (ab,), (items, off, toff, u32(nb), u32(T), part))
                items, off, counts, first = part, toff, ntasks, False
                maxcnt = (maxcnt + Tl - 1) // Tl + int(flat)
                marks("acc_entries" if not marks.seen("acc_entries") else "acc_items")
            mod["msm_acc_items_buckets"](grid(nb), (BLOCK,), (items, off, u32(nb), buckets))
        marks("acc_buckets")
        seg = self.weighted_segments(mod, buckets, M, w.nwr, xw)
        marks("reduce")
        if group in t.msm_host_finish:
            # the windows' Horner chain on a host core (one device thread is slow for G2's
            # windows); the read-back waits for this stream only
            win = self.device.read(seg).reshape((w.nwr, 4) + point_shape(c, group)[1:])
            out = self.device.upload(_native_horner(c, group, win, w.c), kind="control")
        else:
            out = cp.empty(point_shape(c, group), dtype=cp.uint64)
            mod["msm_finish"]((1,), (1,), (seg, u32(w.nwr), i32(w.c), out))
        marks("finish")
        if self.profile is not None:
            self.profile.append(
                {"n": n, "table": bool(w.shared), "c": w.c, "entries": dg.total, **marks.times()}
            )
        return out

    def weighted_segments(self, mod: Mapping[str, Any], buckets: Any, M: int, nw: int,
                          xw: int) -> Any:  # fmt: skip
        """(nw, xw): Σ_k (k+1)·B_k per window (latency-bound: few threads, long add chains).
        Segments of S buckets, each adding lo·(its sum) by a scalar multiplication, then group
        sums of 8 down to one per window."""
        cp = self.device.cp
        S = max(1, min(self.device.tuning.msm_seg, M))
        per = (M + S - 1) // S
        items = cp.empty((nw * per, xw), dtype=cp.uint64)
        mod["msm_bucket_segments"](
            grid(nw * per), (BLOCK,), (buckets, u32(M), u32(S), u32(per), u32(nw), items)
        )
        while per > 1:
            k = 8
            per_out = (per + k - 1) // k
            nxt = cp.empty((nw * per_out, xw), dtype=cp.uint64)
            mod["msm_reduce_groups"](
                grid(nw * per_out), (BLOCK,), (items, u32(per), u32(per_out), u32(k), u32(nw), nxt)
            )
            items, per = nxt, per_out
        return items

    def affine_rounds(self, mod: Mapping[str, Any], fw: int, src: Any, entries: Any, skip: int,
                      off: Any, counts: Any, maxcnt: int, nb: int
                      ) -> tuple[Any, Any, Any, Any, int]:  # fmt: skip
        """Batch-affine rounds over the sorted bucket entries, each halving every bucket with
        one shared inversion: returns the new item source (contiguous affine points; entries
        become null), offsets, counts and largest count. The first round reads rows entry −
        skip of src (none below skip). Stops early when a round's buffers would not fit."""
        cp = self.device.cp
        K, pw = AFF_K, 2 * fw
        ents: Any = entries
        for _ in range(self.device.tuning.msm_affine_rounds):
            if maxcnt <= 1:
                break
            oc = (counts + 1) // 2
            out_off = cp.zeros(nb + 1, dtype=cp.uint32)
            cp.cumsum(oc, dtype=cp.uint32, out=out_off[1:])
            total = int(self.device.read(out_off[-1]))
            m = (total + K - 1) // K
            need = (total * pw + 2 * m * fw) * 8
            if need + AFF_FREE > self.device.free_bytes():
                break
            tp = cp.empty((m, fw), dtype=cp.uint64)
            args = (src, ents, u32(skip), off, out_off, u32(nb), u32(total), u32(K), u32(m))
            mod["msm_aff_fwd"](grid(m, 128), (128,), args + (tp,))
            self.batch_inverse(mod, tp, m, fw)
            out = cp.empty((total, pw), dtype=cp.uint64)
            mod["msm_aff_bwd"](grid(m, 128), (128,), args + (tp, out))
            src, ents, skip, off, counts = out, NULL, 0, out_off, oc
            maxcnt = (maxcnt + 1) // 2
        return src, ents, off, counts, maxcnt

    def batch_inverse(self, mod: Mapping[str, Any], vals: Any, n: int, fw: int) -> None:
        """vals[i] <- 1/vals[i] (all non-zero), one Fermat inversion per ~AFF_TOP values."""
        cp = self.device.cp
        G = AFF_G
        levels = [(vals, n)]
        while levels[-1][1] > AFF_TOP:
            lower, ln = levels[-1]
            m = (ln + G - 1) // G
            upper = cp.empty((m, fw), dtype=cp.uint64)
            mod["msm_aff_inv_reduce"](grid(m, 128), (128,), (lower, u32(ln), u32(G), u32(m), upper))
            levels.append((upper, m))
        top, tn = levels[-1]
        mod["msm_aff_inv_invert"](grid(tn, 32), (32,), (top, u32(tn)))
        for (lower, ln), (upper, m) in zip(levels[-2::-1], levels[:0:-1], strict=True):
            mod["msm_aff_inv_expand"](grid(m, 128), (128,), (lower, u32(ln), u32(G), upper, u32(m)))

    # -- a proof's A, B and L over one witness -------------------------------------------------

    def g1_msm_tasks(self, c: Curve, point_sets: Sequence[Any], scalars: Any,
                     single: Callable[[Any, Any], Any]) -> list[Callable[[], Any]]:  # fmt: skip
        """One callable per base array P_j giving Σ s·P over it, P_j paired with the last
        len(P_j) scalars. Arrays with window tables of one shape (or without tables) share one
        sort of the digits: made by whichever of their callables runs first, the others
        waiting for it (host lock, then a CUDA event on their own stream), each skipping the
        rows before its own array. An array alone in its kind, an array kept on the host or
        whose sort leaves bases out (a key's A or B with many bases at infinity, or a table of
        its live bases), and every array with msm_share_sort off, is `single(points,
        its scalars)`."""
        res, t = self.residency, self.device.tuning
        n = int(scalars.shape[0]) if scalars.ndim else 0
        for pts in point_sets:
            if int(pts.shape[0]) > n:
                raise ValueError(f"{pts.shape[0]} points but {n} scalars")
        tabs = [res.table(p, int(p.shape[0])) for p in point_sets]
        groups: dict[Any, list[int]] = {}
        for j, (p, tab) in enumerate(zip(point_sets, tabs, strict=True)):
            if res.host_copy(p) is not None or res.live_copy(p) is not None:
                continue  # streamed, or its live bases only: a sort of its own
            if (tab is not None and tab.rank is not None) or (
                t.msm_mask_min > 0 and res.left_out(p, res.bases(p)) is not None
            ):
                continue  # its own sort, leaving its bases at infinity out
            groups.setdefault((tab.c, tab.nw, tab.stride) if tab is not None else None, []).append(j)
        tasks: list[Callable[[], Any]] = [
            lambda p=pts: single(p, scalars[n - int(p.shape[0]) :]) for pts in point_sets
        ]
        sc = None
        for kind, members in groups.items():
            nw_rows = tabs[members[0]].rows if kind is not None else 1
            # entries hold the row below the sign bit
            if not t.msm_share_sort or len(members) < 2 or n * nw_rows >= 1 << 31:
                continue
            if sc is None:
                sc = res.to_device(scalars).reshape(n, 4)
            digits = self._shared_digits(c, sc, n, self.windows(c, 1, n, tabs[members[0]]))
            for j in members:
                tasks[j] = self._sorted_task(c, point_sets[j], tabs[j], digits, n, scalars)
        return tasks

    def _shared_digits(self, c: Curve, sc: Any, n: int, w: Windows) -> Callable[[Marks], Digits]:
        """A digit sort made once, by the first caller; later callers' streams wait for it."""
        cp = self.device.cp
        mod = self._mod(c, 1)
        lock, made = threading.Lock(), []

        def digits(marks: Marks) -> Digits:
            with lock:
                if not made:
                    dg = self.sort_digits(mod, sc, n, w, marks)
                    ev = cp.cuda.Event(disable_timing=True)
                    ev.record()
                    made.append((dg, ev))
            dg, ev = made[0]
            cp.cuda.get_current_stream().wait_event(ev)
            return dg

        return digits

    def _sorted_task(self, c: Curve, pts: Any, tab: Table | None,
                     digits: Callable[[Marks], Digits], n: int, like: Any
                     ) -> Callable[[], Any]:  # fmt: skip
        """Σ s·P over pts (the last len(pts) of n scalars) from a shared digit sort."""
        m = int(pts.shape[0])
        dev = self.device

        def run() -> Any:
            if m == 0:
                return dev.out(like, dev.cp.zeros(point_shape(c, 1), dtype=dev.cp.uint64))
            marks = self.marks()
            dg = digits(marks)
            src = tab.table if tab is not None else self.residency.bases(pts)
            src = src.reshape(-1, 2 * c.limbs)
            skip = (n - m) * (tab.rows if tab is not None else 1)
            out = self.bucket_sums(c, 1, self._mod(c, 1), src, dg, skip, marks, m)
            return dev.out(like, out)

        return run
