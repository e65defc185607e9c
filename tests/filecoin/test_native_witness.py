"""The native witness engine (cuzk._native.WitnessProgram, cs/native_program.py): for SHA-256
compressions and hashes, create_label, Merkle paths and Poseidon of every arity, the witness it
writes equals the gadget code's (engine "python") and the numpy programs' bit for bit, and
satisfies the recorded R1CS; a corrupted program is caught by satisfaction; malformed programs
are refused before they run."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from cuzk.filecoin.cs import (
    ConstraintSystem,
    WitnessCS,
    check_satisfied,
    clear_templates,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
    template,
)
from cuzk.filecoin.cs import native_program as npg
from cuzk.filecoin.cs.lc import R
from cuzk.filecoin.cs.template import lookup
from cuzk.filecoin.gadgets.boolean import FALSE, TRUE, AllocatedBit, Boolean
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.poseidon import hash_md_circuit, poseidon_hash
from cuzk.filecoin.gadgets.sha256 import sha256, sha256_compression_function, sha256_iv
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.filecoin.merkle import TreeShape
from cuzk.filecoin.poseidon.params import ARITIES
from cuzk.filecoin.reference_circuits import create_label_test_circuit, por_test_circuit
from cuzk.groth16.errors import UnsatisfiedConstraint

pytestmark = pytest.mark.skipif(npg.engine() is None, reason="the native extension lacks the witness engine")

Circuit = Callable[[ConstraintSystem], Any]


@pytest.fixture(autouse=True)
def _fresh_templates() -> Iterator[None]:
    """Programs are cached on templates: a test that corrupts one must not leak it."""
    clear_templates()
    yield
    clear_templates()


def _witnesses(circuit: Circuit, engines: tuple[str, ...] = ("native", "python", "numpy")) -> dict[str, np.ndarray]:
    shape = synthesize_shape(circuit)
    out = {}
    for e in engines:
        buf = np.full((shape.n_vars, 4), 0xDEAD, dtype=np.uint64)  # every row must be written
        out[e] = synthesize_witness(circuit, out=buf, n_inputs=shape.inputs, engine=e)
    return out


def _assert_native_exact(circuit: Circuit, engines: tuple[str, ...] = ("native", "python", "numpy")) -> np.ndarray:
    """The native witness equals the other engines' and satisfies the recorded R1CS; the
    circuit's last run is the native one (for values it records)."""
    r1cs = synthesize_r1cs(circuit, labels=True)
    ws = _witnesses(circuit, engines[1:] + engines[:1])
    for e in engines[1:]:
        diff = np.nonzero((ws["native"] != ws[e]).any(axis=1))[0]
        assert not len(diff), f"native and {e} differ at rows {diff[:10]}"
    check_satisfied(r1cs, ws["native"])
    return ws["native"]


def _bits(cs: ConstraintSystem, n: int, seed: int) -> list[Boolean]:
    rng = random.Random(seed)
    return [Boolean.alloc(cs, bool(rng.getrandbits(1)) if cs.wants_values else None) for _ in range(n)]


def _nums(cs: ConstraintSystem, n: int, seed: int) -> list[AllocatedNum]:
    rng = random.Random(seed)
    return [AllocatedNum.alloc(cs, rng.randrange(R) if cs.wants_values else None) for _ in range(n)]


# --- SHA-256 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["iv", "variable"])
def test_compression(state: str) -> None:
    def circuit(cs: ConstraintSystem) -> None:
        bits = _bits(cs, 352, 3)
        block = bits[:300] + [TRUE, FALSE] * 80 + [b.not_() for b in bits[300:]]  # constants, negations
        if state == "iv":
            st = sha256_iv()
        else:
            rng = random.Random(4)
            st = [UInt32.alloc(cs, rng.getrandbits(32) if cs.wants_values else None) for _ in range(8)]
        out = sha256_compression_function(cs, block, st)
        sha256_compression_function(cs, bits[:256] + [b for w in out for b in w.into_bits_be()], out)

    _assert_native_exact(circuit)
    t, _ = lookup(sha256_compression_function, (_bits(synthesize_shape_cs(), 512, 0), sha256_iv()))
    assert t.native_program() is not None


def synthesize_shape_cs() -> ConstraintSystem:
    from cuzk.filecoin.cs import ShapeCS

    return ShapeCS()


