"""Field elements in the circuit, as bellpepper-core's gadgets/num.rs: AllocatedNum (one
variable) and Num (a linear combination with its value)."""

from __future__ import annotations

from cuzk.filecoin.cs.base import ConstraintSystem, SynthesisError
from cuzk.filecoin.cs.lc import LC, ONE, R, Var
from cuzk.filecoin.cs.template import template
from cuzk.filecoin.gadgets.boolean import AllocatedBit, Boolean, field_into_allocated_bits_le

# r − 1, the largest field element: to_bits_le_strict checks a value's bits against it.
_R_MINUS_1 = R - 1


class AllocatedNum:
    __slots__ = ("var", "value")
    neg = False  # with var: what _tpl_atom returns (template signatures read them in bulk)
    _tpl_fast = True

    def __init__(self, var: Var, value: int | None = None) -> None:
        self.var = var
        self.value = value

    def __repr__(self) -> str:
        return f"AllocatedNum({self.var}, {self.value})"

    def _tpl_atom(self) -> tuple[Var, bool, None]:
        return (self.var, False, None)

    def _tpl_value(self) -> int | None:
        return self.value

    @classmethod
    def _tpl_make(cls, var: Var, neg: bool, const: object, value: int | None = None) -> AllocatedNum:
        return cls(var, value)

    @classmethod
    def _tpl_make_run(cls, vs: list[Var], ns: list[bool], xs: list[int]) -> list[AllocatedNum]:
        return [cls(v, x) for v, x in zip(vs, xs)]

    # --- allocation -----------------------------------------------------------------------

    @staticmethod
    def alloc(cs: ConstraintSystem, value: int | None, recipe: tuple | None = None) -> AllocatedNum:
        """`recipe`: how the value follows from earlier variables, for witness programs
        (cs/native_program.py: "lin" or "mul")."""
        v = None if value is None else value % R
        return AllocatedNum(cs.alloc(v, "num", recipe), v)

    @staticmethod
    def alloc_input(cs: ConstraintSystem, value: int | None) -> AllocatedNum:
        v = None if value is None else value % R
        return AllocatedNum(cs.alloc_input(v, "input num"), v)

    @staticmethod
    def alloc_maybe_input(cs: ConstraintSystem, is_input: bool, value: int | None) -> AllocatedNum:
        return (AllocatedNum.alloc_input if is_input else AllocatedNum.alloc)(cs, value)

    def inputize(self, cs: ConstraintSystem) -> None:
        """A public input equal to this number: input·1 = self."""
        inp = cs.alloc_input(self.value, "input variable")
        if cs.wants_constraints:
            cs.enforce(inp, ONE, self.var, "enforce input is correct")

    # --- bits -----------------------------------------------------------------------------

    def to_bits_le_strict(self, cs: ConstraintSystem) -> list[Boolean]:
        """255 bits, least significant first, constrained to encode a value below r
        (allocated most significant first, as bellpepper does). A template (as to_bits_le)."""
        return _to_bits_le_strict(cs, self)

    def _bits_le_strict(self, cs: ConstraintSystem) -> list[Boolean]:
        a = self.value
        result: list[AllocatedBit] = []
        last_run: AllocatedBit | None = None
        current_run: list[AllocatedBit] = []
        i = 0
        for pos in range(_R_MINUS_1.bit_length() - 1, -1, -1):
            a_bit = None if a is None else bool(a >> pos & 1)
            recipe = ("fbit", self.var, pos)
            if _R_MINUS_1 >> pos & 1:
                with cs.namespace("bit", i):
                    bit = AllocatedBit.alloc(cs, a_bit, recipe)
                current_run.append(bit)
                result.append(bit)
            else:
                if current_run:
                    if last_run is not None:
                        current_run.append(last_run)
                    with cs.namespace("run ending at", i):
                        last_run = _kary_and(cs, current_run)
                    current_run = []
                assert last_run is not None  # r − 1 starts with a one
                with cs.namespace("bit", i):
                    result.append(AllocatedBit.alloc_conditionally(cs, a_bit, last_run, recipe))
            i += 1
        assert not current_run  # r is odd... r − 1 ends in a run of zeros
        self._unpack(cs, result[::-1])
        return [Boolean.of(b) for b in reversed(result)]

    def to_bits_le(self, cs: ConstraintSystem) -> list[Boolean]:
        """255 bits, least significant first, packing to this number (not checked below r).
        A template: each bit's recipe is bit i of the number, so witness mode computes the
        whole decomposition natively (Filecoin circuits split many numbers into bits)."""
        return _to_bits_le(cs, self)

    def _bits_le(self, cs: ConstraintSystem) -> list[Boolean]:
        bits = field_into_allocated_bits_le(cs, self.value, self.var)
        self._unpack(cs, bits)
        return [Boolean.of(b) for b in bits]

    def _unpack(self, cs: ConstraintSystem, bits_le: list[AllocatedBit]) -> None:
        if not cs.wants_constraints:
            return
        lc = LC()
        coeff = 1
        for b in bits_le:
            lc.add(b.var, coeff)
            coeff = coeff * 2 % R
        lc.sub(self.var)
        cs.enforce([], [], lc, "unpacking constraint")

    # --- arithmetic -----------------------------------------------------------------------

    def add(self, cs: ConstraintSystem, other: AllocatedNum) -> AllocatedNum:
        v = None if self.value is None or other.value is None else (self.value + other.value) % R
        var = cs.alloc(v, "sum num", ("lin", ((self.var, 1), (other.var, 1))))
        if cs.wants_constraints:
            cs.enforce([(self.var, 1), (other.var, 1)], ONE, var, "addition constraint")
        return AllocatedNum(var, v)

    def mul(self, cs: ConstraintSystem, other: AllocatedNum) -> AllocatedNum:
        v = None if self.value is None or other.value is None else self.value * other.value % R
        var = cs.alloc(v, "product num", ("mul", ((self.var, 1),), ((other.var, 1),), ()))
        if cs.wants_constraints:
            cs.enforce(self.var, other.var, var, "multiplication constraint")
        return AllocatedNum(var, v)

    def square(self, cs: ConstraintSystem) -> AllocatedNum:
        v = None if self.value is None else self.value * self.value % R
        var = cs.alloc(v, "squared num", ("mul", ((self.var, 1),), ((self.var, 1),), ()))
        if cs.wants_constraints:
            cs.enforce(self.var, self.var, var, "squaring constraint")
        return AllocatedNum(var, v)

    def assert_nonzero(self, cs: ConstraintSystem) -> None:
        inv = None
        if self.value is not None:
            if self.value % R == 0:
                raise SynthesisError("division by zero")
            inv = pow(self.value, -1, R)
        var = cs.alloc(inv, "ephemeral inverse")
        if cs.wants_constraints:
            cs.enforce(self.var, var, ONE, "nonzero assertion constraint")

    @staticmethod
    def conditionally_reverse(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum,
                              condition: Boolean) -> tuple[AllocatedNum, AllocatedNum]:
        """(a, b) if condition is false, else (b, a)."""
        cv = condition.value
        r1 = r2 = None
        if cs.wants_recipes:  # a + cond·(b − a), b + cond·(a − b)
            cond = tuple(condition.lc())
            r1 = ("mul", ((b.var, 1), (a.var, -1)), cond, ((a.var, 1),))
            r2 = ("mul", ((a.var, 1), (b.var, -1)), cond, ((b.var, 1),))
        with cs.namespace("conditional reversal result 1"):
            c = AllocatedNum.alloc(cs, None if cv is None else (b.value if cv else a.value), r1)
        if cs.wants_constraints:
            cs.enforce([(a.var, 1), (b.var, -1)], condition.lc(), [(a.var, 1), (c.var, -1)],
                       "first conditional reversal")
        with cs.namespace("conditional reversal result 2"):
            d = AllocatedNum.alloc(cs, None if cv is None else (a.value if cv else b.value), r2)
        if cs.wants_constraints:
            cs.enforce([(b.var, 1), (a.var, -1)], condition.lc(), [(b.var, 1), (d.var, -1)],
                       "second conditional reversal")
        return c, d


