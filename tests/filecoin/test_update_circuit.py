"""The EmptySectorUpdate circuits (cuzk/filecoin/update): rust-fil-proofs' asserted counts for
both variants and for the gadgets, the challenge known answers, satisfaction on updates of
sealed test sectors with the public inputs rust computes, and changed values caught."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pytest

from cuzk.cli import main
from cuzk.filecoin.cs import (
    ConstraintSystem,
    check_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
)
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.gadgets.boolean import AllocatedBit
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.poseidon import native, reference
from cuzk.filecoin.poseidon.params import custom_tag
from cuzk.filecoin.update import circuit as sha_circuit
from cuzk.filecoin.update import poseidon_circuit
from cuzk.filecoin.update.challenges import challenges
from cuzk.filecoin.update.circuit import EmptySectorUpdateCircuit
from cuzk.filecoin.update.circuit_info import KNOWN_CONSTRAINTS
from cuzk.filecoin.update.constants import GEN_RANDOMNESS_TAG, TREE_SHAPES, UpdateParams
from cuzk.filecoin.update.gadgets import (
    allocated_num_to_allocated_bits,
    apex_por,
    gen_challenge_bits,
    gen_randomness_hash,
)
from cuzk.filecoin.update.generate import UpdatedSector, make_test_update
from cuzk.filecoin.update.poseidon_circuit import PoseidonUpdateCircuit
from cuzk.filecoin.update.public_inputs import public_inputs
from cuzk.filecoin.update.vanilla import update_inputs
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.layout import fr_to_ints

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


class XorShift:
    """rand_xorshift's XorShiftRng (next_u64: two next_u32, low first), which rust-fil-proofs'
    tests seed with TEST_SEED."""

    def __init__(self, seed: bytes) -> None:
        self.s = [int.from_bytes(seed[i : i + 4], "little") for i in range(0, 16, 4)]

    def u32(self) -> int:
        x, y, z, w = self.s
        t = (x ^ (x << 11)) & 0xFFFFFFFF
        nxt = (w ^ (w >> 19) ^ t ^ (t >> 8)) & 0xFFFFFFFF
        self.s = [y, z, w, nxt]
        return nxt

    def u64(self) -> int:
        lo = self.u32()
        return lo | self.u32() << 32

    def fr(self) -> int:
        """blstrs Scalar::random: four u64 limbs, the top bit cleared, retried until below r."""
        while True:
            limbs = [self.u64() for _ in range(4)]
            limbs[3] &= (1 << 63) - 1
            v = sum(x << (64 * i) for i, x in enumerate(limbs))
            if v < R:
                return v


TEST_SEED = bytes([0x59, 0x62, 0xBE, 0x5D, 0x76, 0x3D, 0x31, 0x8D,
                   0x17, 0xDB, 0x37, 0x32, 0x54, 0x06, 0xBC, 0xE5])


def _prove(circuit):  # type: ignore[no-untyped-def]
    r1cs = synthesize_r1cs(circuit)
    w = synthesize_witness(circuit, n_inputs=r1cs.n_public + 1)
    return r1cs, w


def _circuit(u: UpdatedSector, k: int = 0):  # type: ignore[no-untyped-def]
    pub = u.public
    proof = u.partition_proof(k)
    if u.params.poseidon:
        return poseidon_circuit.partition_circuit(u.params, pub.h, pub.comm_r_old, pub.comm_d_new,
                                                  pub.comm_r_new, proof)  # type: ignore[arg-type]
    return sha_circuit.partition_circuit(u.params, k, pub.h, pub.comm_r_old, pub.comm_d_new,
                                         pub.comm_r_new, proof)  # type: ignore[arg-type]


# --- counts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size, poseidon, want", [
    (1 * KIB, False, 1_248_389), (2 * KIB, False, 1_705_039), (4 * KIB, False, 2_165_109),
    (8 * KIB, False, 2_620_359), (16 * KIB, False, 6_300_021), (32 * KIB, False, 6_760_091),
    (32 * GIB, False, 81_049_499), (1 * KIB, True, 32_164), (8 * KIB, True, 47_974),
    (32 * GIB, True, 22_305_906),
])
def test_counts(size: int, poseidon: bool, want: int) -> None:
    """storage-proofs-update tests/circuit.rs and circuit_poseidon.rs (32 GiB: 16 partitions ×
    86 challenges; its Poseidon variant one partition of all 1,376)."""
    p = UpdateParams(size // 32, poseidon)
    shape = synthesize_shape((PoseidonUpdateCircuit if poseidon else EmptySectorUpdateCircuit)(p))
    assert shape.constraints == want == KNOWN_CONSTRAINTS[(size, poseidon)]
    assert shape.inputs == 5
    if size == 32 * GIB:
        assert (p.partition_count, p.challenge_count) == ((1, 1376) if poseidon else (16, 86))


def _gadget_count(fn: Callable[[ConstraintSystem], Callable[[], None]]) -> int:
    """Constraints a gadget adds after its inputs were allocated (fn allocates, returns the
    gadget call)."""
    counts = []

    def circuit(cs: ConstraintSystem) -> None:
        run = fn(cs)
        counts.append(cs.n_constraints)
        run()
        counts.append(cs.n_constraints)

    synthesize_shape(circuit)
    return counts[1] - counts[0]


@pytest.mark.parametrize("size, want", [(1 * KIB, 568), (2 * KIB, 568), (16 * KIB, 568), (32 * KIB, 568),
                                        (8 * MIB, 568), (16 * MIB, 568), (512 * MIB, 4544),
                                        (32 * GIB, 5680), (64 * GIB, 5680)])
def test_gen_challenge_bits_count(size: int, want: int) -> None:
    """gadgets.rs test_gen_challenge_bits_gadget."""
    p = UpdateParams(size // 32)

    def fn(cs: ConstraintSystem) -> Callable[[], None]:
        comm, k = AllocatedNum.alloc(cs, None), AllocatedNum.alloc(cs, None)
        return lambda: gen_challenge_bits(cs, comm, k, p.challenge_count,
                                          p.challenge_bit_len - p.partition_bit_len)

    assert _gadget_count(fn) == want


@pytest.mark.parametrize("nodes, partitions, apex, want", [
    (1 * KIB // 32, 1, 8, 317_654), (8 * KIB // 32, 1, 8, 317_654), (16 * KIB // 32, 2, 128, 5_808_515),
    (16 * KIB // 32, 4, 16, 771_448), (16 * KIB // 32, 8, 8, 453_797),
])
def test_apex_por_count(nodes: int, partitions: int, apex: int, want: int) -> None:
    """gadgets.rs test_apex_por_gadget: the apex tree's hashes and the partition path."""
    def fn(cs: ConstraintSystem) -> Callable[[], None]:
        comm_d = AllocatedNum.alloc(cs, None)
        bits = [AllocatedBit.alloc(cs, None) for _ in range(partitions.bit_length() - 1)]
        leafs = [AllocatedNum.alloc(cs, None) for _ in range(apex)]
        path = [[AllocatedNum.alloc(cs, None)] for _ in bits]
        return lambda: apex_por(cs, leafs, bits, path, comm_d)

    assert _gadget_count(fn) == want