def test_sha256_of_512_bits() -> None:
    got: dict = {}

    def circuit(cs: ConstraintSystem) -> None:
        got["d"] = sha256(cs, _bits(cs, 512, 7))

    w = _assert_native_exact(circuit)
    import hashlib

    rng = random.Random(7)
    msg = [rng.getrandbits(1) for _ in range(512)]
    digest = hashlib.sha256(int("".join(map(str, msg)), 2).to_bytes(64, "big")).digest()
    want = [bool(byte >> (7 - i) & 1) for byte in digest for i in range(8)]
    assert [b.value for b in got["d"]] == want
    assert len(w) == synthesize_shape(circuit).n_vars


def test_create_label() -> None:
    tc = create_label_test_circuit()
    _assert_native_exact(tc, ("native", "python"))
    assert tc.result["label"] == tc.result["native_label"]


@pytest.mark.parametrize("shape", ["2-0-0", "4-0-0"])
def test_sha256_merkle_paths(shape: str) -> None:
    tc = por_test_circuit(TreeShape.parse(shape), "sha256", challenge=5)
    _assert_native_exact(tc, ("native", "python"))


# --- Poseidon ------------------------------------------------------------------------------------


@pytest.mark.parametrize("arity", ARITIES)
def test_poseidon_each_arity(arity: int) -> None:
    from cuzk.filecoin.poseidon import poseidon

    got: dict = {}

    def circuit(cs: ConstraintSystem) -> None:
        xs = _nums(cs, arity, arity)
        h = poseidon_hash(cs, xs, arity)
        got["h"] = poseidon_hash(cs, [h] + xs[1:], arity).value  # a digest as an argument

    _assert_native_exact(circuit, ("native", "python"))
    rng = random.Random(arity)
    xs = [rng.randrange(R) for _ in range(arity)]
    assert got["h"] == poseidon([poseidon(xs)] + xs[1:])


def test_hash_md() -> None:
    got: dict = {}

    def circuit(cs: ConstraintSystem) -> None:
        got["h"] = hash_md_circuit(cs, _nums(cs, 71, 1)).value

    _assert_native_exact(circuit, ("native", "python"))
    from cuzk.filecoin.poseidon import hash_md

    rng = random.Random(1)
    assert got["h"] == hash_md([rng.randrange(R) for _ in range(71)])


@pytest.mark.parametrize("shape", ["2-0-0", "4-0-0", "8-0-0", "8-8-0", "8-8-2", "8-2-4"])
def test_poseidon_merkle_paths(shape: str) -> None:
    s = TreeShape.parse(shape)
    for private, challenge in ((False, 0), (True, s.default_leaves() - 1)):
        _assert_native_exact(por_test_circuit(s, "poseidon", challenge=challenge, private=private),
                             ("native", "python"))


def test_poseidon_program_is_compact() -> None:
    """Lanes between S-boxes are temporaries, so the program does about the native hash's work:
    no instruction re-evaluates a growing linear combination."""
    cs = synthesize_shape_cs()
    t, _ = lookup(poseidon_hash, (_nums(cs, 8, 0), 8))
    args = npg.program_arguments(t)
    assert args is not None and len(t.lets) > 0
    ops = npg.instructions(args["code"])
    assert t.n_aux <= len(ops) <= t.n_aux + len(t.lets)
    ends = [o for o, _ in ops[1:]] + [len(args["code"])]
    width = 9  # lanes: the longest combination is a dense matrix row
    assert max(e - o for (o, _), e in zip(ops, ends)) <= 4 + 5 + 2 * width
    assert args["n_fields"] < 64  # registers are reused after a value's last use


# --- templates of every kind of recipe ----------------------------------------------------------


@template
def _nested(cs: ConstraintSystem, xs: list[AllocatedNum], bits: list[Boolean]) -> tuple:
    """A template around Poseidon (nested temporaries), products, sums, field bits, packing."""
    h = poseidon_hash(cs, xs[:2], 2)
    p = h.mul(cs, xs[2]).add(cs, xs[0]).square(cs)
    c, d = AllocatedNum.conditionally_reverse(cs, p, xs[1], bits[0])
    hb = c.to_bits_le(cs)
    s = p.to_bits_le_strict(cs)
    x = Boolean.xor(cs, hb[3], bits[1].not_())
    from cuzk.filecoin.gadgets.multipack import pack_bits

    return d, pack_bits(cs, hb[:200] + s[:54]), x, hb[:4]


