"""MultiEq (bellperson gadgets/multieq.rs): several equalities of small packed values
summed into one constraint, each shifted by the bits used before it, while they fit in
CAPACITY bits. The pending constraint is enforced when the next equality would overflow and
when the MultiEq is closed (bellperson: dropped), so its rows interleave with the others
exactly there.

    with MultiEq(cs) as meq:
        UInt32.addmany(meq, [...])
"""

from __future__ import annotations

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import CAPACITY, LC, ONE, LinearLike


class MultiEq:
    __slots__ = ("cs", "ops", "bits_used", "lhs", "rhs")

    def __init__(self, cs: ConstraintSystem) -> None:
        self.cs = cs
        self.ops = 0
        self.bits_used = 0
        self.lhs = LC()
        self.rhs = LC()

    def _accumulate(self) -> None:
        self.cs.enforce(self.lhs, ONE, self.rhs, f"multieq {self.ops}")
        self.lhs = LC()
        self.rhs = LC()
        self.bits_used = 0
        self.ops += 1

    def enforce_equal(self, num_bits: int, lhs: LinearLike, rhs: LinearLike) -> None:
        """lhs = rhs, both below 2^num_bits."""
        if not self.cs.wants_constraints:
            return
        if CAPACITY <= self.bits_used + num_bits:
            self._accumulate()
        if CAPACITY <= self.bits_used + num_bits:
            raise ValueError(f"{num_bits} bits do not fit one MultiEq constraint")
        coeff = 1 << self.bits_used
        self.lhs.add_lc(lhs, coeff)
        self.rhs.add_lc(rhs, coeff)
        self.bits_used += num_bits

    def close(self) -> None:
        if self.bits_used > 0:
            self._accumulate()

    def __enter__(self) -> MultiEq:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