# --- randomness: known answers ------------------------------------------------------------------


VECTORS = {  # challenges.rs test_challenges_against_hardcoded: (sector nodes, k) → first 5
    (1 << 5, 0): [21, 7, 3, 31, 0], (1 << 6, 0): [53, 51, 56, 3, 0],
    (1 << 7, 0): [117, 25, 62, 0, 72], (1 << 8, 0): [245, 140, 15, 128, 28],
    (1 << 9, 0): [245, 140, 15, 128, 28], (1 << 9, 1): [286, 308, 493, 510, 508],
    (1 << 10, 0): [245, 454, 3, 400, 193], (1 << 10, 1): [542, 666, 955, 927, 911],
    (1 << 18, 0): [36085, 32783, 44060, 10950, 3731], (1 << 18, 1): [78878, 130797, 112892, 93994, 78379],
    (1 << 19, 0): [101621, 16391, 109319, 25944, 41193],
    (1 << 19, 1): [209950, 163702, 175679, 224741, 197410],
    (1 << 24, 0): [1019125, 116736, 706220, 59698, 799498],
    (1 << 24, 1): [2092548, 1213276, 1185483, 1164598, 1095197],
    (1 << 24, 14): [15212432, 15665918, 15015423, 15012912, 15495223],
    (1 << 24, 15): [16388544, 15794686, 16637142, 16319148, 16328348],
    (1 << 30, 0): [1019125, 27985696, 15282860, 11586600, 44651330],
    (1 << 30, 1): [109168525, 127316247, 80331041, 97065716, 72310052],
    (1 << 30, 14): [990420169, 955146989, 968005601, 976863263, 944650706],
    (1 << 30, 15): [1038629497, 1053983614, 1030421316, 1027373887, 1068685433],
    (1 << 31, 0): [1019125, 13992848, 3820715, 18225541, 57316660],
    (1 << 31, 1): [243386253, 197875851, 204632136, 171516766, 247789010],
    (1 << 31, 14): [1997053129, 1920414070, 2003609080, 1900492803, 1963254685],
    (1 << 31, 15): [2045262457, 2036941247, 2136653521, 2091356007, 2147167623],
}


