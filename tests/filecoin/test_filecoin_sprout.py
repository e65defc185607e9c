"""Our gadgets build exactly bellperson's matrices: Zcash's Sprout JoinSplit circuit, made
of the same SHA-256 / Boolean / multipack gadgets, reproduces the TestConstraintSystem digest
its Rust test asserts (every constraint, coefficient and variable index)."""

from __future__ import annotations

from filecoin_sprout import SPROUT_CONSTRAINTS, SPROUT_HASH, SPROUT_INPUTS, joinsplit

from cuzk.filecoin.cs import synthesize_r1cs, synthesize_shape
from cuzk.filecoin.cs.digest import bellpepper_hash


def test_sprout_joinsplit_matches_zcash_digest() -> None:
    shape = synthesize_shape(joinsplit)
    assert (shape.constraints, shape.inputs) == (SPROUT_CONSTRAINTS, SPROUT_INPUTS)
    r1cs = synthesize_r1cs(joinsplit, labels=False)
    assert (r1cs.a.nnz, r1cs.b.nnz, r1cs.c.nnz) == (shape.nnz_a, shape.nnz_b, shape.nnz_c)
    assert bellpepper_hash(r1cs) == SPROUT_HASH


def test_digest_notices_a_changed_coefficient() -> None:
    from cuzk.filecoin.cs import ONE, RecordCS

    def digest(k: int) -> str:
        cs = RecordCS()
        x = cs.alloc(None)
        cs.enforce([(x, k)], ONE, x)
        return bellpepper_hash(cs.r1cs())

    assert digest(2) != digest(3)
