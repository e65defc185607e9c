"""Host-side choices of the CUDA MSM (no GPU needed): window width and when the batch-affine
bucket rounds run, checked on bucket counts built from real digit decompositions."""

from __future__ import annotations

import random

import pytest

from cuzk.backends.cuda.msm_plan import affine_pays as _affine_pays
from cuzk.backends.cuda.msm_plan import choose_window, scatter_passes
from cuzk.curves import get_curve


def _bucket_counts(scalars: list[int], c: int, bits: int) -> list[int]:
    """Counts per bucket of a tabled MSM (all windows share 2^(c-1) buckets; signed digits,
    zero digits skipped) - the same histogram the device builds."""
    nb = 1 << (c - 1)
    counts = [0] * (nb + 1)
    nw = bits // c + 1
    for k in scalars:
        carry = 0
        for w in range(nw):
            d = ((k >> (w * c)) & ((1 << c) - 1)) + carry
            carry = 0
            if d > nb:
                d -= 1 << c
                carry = 1
            if d:
                counts[abs(d)] += 1
    return counts[1:]


def _pays(scalars: list[int], c: int, bits: int, scale: int = 1 << 14) -> bool:
    """The decision for an MSM `scale` times larger with the same bucket distribution (4000
    scalars x 2^14: ~2^26 points)."""
    counts = [k * scale for k in _bucket_counts(scalars, c, bits)]
    return _affine_pays(max(counts), sum(counts), len(counts))


def test_uniform_scalars_skip_affine_rounds_even_with_a_short_top_window() -> None:
    r = get_curve("bls12_381").r
    rng = random.Random(7)
    scalars = [rng.randrange(r) for _ in range(4000)]
    # c = 11 leaves a 2-bit top window: its few buckets hold ~10x the mean (the 2^26, c = 22
    # case on the device) but a small share of all entries.
    counts = _bucket_counts(scalars, 11, 255)
    assert max(counts) > 8 * sum(counts) // len(counts)
    assert not _pays(scalars, 11, 255)
    assert not _pays(scalars, 8, 255)


def test_mostly_binary_witness_takes_affine_rounds() -> None:
    r = get_curve("bls12_381").r
    rng = random.Random(8)
    scalars = [rng.choice((0, 1)) if rng.random() < 0.78 else rng.randrange(r) for _ in range(4000)]
    assert _pays(scalars, 11, 255)
    # the same mix at ~2^24 points: the chunked XYZZ sums win there
    assert not _pays(scalars, 11, 255, scale=1 << 12)


def test_edge_counts() -> None:
    assert not _affine_pays(0, 0, 1 << 10)
    assert not _affine_pays(1, 1, 1)  # one entry in one bucket: nothing to batch
    assert _affine_pays(1 << 25, 1 << 25, 1 << 10)  # everything in one bucket
    assert not _affine_pays(1000, 1000, 1 << 10)  # ... but too few to pay for the rounds


def test_window_grows_with_size_and_g2_takes_wider_windows() -> None:
    ws = [choose_window(1 << k, 255) for k in range(10, 27, 2)]
    assert ws == sorted(ws) and ws[0] < ws[-1]
    assert all(3 <= w <= 22 for w in ws)
    # G2 additions cost ~3x more, so the per-bucket overhead weighs less: wider windows
    assert choose_window(1 << 20, 255, group=2) > choose_window(1 << 20, 255)


@pytest.mark.parametrize("group", (1, 2))
def test_sparse_scalars_take_narrower_windows(group: int) -> None:
    """Scalars 0 and 1 add one entry at most whatever c, so the fewer scalars above 1, the less
    the windows' entries weigh against the buckets: never a wider window, and at 2^24 a
    narrower one (a mostly-binary G2 MSM is far slower at c = 20 than at 16)."""
    for k in range(10, 27, 2):
        ws = [choose_window(1 << k, 255, group, d) for d in (1.0, 0.5, 0.22, 0.1, 0.0)]
        assert ws == sorted(ws, reverse=True), (k, ws)
    assert choose_window(1 << 24, 255, group, 0.1) < choose_window(1 << 24, 255, group)
    assert choose_window(1 << 24, 255, group, 1.0) == choose_window(1 << 24, 255, group)


def test_scatter_passes_follow_the_write_frontier() -> None:
    """Dense scalars (uniform: ~13 entries each with tables) scatter in passes whose frontier of
    one 128-byte line per bucket fits the L2: 2^19 buckets -> 2 passes on a 50 MiB L2,
    2^21 -> 4 (the cap); small bucket sets and sparse scalars (a mostly-binary witness, here
    the counts of real digit decompositions) one pass."""
    l2 = 50 << 20
    r = get_curve("bls12_381").r
    rng = random.Random(11)
    uniform = [rng.randrange(r) for _ in range(2000)]
    bits = [rng.randrange(r) if rng.random() < 0.05 else rng.randrange(2) for _ in range(2000)]
    n = len(uniform)
    assert scatter_passes(1 << 19, sum(_bucket_counts(uniform, 20, 255)), n, l2) == 2
    assert scatter_passes(1 << 21, sum(_bucket_counts(uniform, 22, 255)), n, l2) == 4
    assert scatter_passes(1 << 15, 13 * n, n, l2) == 1
    assert scatter_passes(1 << 19, sum(_bucket_counts(bits, 20, 255)), n, l2) == 1
    assert scatter_passes(1 << 19, 13 * n, n, 16 << 20) == 4
