"""The test sealer and vanilla verification: sealed C1 outputs verify (every challenge mode,
2 KiB, test shapes, 8 MiB); a changed seed, comm_r or any proof value fails, naming the
partition and challenge. Known answer: tree_d over an all-zero sector is Lotus' zero comm_d."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import numpy as np
import pytest

from cuzk.filecoin.merkle import (
    MerkleTree,
    PoseidonNodes,
    Sha256Nodes,
    TreeShape,
    ints_to_limbs,
    limbs_to_ints,
)
from cuzk.filecoin.porep import (
    PoRepConfig,
    RegisteredSealProof,
    from_json,
    to_json,
)
from cuzk.filecoin.porep.seal import (
    compute_labels,
    fr32_pad,
    fr32_unpad,
    padded_nodes,
    seal,
    tree_proof,
    unpadded_capacity,
)
from cuzk.filecoin.porep.verify import VanillaProofError, verify_c1

KAT = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "filecoin_porep_kat.json").read_text())
P2K = RegisteredSealProof.StackedDrg2KiBV1_1


@pytest.fixture(scope="module")
def sealed():  # noqa: ANN201 - (C1 output, sealed sector, inputs)
    return seal(P2K, rng=np.random.default_rng(21), sector_id=5)


def test_zero_sector_comm_d() -> None:
    zero = KAT["zero_comm_d"]["entries"]
    for nodes in (64, 1 << 18):
        t = MerkleTree(np.zeros((nodes, 4), dtype=np.uint64), TreeShape(2), "sha256")
        assert t.root.to_bytes(32, "little").hex() == zero[str(nodes * 32)]
    # larger sizes: the zero tree is one node hashed with itself per level
    from cuzk.filecoin.hashers.sha256 import hash2
    x = bytes(32)
    for level in range(1, 32):
        x = hash2(x, x)
        if str(32 << level) in zero:
            assert x.hex() == zero[str(32 << level)]


class _IntsOnly:
    """A node hasher over Python ints only (hashlib SHA-256, neptune's Poseidon schedule in
    Python): the reference for the native bulk kernels the trees use."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._h = Sha256Nodes() if name == "sha256" else PoseidonNodes(native=False)

    def hash_groups(self, values: list[int], arity: int) -> list[int]:
        return self._h.hash_groups(values, arity)

    def hash_limbs(self, values: np.ndarray, arity: int) -> np.ndarray:
        return ints_to_limbs(self.hash_groups(limbs_to_ints(values), arity))


@pytest.mark.parametrize("shape, hasher, nodes", [("2", "sha256", 64), ("8", "poseidon", 512),
                                                  ("8-8", "poseidon", 512), ("8-8-2", "poseidon", 1024),
                                                  ("8-4-2", "poseidon", 512), ("2", "poseidon", 16)])
