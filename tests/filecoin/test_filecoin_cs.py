"""The Filecoin constraint system: bellpepper's LC merging, the three modes agreeing, templates
replaying exactly what a direct call records, the appended input constraints, witness
buffers, and failures that name the broken constraint."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cuzk.filecoin.cs import (
    LC,
    ONE,
    ConstraintSystem,
    R,
    RecordCS,
    ShapeCS,
    SynthesisError,
    WitnessCS,
    check_satisfied,
    is_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
    template,
)
from cuzk.filecoin.cs.digest import bellpepper_hash
from cuzk.filecoin.cs.lc import merged
from cuzk.filecoin.gadgets.boolean import FALSE, TRUE, Boolean
from cuzk.filecoin.gadgets.num import AllocatedNum, Num
from cuzk.filecoin.gadgets.sha256 import sha256_compression_function, sha256_iv
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.groth16 import qap
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.layout import fr_to_ints


def shape_of_r1cs(r1cs) -> dict:
    """The Shape fields computed from recorded matrices."""
    n_in = r1cs.n_public + 1

    def used(m) -> np.ndarray:
        return np.unique(m.indices)

    ua, ub = used(r1cs.a), used(r1cs.b)
    return dict(
        constraints=r1cs.n_constraints, inputs=n_in, aux=r1cs.n_vars - n_in,
        nnz_a=r1cs.a.nnz, nnz_b=r1cs.b.nnz, nnz_c=r1cs.c.nnz,
        vars_in_a=len(ua), vars_in_b=len(ub),
        aux_in_a=int((ua >= n_in).sum()), aux_in_b=int((ub >= n_in).sum()),
        inputs_in_b=int((ub < n_in).sum()),
    )


def assert_modes_agree(circuit) -> None:
    shape = synthesize_shape(circuit)
    r1cs = synthesize_r1cs(circuit)
    want = {k: v for k, v in shape.as_dict().items() if k in shape_of_r1cs(r1cs)}
    assert shape_of_r1cs(r1cs) == want


def test_lc_merges_like_bellpepper() -> None:
    lc = LC().add(~3, 2).add(5).add(~3, R - 2).add(0, 7)
    assert lc == {~3: 0, 5: 1, 0: 7}  # a merged-to-zero term stays in the LC
    assert merged([(1, 1), (1, -1), (~0, 3), (~0, 4)]) == {1: 0, ~0: 7}
    assert merged(4) == {4: 1}
    assert LC.of((2, 3), 4).scaled(2) == {2: 6, 4: 2}


def test_zero_coefficients_leave_the_matrices_and_rows_are_sorted() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        x = cs.alloc(None)
        y = cs.alloc(None)
        p = cs.alloc_input(None)
        cs.enforce([(y, 1), (x, 1), (x, -1), (p, 2), (ONE, 1)], x, [], "row")

    r = synthesize_r1cs(circuit)
    assert r.a.nnz == 3  # x cancelled
    assert list(r.a.indices) == [0, 1, 3]  # ONE, input, then aux y (column 2 + 1)
    assert fr_to_ints(r.a.values) == [1, 2, 1]
    assert synthesize_shape(circuit).nnz_a == 3


def test_appended_input_constraints_are_bellpersons() -> None:
    """One row per input (ONE first), A = that input, B = C = 0, after the circuit's rows."""

    def circuit(cs: ConstraintSystem) -> None:
        a = AllocatedNum.alloc(cs, 3 if cs.wants_values else None)
        b = a.square(cs)
        b.inputize(cs)
        a.inputize(cs)

    r = synthesize_r1cs(circuit)
    shape = synthesize_shape(circuit)
    assert (r.n_public, r.n_constraints) == (2, 3)
    assert shape.constraints_with_inputs == 3 + 3
    full = qap.with_public_rows(r)
    assert full.n_rows == shape.constraints_with_inputs
    for k in range(3):
        row = 3 + k
        lo, hi = full.a.indptr[row], full.a.indptr[row + 1]
        assert list(full.a.indices[lo:hi]) == [k] and fr_to_ints(full.a.values[lo:hi]) == [1]
        assert full.b.indptr[row + 1] == full.b.indptr[row]
        assert full.c.indptr[row + 1] == full.c.indptr[row]
    w = synthesize_witness(circuit)
    assert fr_to_ints(w) == [1, 9, 3, 3, 9]  # [ONE, inputs..., aux...] in allocation order
    check_satisfied(r, w)


def test_witness_into_callers_buffer() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        bits = [Boolean.alloc(cs, bool(i & 1) if cs.wants_values else None) for i in range(10)]
        x = AllocatedNum.alloc_input(cs, 5 if cs.wants_values else None)
        x.mul(cs, x)
        with cs.namespace("xor"):
            Boolean.xor(cs, bits[0], bits[1])

    shape = synthesize_shape(circuit)
    buf = np.full((shape.n_vars, 4), 7, dtype=np.uint64)
    out = synthesize_witness(circuit, out=buf, n_inputs=shape.inputs)
    assert out is buf
    assert fr_to_ints(buf) == [1, 5] + [i & 1 for i in range(10)] + [25, 1]
    buf2 = np.zeros((shape.n_vars, 4), dtype=np.uint64)
    synthesize_witness(circuit, out=buf2)  # input count not given: gathered, then copied
    assert (buf2 == buf).all()
    with pytest.raises(SynthesisError):
        synthesize_witness(circuit, out=np.zeros((shape.n_vars + 1, 4), dtype=np.uint64))
    with pytest.raises(ValueError):
        WitnessCS(out=np.zeros((3, 4), dtype=np.int64))


