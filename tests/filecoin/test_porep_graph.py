"""The SDR graph. Known answers: rust-fil-proofs' parent cache manifest (parent_cache.json)
records the sha256 of every published graph's full parent list; the 2 KiB and 8 MiB ones are
recomputed here (v1.0 and v1.1 graphs), and every manifest entry's file name is matched to a
registered proof's porep_id. The rest is structural (drgraph.rs and graph.rs tests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cuzk.filecoin.porep import ApiVersion, PoRepConfig, RegisteredSealProof, StackedGraph
from cuzk.filecoin.porep.chacha import ChaCha8Rng, chacha_block, chacha_blocks_np
from cuzk.filecoin.porep.graph import (
    derive_feistel_keys,
    feistel_invert_permute,
    feistel_permute,
    feistel_precompute,
)

KAT = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "filecoin_porep_kat.json").read_text())
MANIFEST = KAT["parent_cache"]["entries"]


def _has_native() -> bool:
    try:
        from cuzk import _native
    except ImportError:
        return False
    return hasattr(_native, "sdr_parents")


native = pytest.mark.skipif(not _has_native(), reason="native SDR kernels not built")


def test_manifest_names_match_registered_proofs() -> None:
    ids = {StackedGraph.for_config(PoRepConfig.for_proof(p)).parent_cache_id(): p for p in RegisteredSealProof}
    assert len(MANIFEST) == 10
    for name, entry in MANIFEST.items():
        p = ids[name]  # each published graph is one interactive proof's (V1 and V1_1 per size)
        assert p.value < 10 and p.sector.size == entry["sector_size"]


@pytest.mark.parametrize("proof", [RegisteredSealProof.StackedDrg2KiBV1, RegisteredSealProof.StackedDrg2KiBV1_1])
def test_parent_cache_digest_2kib(proof: RegisteredSealProof) -> None:
    g = StackedGraph.for_config(PoRepConfig.for_proof(proof))
    assert g.parent_cache_digest() == MANIFEST[g.parent_cache_id()]["digest"]
    py = g.parents_array(native=False)
    assert (py == np.array([g.parents(v) for v in range(g.nodes)], dtype=np.uint32)).all()
    if _has_native():
        assert (g.parents_array(native=True) == py).all()


@native
@pytest.mark.parametrize("proof", [RegisteredSealProof.StackedDrg8MiBV1, RegisteredSealProof.StackedDrg8MiBV1_1])
def test_parent_cache_digest_8mib(proof: RegisteredSealProof) -> None:
    g = StackedGraph.for_config(PoRepConfig.for_proof(proof))
    assert g.parent_cache_digest() == MANIFEST[g.parent_cache_id()]["digest"]


@native
@pytest.mark.parametrize("nodes, api", [(1 << 20, ApiVersion.V1_0_0), (1 << 30, ApiVersion.V1_1_0),
                                        (1 << 31, ApiVersion.V1_2_0), ((1 << 32) - 1, ApiVersion.V1_0_0)])
def test_native_matches_python(nodes: int, api: ApiVersion) -> None:
    g = StackedGraph(nodes, bytes(range(32)), api)
    for start in (0, nodes // 2 + 3, nodes - 40):
        assert (g.parents_array(start, 40, native=True) == g.parents_array(start, 40, native=False)).all()


@pytest.mark.parametrize("api", list(ApiVersion))
def test_graph_properties(api: ApiVersion) -> None:
    # drgraph.rs graph_bucket: nodes 0 and 1 have only node 0; no self reference; the immediate
    # predecessor first (1.1.0+) or last (1.0.0)
    for size in (4, 16, 256, 2048):
        g = StackedGraph(size, bytes([5]) + bytes(31), api)
        assert g.drg_parents(0) == [0] * 6 and g.drg_parents(1) == [0] * 6
        arr = g.parents_array(native=False)
        for v in range(2, size):
            drg = [int(x) for x in arr[v, :6]]
            assert v not in drg and all(p < v for p in drg)
            assert drg[0 if api is not ApiVersion.V1_0_0 else 5] == v - 1
        assert (arr[:, 6:] < size).all()


def test_api_versions_differ_only_in_order_and_truncation() -> None:
    pid = bytes(range(32))
    a = StackedGraph(1 << 12, pid, ApiVersion.V1_0_0)
    b = StackedGraph(1 << 12, pid, ApiVersion.V1_1_0)
    for v in range(2, 200):
        da, db = a.drg_parents(v), b.drg_parents(v)
        assert da[:5] == db[1:] and da[5] == db[0] == v - 1
        assert a.exp_parents(v) == b.exp_parents(v)  # 8 · 2^12 fits 32 bits: no truncation


def test_expander_high_parents() -> None:
    # graph.rs test_high_parent_bits: 64 GiB graphs reach parents past 2^29 within 3 nodes
    g = StackedGraph(1 << 31, (5).to_bytes(8, "little") + bytes(24), ApiVersion.V1_2_0)
    assert any(p >= 1 << 29 for v in range(3) for p in g.exp_parents(v))
    # and 1.0.0 graphs truncate the permuted index to 32 bits (never past 2^29 at 64 GiB)
    legacy = StackedGraph(1 << 31, (4).to_bytes(8, "little") + bytes(24), ApiVersion.V1_0_0)
    assert all(p < 1 << 29 for v in range(200) for p in legacy.exp_parents(v))


@pytest.mark.parametrize("n", [5, 6, 8, 12, 17, 16, 64, 1000])
def test_feistel_is_a_permutation(n: int) -> None:
    # feistel.rs test_feistel_on_arbitrary_set: keys [1, 2, 3, 4]
    keys, pre = (1, 2, 3, 4), feistel_precompute(n)
    out = [feistel_permute(n, i, keys, pre) for i in range(n)]
    assert sorted(out) == list(range(n))
    assert [feistel_invert_permute(n, p, keys, pre) for p in out] == list(range(n))


def test_feistel_keys_and_precompute() -> None:
    assert feistel_precompute(8 * 64) == (0b11111 << 5, 0b11111, 5)  # 4^5 = 1024 >= 512
    assert feistel_precompute(4) == (0b10, 0b1, 1)
    k = derive_feistel_keys(bytes(32))
    assert len(k) == 4 and all(0 <= x < 1 << 64 for x in k)


def test_chacha() -> None:
    # RFC 8439 §2.3.2: the ChaCha20 block function with its counter/nonce words
    key = bytes(range(32))
    words = chacha_block(key, (1, 0x09000000, 0x4A000000, 0), 20)
    assert words[:4] == [0xE4E7F110, 0x15593BD1, 0x1FDD0F50, 0xC47120A3]
    # the vectorized block equals the scalar one; the rng joins words low first
    keys = np.frombuffer(key, dtype="<u4").reshape(1, 8)
    assert chacha_blocks_np(keys, 5, 8)[0].tolist() == chacha_block(key, (5, 0, 0, 0), 8)
    rng = ChaCha8Rng(key)
    w = chacha_block(key, (0, 0, 0, 0), 8)
    assert rng.next_u64() == w[0] | w[1] << 32
