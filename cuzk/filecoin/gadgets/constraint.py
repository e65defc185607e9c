"""Small relations between numbers (rust-fil-proofs storage-proofs-core gadgets/constraint.rs)."""

from __future__ import annotations

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import ONE, R
from cuzk.filecoin.gadgets.num import AllocatedNum


def equal(cs: ConstraintSystem, name: str, a: AllocatedNum, b: AllocatedNum) -> None:
    """a·1 = b"""
    if cs.wants_constraints:
        cs.enforce(a.var, ONE, b.var, name)


def sum_(cs: ConstraintSystem, name: str, a: AllocatedNum, b: AllocatedNum, total: AllocatedNum) -> None:
    """(a + b)·1 = total"""
    if cs.wants_constraints:
        cs.enforce([(a.var, 1), (b.var, 1)], ONE, total.var, name)


def difference(cs: ConstraintSystem, name: str, a: AllocatedNum, b: AllocatedNum,
               diff: AllocatedNum) -> None:
    """(diff + b)·1 = a"""
    if cs.wants_constraints:
        cs.enforce([(diff.var, 1), (b.var, 1)], ONE, a.var, name)


def add(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
    with cs.namespace("add_num"):
        res = AllocatedNum.alloc(cs, None if a.value is None or b.value is None
                                 else (a.value + b.value) % R)
    sum_(cs, "sum constraint", a, b, res)
    return res


def sub(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
    with cs.namespace("sub_num"):
        res = AllocatedNum.alloc(cs, None if a.value is None or b.value is None
                                 else (a.value - b.value) % R)
    difference(cs, "subtraction constraint", a, b, res)
    return res