def test_big_values_and_missing_values() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        x = AllocatedNum.alloc(cs, R - 1 if cs.wants_values else None)
        x.square(cs)

    assert fr_to_ints(synthesize_witness(circuit)) == [1, R - 1, 1]
    with pytest.raises(SynthesisError, match="no value for aux variable 0"):
        WitnessCS().alloc(None, "x")


def test_mutated_witness_names_the_constraint() -> None:
    def circuit(cs: ConstraintSystem) -> None:
        with cs.namespace("outer"):
            a = UInt32.alloc(cs, 0x12345678 if cs.wants_values else None)
            b = UInt32.alloc(cs, 0x0F0F0F0F if cs.wants_values else None)
            with cs.namespace("mix"):
                a.xor(cs, b)

    r = synthesize_r1cs(circuit)
    w = synthesize_witness(circuit)
    check_satisfied(r, w)
    bad = w.copy()
    bad[1 + 64 + 5, 0] ^= 1  # bit 5 of the xor result
    with pytest.raises(UnsatisfiedConstraint, match=r"outer/mix/xor of bit 5/xor constraint"):
        check_satisfied(r, bad)
    assert not is_satisfied(r, bad)
    bad = w.copy()
    bad[1 + 3, 0] = 2  # bit 3 of a, no longer a bit
    with pytest.raises(UnsatisfiedConstraint, match=r"outer/allocated bit 3/boolean constraint"):
        check_satisfied(r, bad)


# --- templates ---------------------------------------------------------------------------------


@template
def _mix(cs: ConstraintSystem, a: Boolean, b: Boolean, c: Boolean, k: int) -> list[Boolean]:
    with cs.namespace("maj"):
        m = Boolean.sha256_maj(cs, a, b, c)
    with cs.namespace("ch"):
        h = Boolean.sha256_ch(cs, a, b, c)
    out = [m, h]
    for i in range(k):
        with cs.namespace("xor", i):
            out.append(Boolean.xor(cs, out[-1], out[-2]))
    return out


@template
def _outer(cs: ConstraintSystem, bits: list[Boolean]) -> list[Boolean]:
    out = []
    for i in range(0, len(bits) - 2, 2):
        with cs.namespace("mix", i):
            out.extend(_mix(cs, bits[i], bits[i + 1], bits[i + 2], 2))
    return out


def _atoms(cs: ConstraintSystem, rng: random.Random) -> list[Boolean]:
    """Allocated bits, their negations, constants and a repeated variable."""
    base = [Boolean.alloc(cs, bool(rng.getrandbits(1)) if cs.wants_values else None) for _ in range(4)]
    return [base[0], base[1].not_(), TRUE, base[2], FALSE, base[0], base[3].not_(), base[2].not_()]


def _mixed(direct: bool):
    def circuit(cs: ConstraintSystem) -> None:
        atoms = _atoms(cs, random.Random(5))
        outs = []
        for a in atoms:
            for b in atoms:
                for c in atoms[:5]:
                    f = _mix.__wrapped__ if direct else _mix
                    outs.extend(f(cs, a, b, c, 2))
        g = _outer.__wrapped__ if direct else _outer
        outs.extend(g(cs, atoms + outs[:6]))
        with cs.namespace("fold"):
            acc = outs[0]
            for o in outs[1:40]:
                acc = Boolean.xor(cs, acc, o)
        inp = cs.alloc_input(None if acc.value is None else int(acc.value))
        if cs.wants_constraints:
            cs.enforce(acc.lc(), ONE, inp, "expose")

    return circuit


def test_template_replay_records_what_a_direct_call_records() -> None:
    """Constants, negations and repeated variables in every position, nested templates."""
    direct = synthesize_r1cs(_mixed(True))
    replayed = synthesize_r1cs(_mixed(False))
    assert replayed.n_constraints == direct.n_constraints > 0
    assert bellpepper_hash(replayed) == bellpepper_hash(direct)
    for m in ("a", "b", "c"):
        x, y = getattr(replayed, m), getattr(direct, m)
        assert (x.indptr == y.indptr).all() and (x.indices == y.indices).all()
        assert (x.values == y.values).all()
    labels = replayed.labels["constraints"]
    assert [labels[i] for i in range(direct.n_constraints)] == \
        [direct.labels["constraints"][i] for i in range(direct.n_constraints)]
    assert_modes_agree(_mixed(False))
    assert synthesize_shape(_mixed(False)) == synthesize_shape(_mixed(True))
    w = synthesize_witness(_mixed(False))
    check_satisfied(replayed, w)
    assert (w == synthesize_witness(_mixed(True))).all()  # witness programs = the gadget code


