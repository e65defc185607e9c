"""Cost models of the CUDA MSM, pure functions of sizes and counts (no device): the window
width, the shape of window tables, the scatter's passes, and when batch-affine rounds or flat
first-level chunks pay."""

from __future__ import annotations

from typing import NamedTuple

from cuzk.curves import Curve

# Bucket cost K of the window model: a G1 bucket costs about 20 mixed additions (sorting,
# partial sums, the running-sum reduction); G2's additions cost ~3x more, so its per-bucket
# overhead weighs less.
K_G1, K_G2 = 20, 3
AFF_SKEW = 8  # affine rounds when the largest bucket holds > this times the mean ...
AFF_SHARE = 32  # ... and more than 1/this of all entries ...
AFF_MIN = 1 << 24  # ... and at least this many (Tuning.msm_affine_min)
FLAT_SKEW = 8  # flat chunks when the largest bucket holds > this times the mean


def point_shape(c: Curve, group: int) -> tuple[int, ...]:
    """An affine point of the group: (x, y) of limbs, or of Fq2 pairs."""
    return (2, c.limbs) if group == 1 else (2, 2, c.limbs)


class Windows(NamedTuple):
    """The bucket layout of one MSM: window width c, windows nw, table stride `shared` (0: no
    table, one bucket set per window), buckets nb and window sums nwr (kernels.cu bucket_key)."""

    c: int
    nw: int
    shared: int
    nb: int
    nwr: int


def table_windows(c: int, nw: int, stride: int) -> Windows:
    """Over window tables of stride k: one bucket set per window class w mod k, entries naming
    table rows; Horner over the k sets at the end (none for stride 1)."""
    return Windows(c, nw, stride, stride << (c - 1), stride)


def plain_windows(c: int, bits: int, n: int) -> Windows:
    nw = bits // c + 1
    if nw * n >= 1 << 32:
        raise ValueError("MSM too large for 32-bit bucket offsets")
    return Windows(c, nw, 0, nw << (c - 1), nw)


def choose_window(n: int, bits: int, group: int = 1, dense: float = 1.0) -> int:
    """Window width c minimising the entries plus K per bucket: a scalar above 1 puts an entry
    in each of its nw windows, a scalar 0 or 1 at most one (in the ones bucket) whatever c, so
    with a fraction `dense` of scalars above 1 the cost is nw·dense·n + (1 − dense)·n +
    K·nw·2^(c−1). The backend samples `dense` for G2 only: G1's mostly-binary MSMs ran slower
    at the narrower windows."""
    k = K_G1 if group == 1 else K_G2
    dense = min(max(dense, 0.0), 1.0)
    best, best_cost = 3, None
    for c in range(3, 23):
        nw = bits // c + 1
        cost = nw * dense * n + (1.0 - dense) * n + nw * k * (1 << (c - 1))
        if best_cost is None or cost < best_cost:
            best, best_cost = c, cost
    return best


def table_rows(nw: int, stride: int) -> int:
    """Rows per point of window tables of stride k over nw windows: every k-th window's."""
    return -(-nw // stride)


def untabled_cost(n: int, bits: int) -> int:
    c = choose_window(n, bits)
    return (bits // c + 1) * (n + K_G1 * (1 << (c - 1)))


def choose_table_shape(n: int, bits: int, max_rows: int | None) -> tuple[int, int]:
    """(window c, stride k) of the cheapest tables with at most max_rows rows per point (None:
    no limit): windows·n additions plus K per bucket of the k bucket sets. (0, 0) when no shape
    beats the MSM without tables by 3 %: with few rows the bucket sets multiply."""
    best, best_cost = (0, 0), None
    for c in range(8, 24):
        nw = bits // c + 1
        for k in range(1, nw + 1):
            rows = table_rows(nw, k)
            if max_rows is not None and rows > max_rows:
                continue
            cost = nw * n + K_G1 * k * (1 << (c - 1))
            if best_cost is None or cost < best_cost:
                best, best_cost = (c, k), cost
            break  # the smallest k that fits is the cheapest for this c
    if best_cost is None or (max_rows is not None and best_cost > 0.97 * untabled_cost(n, bits)):
        return 0, 0
    return best


def choose_table_window(n: int, bits: int) -> int:
    """Window width of tables with a row for every window (one bucket set)."""
    return choose_table_shape(n, bits, None)[0]


def scatter_passes(nb: int, total: int, n: int, l2: int) -> int:
    """Passes of bucket ranges for msm_scatter: enough that each pass's write frontier (one
    partly written 128-byte line per bucket) fits the L2, at most 4, and one for sparse
    scalars (fewer than 4 entries per scalar: a mostly-binary witness), where each extra pass's
    read of the scalars costs more than it saves."""
    if total < 4 * n:
        return 1
    return max(1, min(4, -(-nb * 128 // max(1, l2))))


def affine_pays(maxcnt: int, total: int, nb: int, min_entries: int = AFF_MIN) -> bool:
    """Batch-affine rounds first: one bucket far above the mean, holding a large share of all
    entries (a uniform MSM's short top window gives the first, never the second), and many of
    them (the ones of a mostly-binary witness of 2^26 points). On uniform scalars their extra
    memory passes cost more than the products they save."""
    return (
        maxcnt >= min_entries
        and maxcnt > max(1, AFF_SKEW * total // nb)
        and maxcnt * AFF_SHARE > total
    )


def flat_pays(maxcnt: int, total: int, nb: int) -> bool:
    """Flat chunks for the first bucket sums: when the largest bucket is far above the mean and
    holds a large share of all entries (the ones of a mostly-binary witness; a uniform MSM's
    short top window gives only the first)."""
    return maxcnt > max(1, FLAT_SKEW * total // nb) and maxcnt * AFF_SHARE > total