@template
def _to_bits_le(cs: ConstraintSystem, num: AllocatedNum) -> list[Boolean]:
    return num._bits_le(cs)


@template
def _to_bits_le_strict(cs: ConstraintSystem, num: AllocatedNum) -> list[Boolean]:
    return num._bits_le_strict(cs)


def _kary_and(cs: ConstraintSystem, v: list[AllocatedBit]) -> AllocatedBit:
    cur = v[0]
    for i in range(1, len(v)):
        with cs.namespace("and", i):
            cur = AllocatedBit.and_(cs, cur, v[i])
    return cur


class Num:
    """A linear combination and its value. `lc` is None when constraints are not wanted
    (witness mode), so packing costs nothing there. add_bool_with_coeff and add extend this
    Num in place and return it (bellpepper consumes self)."""

    __slots__ = ("value", "lc")

    def __init__(self, value: int | None, lc: LC | None) -> None:
        self.value = value
        self.lc = lc

    def _tpl_parts(self) -> tuple[tuple[int, ...], list[AllocatedNum]]:
        """As a template argument: the coefficients are part of the signature, the variables
        are its slots (the value is not carried: templates replay in shape/record mode)."""
        if self.lc is None:
            raise ValueError("a Num without a linear combination cannot be a template argument")
        return tuple(self.lc.values()), [AllocatedNum(v) for v in self.lc]

    @classmethod
    def _tpl_build(cls, coeffs: tuple[int, ...], nums: list[AllocatedNum]) -> Num:
        lc = LC()
        for n, c in zip(nums, coeffs, strict=True):
            lc.add(n.var, c)
        return cls(None, lc)

    @staticmethod
    def zero(cs: ConstraintSystem | None = None) -> Num:
        return Num(0, LC() if cs is None or cs.wants_constraints else None)

    @staticmethod
    def of(num: AllocatedNum) -> Num:
        return Num(num.value, LC.of(num.var))

    def add_bool_with_coeff(self, bit: Boolean, coeff: int) -> Num:
        if self.value is not None:
            bv = bit.value
            self.value = None if bv is None else (self.value + coeff) % R if bv else self.value
        if self.lc is not None:
            self.lc.add_lc(bit.lc(coeff))
        return self

    def add(self, other: Num) -> Num:
        self.value = None if self.value is None or other.value is None else (self.value + other.value) % R
        if self.lc is not None and other.lc is not None:
            self.lc.add_lc(other.lc)
        return self

    def scale(self, k: int) -> Num:
        return Num(None if self.value is None else self.value * k % R,
                   None if self.lc is None else self.lc.scaled(k))

    def lc_times(self, coeff: int) -> LC:
        """bellpepper's Num::lc(coeff)."""
        assert self.lc is not None
        return self.lc.scaled(coeff)