def test_template_signature_sees_aliasing_and_constants() -> None:
    from cuzk.filecoin.cs.template import signature

    cs = ShapeCS()
    x, y = Boolean.alloc(cs, None), Boolean.alloc(cs, None)
    s1 = signature((x, y, TRUE, 3))
    s2 = signature((x, x, TRUE, 3))
    s3 = signature((y, x.not_(), TRUE, 3))
    s4 = signature((x, y, FALSE, 3))
    s5 = signature((x, y, TRUE, 4))
    assert s1[1] != s2[1] and s1[1] != s3[1] and s1[1] != s4[1] and s1[0] != s5[0]
    assert s1[:2] == signature((y, x, TRUE, 3))[:2]  # same pattern, other variables
    assert s1[2] == [x.var, y.var]
    with pytest.raises(TypeError):
        signature((object(),))


def test_compression_template_matches_direct_sha256() -> None:
    def circuit(direct: bool, state_var: bool):
        def c(cs: ConstraintSystem) -> None:
            rng = random.Random(3)
            bits = [Boolean.alloc(cs, bool(rng.getrandbits(1)) if cs.wants_values else None)
                    for _ in range(300)]
            block = bits + [TRUE, FALSE] * 80 + bits[:52]  # constants and repeats
            state = ([UInt32.alloc(cs, rng.getrandbits(32) if cs.wants_values else None)
                      for _ in range(8)] if state_var else sha256_iv())
            f = sha256_compression_function.__wrapped__ if direct else sha256_compression_function
            f(cs, block, state)

        return c

    for state_var in (False, True):
        a = synthesize_r1cs(circuit(True, state_var), labels=False)
        b = synthesize_r1cs(circuit(False, state_var), labels=False)
        assert bellpepper_hash(a) == bellpepper_hash(b)
        w = synthesize_witness(circuit(False, state_var))
        check_satisfied(b, w)
        assert (w == synthesize_witness(circuit(True, state_var))).all()


@template
def _opaque(cs: ConstraintSystem, x: AllocatedNum, bits: list[Boolean]) -> tuple:
    """Allocations without recipes (a product, an input): no witness program."""
    y = x.mul(cs, x)
    y.inputize(cs)
    return y, Boolean.xor(cs, bits[0], bits[1])


def test_template_without_program_runs_the_gadget_in_witness_mode() -> None:
    from cuzk.filecoin.cs.template import lookup

    def circuit(cs: ConstraintSystem) -> None:
        x = AllocatedNum.alloc(cs, 7 if cs.wants_values else None)
        bits = [Boolean.alloc(cs, v if cs.wants_values else None) for v in (True, False)]
        for _ in range(3):
            y, b = _opaque(cs, x, bits)
            x = y
        with cs.namespace("last"):
            Boolean.and_(cs, b, bits[0])

    cs = ShapeCS()
    x = AllocatedNum.alloc(cs, None)
    t, _ = lookup(_opaque, (x, [Boolean.alloc(cs, None), Boolean.alloc(cs, None)]))
    assert t.recipes is None and t.program() is None and t.n_inputs == 1
    r = synthesize_r1cs(circuit)
    w = synthesize_witness(circuit)
    check_satisfied(r, w)
    assert fr_to_ints(w[1:4]) == [49, 49 ** 2, 49 ** 4]


@template
def _weighted(cs: ConstraintSystem, num: Num, x: AllocatedNum) -> AllocatedNum:
    v = None if num.value is None or x.value is None else num.value * x.value % R
    y = cs.alloc(v, "y")
    cs.enforce(num.lc_times(1), x.var, y, "y = num·x")
    return AllocatedNum(y, v)


def test_num_as_template_argument() -> None:
    def circuit(direct: bool):
        def c(cs: ConstraintSystem) -> None:
            a = AllocatedNum.alloc(cs, 3 if cs.wants_values else None)
            b = AllocatedNum.alloc(cs, 5 if cs.wants_values else None)
            num = Num.of(a).add(Num.of(b)).scale(7)
            num.lc.add(ONE, 2)
            if cs.wants_values:
                num.value += 2
            f = _weighted.__wrapped__ if direct else _weighted
            y = f(cs, num, b)
            f(cs, Num.of(y), y)

        return c

    a, b = synthesize_r1cs(circuit(True)), synthesize_r1cs(circuit(False))
    assert bellpepper_hash(a) == bellpepper_hash(b)
    w = synthesize_witness(circuit(False))
    check_satisfied(b, w)
    assert fr_to_ints(w)[-2:] == [(7 * 8 + 2) * 5, ((7 * 8 + 2) * 5) ** 2]


def test_record_cs_label_lookup_and_matrices_twice() -> None:
    cs = RecordCS()
    with cs.namespace("a", 1):
        x = cs.alloc(None)
        cs.enforce(x, x, x, "sq")
    cs.enforce([], [], [], None)
    assert cs.label(0) == "a 1/sq" and cs.label(1) == "" and cs.label(2) is None
    m1 = cs.matrices()
    m2 = cs.matrices()
    assert all((p == q).all() for u, v in zip(m1, m2) for p, q in zip(u, v))
