"""Each gadget: its constraint count, its values, and a witness that satisfies its recorded
constraints on random inputs (shape mode counting the same as record mode)."""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest

from cuzk.filecoin.cs import (
    CAPACITY,
    ONE,
    ConstraintSystem,
    R,
    SynthesisError,
    check_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
)
from cuzk.filecoin.gadget_table import GADGETS
from cuzk.filecoin.gadgets import constraint
from cuzk.filecoin.gadgets.boolean import (
    FALSE,
    TRUE,
    AllocatedBit,
    Boolean,
    field_into_boolean_vec_le,
    u64_into_boolean_vec_le,
)
from cuzk.filecoin.gadgets.multieq import MultiEq
from cuzk.filecoin.gadgets.multipack import (
    bytes_to_bits,
    bytes_to_bits_le,
    compute_multipacking,
    pack_bits,
    pack_into_inputs,
)
from cuzk.filecoin.gadgets.num import AllocatedNum, Num
from cuzk.filecoin.gadgets.sha256 import (
    sha256,
    sha256_block_no_padding,
    sha256_compression_function,
    sha256_iv,
)
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.filecoin.gadgets.uint64 import UInt64
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.layout import fr_to_ints

SEED = random.randrange(1 << 30)
print(f"test_filecoin_gadgets seed: {SEED}")


def run(circuit: Callable[[ConstraintSystem], Any]) -> tuple[Any, int, list[int]]:
    """(witness-mode result, constraints, witness) after checking that the three modes agree
    and the witness satisfies the recorded constraints."""
    shape = synthesize_shape(circuit)
    r1cs = synthesize_r1cs(circuit)
    assert (shape.constraints, shape.inputs, shape.aux) == \
        (r1cs.n_constraints, r1cs.n_public + 1, r1cs.n_vars - r1cs.n_public - 1)
    assert (shape.nnz_a, shape.nnz_b, shape.nnz_c) == (r1cs.a.nnz, r1cs.b.nnz, r1cs.c.nnz)
    out: dict[str, Any] = {}

    def keep(cs: ConstraintSystem) -> None:
        out["r"] = circuit(cs)

    w = synthesize_witness(keep, out=None)
    check_satisfied(r1cs, w)
    return out["r"], shape.constraints, fr_to_ints(w)


def val(cs: ConstraintSystem, v: Any) -> Any:
    return v if cs.wants_values else None


KINDS = ("false", "true", "is0", "is1", "not0", "not1")


def operand(cs: ConstraintSystem, kind: str) -> Boolean:
    if kind in ("false", "true"):
        return Boolean.constant(kind == "true")
    b = Boolean.alloc(cs, val(cs, kind.endswith("1")))
    return b.not_() if kind.startswith("not") else b


def value_of(kind: str) -> bool:
    return kind in ("true", "is1", "not0")


@pytest.mark.parametrize("op", ["xor", "and_", "or_"])
def test_boolean_binary_ops(op: str) -> None:
    fn = {"xor": lambda a, b: a ^ b, "and_": lambda a, b: a and b, "or_": lambda a, b: a or b}[op]
    for ka, kb in itertools.product(KINDS, KINDS):
        def circuit(cs: ConstraintSystem, ka: str = ka, kb: str = kb) -> Boolean:
            a, b = operand(cs, ka), operand(cs, kb)
            return getattr(Boolean, op)(cs, a, b)

        res, n, _ = run(circuit)
        n_vars = sum(k not in ("false", "true") for k in (ka, kb))
        assert res.value == fn(value_of(ka), value_of(kb)), (op, ka, kb)
        # one constraint (and one allocation) exactly when both operands are variables
        assert n == n_vars + (1 if n_vars == 2 else 0), (op, ka, kb)


@pytest.mark.parametrize("op", ["sha256_ch", "sha256_maj"])
def test_boolean_ch_maj(op: str) -> None:
    fn = {"sha256_ch": lambda a, b, c: (a and b) ^ ((not a) and c),
          "sha256_maj": lambda a, b, c: (a and b) ^ (a and c) ^ (b and c)}[op]
    for ks in itertools.product(KINDS, repeat=3):
        def circuit(cs: ConstraintSystem, ks: tuple = ks) -> Boolean:
            return getattr(Boolean, op)(cs, *(operand(cs, k) for k in ks))

        res, n, _ = run(circuit)
        n_vars = sum(k not in ("false", "true") for k in ks)
        assert res.value == fn(*(value_of(k) for k in ks)), (op, ks)
        if n_vars == 0:
            assert n == 0
        if n_vars == 3:  # ch: one constraint; maj: the maj row and its "b and c"
            assert n - n_vars == (1 if op == "sha256_ch" else 2)