def test_nested_templates_and_field_recipes() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        xs = _nums(cs, 3, 11)
        bits = _bits(cs, 2, 12)
        d, packed, x, hb = _nested(cs, xs, bits)
        _nested(cs, [packed, d, xs[0]], [x, hb[2]])

    _assert_native_exact(circuit, ("native", "python"))
    cs = synthesize_shape_cs()
    t, _ = lookup(_nested, (_nums(cs, 3, 0), _bits(cs, 2, 0)))
    assert t.native_program() is not None and t.program() is None  # numpy programs: bits only


def test_public_input_as_template_argument() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        xs = _nums(cs, 3, 5)
        pub = AllocatedNum.alloc_input(cs, 12345 if cs.wants_values else None)
        h = poseidon_hash(cs, [pub, xs[0], pub, xs[1]], 4)  # an input, repeated
        h.inputize(cs)

    _assert_native_exact(circuit, ("native", "python"))


def test_a_non_bit_argument_falls_back_to_the_gadget() -> None:
    """The program assumes bit arguments are 0/1; when one is not (an unsatisfiable witness),
    the gadget runs instead, so both engines still agree."""

    def circuit(cs: ConstraintSystem) -> None:
        bits = _bits(cs, 511, 9)
        n = AllocatedNum.alloc(cs, 3 if cs.wants_values else None)
        fake = Boolean(n.var, False, True if cs.wants_values else None)  # value 3 underneath
        sha256_compression_function(cs, [fake] + bits, sha256_iv())

    ws = _witnesses(circuit, ("native", "python"))
    assert (ws["native"] == ws["python"]).all()


# --- the engine itself ---------------------------------------------------------------------------


def _compression_template() -> Any:
    cs = synthesize_shape_cs()
    return lookup(sha256_compression_function, (_bits(cs, 512, 0), sha256_iv()))[0]


def test_corrupted_program_is_caught_by_satisfaction() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        sha256_compression_function(cs, _bits(cs, 512, 2), sha256_iv())

    r1cs = synthesize_r1cs(circuit)
    t = _compression_template()
    args = npg.program_arguments(t)
    assert args is not None
    good = args["code"].copy()
    for op_from, op_to in ((npg.XOR, npg.AND), (npg.SUM_BIT, None), (npg.MAJ, npg.CH)):
        code = good.copy()
        for off, op in npg.instructions(code):  # every such step: some value surely changes
            if op != op_from:
                continue
            if op_to is None:
                code[off + 5] ^= 1  # a neighbouring bit of the sum
            else:
                code[off] = op_to
        t._native = npg.engine()(**{**args, "code": code})
        w = synthesize_witness(circuit, engine="native")
        with pytest.raises(UnsatisfiedConstraint):
            check_satisfied(r1cs, w)
    t._native = None
    check_satisfied(r1cs, synthesize_witness(circuit, engine="native"))


def test_corrupted_poseidon_step_is_caught() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        poseidon_hash(cs, _nums(cs, 4, 2), 4)

    r1cs = synthesize_r1cs(circuit)
    t = lookup(poseidon_hash, (_nums(synthesize_shape_cs(), 4, 0), 4))[0]
    args = npg.program_arguments(t)
    code = args["code"].copy()
    off = [o for o, op in npg.instructions(code) if op == npg.PROD and code[o + 8] != -3][-1]
    code[off + 8] = -3  # drop an S-box's round key
    t._native = npg.engine()(**{**args, "code": code})
    with pytest.raises(UnsatisfiedConstraint):
        check_satisfied(r1cs, synthesize_witness(circuit, engine="native"))


def test_malformed_programs_are_refused() -> None:
    args = npg.program_arguments(_compression_template())
    cls = npg.engine()
    code = args["code"]
    bad_reg = code.copy()
    bad_reg[4] = 10 ** 9  # an operand register out of range
    ops = npg.instructions(code)
    k = next(i for i, (o, _) in enumerate(ops) if code[o + 3] >= 0)
    twice = np.concatenate([code, code[ops[k][0] : ops[k + 1][0]]])  # an aux row written again
    for bad in ({"code": bad_reg}, {"code": code[:-1]}, {"code": twice}, {"n_aux": args["n_aux"] + 1},
                {"slot_bit": args["slot_bit"][:-1]}, {"outputs": np.array([10 ** 9])}):
        with pytest.raises(ValueError):
            cls(**{**args, **bad})


