"""Witness programs for the native engine (cuzk._native.WitnessProgram).

A recorded template whose every aux variable has a recipe compiles to a stream of int64
instructions (the format is described in cuzk/native/include/cuzk/witness_program.hpp) that
the extension runs in allocation order, straight into the witness buffer. Recipes (passed by
the gadgets with their allocations, keys in capture space):

    ("xor" | "and" | "and_not" | "nor", a, b)   two bits
    ("ch" | "maj", (a, na), (b, nb), (c, nc))   three Booleans (variable, negated)
    ("sum", k, i)                               bit i of integer sum k (template.sums[k])
    ("fbit", x, i)                              bit i of field variable x
    ("lin", terms)                              sum of coeff·key ((key, coeff) pairs)
    ("mul", A, B, C)                            A·B + C, each a terms tuple

Keys are variables of the template (ONE, argument slots, its aux variables) or temporaries
(ConstraintSystem.let: linear combinations that are never allocated, such as Poseidon's
lanes between S-boxes). Values are kept in bit registers where they are used as bits and in
field registers (Montgomery form) where they are used as field elements; a value that is
naturally a bit stays one even inside a linear combination.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

import numpy as np

from cuzk.filecoin.cs.lc import R

PH = 1 << 40  # as in template.py: argument slots
TMP = 1 << 50  # temporaries

XOR, AND, AND_NOT, NOR, CH, MAJ, SUM, SUM_BIT, FIELD_BIT, LIN, MUL, COPY, AXPY, PROD = range(14)
_BIN = {"xor": XOR, "and": AND, "and_not": AND_NOT, "nor": NOR}
_TRI = {"ch": CH, "maj": MAJ}
_BIT_KINDS = {"xor", "and", "and_not", "nor", "ch", "maj", "sum", "fbit"}
_FIELD_KINDS = {"lin", "mul"}


@cache
def engine() -> Any:
    """The extension's WitnessProgram class, or None when the extension lacks it."""
    try:
        from cuzk import _native
    except ImportError:
        return None
    return getattr(_native, "WitnessProgram", None)


class _Unsupported(Exception):
    pass


def _bit_operands(r: tuple, sums: list) -> Iterable[Any]:
    kind = r[0]
    if kind in _BIN:
        return (r[1], r[2])
    if kind in _TRI:
        return tuple(k for k, _ in r[1:])
    if kind == "sum":
        return tuple(k for k, _ in sums[r[1]])
    return ()


def _field_operands(r: tuple) -> Iterable[Any]:
    kind = r[0]
    if kind == "lin":
        return tuple(k for k, _ in r[1])
    if kind == "mul":
        return tuple(k for part in r[1:] for k, _ in part)
    return ()


def compile_native(t: Any) -> Any:
    """The native program of template `t` (cs/template.py Template), or None when the
    extension lacks the engine or a recipe is outside the scheme."""
    cls = engine()
    if cls is None:
        return None
    args = program_arguments(t)
    return None if args is None else cls(**args)


def program_arguments(t: Any) -> dict[str, Any] | None:
    """The keyword arguments of cuzk._native.WitnessProgram for template `t` (code, constant
    table, register counts, slot loads, outputs), or None when it has no program."""
    if t.recipes is None or t.n_inputs:
        return None
    try:
        return _compile(t.recipes, t.sums, t.lets, t.n_slots, t.out_atoms)
    except _Unsupported:
        return None


def instructions(code: Any) -> list[tuple[int, int]]:
    """(offset, op) of every instruction of a compiled program, in order (for tests and
    debugging; the format is witness_program.hpp's)."""
    code = [int(w) for w in code]
    out = []
    pc = 0

    def lc(pc: int) -> int:
        for group in range(4):
            pc += 1 + (1 if group < 2 else 2) * code[pc]
        return pc + 1

    while pc < len(code):
        op = code[pc]
        out.append((pc, op))
        pc += 4
        if op in (XOR, AND, AND_NOT, NOR, SUM_BIT, FIELD_BIT):
            pc += 2
        elif op in (CH, MAJ):
            pc += 6
        elif op == SUM:
            pc += 2 + 2 * code[pc + 1]
        elif op == LIN:
            pc = lc(pc)
        elif op == MUL:
            pc = lc(pc)
            pc = pc + 1 if code[pc] == -1 else lc(pc)
            pc = lc(pc)
        else:
            pc += {COPY: 1, AXPY: 3, PROD: 5}[op]
    return out


