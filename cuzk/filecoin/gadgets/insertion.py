"""Inserting a number into a list at a position given by bits, as rust-fil-proofs'
storage-proofs-core gadgets/insertion.rs builds it (the Merkle path gadget puts the current
node among its siblings this way).

`insert(cs, x, bits, elements)` returns elements with x inserted so that it lands at index n
(bits: n, least significant first; len(elements) + 1 == 2^len(bits)). Sizes 2, 4 and 8 have
hand-made selection networks (2, 8 and 22 constraints); other sizes select every output
position from all candidates (size·(size − 1) constraints). Every constraint is a `pick`.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.template import template
from cuzk.filecoin.gadgets.boolean import AllocatedBit, Boolean
from cuzk.filecoin.gadgets.num import AllocatedNum


def pick(cs: ConstraintSystem, condition: Boolean, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
    """a if condition else b, as a new variable c: (b − a)·condition = b − c."""
    v = None
    if cs.wants_values:
        v = a.value if condition.value else b.value
    recipe = None
    if cs.wants_recipes:  # b + cond·(a − b)
        recipe = ("mul", ((a.var, 1), (b.var, -1)), tuple(condition.lc()), ((b.var, 1),))
    with cs.namespace("pick result"):
        c = AllocatedNum.alloc(cs, v, recipe)
    if cs.wants_constraints:
        cs.enforce([(b.var, 1), (a.var, -1)], condition.lc(), [(b.var, 1), (c.var, -1)], "pick")
    return c


def select(cs: ConstraintSystem, choices: Sequence[AllocatedNum], bits: Sequence[Boolean]) -> AllocatedNum:
    """choices[n] (n given by bits, least significant first) through a tree of picks, the
    most significant bit first: len(choices) − 1 constraints."""
    if 1 << len(bits) != len(choices):
        raise ValueError(f"select needs 2^{len(bits)} choices, got {len(choices)}")
    state = list(choices)
    half = len(state) // 2
    for i, bit in enumerate(reversed(bits)):
        nxt = []
        for j in range(half):
            with cs.namespace("pick", i, j):
                nxt.append(pick(cs, bit, state[half + j], state[j]))
        state = nxt
        half //= 2
    return state[0]


def _named_pick(cs: ConstraintSystem, name: str, cond: Boolean, a: AllocatedNum,
                b: AllocatedNum) -> AllocatedNum:
    with cs.namespace(name):
        return pick(cs, cond, a, b)


def insert_2(cs: ConstraintSystem, x: AllocatedNum, bits: Sequence[Boolean],
             elements: Sequence[AllocatedNum]) -> list[AllocatedNum]:
    """[x, e] when the bit is 0, [e, x] when it is 1: two picks."""
    if len(elements) != 1 or len(bits) != 1:
        raise ValueError("insert_2 takes one element and one bit")
    (e,) = elements
    (b0,) = bits
    return [_named_pick(cs, "binary insert 0", b0, e, x),
            _named_pick(cs, "binary insert 1", b0, x, e)]


def insert_4(cs: ConstraintSystem, x: AllocatedNum, bits: Sequence[Boolean],
             elements: Sequence[AllocatedNum]) -> list[AllocatedNum]:
    """Eight picks: each output position depends on the low bit, then the high bit.

    Name pN_xK: output position N when the low bit is unknown (x) and the high bit is K."""
    if len(elements) != 3 or len(bits) != 2:
        raise ValueError("insert_4 takes three elements and two bits")
    b0, b1 = bits
    a = x
    b, c, d = elements
    p = _named_pick
    p0_x0 = p(cs, "p0_x0", b0, b, a)
    p0 = p(cs, "p0", b1, b, p0_x0)
    p1_x0 = p(cs, "p1_x0", b0, a, b)
    p1 = p(cs, "p1", b1, c, p1_x0)
    p2_x1 = p(cs, "p2_x1", b0, d, a)
    p2 = p(cs, "p2", b1, p2_x1, c)
    p3_x1 = p(cs, "p3_x1", b0, a, d)
    p3 = p(cs, "p3", b1, p3_x1, d)
    return [p0, p1, p2, p3]


def insert_8(cs: ConstraintSystem, x: AllocatedNum, bits: Sequence[Boolean],
             elements: Sequence[AllocatedNum]) -> list[AllocatedNum]:
    """22 constraints: (¬b0 ∧ ¬b1) and (b0 ∧ b1) once each, then 20 picks. The bits must be
    allocated and not negated (as rust-fil-proofs requires).

    Name pN_xyz: output position N as a function of (b0, b1, b2), x where still unknown."""
    if len(elements) != 7 or len(bits) != 3:
        raise ValueError("insert_8 takes seven elements and three bits")
    b0, b1, b2 = bits
    if b0.var is None or b1.var is None or b0.neg or b1.neg:
        raise ValueError("insert_8: bits must be allocated and unnegated")
    with cs.namespace("b0 nor b1"):
        nor01 = Boolean.of(AllocatedBit.nor(cs, b0.bit, b1.bit))
    with cs.namespace("b0 and b1"):
        and01 = Boolean.of(AllocatedBit.and_(cs, b0.bit, b1.bit))
    a = x
    b, c, d, e, f, g, h = elements
    p = _named_pick
    p0_xx0 = p(cs, "p0_xx0", nor01, a, b)
    p0 = p(cs, "p0", b2, b, p0_xx0)

    p1_x00 = p(cs, "p1_x00", b0, a, b)
    p1_xx0 = p(cs, "p1_xx0", b1, c, p1_x00)
    p1 = p(cs, "p1", b2, c, p1_xx0)

    p2_x10 = p(cs, "p2_x10", b0, d, a)
    p2_xx0 = p(cs, "p2_xx0", b1, p2_x10, c)
    p2 = p(cs, "p2", b2, d, p2_xx0)

    p3_xx0 = p(cs, "p3_xx0", and01, a, d)
    p3 = p(cs, "p3", b2, e, p3_xx0)

    p4_xx1 = p(cs, "p4_xx1", nor01, a, f)
    p4 = p(cs, "p4", b2, p4_xx1, e)

    p5_x01 = p(cs, "p5_x01", b0, a, f)
    p5_xx1 = p(cs, "p5_xx1", b1, g, p5_x01)
    p5 = p(cs, "p5", b2, p5_xx1, f)

    p6_x11 = p(cs, "p6_x11", b0, h, a)
    p6_xx1 = p(cs, "p6_xx1", b1, p6_x11, g)
    p6 = p(cs, "p6", b2, p6_xx1, g)

    p7_xx1 = p(cs, "p7_xx1", and01, a, h)
    p7 = p(cs, "p7", b2, p7_xx1, h)
    return [p0, p1, p2, p3, p4, p5, p6, p7]


def insert_general(cs: ConstraintSystem, x: AllocatedNum, bits: Sequence[Boolean],
                   elements: Sequence[AllocatedNum]) -> list[AllocatedNum]:
    """Any power-of-two size: output position `pos` selects, by the bits, among the values
    it takes for each insertion index (x at pos, the element before it for indices below
    pos, the element at pos for those above)."""
    size = len(elements) + 1
    out = []
    for pos in range(size):
        choices = [elements[pos - 1] if index < pos else x if index == pos else elements[pos]
                   for index in range(size)]
        with cs.namespace("choice at", pos):
            out.append(select(cs, choices, bits))
    return out


@template
def insert(cs: ConstraintSystem, x: AllocatedNum, bits: Sequence[Boolean],
           elements: Sequence[AllocatedNum]) -> list[AllocatedNum]:
    """elements with x inserted at the index the bits give (least significant first). A
    template: every Merkle path level calls it, and its picks have witness recipes."""
    size = len(elements) + 1
    if 1 << len(bits) != size:
        raise ValueError(f"inserting into {len(elements)} elements needs {size.bit_length() - 1} "
                         f"bits and a power-of-two size, got {len(bits)} bits")
    if size == 2:
        return insert_2(cs, x, bits, elements)
    if size == 4:
        return insert_4(cs, x, bits, elements)
    if size == 8:
        return insert_8(cs, x, bits, elements)
    return insert_general(cs, x, bits, elements)
