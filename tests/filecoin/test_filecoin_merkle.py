"""Merkle inclusion (storage-proofs-core por.rs, insertion.rs) on the Filecoin constraint
system: rust-fil-proofs' asserted counts, satisfaction on real trees, root equality with the
native trees, and that a wrong sibling or index bit is caught by the constraint it breaks."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cuzk.filecoin.cs import (
    check_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
)
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.gadgets.boolean import AllocatedBit
from cuzk.filecoin.gadgets.hash_functions import PoseidonFunction, Sha256Function
from cuzk.filecoin.gadgets.insertion import insert, select
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.por import AuthPath, por_no_challenge_input
from cuzk.filecoin.merkle import InclusionProof, MerkleTree, PoseidonNodes, Sha256Nodes, TreeShape
from cuzk.filecoin.reference_circuits import (
    POR_CONSTRAINTS,
    insertion_constraints,
    insertion_inputs,
    por_test_circuit,
    random_tree,
)
from cuzk.groth16.errors import UnsatisfiedConstraint

POSEIDON_SHAPES = ["2-0-0", "4-0-0", "8-0-0", "8-2-0", "8-4-2", "8-8-0", "8-8-2", "8-2-4"]


def _limbs_to_int(row: np.ndarray) -> int:
    return int.from_bytes(np.ascontiguousarray(row, dtype=np.uint64).tobytes(), "little")


# --- native trees -------------------------------------------------------------------------------


def test_poseidon_tree_known_answer() -> None:
    """filecoin-hashers poseidon.rs test_poseidon_hasher: leaves (1, 0, 0, 1), arity 2."""
    def limbs(*u: int) -> int:
        return sum(x << (64 * i) for i, x in enumerate(u))

    for nodes in (PoseidonNodes(native=False), PoseidonNodes()):
        t = MerkleTree([1, 0, 0, 1], TreeShape(2), nodes)
        assert t.node(1, 0) == limbs(0xB339FF6079800B5E, 0xEC5907B3DC3094AF,
                                               0x93C003CC74A24F26, 0x042F94FFBE786BC3)
        assert t.root == limbs(0xEFBB8BE3E291E671, 0x77CC72B8CB2B5AD2,
                               0x30EB6385AE6B74AE, 0x1EFFEBB7B26AD9EB)


def test_sha256_tree_matches_hashlib() -> None:
    import hashlib

    leaves = [random.Random(5).randrange(R) for _ in range(4)]
    enc = [v.to_bytes(32, "little") for v in leaves]

    def node(a: bytes, b: bytes) -> bytes:
        d = bytearray(hashlib.sha256(a + b).digest())
        d[31] &= 0x3F
        return bytes(d)

    root = node(node(enc[0], enc[1]), node(enc[2], enc[3]))
    assert MerkleTree(leaves, TreeShape(2), "sha256").root == int.from_bytes(root, "little")


@pytest.mark.parametrize("shape", ["2-0-0", "8-0-0", "8-8-0", "8-8-2", "8-2-4"])
def test_native_proofs(shape: str) -> None:
    s = TreeShape.parse(shape)
    t = random_tree(s, "poseidon", s.default_leaves(), 1)
    n = len(t)
    for i in [0, 1, n // 3, n - 1]:
        p = t.gen_proof(i)
        assert p.index == i and p.leaf == t.leaf(i) and p.root == t.root
        assert p.arities() == s.path_arities(n)
        bits = p.index_bits()
        assert sum(b << k for k, b in enumerate(bits)) == i and len(bits) == n.bit_length() - 1
        assert p.verify(t.hasher)
        bad = InclusionProof(p.leaf, [(list(sib), k) for sib, k in p.path], p.root)
        bad.path[-1][0][0] = (bad.path[-1][0][0] + 1) % R
        assert not bad.verify(t.hasher)


def test_tree_shapes() -> None:
    assert TreeShape.parse("8-8-2").base_tree_count == 16
    assert TreeShape.parse("8-8").default_leaves() == 512
    assert TreeShape(8, 8, 2).path_arities(1024) == [8, 8, 8, 2]
    for bad in ("3", "8-0-2", "1", "8-3"):
        with pytest.raises(ValueError):
            TreeShape.parse(bad)
    for leaves in (0, 4, 32, 96):
        with pytest.raises(ValueError):
            TreeShape(8).check_leaves(leaves)
    with pytest.raises(ValueError, match="below r"):
        MerkleTree([R] + [0] * 7, TreeShape(8), Sha256Nodes())


# --- insertion ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 4, 8, 16])
def test_insert_every_index(size: int) -> None:
    out: dict = {}

    def circuit(cs, index: int = 0):  # type: ignore[no-untyped-def]
        x, bits, elements = insertion_inputs(cs, size, index, seed=size)
        with cs.namespace("insert gadget"):
            res = insert(cs, x, bits, elements)
        out["x"], out["el"], out["res"] = x, elements, res

    shape = synthesize_shape(circuit)
    r1cs = synthesize_r1cs(circuit)
    n_bits = size.bit_length() - 1
    assert shape.constraints == r1cs.n_constraints == n_bits + insertion_constraints(size)
    for index in range(size):
        w = synthesize_witness(lambda cs, i=index: circuit(cs, i))
        check_satisfied(r1cs, w)
        vals = [r.value for r in out["res"]]
        el = [e.value for e in out["el"]]
        assert vals == el[:index] + [out["x"].value] + el[index:]
    # a wrong index bit (its value flipped in the witness) breaks a pick
    w = synthesize_witness(lambda cs: circuit(cs, 0))
    bit_col = 1 + size  # ONE, then aux: size − 1 elements, x, bits
    w[bit_col, 0] ^= 1
    with pytest.raises(UnsatisfiedConstraint, match="constraint [0-9]+ \\(insert gadget/"):
        check_satisfied(r1cs, w)


def test_insertion_counts() -> None:
    assert [insertion_constraints(s) for s in (2, 4, 8, 16, 32)] == [2, 8, 22, 240, 992]


@pytest.mark.parametrize("size", [2, 8, 16])
def test_select(size: int) -> None:
    rng = random.Random(size)
    vals = [rng.randrange(R) for _ in range(size)]
    got: dict = {}

    def circuit(cs, index: int = 0):  # type: ignore[no-untyped-def]
        nums = [AllocatedNum.alloc(cs, v if cs.wants_values else None) for v in vals]
        bits = [AllocatedBit.alloc(cs, bool(index >> k & 1) if cs.wants_values else None)
                for k in range(size.bit_length() - 1)]
        from cuzk.filecoin.gadgets.boolean import Boolean

        got["v"] = select(cs, nums, [Boolean.of(b) for b in bits]).value

    r1cs = synthesize_r1cs(circuit)
    assert r1cs.n_constraints == size.bit_length() - 1 + size - 1
    for index in (0, size - 1, size // 3):
        check_satisfied(r1cs, synthesize_witness(lambda cs, i=index: circuit(cs, i)))
        assert got["v"] == vals[index]


def test_insert_rejects_bad_sizes() -> None:
    def circuit(cs):  # type: ignore[no-untyped-def]
        x, bits, elements = insertion_inputs(cs, 8)
        insert(cs, x, bits[:2], elements)

    with pytest.raises(ValueError):
        synthesize_shape(circuit)


# --- PoRCircuit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(POR_CONSTRAINTS),
                         ids=lambda k: f"{k[0]}-{k[1]}-{'private' if k[2] else 'public'}")
def test_por_counts(key: tuple[str, str, bool]) -> None:
    hasher, shape, private = key
    s = TreeShape.parse(shape)
    sh = synthesize_shape(por_test_circuit(s, hasher, private=private))
    assert sh.constraints == POR_CONSTRAINTS[key]
    assert sh.inputs == (2 if private else 3)


@pytest.mark.parametrize("shape", POSEIDON_SHAPES)
def test_por_poseidon_satisfied(shape: str) -> None:
    s = TreeShape.parse(shape)
    leaves = s.default_leaves()
    r1cs = synthesize_r1cs(por_test_circuit(s, "poseidon"))
    assert r1cs.n_constraints == synthesize_shape(por_test_circuit(s, "poseidon")).constraints
    tree = random_tree(s, "poseidon", leaves, 0)
    for challenge in (0, leaves - 1, random.Random(shape).randrange(leaves)):
        c = por_test_circuit(s, "poseidon", challenge=challenge)
        w = synthesize_witness(c)
        check_satisfied(r1cs, w)
        assert c.result["computed_root"] == tree.root
        # public inputs: the packed path index (the challenge), then the root
        assert _limbs_to_int(w[1]) == challenge and _limbs_to_int(w[2]) == tree.root


def test_por_sha256_binary() -> None:
    """272,295 constraints in shape and record mode; a random path satisfies; the computed
    root is the native tree's; a wrong sibling fails the root check, a wrong index bit the
    insertion."""
    s = TreeShape(2)
    r1cs = synthesize_r1cs(por_test_circuit(s, "sha256"))
    assert r1cs.n_constraints == 272_295 and r1cs.n_public == 2
    tree = random_tree(s, "sha256", 64, 0)
    challenge = 37
    c = por_test_circuit(s, "sha256", challenge=challenge)
    w = synthesize_witness(c)
    check_satisfied(r1cs, w)
    assert c.result["computed_root"] == tree.root
    assert _limbs_to_int(w[1]) == challenge and _limbs_to_int(w[2]) == tree.root

    p = tree.gen_proof(challenge)
    bad = InclusionProof(p.leaf, [(list(sib), k) for sib, k in p.path], p.root)
    bad.path[3][0][0] = (bad.path[3][0][0] + 1) % R
    with pytest.raises(UnsatisfiedConstraint, match="enforce root is correct"):
        check_satisfied(r1cs, synthesize_witness(por_test_circuit(s, "sha256", proof=bad)))

    # aux 0 is the leaf, aux 1 level 0's index bit, aux 2 its sibling
    w2 = w.copy()
    w2[3 + 1, 0] ^= 1
    with pytest.raises(UnsatisfiedConstraint, match="base/merkle tree hash 0/binary insert 0/pick"):
        check_satisfied(r1cs, w2)
    w3 = w.copy()
    w3[3 + 2, 1] ^= 1
    with pytest.raises(UnsatisfiedConstraint, match="base/merkle tree hash 0/"):
        check_satisfied(r1cs, w3)


def test_por_private_root_inputs() -> None:
    s = TreeShape(8)
    r1cs = synthesize_r1cs(por_test_circuit(s, "poseidon", private=True))
    assert r1cs.n_constraints == 1_062 and r1cs.n_public == 1
    w = synthesize_witness(por_test_circuit(s, "poseidon", challenge=45, private=True))
    check_satisfied(r1cs, w)
    assert _limbs_to_int(w[1]) == 45


def test_auth_path_split() -> None:
    s = TreeShape(8, 8, 2)
    p = random_tree(s, "poseidon", 1024, 0).gen_proof(700)
    ap = AuthPath.from_proof(s, p)
    assert [len(e.hashes) for e in ap.base] == [7, 7] and len(ap.sub[0].hashes) == 7
    assert len(ap.top[0].hashes) == 1 and ap.top[0].index == 700 // 512
    with pytest.raises(ValueError):
        AuthPath.from_levels(TreeShape(8), [([0] * 3, 0)])


@pytest.mark.parametrize("shape, nodes", [("8-0-0", 64), ("8-8-0", 64), ("8-4-2", 512),
                                          ("8-8-2", 1024)])
def test_por_no_challenge_input(shape: str, nodes: int) -> None:
    """por_circuit.rs test_por_no_challenge_input: several challenges against one root."""
    s = TreeShape.parse(shape)
    tree = random_tree(s, "poseidon", nodes, 3)
    rng = random.Random(shape)
    challenges = [rng.randrange(nodes) for _ in range(4)]
    n_bits = nodes.bit_length() - 1

    def circuit(cs):  # type: ignore[no-untyped-def]
        vals = cs.wants_values
        with cs.namespace("root"):
            root = AllocatedNum.alloc(cs, tree.root if vals else None)
        for ci, c in enumerate(challenges):
            p = tree.gen_proof(c)
            with cs.namespace(f"leaf (c_index={ci})"):
                leaf = AllocatedNum.alloc(cs, p.leaf if vals else None)
            bits = [AllocatedBit.alloc(cs, bool(c >> i & 1) if vals else None) for i in range(n_bits)]
            path = [[AllocatedNum.alloc(cs, v if vals else None) for v in sib] for sib, _ in p.path]
            with cs.namespace(f"por (c_index={ci})"):
                por_no_challenge_input(cs, s, bits, leaf, path, root, PoseidonFunction)

    r1cs = synthesize_r1cs(circuit)
    assert r1cs.n_public == 0
    check_satisfied(r1cs, synthesize_witness(circuit))


def test_sha256_hash2_circuit_matches_native() -> None:
    from cuzk.filecoin.hashers.sha256 import fr_to_domain, hash2

    rng = random.Random(9)
    a, b = rng.randrange(R), rng.randrange(R)
    got: dict = {}

    def circuit(cs):  # type: ignore[no-untyped-def]
        x = AllocatedNum.alloc(cs, a if cs.wants_values else None)
        y = AllocatedNum.alloc(cs, b if cs.wants_values else None)
        got["h2"] = Sha256Function.hash2_circuit(cs, x, y).value
        got["multi"] = Sha256Function.hash_multi_leaf_circuit(cs, [x, y]).value

    r1cs = synthesize_r1cs(circuit)
    check_satisfied(r1cs, synthesize_witness(circuit))
    want = int.from_bytes(hash2(fr_to_domain(a), fr_to_domain(b)), "little")
    assert got["h2"] == got["multi"] == want


def test_circuit_info_cli(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from cuzk.cli import main

    for argv, want in [(["por-poseidon", "--arity", "8", "--sub", "8", "--top", "2"], 1_907),
                       (["por-poseidon", "--arity", "4", "--root", "private"], 1_163),
                       (["insertion", "--size", "8"], 22)]:
        assert main(["filecoin", "circuit-info", *argv, "--json"]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["gadget_constraints"] == info["expected_gadget_constraints"] == want
    assert main(["filecoin", "circuit-info", "por-poseidon", "--arity", "8", "--top", "2"]) != 0
    assert "needs a sub arity" in capsys.readouterr().err
    assert main(["filecoin", "circuit-info", "por-sha256", "--leaves", "48"]) != 0


def _shape_of(r1cs) -> dict:  # type: ignore[no-untyped-def]
    """Shape's fields recomputed from recorded matrices."""
    n_in = r1cs.n_public + 1
    ua, ub = np.unique(r1cs.a.indices), np.unique(r1cs.b.indices)
    return dict(constraints=r1cs.n_constraints, inputs=n_in, aux=r1cs.n_vars - n_in,
                nnz_a=r1cs.a.nnz, nnz_b=r1cs.b.nnz, nnz_c=r1cs.c.nnz,
                vars_in_a=len(ua), vars_in_b=len(ub), aux_in_a=int((ua >= n_in).sum()),
                aux_in_b=int((ub >= n_in).sum()), inputs_in_b=int((ub < n_in).sum()))


