"""Witness programs: how each aux variable of a recorded template gets its value, as data.

Gadgets pass a *recipe* with each allocation (AllocatedBit xor/and/and-not/nor of two bits;
sha256 ch/maj of three Booleans; bit i of a linear combination of bits, for additions). A
template whose allocations all have recipes gets a program: the recipes levelled by
dependency depth and grouped by kind, so witness mode computes a whole SHA-256 compression
with a few hundred numpy steps instead of Python per bit. It is also the form a native
witness generator can run without porting each gadget.

Values are indexed [ONE, the template's argument slots..., its aux variables...]; a Boolean
operand is (index, negated), constants being ONE or ¬ONE.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from cuzk.filecoin.cs.lc import R

PH = 1 << 40  # as in template.py: capture keys from PH on are argument slots

_BIN = {"xor": 0, "and": 1, "and_not": 2, "nor": 3}
_TRI = {"ch": 0, "maj": 1}


class WitnessProgram:
    def __init__(self, n_slots: int, n_aux: int, steps: list[tuple]) -> None:
        self.n_slots = n_slots
        self.n_aux = n_aux
        self.steps = steps

    def run(self, slot_values: Sequence[int]) -> np.ndarray:
        """The aux values (uint64, allocation order) for these argument values (small ints)."""
        v = np.zeros(1 + self.n_slots + self.n_aux, dtype=np.uint64)
        v[0] = 1
        v[1 : 1 + self.n_slots] = slot_values
        one = np.uint64(1)
        for step in self.steps:
            kind = step[0]
            if kind == "bin":
                _, op, out, a, b = step
                x, y = v[a], v[b]
                if op == 0:
                    v[out] = x ^ y
                elif op == 1:
                    v[out] = x & y
                elif op == 2:
                    v[out] = x & (y ^ one)
                else:
                    v[out] = (x ^ one) & (y ^ one)
            elif kind == "tri":
                _, op, out, idx, neg = step  # idx, neg: (3, n)
                x, y, z = v[idx[0]] ^ neg[0], v[idx[1]] ^ neg[1], v[idx[2]] ^ neg[2]
                if op == 0:
                    v[out] = (x & y) ^ ((x ^ one) & z)
                else:
                    v[out] = (x & y) ^ (x & z) ^ (y & z)
            else:  # sums of terms, then bits of them
                _, terms, coeffs, starts, out, sid, shift = step
                s = np.add.reduceat(coeffs * v[terms].astype(np.int64), starts)
                v[out] = (s[sid] >> shift).astype(np.uint64) & one
        return v[1 + self.n_slots :]


def compile_program(recipes: Sequence[tuple], sums: Sequence[tuple], n_slots: int) -> WitnessProgram | None:
    """Level and group the recipes; None if one refers to something a program cannot hold
    (an input allocated inside the template, a later variable, a non-bit coefficient)."""
    n_aux = len(recipes)
    base = 1 + n_slots

    def idx(key: int) -> int:
        if key == 0:
            return 0
        if key >= PH:
            return 1 + key - PH
        if key < 0:
            return base + ~key
        raise ValueError("input")

    level = np.zeros(base + n_aux, dtype=np.int64)
    sum_level: dict[int, int] = {}
    groups: dict[tuple, list] = defaultdict(list)
    try:
        for j, r in enumerate(recipes):
            kind = r[0]
            if kind in _BIN:
                ops = (idx(r[1]), idx(r[2]))
                negs = None
            elif kind in _TRI:
                ops = tuple(idx(k) for k, _ in r[1:])
                negs = tuple(int(n) for _, n in r[1:])
            elif kind == "sum":
                k = r[1]
                if k not in sum_level:
                    terms = [idx(var) for var, _ in sums[k]]
                    if not terms or any(t >= base + j for t in terms):
                        return None
                    sum_level[k] = 1 + int(level[terms].max(initial=0))
                level[base + j] = sum_level[k]
                groups[(sum_level[k], "sum")].append((base + j, k, r[2]))
                continue
            else:
                return None
            if any(o >= base + j for o in ops):
                return None
            lv = 1 + max(int(level[o]) for o in ops)
            level[base + j] = lv
            groups[(lv, kind)].append((base + j, ops, negs))
    except ValueError:
        return None

    steps: list[tuple] = []
    for (lv, kind) in sorted(groups, key=lambda g: (g[0], g[1])):
        items = groups[(lv, kind)]
        out = np.array([it[0] for it in items], dtype=np.int64)
        if kind in _BIN:
            a = np.array([it[1][0] for it in items], dtype=np.int64)
            b = np.array([it[1][1] for it in items], dtype=np.int64)
            steps.append(("bin", _BIN[kind], out, a, b))
        elif kind in _TRI:
            ix = np.array([it[1] for it in items], dtype=np.int64).T.copy()
            ng = np.array([it[2] for it in items], dtype=np.uint64).T.copy()
            steps.append(("tri", _TRI[kind], out, ix, ng))
        else:
            ks = sorted({it[1] for it in items})
            pos = {k: i for i, k in enumerate(ks)}
            terms, coeffs, starts = [], [], []
            for k in ks:
                starts.append(len(terms))
                for var, c in sums[k]:
                    c = c - R if c > R // 2 else c  # a negated bit's term: −coeff
                    if abs(c) >= 1 << 40:
                        return None
                    terms.append(idx(var))
                    coeffs.append(c)
            steps.append((
                "sum",
                np.array(terms, dtype=np.int64),
                np.array(coeffs, dtype=np.int64),
                np.array(starts, dtype=np.int64),
                out,
                np.array([pos[it[1]] for it in items], dtype=np.int64),
                np.array([it[2] for it in items], dtype=np.int64),
            ))
    return WitnessProgram(n_slots, n_aux, steps)