def test_boolean_enforce_equal_and_bits() -> None:
    for ka, kb in itertools.product(KINDS, KINDS):
        if value_of(ka) != value_of(kb):
            continue

        def circuit(cs: ConstraintSystem, ka: str = ka, kb: str = kb) -> None:
            Boolean.enforce_equal(cs, operand(cs, ka), operand(cs, kb))

        run(circuit)
    with pytest.raises(SynthesisError):
        synthesize_shape(lambda cs: Boolean.enforce_equal(cs, TRUE, FALSE))

    def unequal(cs: ConstraintSystem) -> None:
        with cs.namespace("eq"):
            Boolean.enforce_equal(cs, operand(cs, "is1"), operand(cs, "not1"))

    r1cs = synthesize_r1cs(unequal)
    with pytest.raises(UnsatisfiedConstraint, match="eq/enforce equal"):
        check_satisfied(r1cs, synthesize_witness(unequal))

    v = random.Random(SEED).getrandbits(64)
    bits, n, _ = run(lambda cs: u64_into_boolean_vec_le(cs, val(cs, v)))
    assert n == 64 and sum(b.value << i for i, b in enumerate(bits)) == v
    x = random.Random(SEED).randrange(R)
    bits, n, _ = run(lambda cs: field_into_boolean_vec_le(cs, val(cs, x)))
    assert n == 255 and sum(b.value << i for i, b in enumerate(bits)) == x


def test_allocated_bit_conditionally() -> None:
    def circuit(cs: ConstraintSystem, m: bool, b: bool) -> None:
        must = AllocatedBit.alloc(cs, val(cs, m))
        AllocatedBit.alloc_conditionally(cs, val(cs, b), must)

    for m, b in ((False, False), (False, True), (True, False)):
        assert run(lambda cs, m=m, b=b: circuit(cs, m, b))[1] == 2
    bad = lambda cs: circuit(cs, True, True)  # noqa: E731
    with pytest.raises(UnsatisfiedConstraint):
        check_satisfied(synthesize_r1cs(bad), synthesize_witness(bad))


def test_num_arithmetic() -> None:
    rng = random.Random(SEED)
    x, y = rng.randrange(1, R), rng.randrange(R)

    def circuit(cs: ConstraintSystem) -> list:
        a = AllocatedNum.alloc(cs, val(cs, x))
        b = AllocatedNum.alloc_maybe_input(cs, True, val(cs, y))
        s, p, q = a.add(cs, b), a.mul(cs, b), a.square(cs)
        a.assert_nonzero(cs)
        p.inputize(cs)
        cond = Boolean.alloc(cs, val(cs, True))
        c, d = AllocatedNum.conditionally_reverse(cs, a, b, cond)
        e = constraint.add(cs, a, b)
        f = constraint.sub(cs, a, b)
        constraint.equal(cs, "a is a", a, a)
        return [s, p, q, c, d, e, f]

    res, n, w = run(circuit)
    # add, mul, square, nonzero, inputize, bit, two reversals, add, sub, equal
    assert n == 11
    assert [r.value for r in res] == [(x + y) % R, x * y % R, x * x % R, y, x, (x + y) % R, (x - y) % R]
    assert w[1:3] == [y, x * y % R]  # inputs in allocation order
    with pytest.raises(SynthesisError, match="division by zero"):
        synthesize_witness(lambda cs: AllocatedNum.alloc(cs, val(cs, 0)).assert_nonzero(cs))