def test_native_tree_matches_python_hashers(shape: str, hasher: str, nodes: int) -> None:
    rng = random.Random(nodes)
    leaves = [rng.getrandbits(254) for _ in range(nodes)]
    s = TreeShape.parse(shape)
    ref = MerkleTree(leaves, s, _IntsOnly(hasher))
    t = MerkleTree(ints_to_limbs(leaves), s, hasher)
    assert t.root == ref.root
    for i in (0, 1, nodes // 3, nodes - 1):
        p = tree_proof(t, i)
        r = ref.gen_proof(i)
        assert p.path() == r.path and p.leaf == r.leaf and p.path_index() == i
        assert p.matches_shape(s, nodes) is None


def test_fr32_padding() -> None:
    raw = bytes(range(256)) * 7
    nodes = fr32_pad(raw, 64)
    assert nodes.shape == (64, 4)
    b = np.ascontiguousarray(nodes, dtype="<u8").view(np.uint8).reshape(64, 32)
    assert not (b[:, 31] & 0xC0).any()
    back = fr32_unpad(nodes)
    assert back[: len(raw)] == raw and not any(back[len(raw):]) and len(back) == unpadded_capacity(64) == 2032
    assert (fr32_pad(b"\xff" * 127, 4).view(np.uint8).reshape(4, 32)[:, 31] == 0x3F).all()
    with pytest.raises(ValueError, match="at most 2032 bytes"):
        fr32_pad(bytes(2033), 64)
    with pytest.raises(ValueError, match="node 1 of the padded data has its top bits set"):
        padded_nodes(bytes(63) + b"\x80", 64)


def test_seal_2kib_verifies(sealed) -> None:  # noqa: ANN001
    out, sector, inputs = sealed
    cfg = sector.config
    verify_c1(out, prover_id=inputs.prover_id, sector_id=inputs.sector_id)
    assert len(out.vanilla_proofs) == 1 and len(out.vanilla_proofs[0]) == 2
    assert out.comm_d == sector.comm_d.to_bytes(32, "little")
    for p in out.vanilla_proofs[0]:
        assert p.layers == 2 and p.comm_c == sector.comm_c and p.comm_r_last == sector.comm_r_last
        assert p.parent_indices() == sector.graph.parents(p.challenge)
    # the native labels are the Python reference's (stacked/label.py)
    assert (compute_labels(sector.graph, sector.replica_id, cfg.layers, native=False) == sector.labels).all()
    # through the JSON and back
    verify_c1(from_json(to_json(out)), prover_id=inputs.prover_id, sector_id=inputs.sector_id)


@pytest.mark.parametrize("proof", [RegisteredSealProof.StackedDrg2KiBV1,
                                   RegisteredSealProof.StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
                                   RegisteredSealProof.StackedDrg2KiBV1_2_Feat_NonInteractivePoRep])
def test_seal_modes(proof: RegisteredSealProof) -> None:
    out, sector, inputs = seal(proof, rng=np.random.default_rng(22))
    verify_c1(from_json(to_json(out)), prover_id=inputs.prover_id, sector_id=inputs.sector_id)
    assert len(out.vanilla_proofs) == sector.config.partitions


@pytest.mark.parametrize("shape, nodes, layers", [("8-8", 512, 11), ("8-8-2", 1024, 11), ("8-4-2", 512, 2)])
def test_seal_test_shapes(shape: str, nodes: int, layers: int) -> None:
    cfg = PoRepConfig.test(nodes, layers=layers, challenges=3, shape=shape, partitions=2)
    out, sector, _ = seal(RegisteredSealProof.StackedDrg32GiBV1_1, config=cfg, rng=np.random.default_rng(23))
    verify_c1(out, config=cfg)
    p = out.vanilla_proofs[1][2]
    assert p.comm_r_last_proof.kind == ("Top" if shape.count("-") == 2 else "Sub")
    assert p.comm_d_proofs.kind == "Single" and len(p.comm_d_proofs.base) == nodes.bit_length() - 1


def test_seal_given_inputs_are_deterministic() -> None:
    kw = dict(prover_id=bytes([7] * 32), sector_id=9, ticket=bytes([8] * 32), seed=bytes([9] * 32))
    a, _, _ = seal(P2K, b"hello sector", **kw)
    b, _, _ = seal(P2K, b"hello sector", **kw)
    assert to_json(a) == to_json(b)
    c, _, _ = seal(P2K, b"hello sector", porep_id=bytes([44] * 32), **kw)
    assert c.comm_r != a.comm_r and c.replica_id != a.replica_id
    with pytest.raises(VanillaProofError):  # the registered proof's porep_id is another graph
        verify_c1(c)
    verify_c1(c, config=PoRepConfig.test(64, challenges=2, porep_id=bytes([44] * 32)))
    with pytest.raises(ValueError, match="seed must not be all zero"):
        seal(P2K, b"", seed=bytes(32))


# -- tampering -----------------------------------------------------------------------------------


def _fails(out, match: str, partition: int | None = 0, challenge: int | None = None) -> VanillaProofError:  # noqa: ANN001
    with pytest.raises(VanillaProofError, match=match) as e:
        verify_c1(out)
    assert e.value.partition == partition
    if challenge is not None:
        assert e.value.challenge_index == challenge
    return e.value


def test_changed_seed_fails(sealed) -> None:  # noqa: ANN001
    out = copy.deepcopy(sealed[0])
    out.seed = bytes([out.seed[0] ^ 1]) + out.seed[1:]
    err = _fails(out, "tree_d inclusion: proves leaf", challenge=0)
    assert "partition 0, challenge 0 (node " in str(err)


def test_changed_comm_r_fails(sealed) -> None:  # noqa: ANN001
    out = copy.deepcopy(sealed[0])
    out.comm_r = bytes([out.comm_r[0] ^ 1]) + out.comm_r[1:]
    _fails(out, r"comm_r != Poseidon\(comm_c, comm_r_last\)")


def test_changed_comm_d_and_replica_id_fail(sealed) -> None:  # noqa: ANN001
    out = copy.deepcopy(sealed[0])
    out.comm_d = bytes([out.comm_d[0] ^ 1]) + out.comm_d[1:]
    _fails(out, "tree_d inclusion: root", challenge=0)
    out = copy.deepcopy(sealed[0])
    out.replica_id = bytes([out.replica_id[0] ^ 1]) + out.replica_id[1:]
    _fails(out, "tree_d inclusion: proves leaf")  # the challenges move with the replica_id
    with pytest.raises(VanillaProofError, match="replica_id does not derive"):
        verify_c1(out, prover_id=sealed[2].prover_id, sector_id=sealed[2].sector_id)


def _domain_slots(obj, path=()):  # noqa: ANN001, ANN202 - every int field of a proof, with its path
    if isinstance(obj, int):
        yield path
    elif isinstance(obj, list):
        for i, x in enumerate(obj):
            yield from _domain_slots(x, (*path, i))
    elif obj is not None and hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            yield from _domain_slots(getattr(obj, name), (*path, name))


def _get(obj, path):  # noqa: ANN001, ANN202
    for k in path[:-1]:
        obj = obj[k] if isinstance(k, int) else getattr(obj, k)
    return obj, path[-1]


def test_every_proof_value_is_checked(sealed) -> None:  # noqa: ANN001
    """Changing any single integer of a proof (a domain, an index, a layer, a node) fails."""
    out = sealed[0]
    slots = list(_domain_slots(out.vanilla_proofs[0][1]))
    assert len(slots) > 400
    rng = random.Random(5)
    for path in rng.sample(slots, 120) + [s for s in slots if s[-1] in ("index", "layer_index", "node")]:
        bad = copy.deepcopy(out)
        parent, key = _get(bad.vanilla_proofs[0][1], path)
        old = parent[key] if isinstance(key, int) else getattr(parent, key)
        new = old ^ (1 << rng.randrange(8 if key in ("index", "layer_index") else 250))
        if isinstance(key, int):
            parent[key] = new
        else:
            setattr(parent, key, new)
        with pytest.raises(VanillaProofError) as e:
            verify_c1(bad)
        assert e.value.partition == 0, path
        # a changed tree_c or tree_r root in challenge 1 shows as comm_r or comm_c mismatch
        assert e.value.challenge_index in (1, None), (path, str(e.value))


def test_json_byte_change_fails(sealed) -> None:  # noqa: ANN001
    """A changed byte of the serialized proofs fails at parsing or at verification."""
    blob = to_json(sealed[0])
    rng = random.Random(6)
    digits = [i for i, ch in enumerate(blob) if 48 <= ch <= 57]
    for i in rng.sample(digits, 40):
        b = bytearray(blob)
        b[i] = 48 + (b[i] - 48 + rng.randrange(1, 10)) % 10
        try:
            out = from_json(bytes(b))
        except ValueError:
            continue  # a byte above 255, a number with a leading zero: not a C1 output
        with pytest.raises(VanillaProofError):
            verify_c1(out)


def test_structure_errors(sealed) -> None:  # noqa: ANN001
    out = copy.deepcopy(sealed[0])
    out.vanilla_proofs[0].pop()
    _fails(out, "1 proofs, the partition has 2 challenges")
    out = copy.deepcopy(sealed[0])
    out.vanilla_proofs.append(out.vanilla_proofs[0])
    _fails(out, "2 partitions, 1 expected", partition=None)
    out = copy.deepcopy(sealed[0])
    out.vanilla_proofs[0][0].replica_column_proofs.exp_parents.pop()
    _fails(out, "6 DRG and 7 expander parent columns", challenge=0)
    out = copy.deepcopy(sealed[0])
    out.vanilla_proofs[0][0].labeling_proofs.pop()
    _fails(out, "1 labeling proofs, expected 2", challenge=0)
    out = copy.deepcopy(sealed[0])
    rcp = out.vanilla_proofs[0][1].replica_column_proofs
    rcp.drg_parents[2], rcp.drg_parents[3] = rcp.drg_parents[3], rcp.drg_parents[2]
    if rcp.drg_parents[2].column.index != rcp.drg_parents[3].column.index:
        _fails(out, "DRG parent 2", challenge=1)


@pytest.mark.slow
def test_seal_8mib_verifies() -> None:
    out, sector, inputs = seal(RegisteredSealProof.StackedDrg8MiBV1_1, rng=np.random.default_rng(24))
    verify_c1(from_json(to_json(out)), prover_id=inputs.prover_id, sector_id=inputs.sector_id)
    # spot-check labels against the Python reference (stacked/label.py) at the challenges
    from cuzk.filecoin.porep.label import create_label_fr, expand_parents
    g = sector.graph
    for p in out.vanilla_proofs[0]:
        v = p.challenge
        drg = [int(x) for x in limbs_to_ints(sector.labels[0][g.drg_parents(v)])]
        assert create_label_fr(sector.replica_id, 1, v, [x.to_bytes(32, "little") for x in
                                                         expand_parents(drg, 1)]) == p.replica_column_proofs.c_x.column.rows[0]


def test_proofs_satisfy_the_por_gadget(sealed) -> None:  # noqa: ANN001
    """The sealer's Merkle proofs, handed to the circuit's inclusion gadget (gadgets/por.py),
    satisfy it: the data model and the circuit agree on path order and indices."""
    from cuzk.filecoin.cs import check_satisfied, synthesize_r1cs, synthesize_witness
    from cuzk.filecoin.reference_circuits import por_test_circuit

    p = sealed[0].vanilla_proofs[0][1]
    cases = [(TreeShape(8), "poseidon", p.comm_r_last_proof),
             (TreeShape(8), "poseidon", p.replica_column_proofs.exp_parents[5].inclusion_proof),
             (TreeShape(2), "sha256", p.comm_d_proofs)]
    cfg = PoRepConfig.test(1024, layers=2, challenges=1, shape="8-8-2")
    top, _, _ = seal(RegisteredSealProof.StackedDrg64GiBV1_1, config=cfg, rng=np.random.default_rng(25))
    cases.append((TreeShape(8, 8, 2), "poseidon", top.vanilla_proofs[0][0].comm_r_last_proof))
    for shape, hasher, mp in cases:
        circuit = por_test_circuit(shape, hasher, leaves=64 if shape.base_tree_count == 1 else 1024,
                                   proof=mp.to_inclusion_proof())
        check_satisfied(synthesize_r1cs(circuit), synthesize_witness(circuit))
        assert circuit.result["computed_root"] == mp.root