@pytest.mark.parametrize("hasher, shape", [("sha256", "2-0-0"), ("poseidon", "8-8-2"),
                                           ("poseidon", "4-0-0")])
def test_por_shape_equals_record(hasher: str, shape: str) -> None:
    """Every Shape statistic (non-zeros, A/B densities) agrees with the recorded matrices."""
    s = TreeShape.parse(shape)
    sh = synthesize_shape(por_test_circuit(s, hasher))
    r1cs = synthesize_r1cs(por_test_circuit(s, hasher))
    assert _shape_of(r1cs) == {k: v for k, v in sh.as_dict().items() if k in _shape_of(r1cs)}


def test_sha256_node_template_records_the_direct_gadget() -> None:
    """The templated SHA-256 node replays exactly what running its code directly records."""
    from cuzk.filecoin.cs.digest import bellpepper_hash
    from cuzk.filecoin.gadgets import hash_functions

    def circuit(direct: bool):  # type: ignore[no-untyped-def]
        def c(cs):  # type: ignore[no-untyped-def]
            xs = [AllocatedNum.alloc(cs, None) for _ in range(2)]
            for _ in range(2):
                fn = hash_functions._sha256_multi_leaf
                xs = [(fn.__wrapped__ if direct else fn)(cs, xs), xs[0]]

        return c

    a, b = synthesize_r1cs(circuit(True)), synthesize_r1cs(circuit(False))
    assert a.n_constraints == b.n_constraints > 0
    assert bellpepper_hash(a) == bellpepper_hash(b)
    la, lb = a.labels["constraints"], b.labels["constraints"]
    assert all(la[i] == lb[i] for i in range(0, a.n_constraints, 997))


def test_por_groth16_proof_verifies() -> None:
    """A Groth16 proof of a Poseidon 8-ary inclusion (development setup, bellman convention):
    the public inputs are the challenge and the root; another root does not verify."""
    from cuzk.backends.cpu import native_module
    from cuzk.groth16.prover import prove
    from cuzk.groth16.setup import setup
    from cuzk.groth16.verifier import verify

    if native_module() is None:
        pytest.skip("needs the native CPU backend")
    s = TreeShape(8)
    r1cs = synthesize_r1cs(por_test_circuit(s, "poseidon"))
    tree = random_tree(s, "poseidon", 64, 0)
    w = synthesize_witness(por_test_circuit(s, "poseidon", challenge=29))
    pk = setup(r1cs, seed="cuzk filecoin por", convention="bellman", backend="cpu")
    proof = prove(pk, w, backend="cpu")
    assert verify(pk.vk, [29, tree.root], proof)
    assert not verify(pk.vk, [29, (tree.root + 1) % R], proof)
    assert not verify(pk.vk, [28, tree.root], proof)