@pytest.mark.parametrize("strict", [False, True])
def test_num_to_bits(strict: bool) -> None:
    rng = random.Random(SEED)
    for x in (0, 1, R - 1, rng.randrange(R), (1 << 254) + 12345):
        def circuit(cs: ConstraintSystem, x: int = x) -> list[Boolean]:
            a = AllocatedNum.alloc(cs, val(cs, x))
            return a.to_bits_le_strict(cs) if strict else a.to_bits_le(cs)

        bits, n, _ = run(circuit)
        assert len(bits) == 255 and sum(b.value << i for i, b in enumerate(bits)) == x
        if not strict:
            assert n == 256  # 255 booleanity rows and the packing
    if strict:
        # r − 1's least significant bit forced to 1 makes the bits spell r: the conditional
        # booleanity of the last bit catches it
        def minus_one(cs: ConstraintSystem) -> None:
            AllocatedNum.alloc(cs, val(cs, R - 1)).to_bits_le_strict(cs)

        r1cs = synthesize_r1cs(minus_one)
        w = synthesize_witness(minus_one)
        shape = synthesize_shape(minus_one)
        # the last allocated variable of the strict decomposition is the lowest bit
        lsb_row = shape.n_vars - 1
        w[lsb_row] = 0
        w[lsb_row, 0] = 1
        with pytest.raises(UnsatisfiedConstraint, match=r"bit 254/boolean constraint"):
            check_satisfied(r1cs, w)


def test_num_lc_and_packing() -> None:
    rng = random.Random(SEED)
    n_bits = 600
    values = [bool(rng.getrandbits(1)) for _ in range(n_bits)]

    def circuit(cs: ConstraintSystem) -> AllocatedNum:
        bits = [Boolean.alloc(cs, val(cs, v)) for v in values]
        bits[3] = bits[3].not_()
        bits[7] = TRUE
        with cs.namespace("pack"):
            pack_into_inputs(cs, bits)
        return pack_bits(cs, bits)

    packed, n, w = run(circuit)
    expect = list(values)
    expect[3] = not expect[3]
    expect[7] = True
    chunks = compute_multipacking(expect)
    assert len(chunks) == 3 and w[1:4] == chunks
    assert n == n_bits + 3 + 1
    assert packed.value == chunks[0]
    assert compute_multipacking([True] * CAPACITY + [True]) == [(1 << CAPACITY) - 1, 1]
    assert bytes_to_bits(b"\x01\x80") == [False] * 7 + [True, True] + [False] * 7
    assert bytes_to_bits_le(b"\x01\x80") == [True] + [False] * 14 + [True]
    num = Num.of(AllocatedNum(~0, 5)).add(Num(3, None)).scale(2)
    assert num.value == 16


def test_uint32_ops() -> None:
    rng = random.Random(SEED)
    xs = [rng.getrandbits(32) for _ in range(10)]

    def circuit(cs: ConstraintSystem) -> list:
        ws = [UInt32.alloc(cs, val(cs, x)) for x in xs[:4]] + [UInt32.constant(x) for x in xs[4:6]]
        out = [
            ws[0].xor(cs, ws[1]), ws[0].xor(cs, ws[4]), ws[0].rotr(7), ws[1].shr(3),
            UInt32.sha256_ch(cs, ws[0], ws[1], ws[2]), UInt32.sha256_maj(cs, ws[0], ws[1], ws[2]),
            UInt32.sha256_maj(cs, ws[4], ws[5], ws[0]),
        ]
        with MultiEq(cs) as meq:
            out.append(UInt32.addmany(meq, ws[:3] + [ws[4]]))
            out.append(UInt32.addmany(meq, [ws[4], ws[5]]))  # all constant: no constraint
            out.append(UInt32.addmany(meq, [ws[0], ws[0], ws[3].rotr(9)]))  # a repeated word
        be = out[0].into_bits_be()
        out.append(UInt32.from_bits_be(be))
        out.append(UInt32.from_bits(out[1].into_bits()))
        return out

    res, n, _ = run(circuit)
    m = 0xFFFFFFFF
    rot = lambda v, k: ((v >> k) | (v << (32 - k))) & m  # noqa: E731
    a, b, c, d, e, f = xs[:6]
    want = [a ^ b, a ^ e, rot(a, 7), b >> 3, (a & b) ^ (~a & c) & m, (a & b) ^ (a & c) ^ (b & c),
            (e & f) ^ (e & a) ^ (f & a), (a + b + c + e) & m, (e + f) & m,
            (a + a + rot(d, 9)) & m, a ^ b, a ^ e]
    assert [r.value for r in res] == want
    assert res[8].bits[0].is_constant  # the all-constant addition folded


