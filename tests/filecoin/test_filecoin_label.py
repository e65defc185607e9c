"""SDR labels (storage-proofs-porep stacked): the native label and the create_label circuit
(532,025 constraints in create_label.rs's test circuit), equal on random inputs."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from cuzk.filecoin.cs import check_satisfied, synthesize_r1cs, synthesize_shape, synthesize_witness
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.gadgets.create_label import create_label_circuit
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.filecoin.gadgets.uint64 import UInt64
from cuzk.filecoin.gadgets.util import bytes_into_boolean_vec_be, reverse_bit_numbering
from cuzk.filecoin.porep.label import (
    TOTAL_PARENTS,
    create_label,
    create_label_fr,
    expand_parents,
    label_preimage,
)
from cuzk.filecoin.reference_circuits import CREATE_LABEL_CONSTRAINTS, create_label_test_circuit
from cuzk.groth16.errors import UnsatisfiedConstraint


def _labels(rng: random.Random, n: int) -> list[bytes]:
    return [rng.randrange(R).to_bytes(32, "little") for _ in range(n)]


def test_expand_parents() -> None:
    six = list("abcdef")
    assert expand_parents(six, 1) == six * 6 + ["a"]
    fourteen = [str(i) for i in range(14)]
    assert expand_parents(fourteen, 2) == fourteen + fourteen + fourteen[:9]
    assert len(expand_parents(fourteen, 11)) == TOTAL_PARENTS
    for bad, layer in ((six, 2), (fourteen, 1), (six, 0)):
        with pytest.raises(ValueError):
            expand_parents(bad, layer)


def test_native_label() -> None:
    """The hashed bytes as graph.rs feeds them: replica id, a 32-byte buffer holding the
    layer (u32 BE) and node (u64 BE), the 14 parents twice, then 8 and the 9th."""
    rng = random.Random(1)
    rid = _labels(rng, 1)[0]
    parents = _labels(rng, 14)
    h = hashlib.sha256(rid)
    buf = bytearray(32)
    buf[0:4] = (5).to_bytes(4, "big")
    buf[4:12] = (1234).to_bytes(8, "big")
    h.update(bytes(buf))
    h.update(b"".join(parents))
    h.update(b"".join(parents))
    h.update(b"".join(parents[:8]))
    h.update(parents[8])
    d = bytearray(h.digest())
    d[31] &= 0x3F
    assert create_label(rid, 5, 1234, expand_parents(parents, 5)) == bytes(d)
    assert create_label_fr(rid, 5, 1234, expand_parents(parents, 5)) == int.from_bytes(d, "little") < R
    # node 0 has no parents: only the 64 header bytes
    assert len(label_preimage(rid, 1, 0, [])) == 64
    with pytest.raises(ValueError):
        create_label(rid, 1, 3, parents)


def test_create_label_count_and_value() -> None:
    """create_label.rs test_create_label: 532,025 constraints (shape == record); the witness
    satisfies them and the circuit's label is the native one; a flipped parent bit breaks
    the hash."""
    shape = synthesize_shape(create_label_test_circuit())
    assert shape.constraints == CREATE_LABEL_CONSTRAINTS and shape.inputs == 1
    r1cs = synthesize_r1cs(create_label_test_circuit())
    assert r1cs.n_constraints == CREATE_LABEL_CONSTRAINTS
    c = create_label_test_circuit(seed=7)
    w = synthesize_witness(c)
    check_satisfied(r1cs, w)
    assert c.result["label"] == c.result["native_label"]
    w[1 + 100, 0] ^= 1  # a bit of the first parent (aux 100)
    with pytest.raises(UnsatisfiedConstraint, match=r"\(create-label|\(create_label/hash/"):
        check_satisfied(r1cs, w)


def test_create_label_layer_1() -> None:
    c = create_label_test_circuit(layer=1, node=9, seed=2)
    synthesize_witness(c)
    assert c.result["label"] == c.result["native_label"]


def test_create_label_as_porep_calls_it() -> None:
    """As the PoRep circuit (stacked/circuit/params.rs) calls it: parents are numbers split
    into 255 bits and renumbered (a constant zero pads the byte), the node an allocated u64."""
    rng = random.Random(3)
    rid = _labels(rng, 1)[0]
    raw = [rng.randrange(R) for _ in range(6)]
    node = rng.getrandbits(40)
    got: dict = {}

    def circuit(cs):  # type: ignore[no-untyped-def]
        v = cs.wants_values
        with cs.namespace("replica_id"):
            idbits = bytes_into_boolean_vec_be(cs, rid, 256)
        with cs.namespace("challenge"):
            nodeu = UInt64.alloc(cs, node if v else None)
        parents = []
        for i, p in enumerate(raw):
            with cs.namespace("drg_parent", i):
                num = AllocatedNum.alloc(cs, p if v else None)
                parents.append(reverse_bit_numbering(num.to_bits_le(cs)))
        with cs.namespace("create_label"):
            got["label"] = create_label_circuit(cs, idbits, expand_parents(parents, 1),
                                                UInt32.constant(1), nodeu).value

    r1cs = synthesize_r1cs(circuit)
    assert r1cs.n_constraints == synthesize_shape(circuit).constraints
    check_satisfied(r1cs, synthesize_witness(circuit))
    want = create_label_fr(rid, 1, node, expand_parents([p.to_bytes(32, "little") for p in raw], 1))
    assert got["label"] == want


def test_create_label_rejects_bad_arguments() -> None:
    def circuit(cs):  # type: ignore[no-untyped-def]
        idbits = bytes_into_boolean_vec_be(cs, None, 256)
        create_label_circuit(cs, idbits, [idbits] * 36, UInt32.constant(1), UInt64.constant(1))

    with pytest.raises(ValueError, match="37 parents"):
        synthesize_shape(circuit)


def test_circuit_info_create_label(capsys: pytest.CaptureFixture[str]) -> None:
    from cuzk.cli import main

    assert main(["filecoin", "circuit-info", "create-label", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["gadget_constraints"] == info["expected_gadget_constraints"] == 532_025
    assert main(["filecoin", "circuit-info", "create-label", "--layer", "0"]) != 0