def test_challenges_known_answers() -> None:
    """challenges.rs' hard-coded challenges for comm_r_new = Fr::random(XorShiftRng(TEST_SEED)):
    Poseidon under the custom tag 2^40, the digest bits, the partition bits on top."""
    comm_r_new = XorShift(TEST_SEED).fr()
    assert GEN_RANDOMNESS_TAG == custom_tag(1) == 1 << 40
    for (nodes, k), want in VECTORS.items():
        assert challenges(UpdateParams(nodes), comm_r_new, k)[:5] == want, (nodes, k)


def test_partition_bucketing() -> None:
    """challenges.rs test_challenge_bucketing: partition k's challenges lie in its slice."""
    rng = XorShift(TEST_SEED)
    for size in TREE_SHAPES:
        p = UpdateParams(size // 32)
        comm = rng.fr()
        per = p.nodes // p.partition_count
        for k in (0, p.partition_count - 1):
            cs = challenges(p, comm, k)
            assert len(cs) == p.challenge_count and all(k * per <= c < (k + 1) * per for c in cs)


def test_tagged_poseidon_three_ways() -> None:
    """Poseidon under the custom tag: the textbook permutation, neptune's schedule, the native
    hasher and the circuit agree."""
    vals = [123456789, R - 5]
    want = reference.hash_plain(vals, domain_tag=GEN_RANDOMNESS_TAG)
    assert reference.poseidon(vals, GEN_RANDOMNESS_TAG) == want == native.poseidon(vals, GEN_RANDOMNESS_TAG)
    assert want != reference.poseidon(vals)

    def circuit(cs: ConstraintSystem) -> None:
        a, b = (AllocatedNum.alloc(cs, v if cs.wants_values else None) for v in vals)
        h = gen_randomness_hash(cs, a, b)
        h.inputize(cs)

    r1cs, w = _prove(circuit)
    check_satisfied(r1cs, w)
    assert fr_to_ints(w[1:2]) == [want] and r1cs.n_constraints == 311 + 1


def test_challenge_bits_in_the_circuit() -> None:
    """gen_challenge_bits' bits, with the partition's bits on top, are Challenges::new's."""
    p = UpdateParams(16 * KIB // 32)  # 2 partitions
    comm = XorShift(TEST_SEED).fr()
    got: list[int] = []

    def circuit(cs: ConstraintSystem) -> None:
        c = AllocatedNum.alloc(cs, comm if cs.wants_values else None)
        k = AllocatedNum.alloc(cs, 1 if cs.wants_values else None)
        k_bits = allocated_num_to_allocated_bits(cs, k)[: p.partition_bit_len]
        for bits in gen_challenge_bits(cs, c, k, p.challenge_count, p.challenge_bit_len - p.partition_bit_len):
            if cs.wants_values:
                got.append(sum(int(b.value) << i for i, b in enumerate(bits + k_bits)))

    r1cs = synthesize_r1cs(circuit)
    check_satisfied(r1cs, synthesize_witness(circuit))
    assert got == challenges(p, comm, 1)


# --- satisfaction and public inputs -------------------------------------------------------------


@pytest.mark.parametrize("size, poseidon, k", [
    (1 * KIB, False, 0), (2 * KIB, False, 0), (16 * KIB, False, 1),
    (1 * KIB, True, 0), (2 * KIB, True, 0), (32 * KIB, True, 0),
], ids=["1KiB", "2KiB", "16KiB-k1", "1KiB-poseidon", "2KiB-poseidon", "32KiB-poseidon"])
def test_update_satisfies(size: int, poseidon: bool, k: int) -> None:
    """A sealed test sector updated with new data: partition k's circuit from its vanilla proof
    (through the bincode bytes and the checks) is satisfied, and its inputs are
    PublicInputs::new's."""
    p = UpdateParams(size // 32, poseidon)
    u = make_test_update(p, seed=size)
    ins = update_inputs(p, u.vanilla_proofs(), *u.commitments())
    pub = ins.public
    assert (pub.comm_r_old, pub.comm_d_new, pub.comm_r_new) == (u.key.comm_r_old, u.comm_d_new, u.comm_r_new)
    r1cs, w = _prove(_circuit(u, k))
    check_satisfied(r1cs, w)
    got = fr_to_ints(w[1 : r1cs.n_public + 1])
    assert got == public_inputs(p, k, pub.h, pub.comm_r_old, pub.comm_d_new, pub.comm_r_new)
    sel = 1 << p.hs.index(pub.h)
    assert got[0] == (sel if poseidon else k | sel << p.partition_bit_len)


def test_blank_and_valued_record_the_same() -> None:
    for poseidon in (False, True):
        p = UpdateParams(64, poseidon)
        blank = synthesize_r1cs((PoseidonUpdateCircuit if poseidon else EmptySectorUpdateCircuit)(p),
                                labels=False)
        valued = synthesize_r1cs(_circuit(make_test_update(p, seed=9)), labels=False)
        shape = synthesize_shape((PoseidonUpdateCircuit if poseidon else EmptySectorUpdateCircuit)(p))
        assert (blank.a.nnz, blank.b.nnz, blank.c.nnz) == (shape.nnz_a, shape.nnz_b, shape.nnz_c)
        for m in ("a", "b", "c"):
            for f in ("indptr", "indices", "values"):
                assert np.array_equal(getattr(getattr(valued, m), f), getattr(getattr(blank, m), f))


@pytest.fixture(scope="module")
def poseidon_1kib() -> UpdatedSector:
    return make_test_update(UpdateParams(32, True), seed=5)


@pytest.mark.parametrize("change, where", [
    (lambda w: setattr(w, "root_r_new", (w.root_r_new + 1) % R), "enforce comm_r_new_calc == comm_r_new"),
    (lambda w: setattr(w, "comm_c", (w.comm_c + 1) % R), "enforce comm_r_old_calc == comm_r_old"),
    (lambda w: setattr(w, "comm_r_new", (w.comm_r_new + 1) % R), "leaf_r_new is not"),
    (lambda w: setattr(w, "h", 7), "invalid h 7"),
    (lambda w: w.challenges[4].path_r_old[0].__setitem__(1, 3), "por tree_r_old (c_index=4)"),
    (lambda w: w.challenges[2].path_d_new[1].__setitem__(0, 3), "por tree_d_new (c_index=2)"),
])
def test_poseidon_changed_value_fails(poseidon_1kib: UpdatedSector, change, where) -> None:  # type: ignore[no-untyped-def]
    """A changed private value breaks its constraint; a changed commitment changes the
    challenges and rho, so the encoding no longer holds (rust asserts it while synthesizing, we
    refuse there too); an h outside the circuit's hs is refused before synthesis."""
    circ = _circuit(poseidon_1kib)
    change(circ.witness)
    if not where.startswith(("enforce", "por")):
        with pytest.raises(ValueError, match=where):
            circ.witness.check(circ.params)
            synthesize_witness(circ)
        return
    r1cs, w = _prove(circ)
    with pytest.raises(UnsatisfiedConstraint, match=where.replace("(", r"\(").replace(")", r"\)")):
        check_satisfied(r1cs, w)


def test_sha_changed_value_fails() -> None:
    u = make_test_update(UpdateParams(64), seed=6)
    circ = _circuit(u)
    circ.witness.apex_leafs[3] = 5
    r1cs, w = _prove(circ)
    with pytest.raises(UnsatisfiedConstraint, match="apex_gadget"):
        check_satisfied(r1cs, w)
    circ = _circuit(u)
    circ.witness.challenges[1].leaf_r_new = 5
    with pytest.raises(ValueError, match="leaf_r_new is not leaf_r_old"):
        synthesize_witness(circ)


# --- circuit-info -------------------------------------------------------------------------------


def test_circuit_info(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["filecoin", "circuit-info", "snap-update-poseidon", "--sector-size", "8KiB", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["constraints"] == info["expected_gadget_constraints"] == 47_974
    assert info["public_inputs"] == 4 and info["params_id"] is None and "test size" in info["circuit"]
    assert main(["filecoin", "circuit-info", "snap-update", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["constraints"] == 1_705_039
    assert info["params_id"].startswith("v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-")
    assert main(["filecoin", "circuit-info", "snap-update", "--sector-size", "3KiB"]) != 0
    assert "not a sector size EmptySectorUpdate allows" in capsys.readouterr().err