def test_multieq_packs_until_capacity() -> None:
    """Each 32-bit addition of 2 words uses 33 bits: seven fit one MultiEq row (7·33 = 231 <
    254), the eighth starts a new one."""
    def circuit(cs: ConstraintSystem, k: int) -> None:
        w = [UInt32.alloc(cs, val(cs, i * 77)) for i in range(2)]
        with MultiEq(cs) as meq:
            for _ in range(k):
                UInt32.addmany(meq, w)

    for k, rows in ((1, 1), (7, 1), (8, 2), (14, 2), (15, 3)):
        _, n, _ = run(lambda cs, k=k: circuit(cs, k))
        assert n == 64 + 33 * k + rows
    with pytest.raises(ValueError):
        MultiEq(synthesize_shape.__globals__["ShapeCS"]()).enforce_equal(CAPACITY, [], [])


def test_uint64() -> None:
    v = random.Random(SEED).getrandbits(64)

    def circuit(cs: ConstraintSystem) -> list:
        x = UInt64.alloc(cs, val(cs, v))
        x.pack_into_input(cs)
        k = UInt64.constant(v)
        return [x, UInt64.from_bits_be(x.to_bits_be()), UInt64.from_bits(k.to_bits_le()), k]

    res, n, w = run(circuit)
    assert n == 64 + 1 and w[1] == v
    assert [r.get_value() for r in res] == [v] * 4


def sha_bits(data: bytes) -> list[bool]:
    return bytes_to_bits(data)


def test_sha256_compression_count_and_value() -> None:
    """bellperson's test: 512 variable bits from the IV, 25,840 constraints."""
    rng = random.Random(SEED)
    data = rng.randbytes(64)

    def circuit(cs: ConstraintSystem) -> list[Boolean]:
        bits = [Boolean.alloc(cs, val(cs, b)) for b in sha_bits(data)]
        return sha256_block_no_padding(cs, bits)

    out, n, _ = run(circuit)
    assert n - 512 == 25840
    # the compression from the IV is SHA-256 without padding: a 55-byte message padded by
    # hand gives the same block
    msg = data[:55]
    padded = msg + b"\x80" + (55 * 8).to_bytes(8, "big")
    assert len(padded) == 64

    def padded_circuit(cs: ConstraintSystem) -> list[Boolean]:
        return sha256_block_no_padding(cs, [Boolean.alloc(cs, val(cs, b)) for b in sha_bits(padded)])

    out, _, _ = run(padded_circuit)
    assert [b.value for b in out] == bytes_to_bits(hashlib.sha256(msg).digest())


@pytest.mark.parametrize("n_bytes", [0, 1, 31, 55, 56, 64, 100])
def test_sha256_matches_hashlib(n_bytes: int) -> None:
    data = random.Random(SEED + n_bytes).randbytes(n_bytes)

    def circuit(cs: ConstraintSystem) -> list[Boolean]:
        return sha256(cs, [Boolean.alloc(cs, val(cs, b)) for b in sha_bits(data)])

    out, n, _ = run(circuit)
    assert bytes_to_bits(hashlib.sha256(data).digest()) == [b.value for b in out]
    if n_bytes == 64:
        assert n - 512 == 44874  # bellperson's test_full_hash


def test_sha256_of_constants_costs_nothing() -> None:
    """bellperson's test_blank_hash: a constant block from the IV makes no constraints."""
    block = [TRUE] + [FALSE] * 511
    shape = synthesize_shape(lambda cs: sha256_compression_function(cs, block, sha256_iv()))
    assert shape.constraints == 0
    out: dict = {}
    synthesize_witness(lambda cs: out.setdefault("h", sha256_block_no_padding(cs, block)))
    assert bytes_to_bits(hashlib.sha256(b"").digest()) == [b.value for b in out["h"]]


@pytest.mark.parametrize("name", sorted(GADGETS))
def test_gadget_table_entries(name: str) -> None:
    entry = GADGETS[name]
    opts = {o.name: o.default for o in entry.options}
    circuit = entry.circuit(opts)
    _, n, _ = run(circuit)
    expected = entry.expected(opts)
    if expected is not None:
        assert n - entry.input_constraints(opts) == expected


def test_constraint_helpers_fail_on_wrong_values() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        a = AllocatedNum.alloc(cs, val(cs, 3))
        b = AllocatedNum.alloc(cs, val(cs, 4))
        total = AllocatedNum.alloc(cs, val(cs, 8))
        constraint.sum_(cs, "three plus four", a, b, total)

    with pytest.raises(UnsatisfiedConstraint, match="three plus four"):
        check_satisfied(synthesize_r1cs(circuit), synthesize_witness(circuit))
    assert ONE == 0