def test_run_rejects_bad_buffers_and_slots() -> None:
    t = _compression_template()
    p = t.native_program()
    cs = WitnessCS(engine="native")
    bits = _bits(cs, 512, 0)
    cs._flush()
    slots = [b.var for b in bits]
    with pytest.raises(ValueError):  # rows beyond the buffer
        p.run(np.zeros((600, 4), np.uint64), 512, slots, None, 512)
    with pytest.raises(ValueError):  # a slot not written yet
        p.run(cs._buf, 512, slots[:-1] + [~10 ** 6], None, 512)
    with pytest.raises(ValueError):  # wrong dtype: no silent copy
        p.run(np.zeros((10 ** 5, 4), np.int64), 512, slots, None, 512)
    with pytest.raises(ValueError):  # wrong slot count
        p.run(cs._buf, 512, slots[:3], None, 512)


def test_run_batch_equals_single_runs() -> None:
    t = _compression_template()
    p = t.native_program()
    rng = np.random.default_rng(0)
    n_runs = 6
    buf = np.zeros((512 * n_runs + p.n_aux * n_runs, 4), dtype=np.uint64)
    buf[: 512 * n_runs, 0] = rng.integers(0, 2, 512 * n_runs)
    slots = np.array([[~(512 * k + i) for i in range(512)] for k in range(n_runs)], dtype=np.int64)
    bases = np.array([512 * n_runs + p.n_aux * k for k in range(n_runs)], dtype=np.int64)
    single = buf.copy()
    for k in range(n_runs):
        p.run(single, int(bases[k]), slots[k].tolist(), None, 512 * n_runs)
    p.run_batch(buf, bases[::-1].copy(), slots[::-1].copy(), None, 512 * n_runs, 2)
    assert (buf == single).all()
    with pytest.raises(ValueError):
        p.run_batch(buf, np.array([bases[0], bases[0] + 1]), slots[:2].copy(), None, 512 * n_runs, 2)


def test_engines_agree_without_a_buffer_and_auto_is_native() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        xs = _nums(cs, 8, 3)
        h = poseidon_hash(cs, xs, 8)
        sha256(cs, h.to_bits_le(cs) + [FALSE])

    a = synthesize_witness(circuit)  # own growing buffer
    assert WitnessCS().engine == "native"
    assert (a == _witnesses(circuit, ("python",))["python"]).all()
    with pytest.raises(ValueError):
        WitnessCS(engine="gpu")


def test_allocated_bits_keep_their_recipes() -> None:
    """AllocatedBit gadgets used directly (outside templates) still compute values in Python."""
    def circuit(cs: ConstraintSystem) -> None:
        a, b = (AllocatedBit.alloc(cs, v if cs.wants_values else None) for v in (True, False))
        AllocatedBit.nor(cs, a, b)

    _assert_native_exact(circuit, ("native", "python"))


@pytest.mark.parametrize("hasher, shape", [("poseidon", "8-8-2"), ("sha256", "4-0-0")])
def test_path_level_template_records_what_two_calls_record(hasher: str, shape: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """por.py records a level (insert, then hash) as one template for height-free hashers; a
    hasher without the flag takes the two calls: same matrices, labels and witness."""
    from cuzk.filecoin.cs.digest import bellpepper_hash
    from cuzk.filecoin.gadgets.hash_functions import HASH_FUNCTIONS

    s = TreeShape.parse(shape)
    tc = por_test_circuit(s, hasher, challenge=3)
    level, level_w = synthesize_r1cs(tc), synthesize_witness(tc)
    node = HASH_FUNCTIONS[hasher].hash_multi_leaf_circuit

    class Plain:  # the same hash, without height_free
        name = hasher
        hash_multi_leaf_circuit = staticmethod(node)

    monkeypatch.setitem(HASH_FUNCTIONS, hasher, Plain)
    plain_tc = por_test_circuit(s, hasher, challenge=3)
    plain = synthesize_r1cs(plain_tc)
    assert bellpepper_hash(level) == bellpepper_hash(plain)
    labels = level.labels["constraints"]
    assert [labels[i] for i in range(level.n_constraints)] == \
        [plain.labels["constraints"][i] for i in range(plain.n_constraints)]
    assert (level_w == synthesize_witness(plain_tc, engine="python")).all()
