"""Variables and linear combinations with bellpepper's semantics.

A variable is a plain int: 0 is the constant ONE, i > 0 the i-th public input (allocation
order), and aux variable j is ~j (negative). Final witness columns are [ONE, inputs..., aux...],
which is exactly bellpepper's term order inside a linear combination (inputs ascending, then
aux ascending), so sorting a row by column reproduces it.

A linear combination merges repeated variables by adding their coefficients (mod r), as
bellpepper's `LinearCombination` does; a term whose coefficient sums to zero is kept in the LC
but contributes nothing to the matrices (bellperson's density trackers skip zero
coefficients too).
"""

from __future__ import annotations

from collections.abc import Iterable

from cuzk.curves import get_curve

R: int = get_curve("bls12_381").r  # BLS12-381 scalar field modulus
CAPACITY = 254  # Fr::CAPACITY: bits that always fit below r (NUM_BITS − 1)
NUM_BITS = 255
ONE = 0  # the constant-one variable (input 0)

Var = int


def is_aux(v: Var) -> bool:
    return v < 0


class LC(dict):
    """var → coefficient (ints in [0, r)); bellpepper's `lc + (coeff, var)` is `lc.add(var, coeff)`.

    Methods mutate in place and return self so they chain like bellpepper's builder."""

    __slots__ = ()

    @classmethod
    def of(cls, *terms: tuple[Var, int] | Var) -> LC:
        lc = cls()
        for t in terms:
            if type(t) is tuple:
                lc.add(t[0], t[1])
            else:
                lc.add(t, 1)
        return lc

    def add(self, var: Var, coeff: int = 1) -> LC:
        self[var] = (self.get(var, 0) + coeff) % R
        return self

    def sub(self, var: Var, coeff: int = 1) -> LC:
        self[var] = (self.get(var, 0) - coeff) % R
        return self

    def add_lc(self, other: LinearLike, coeff: int = 1) -> LC:
        for v, c in terms_of(other):
            self[v] = (self.get(v, 0) + c * coeff) % R
        return self

    def sub_lc(self, other: LinearLike, coeff: int = 1) -> LC:
        return self.add_lc(other, -coeff)

    def scaled(self, k: int) -> LC:
        out = LC()
        for v, c in self.items():
            out[v] = c * k % R
        return out

    def copy(self) -> LC:
        return LC(self)

    def eval(self, values: dict[Var, int]) -> int:
        return sum(c * values[v] for v, c in self.items()) % R


# What enforce() accepts for each of A, B, C: an LC, a sequence of (var, coeff) pairs
# (coefficients may be negative; repeats merge), or one variable (coefficient 1).
LinearLike = LC | list | tuple | int


def terms_of(lc: LinearLike) -> Iterable[tuple[Var, int]]:
    """(var, coeff) pairs of any LinearLike, unmerged."""
    if isinstance(lc, dict):
        return lc.items()
    if type(lc) is int:
        return ((lc, 1),)
    return lc


def merged(lc: LinearLike) -> dict[Var, int]:
    """var → coefficient mod r, merged in bellpepper's way (zero coefficients kept)."""
    if type(lc) is LC:
        return lc
    if type(lc) is int:
        return {lc: 1}
    out: dict[Var, int] = {}
    get = out.get
    if isinstance(lc, dict):
        for v, c in lc.items():
            out[v] = c % R
        return out
    for v, c in lc:
        out[v] = (get(v, 0) + c) % R
    return out
