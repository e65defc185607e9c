"""Booleans as bellpepper-core's gadgets/boolean.rs builds them: allocated bits, their
negations and constants, with the same constraints, allocation order and constant folding.

Boolean.value is the Boolean's own value (negation applied), None when unknown (shape and
record modes); the bit underneath a negated Boolean has the opposite value.
"""

from __future__ import annotations

from cuzk.filecoin.cs.base import ConstraintSystem, SynthesisError
from cuzk.filecoin.cs.lc import NUM_BITS, ONE, R, Var


def _v(b: bool | None) -> int | None:
    return None if b is None else int(b)


class AllocatedBit:
    """A variable constrained to 0 or 1."""

    __slots__ = ("var", "value")
    neg = False  # with var: what _tpl_atom returns (template signatures read them in bulk)
    _tpl_fast = True

    def __init__(self, var: Var, value: bool | None = None) -> None:
        self.var = var
        self.value = value

    def __repr__(self) -> str:
        return f"AllocatedBit({self.var}, {self.value})"

    def _tpl_atom(self) -> tuple[Var, bool, None]:
        return (self.var, False, None)

    def _tpl_value(self) -> bool | None:
        return self.value

    @classmethod
    def _tpl_make(cls, var: Var, neg: bool, const: object, value: int | None = None) -> AllocatedBit:
        return cls(var, None if value is None else bool(value))

    @classmethod
    def _tpl_make_run(cls, vs: list[Var], ns: list[bool], xs: list[int]) -> list[AllocatedBit]:
        return [cls(v, x == 1) for v, x in zip(vs, xs)]

    @staticmethod
    def alloc(cs: ConstraintSystem, value: bool | None, recipe: tuple | None = None) -> AllocatedBit:
        var = cs.alloc(_v(value), "boolean", recipe)
        if cs.wants_constraints:
            cs.enforce([(ONE, 1), (var, -1)], var, [], "boolean constraint")
        return AllocatedBit(var, value)

    @staticmethod
    def alloc_conditionally(cs: ConstraintSystem, value: bool | None, must_be_false: AllocatedBit,
                            recipe: tuple | None = None) -> AllocatedBit:
        """A bit that must be 0 when `must_be_false` is 1: (1 − m − b)·b = 0."""
        var = cs.alloc(_v(value), "boolean", recipe)
        if cs.wants_constraints:
            cs.enforce([(ONE, 1), (must_be_false.var, -1), (var, -1)], var, [], "boolean constraint")
        return AllocatedBit(var, value)

    @staticmethod
    def xor(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
        value = None if a.value is None or b.value is None else a.value ^ b.value
        res = cs.alloc(_v(value), "xor result", ("xor", a.var, b.var))
        if cs.wants_constraints:
            # (a + a)·b = a + b − c
            cs.enforce([(a.var, 1), (a.var, 1)], b.var, [(a.var, 1), (b.var, 1), (res, -1)],
                       "xor constraint")
        return AllocatedBit(res, value)

    @staticmethod
    def and_(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
        value = None if a.value is None or b.value is None else a.value and b.value
        res = cs.alloc(_v(value), "and result", ("and", a.var, b.var))
        if cs.wants_constraints:
            cs.enforce(a.var, b.var, res, "and constraint")
        return AllocatedBit(res, value)

    @staticmethod
    def and_not(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
        """a ∧ ¬b"""
        value = None if a.value is None or b.value is None else a.value and not b.value
        res = cs.alloc(_v(value), "and not result", ("and_not", a.var, b.var))
        if cs.wants_constraints:
            cs.enforce(a.var, [(ONE, 1), (b.var, -1)], res, "and not constraint")
        return AllocatedBit(res, value)

    @staticmethod
    def nor(cs: ConstraintSystem, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
        """¬a ∧ ¬b"""
        value = None if a.value is None or b.value is None else not a.value and not b.value
        res = cs.alloc(_v(value), "nor result", ("nor", a.var, b.var))
        if cs.wants_constraints:
            cs.enforce([(ONE, 1), (a.var, -1)], [(ONE, 1), (b.var, -1)], res, "nor constraint")
        return AllocatedBit(res, value)


class Boolean:
    """bellpepper's Boolean: Is(bit) (neg False), Not(bit) (neg True) or Constant (var None)."""

    __slots__ = ("var", "neg", "value")
    _tpl_fast = True  # var, neg and (constants) value are what _tpl_atom returns

    def __init__(self, var: Var | None, neg: bool = False, value: bool | None = None) -> None:
        self.var = var
        self.neg = neg
        self.value = value

    def __repr__(self) -> str:
        if self.var is None:
            return f"Boolean.constant({self.value})"
        return f"Boolean({'Not' if self.neg else 'Is'} {self.var}, {self.value})"

    # --- construction ---------------------------------------------------------------------

    @staticmethod
    def constant(b: bool) -> Boolean:
        return TRUE if b else FALSE

    @staticmethod
    def of(bit: AllocatedBit) -> Boolean:
        """Boolean::Is(bit)"""
        return Boolean(bit.var, False, bit.value)

    @staticmethod
    def not_of(bit: AllocatedBit) -> Boolean:
        """Boolean::Not(bit)"""
        return Boolean(bit.var, True, None if bit.value is None else not bit.value)

    @staticmethod
    def alloc(cs: ConstraintSystem, value: bool | None) -> Boolean:
        return Boolean.of(AllocatedBit.alloc(cs, value))

    def _tpl_atom(self) -> tuple[Var | None, bool, bool | None]:
        return (self.var, self.neg, self.value if self.var is None else None)

    def _tpl_value(self) -> bool | None:
        """The value of the variable underneath (before negation)."""
        v = self.value
        return v if v is None or not self.neg else not v

    @classmethod
    def _tpl_make(cls, var: Var | None, neg: bool, const: bool | None,
                  value: int | None = None) -> Boolean:
        if var is None:
            return TRUE if const else FALSE
        return cls(var, neg, None if value is None else bool(value) ^ neg)

    @classmethod
    def _tpl_make_run(cls, vs: list[Var], ns: list[bool], xs: list[int]) -> list[Boolean]:
        """Variables with their own values (0 or 1)."""
        return [cls(v, n, (x == 1) ^ n) for v, n, x in zip(vs, ns, xs)]

    @property
    def operand(self) -> tuple[Var, bool]:
        """(variable, negated) for a witness recipe; constants as ONE or ¬ONE."""
        if self.var is None:
            return (ONE, not self.value)
        return (self.var, self.neg)

    # --- views ----------------------------------------------------------------------------

    @property
    def is_constant(self) -> bool:
        return self.var is None

    @property
    def bit(self) -> AllocatedBit:
        """The allocated bit underneath (its own value, before negation)."""
        if self.var is None:
            raise ValueError("a constant Boolean has no allocated bit")
        v = self.value
        return AllocatedBit(self.var, v if v is None or not self.neg else not v)

    def not_(self) -> Boolean:
        if self.var is None:
            return FALSE if self.value else TRUE
        return Boolean(self.var, not self.neg, None if self.value is None else not self.value)

    def lc(self, coeff: int = 1) -> list[tuple[Var, int]]:
        """coeff·self as (var, coeff) terms: constant → coeff·ONE or nothing, Not → coeff·(ONE − bit)."""
        if self.var is None:
            return [(ONE, coeff)] if self.value else []
        if self.neg:
            return [(ONE, coeff), (self.var, -coeff)]
        return [(self.var, coeff)]

    # --- operations -----------------------------------------------------------------------

    @staticmethod
    def xor(cs: ConstraintSystem, a: Boolean, b: Boolean) -> Boolean:
        if a.var is None:
            return b.not_() if a.value else b
        if b.var is None:
            return a.not_() if b.value else a
        if a.neg == b.neg:  # Is/Is or Not/Not: the bits' xor is the same
            return Boolean.of(AllocatedBit.xor(cs, a.bit, b.bit))
        is_, not_ = (a, b) if not a.neg else (b, a)  # xor(is, ¬not) negated
        return Boolean.not_of(AllocatedBit.xor(cs, is_.bit, not_.bit))

    @staticmethod
    def and_(cs: ConstraintSystem, a: Boolean, b: Boolean) -> Boolean:
        if (a.var is None and not a.value) or (b.var is None and not b.value):
            return FALSE
        if a.var is None:
            return b
        if b.var is None:
            return a
        if a.neg != b.neg:
            is_, not_ = (a, b) if not a.neg else (b, a)
            return Boolean.of(AllocatedBit.and_not(cs, is_.bit, not_.bit))
        if a.neg:
            return Boolean.of(AllocatedBit.nor(cs, a.bit, b.bit))
        return Boolean.of(AllocatedBit.and_(cs, a.bit, b.bit))

    @staticmethod
    def or_(cs: ConstraintSystem, a: Boolean, b: Boolean) -> Boolean:
        with cs.namespace("not and (not a) (not b)"):
            return Boolean.and_(cs, a.not_(), b.not_()).not_()

    @staticmethod
    def enforce_equal(cs: ConstraintSystem, a: Boolean, b: Boolean) -> None:
        if a.var is None and b.var is None:
            if a.value != b.value:
                raise SynthesisError("enforce_equal of two different constants is unsatisfiable")
            return
        if not cs.wants_constraints:
            return
        if a.var is None or b.var is None:
            const, x = (a, b) if a.var is None else (b, a)
            if const.value:
                cs.enforce([], [], [(ONE, 1)] + [(v, -c) for v, c in x.lc()], "enforce equal to one")
            else:
                cs.enforce([], [], x.lc(), "enforce equal to zero")
            return
        cs.enforce([], [], a.lc() + [(v, -c) for v, c in b.lc()], "enforce equal")

    @staticmethod
    def sha256_ch(cs: ConstraintSystem, a: Boolean, b: Boolean, c: Boolean) -> Boolean:
        """(a ∧ b) ⊕ (¬a ∧ c), one constraint when a, b, c are all variables."""
        av, bv, cv = a.value, b.value, c.value
        value = None if av is None or bv is None or cv is None else (av and bv) ^ ((not av) and cv)
        ac, bc, cc = a.var is None, b.var is None, c.var is None
        if ac and bc and cc:
            return TRUE if value else FALSE
        if ac and not a.value:
            return c
        if bc and not b.value:
            return Boolean.and_(cs, a.not_(), c)
        if cc and not c.value:
            return Boolean.and_(cs, a, b)
        if cc:  # c true
            return Boolean.and_(cs, a, b.not_()).not_()
        if bc:  # b true
            return Boolean.and_(cs, a.not_(), c.not_()).not_()
        ch = cs.alloc(_v(value), "ch", ("ch", a.operand, b.operand, c.operand))
        if cs.wants_constraints:
            # (b − c)·a = ch − c
            negc = [(v, -k) for v, k in c.lc()]
            cs.enforce(b.lc() + negc, a.lc(), [(ch, 1)] + negc, "ch computation")
        return Boolean(ch, False, value)

    @staticmethod
    def sha256_maj(cs: ConstraintSystem, a: Boolean, b: Boolean, c: Boolean) -> Boolean:
        """(a ∧ b) ⊕ (a ∧ c) ⊕ (b ∧ c): two constraints when a, b, c are all variables."""
        av, bv, cv = a.value, b.value, c.value
        value = (None if av is None or bv is None or cv is None
                 else (av and bv) ^ (av and cv) ^ (bv and cv))
        ac, bc_, cc = a.var is None, b.var is None, c.var is None
        if ac and bc_ and cc:
            return TRUE if value else FALSE
        if ac and not a.value:
            return Boolean.and_(cs, b, c)
        if bc_ and not b.value:
            return Boolean.and_(cs, a, c)
        if cc and not c.value:
            return Boolean.and_(cs, a, b)
        if cc:
            return Boolean.and_(cs, a.not_(), b.not_()).not_()
        if bc_:
            return Boolean.and_(cs, a.not_(), c.not_()).not_()
        if ac:
            return Boolean.and_(cs, b.not_(), c.not_()).not_()
        maj = cs.alloc(_v(value), "maj", ("maj", a.operand, b.operand, c.operand))
        with cs.namespace("b and c"):
            bc = Boolean.and_(cs, b, c)
        if cs.wants_constraints:
            # (2·bc − b − c)·a = bc − maj
            cs.enforce(
                bc.lc() + bc.lc() + [(v, -k) for v, k in b.lc()] + [(v, -k) for v, k in c.lc()],
                a.lc(),
                bc.lc() + [(maj, -1)],
                "maj computation",
            )
        return Boolean(maj, False, value)


TRUE = Boolean(None, False, True)
FALSE = Boolean(None, False, False)


def u64_into_boolean_vec_le(cs: ConstraintSystem, value: int | None) -> list[Boolean]:
    """64 allocated bits, least significant first."""
    out = []
    for i in range(64):
        with cs.namespace("bit", i):
            out.append(Boolean.alloc(cs, None if value is None else bool(value >> i & 1)))
    return out


def field_into_allocated_bits_le(cs: ConstraintSystem, value: int | None,
                                 var: Var | None = None) -> list[AllocatedBit]:
    """NUM_BITS (255) allocated bits of a field element, least significant first (no check
    that they encode a value below r: see AllocatedNum.to_bits_le_strict). `var`, the
    element's variable if it has one, gives the bits their recipes."""
    if value is not None:
        value %= R
    out = []
    for i in range(NUM_BITS):
        with cs.namespace("bit", i):
            out.append(AllocatedBit.alloc(cs, None if value is None else bool(value >> i & 1),
                                          None if var is None else ("fbit", var, i)))
    return out


def field_into_boolean_vec_le(cs: ConstraintSystem, value: int | None) -> list[Boolean]:
    return [Boolean.of(b) for b in field_into_allocated_bits_le(cs, value)]