def _compile(recipes: list[tuple], sums: list[tuple], lets: list[tuple[int, tuple]], n_slots: int,
             out_atoms: list[tuple]) -> dict[str, Any]:
    """The keyword arguments of the engine's WitnessProgram (raises _Unsupported)."""
    n_aux = len(recipes)
    for r in recipes:
        if r[0] not in _BIT_KINDS and r[0] not in _FIELD_KINDS:
            raise _Unsupported(r[0])

    # Events in execution order: each temporary right before the first allocation made after
    # it, each aux variable's recipe at its place. (key defined, recipe)
    events: list[tuple[int, tuple]] = []
    li = 0
    for j, r in enumerate(recipes):
        while li < len(lets) and lets[li][0] <= j:
            events.append((TMP + li, ("lin", lets[li][1])))
            li += 1
        events.append((~j, r))

    # Operands, checked to exist before their use; which keys are used as bits / as field
    # elements, and where each is used last.
    defined = {0} | {PH + k for k in range(n_slots)}
    used_bit: set[int] = set()
    used_field: set[int] = set()
    last: dict[int, int] = {}
    for e, (key, r) in enumerate(events):
        bits = _bit_operands(r, sums)
        fields = _field_operands(r)
        for k in (*bits, *fields):
            if k not in defined:
                raise _Unsupported("an operand that is not an earlier value of the template")
            last[k] = e
        if r[0] == "fbit" and r[1] not in defined:
            raise _Unsupported("a field bit of an unknown value")
        used_bit.update(bits)
        used_field.update(fields)
        defined.add(key)

    def natural_bit(k: int) -> bool:
        return (k < 0 and recipes[~k][0] in _BIT_KINDS) or (PH <= k < TMP and k in used_bit)

    # Register files (ONE is register 0 of both). A natural bit (a bit recipe's result, or a
    # slot used as a bit, loaded checked) lives in a bit register and is read as 0/1 in field
    # terms too; any other value used as a field element gets a field register, and a bit
    # register as well if it is also used as a bit. Registers are reused after a value's last
    # use, so the files stay small enough for the L1 cache.
    wants_bit = {k for k in used_bit | used_field if natural_bit(k) or k in used_bit} - {0}
    wants_field = {k for k in used_field if not natural_bit(k)} - {0}
    if any(k >= TMP for k in wants_bit):
        raise _Unsupported("a temporary used as a bit")
    bit_reg: dict[int, int] = {0: 0}
    field_reg: dict[int, int] = {0: 0}
    files = ((wants_bit, bit_reg, [], [1]), (wants_field, field_reg, [], [1]))

    def assign(k: int) -> None:
        for wants, regs, free, count in files:
            if k in wants:
                if free:
                    regs[k] = free.pop()
                else:
                    regs[k] = count[0]
                    count[0] += 1

    def release(k: int) -> None:
        for _wants, regs, free, _count in files:
            if k in regs and k != 0:
                free.append(regs[k])

    for k in range(n_slots):
        assign(PH + k)
    slot_bit = [bit_reg.get(PH + k, -1) for k in range(n_slots)]
    slot_field = [field_reg.get(PH + k, -1) for k in range(n_slots)]

    consts: list[int] = []
    const_id: dict[int, int] = {}

    def coeff(c: int) -> int:
        c %= R
        if c == 1:
            return -1
        if c == R - 1:
            return -2
        i = const_id.get(c)
        if i is None:
            i = const_id[c] = len(consts)
            consts.append(c)
        return i

    def parts(ts: tuple) -> tuple[list[int], list[int], list[int], list[int], int]:
        """A linear combination's groups: field registers added, subtracted, times constants
        ((reg, cid) flattened), bit registers with constants, the constant term (-3: none);
        repeats merged, ONE folded into the constant."""
        merged: dict[int, int] = {}
        const = 0
        for k, c in ts:
            if k == 0:
                const += c
            else:
                merged[k] = (merged.get(k, 0) + c) % R
        add: list[int] = []
        sub: list[int] = []
        mulc: list[int] = []
        bits: list[int] = []
        for k, c in merged.items():
            if c == 0:
                continue
            if k not in field_reg:
                bits += [bit_reg[k], coeff(c)]
            elif c == 1:
                add.append(field_reg[k])
            elif c == R - 1:
                sub.append(field_reg[k])
            else:
                mulc += [field_reg[k], coeff(c)]
        const %= R
        return add, sub, mulc, bits, -3 if const == 0 else coeff(const)

    def terms(p: tuple) -> list[int]:
        add, sub, mulc, bits, k = p
        return [len(add), *add, len(sub), *sub, len(mulc) // 2, *mulc, len(bits) // 2, *bits, k]

    def offset(p: tuple) -> tuple[int, int] | None:
        """(register, constant) when the combination is one field register plus a constant."""
        add, sub, mulc, bits, k = p
        return (add[0], k) if len(add) == 1 and not (sub or mulc or bits) else None

    def field_code(r: tuple) -> list[int]:
        """LIN / MUL, or the short forms COPY / AXPY / PROD where they fit."""
        if r[0] == "lin":
            p = parts(r[1])
            add, sub, mulc, bits, k = p
            if not (sub or bits) and k == -3 and len(add) == 1 and len(mulc) <= 2:
                return [COPY, add[0]] if not mulc else [AXPY, add[0], *mulc]
            return [LIN] + terms(p)
        pa, pc = parts(r[1]), parts(r[3])
        pb = pa if r[2] == r[1] else parts(r[2])
        a, b = offset(pa), offset(pb)
        if a and b and not any(pc[:4]):
            return [PROD, a[0], a[1], b[0], b[1], pc[4]]
        return [MUL] + terms(pa) + ([-1] if r[2] == r[1] else terms(pb)) + terms(pc)

    code: list[int] = []
    sum_reg: dict[int, int] = {}
    for e, (key, r) in enumerate(events):
        kind = r[0]
        if key >= TMP and key not in last:
            continue  # a temporary nothing reads
        # Operands first, in the registers they hold now.
        if kind in _BIN:
            body = [bit_reg[r[1]], bit_reg[r[2]]]
        elif kind in _TRI:
            body = [x for v, neg in r[1:] for x in (bit_reg[v], int(bool(neg)))]
        elif kind == "sum":
            s_id = r[1]
            if s_id not in sum_reg:
                sum_reg[s_id] = len(sum_reg)
                pre = []
                for v, c in sums[s_id]:
                    c = c - R if c > R // 2 else c  # a negated bit's term: −coeff
                    if abs(c) >= 1 << 40:
                        raise _Unsupported("sum coefficient")
                    pre += [bit_reg[v], c]
                code += [SUM, -1, -1, -1, sum_reg[s_id], len(sums[s_id])] + pre
            body = [sum_reg[s_id], r[2]]
        elif kind == "fbit":
            x = r[1]
            if x < 0:
                body = [~x, r[2]]
            elif PH <= x < TMP:
                body = [~(x - PH), r[2]]
            else:
                raise _Unsupported("field bit of a constant or temporary")
        else:  # lin, mul
            op, *body = field_code(r)
        # Then free what is not needed any more; the destination may take it.
        for k in {k for k in (*_bit_operands(r, sums), *_field_operands(r)) if last[k] == e}:
            release(k)
        if key in last:
            assign(key)
        if kind not in _FIELD_KINDS:
            op = SUM_BIT if kind == "sum" else FIELD_BIT if kind == "fbit" else _BIN.get(kind, _TRI.get(kind))
        row = ~key if key < 0 else -1
        code += [op, bit_reg.get(key, -1) if key in last else -1,
                 field_reg.get(key, -1) if key in last else -1, row] + body

    outputs = []
    for var, _neg, _const in out_atoms:
        if var is None or var == 0:
            continue
        if var < 0:
            outputs.append(~var)
        elif PH <= var < TMP:
            outputs.append(~(var - PH))
        else:
            raise _Unsupported("output")
    from cuzk.filecoin.poseidon.native import to_limbs

    return {
        "n_slots": n_slots,
        "n_aux": n_aux,
        "n_bits": files[0][3][0],
        "n_fields": files[1][3][0],
        "n_sums": len(sum_reg),
        "code": np.array(code, dtype=np.int64),
        "consts": to_limbs(consts) if consts else np.zeros((0, 4), dtype=np.uint64),
        "slot_bit": np.array(slot_bit, dtype=np.int64),
        "slot_field": np.array(slot_field, dtype=np.int64),
        "outputs": np.array(outputs, dtype=np.int64),
    }
