"""Poseidon in the circuit as rust-fil-proofs synthesizes it: neptune's legacy
`circuit::poseidon_hash` (Merkle-tree tag, neptune's compressed round constants and sparse
matrices, so every coefficient matches), and filecoin-hashers' `hash_md_circuit`.

Per hash: 3 constraints per S-box (x², x⁴, x⁵ + key; the tag lane's first S-box is a
constant and free), plus one constraint wherever a linear combination must become a variable
(an S-box input that is not one already, and the result): 3(t·RF + RP − 1) + (t·RF + RP −
arity) in all, 311 / 377 / 505 / 598 / 761 / 1,009 / 1,385 for arity 2 / 4 / 8 / 11 / 16 / 24
/ 36. Lanes between S-boxes are linear combinations that grow through the partial rounds.

For witness programs (cs/native_program.py) every allocation has a recipe and every lane
that is a linear combination is also a temporary (`cs.let`) defined from the lanes before
it, so the program evaluates the permutation lane by lane as the native hasher does instead
of re-evaluating the growing linear combinations.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import LC, ONE, R, Var
from cuzk.filecoin.cs.template import template
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.poseidon.params import MD_ARITY, PoseidonConstants, constants


class _Lane:
    """One state element: a variable (`var`) or a linear combination (`lc`, None in witness
    mode) with its value (None in shape and record mode). `key` names it in recipes: the
    variable, or the temporary holding the combination (template captures only)."""

    __slots__ = ("var", "lc", "value", "key")

    def __init__(self, var: Var | None, lc: LC | None, value: int | None,
                 key: Var | None = None) -> None:
        self.var = var
        self.lc = lc
        self.value = value
        self.key = var if key is None else key

    def terms(self) -> LC | None:
        if self.var is not None:
            return LC.of(self.var)
        return self.lc


def _ensure_allocated(cs: ConstraintSystem, e: _Lane) -> _Lane:
    """A variable equal to the lane: lc·1 = v (neptune's Elt::ensure_allocated)."""
    if e.var is not None:
        return e
    recipe = None if e.key is None else ("lin", ((e.key, 1),))
    with cs.namespace("allocate for Elt::Num"):
        v = cs.alloc(e.value, "num", recipe)
    if cs.wants_constraints:
        cs.enforce(e.lc, ONE, v, "enforce num allocation preserves lc")
    return _Lane(v, None, e.value)


def _square(cs: ConstraintSystem, x: _Lane, name: str) -> _Lane:
    v = None if x.value is None else x.value * x.value % R
    recipe = ("mul", ((x.var, 1),), ((x.var, 1),), ()) if cs.wants_recipes else None
    with cs.namespace(name):
        var = cs.alloc(v, "squared num", recipe)
        if cs.wants_constraints:
            cs.enforce(x.var, x.var, var, "squaring constraint")
    return _Lane(var, None, v)


def _square_sum(cs: ConstraintSystem, to_add: int, x: _Lane) -> _Lane:
    """(x + k)²: (x + k)·(x + k) = res."""
    v = None if x.value is None else (x.value + to_add) ** 2 % R
    recipe = None
    if cs.wants_recipes:
        s = ((x.var, 1), (ONE, to_add))
        recipe = ("mul", s, s, ())
    with cs.namespace("(l+rk)^2"):
        var = cs.alloc(v, "squared sum", recipe)
        if cs.wants_constraints:
            lc = [(x.var, 1), (ONE, to_add)]
            cs.enforce(lc, lc, var, "squared sum constraint")
    return _Lane(var, None, v)


def _mul_sum(cs: ConstraintSystem, a: _Lane, b: _Lane, pre: int | None, post: int | None,
             name: str) -> _Lane:
    """(b + pre)·a + post: (b + pre)·a = res − post."""
    v = None
    if a.value is not None and b.value is not None:
        v = ((b.value + (pre or 0)) * a.value + (post or 0)) % R
    recipe = None
    if cs.wants_recipes:
        recipe = ("mul", ((b.var, 1),) if pre is None else ((b.var, 1), (ONE, pre)), ((a.var, 1),),
                  () if post is None else ((ONE, post),))
    with cs.namespace(name):
        var = cs.alloc(v, "mul_sum", recipe)
        if cs.wants_constraints:
            lhs = [(b.var, 1)] if pre is None else [(b.var, 1), (ONE, pre)]
            out = [(var, 1)] if post is None else [(var, 1), (ONE, -post)]
            cs.enforce(lhs, a.var, out, "mul sum constraint")
    return _Lane(var, None, v)


def _sbox(cs: ConstraintSystem, e: _Lane, post: int | None) -> _Lane:
    with cs.namespace("S-box input"):
        x = _ensure_allocated(cs, e)
    x2 = _square(cs, x, "l^2")
    x4 = _square(cs, x2, "l^4")
    return _mul_sum(cs, x4, x, None, post, "(l4 * l) + rk)")


def _sbox_pre_add(cs: ConstraintSystem, e: _Lane, pre: int, post: int) -> _Lane:
    with cs.namespace("S-box input"):
        x = _ensure_allocated(cs, e)
    x2 = _square_sum(cs, pre, x)
    x4 = _square(cs, x2, "l^4")
    return _mul_sum(cs, x4, x, pre, post, "l4 * (l + rk)")


def _scalar_product(cs: ConstraintSystem, lanes: Sequence[_Lane], scalars: Sequence[int],
                    want_lc: bool) -> _Lane:
    """sum scalars[i]·lanes[i] as a linear combination (bellpepper merges repeated
    variables by adding their coefficients; so does LC)."""
    key = cs.let(tuple((e.key, s) for e, s in zip(lanes, scalars))) if cs.wants_recipes else None
    lc = LC() if want_lc else None
    value: int | None = 0
    for e, s in zip(lanes, scalars):
        if lc is not None:
            if e.var is not None:
                lc.add(e.var, s)
            else:
                lc.add_lc(e.lc, s)
        if value is not None:
            value = None if e.value is None else value + e.value * s
    return _Lane(None, lc, None if value is None else value % R, key)


def _mix_dense(cs: ConstraintSystem, lanes: list[_Lane], m: list[list[int]], want_lc: bool) -> list[_Lane]:
    """Row vector times matrix: lane j ← sum_i lane_i · m[i][j]."""
    t = len(lanes)
    return [_scalar_product(cs, lanes, [m[i][j] for i in range(t)], want_lc) for j in range(t)]


def _mix_sparse(cs: ConstraintSystem, lanes: list[_Lane], w_hat: Sequence[int],
                v_rest: Sequence[int], want_lc: bool) -> list[_Lane]:
    """Lane 0 ← w_hat·lanes; lane j ← lane j + v_rest[j−1]·lane 0 (j ≥ 1)."""
    first = _scalar_product(cs, lanes, w_hat, want_lc)
    e0 = lanes[0]
    out = [first]
    for e, v in zip(lanes[1:], v_rest):
        lc = None
        if want_lc:
            lc = e.terms().copy()
            lc.add_lc(e0.terms(), v)
        value = None if e.value is None or e0.value is None else (e.value + v * e0.value) % R
        key = cs.let(((e.key, 1), (e0.key, v))) if cs.wants_recipes else None
        out.append(_Lane(None, lc, value, key))
    return out


def _permute_circuit(cs: ConstraintSystem, inputs: list[_Lane], c: PoseidonConstants) -> list[_Lane]:
    """neptune's legacy circuit schedule on the compressed constants; `inputs` are lanes
    1..t−1 (lane 0 is the constant domain tag)."""
    t, half, rp = c.width, c.half_full_rounds, c.partial_rounds
    lanes = list(inputs)
    keys = c.compressed_round_constants
    want_lc = cs.wants_constraints
    off = 0

    def mix(r: int, lanes: list[_Lane]) -> list[_Lane]:
        if r == half - 1:
            return _mix_dense(cs, lanes, c.pre_sparse, want_lc)
        if half <= r < half + rp:
            s = c.sparse[r - half]
            return _mix_sparse(cs, lanes, s.w_hat, s.v_rest, want_lc)
        return _mix_dense(cs, lanes, c.mds, want_lc)

    n_rounds = c.full_rounds + rp
    for r in range(n_rounds):
        if r == 0:
            name: tuple = ("first round",)
        elif r < half:
            name = ("initial full round", r)
        elif r < half + rp:
            name = ("partial round", r - half)
        elif r < n_rounds - 1:
            name = ("final full round", r - half - rp)
        else:
            name = ("terminal full round",)
        with cs.namespace(*name):
            if r == 0:
                pre, post = keys[:t], keys[t : 2 * t]
                off = 2 * t
                # The tag lane's first S-box has constant input: computed, not constrained.
                tag = (pow(c.domain_tag + pre[0], 5, R) + post[0]) % R
                key = cs.let(((ONE, tag),)) if cs.wants_recipes else None
                out = [_Lane(None, LC.of((ONE, tag)) if want_lc else None, tag, key)]
                for i in range(1, t):
                    with cs.namespace("quintic s-box", i):
                        out.append(_sbox_pre_add(cs, lanes[i - 1], pre[i], post[i]))
                lanes = out
            elif half <= r < half + rp:
                with cs.namespace("solitary quintic s-box"):
                    lanes[0] = _sbox(cs, lanes[0], keys[off])
                off += 1
            else:
                last = r == n_rounds - 1
                out = []
                for i in range(t):
                    with cs.namespace("quintic s-box", i):
                        out.append(_sbox(cs, lanes[i], None if last else keys[off + i]))
                if not last:
                    off += t
                lanes = out
        lanes = mix(r, lanes)
    assert off == len(keys)
    return lanes


@template
def poseidon_hash(cs: ConstraintSystem, preimage: Sequence[AllocatedNum], arity: int,
                  domain_tag: int | None = None) -> AllocatedNum:
    """neptune's legacy `poseidon_hash` with `PoseidonConstants::new()` for `arity` (the
    number of preimage elements), or with another domain tag (`domain_tag`, a static part of
    the template's signature): the digest as a new variable."""
    if len(preimage) != arity:
        raise ValueError(f"Poseidon arity {arity} takes {arity} elements, got {len(preimage)}")
    c = constants(arity, domain_tag=domain_tag)
    lanes = _permute_circuit(cs, [_Lane(p.var, None, p.value) for p in preimage], c)
    with cs.namespace("hash result"):
        out = _ensure_allocated(cs, lanes[1])
    return AllocatedNum(out.var, out.value)


def hash_md_circuit(cs: ConstraintSystem, elements: Sequence[AllocatedNum]) -> AllocatedNum:
    """filecoin-hashers' `hash_md_circuit`: a chain of arity-36 hashes over the previous digest
    (the first element to start) and the next 35 elements; a short last chunk is padded with
    freshly allocated zeros (unconstrained, as in filecoin-hashers)."""
    if not elements:
        raise ValueError("hash_md needs at least one element")
    step = MD_ARITY - 1
    h = elements[0]
    for n, i in enumerate(range(1, len(elements), step)):
        chunk = list(elements[i : i + step])
        for k in range(len(chunk) + 1, MD_ARITY):
            with cs.namespace("padding", k):
                chunk.append(AllocatedNum.alloc(cs, 0 if cs.wants_values else None))
        with cs.namespace("hash md", n):
            h = poseidon_hash(cs, [h, *chunk], MD_ARITY)
    return h
