"""Zcash's Sprout JoinSplit circuit structure, rebuilt from our gadgets (no values).

Its Rust test asserts TestConstraintSystem::hash() = SPROUT_HASH over 1,989,085 constraints
built from exactly the gadgets Filecoin uses (SHA-256 compressions with IV and with constant
padding, Boolean ops, u64 bits, multipack), so an equal digest shows our matrices are
bellperson's, term for term. Layout per zcash_proofs circuit/sprout (mod.rs, input.rs,
output.rs, prfs.rs, commitment.rs).
"""

from __future__ import annotations

from cuzk.filecoin.cs import LC, ONE, ConstraintSystem
from cuzk.filecoin.gadgets.boolean import FALSE, TRUE, AllocatedBit, Boolean
from cuzk.filecoin.gadgets.multipack import pack_into_inputs
from cuzk.filecoin.gadgets.sha256 import sha256, sha256_block_no_padding

SPROUT_CONSTRAINTS = 1_989_085
SPROUT_INPUTS = 10
SPROUT_HASH = "1a228d3c6377130d1778c7885811dc8b8864049cb5af8aff7e6cd46c5bc4b84c"
TREE_DEPTH = 29


def _bits(cs: ConstraintSystem, n: int) -> list[Boolean]:
    out = []
    for i in range(n):
        with cs.namespace("bit", i):
            out.append(Boolean.alloc(cs, None))
    return out


class _Value:
    def __init__(self, cs: ConstraintSystem) -> None:
        self.bits = []
        for i in range(64):
            with cs.namespace("bit", i):
                self.bits.append(AllocatedBit.alloc(cs, None))

    def bits_le(self) -> list[Boolean]:
        """Little-endian bytes, each byte's bits most significant first."""
        return [Boolean.of(b) for k in range(0, 64, 8) for b in reversed(self.bits[k : k + 8])]

    def lc(self) -> LC:
        return LC.of(*((b.var, 1 << i) for i, b in enumerate(self.bits)))


def _prf(cs: ConstraintSystem, tag: tuple[bool, ...], x: list[Boolean], y: list[Boolean]) -> list[Boolean]:
    return sha256_block_no_padding(cs, [TRUE if t else FALSE for t in tag] + x + y)


def _note_comm(cs: ConstraintSystem, a_pk: list, value: list, rho: list, r: list) -> list[Boolean]:
    lead = [TRUE, FALSE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE]
    return sha256(cs, lead + a_pk + value + rho + r)


def _swap(cs: ConstraintSystem, lhs: list[Boolean], rhs: list[Boolean], cond: AllocatedBit) -> list[Boolean]:
    xs, ys = [], []
    for i, (lb, rb) in enumerate(zip(lhs, rhs, strict=True)):
        with cs.namespace("bit", i):
            with cs.namespace("x"):
                x = Boolean.alloc(cs, None)
            neg_l = [(v, -c) for v, c in lb.lc()]
            neg_r = [(v, -c) for v, c in rb.lc()]
            cs.enforce(rb.lc() + neg_l, cond.var, x.lc() + neg_l, "conditional swap for x")
            with cs.namespace("y"):
                y = Boolean.alloc(cs, None)
            cs.enforce(lb.lc() + neg_r, cond.var, y.lc() + neg_r, "conditional swap for y")
        xs.append(x)
        ys.append(y)
    return xs + ys


def _input_note(cs: ConstraintSystem, value: _Value, h_sig: list, nonce: bool, rt: list) -> tuple[list, list]:
    with cs.namespace("a_sk"):
        a_sk = _bits(cs, 252)
    with cs.namespace("rho"):
        rho = _bits(cs, 256)
    with cs.namespace("r"):
        r = _bits(cs, 256)
    with cs.namespace("a_pk computation"):
        a_pk = _prf(cs, (True, True, False, False), a_sk, [FALSE] * 256)
    with cs.namespace("nf computation"):
        nf = _prf(cs, (True, True, True, False), a_sk, rho)
    with cs.namespace("mac computation"):
        mac = _prf(cs, (False, nonce, False, False), a_sk, h_sig)
    with cs.namespace("cm computation"):
        cur = _note_comm(cs, a_pk, value.bits_le(), rho, r)
    for i in range(TREE_DEPTH):
        with cs.namespace("layer", i):
            with cs.namespace("cur is right"):
                right = AllocatedBit.alloc(cs, None)
            with cs.namespace("sibling"):
                sib = _bits(cs, 256)
            with cs.namespace("conditional swap"):
                pre = _swap(cs, cur, sib, right)
            with cs.namespace("hash of this layer"):
                cur = sha256_block_no_padding(cs, pre)
    with cs.namespace("enforce"):
        enforce = AllocatedBit.alloc(cs, None)
    cs.enforce(value.lc(), [(ONE, 1), (enforce.var, -1)], [], "enforce validity")
    for i, (c, t) in enumerate(zip(cur, rt, strict=True)):
        cs.enforce(c.lc() + [(v, -k) for v, k in t.lc()], enforce.var, [],
                   f"conditionally enforce correct root for bit {i}")
    return nf, mac


def _output_note(cs: ConstraintSystem, value: _Value, phi: list, h_sig: list, nonce: bool) -> list:
    with cs.namespace("rho"):
        rho = _prf(cs, (False, nonce, True, False), phi, h_sig)
    with cs.namespace("a_pk"):
        a_pk = _bits(cs, 256)
    with cs.namespace("r"):
        r = _bits(cs, 256)
    with cs.namespace("cm computation"):
        return _note_comm(cs, a_pk, value.bits_le(), rho, r)


def joinsplit(cs: ConstraintSystem) -> None:
    with cs.namespace("vpub_old"):
        vpub_old = _Value(cs)
    with cs.namespace("vpub_new"):
        vpub_new = _Value(cs)
    lhs = vpub_old.lc()
    rhs = vpub_new.lc()
    with cs.namespace("rt"):
        rt = _bits(cs, 256)
    with cs.namespace("h_sig"):
        h_sig = _bits(cs, 256)
    with cs.namespace("phi"):
        phi = _bits(cs, 252)
    notes = []
    for i in range(2):
        with cs.namespace("input", i):
            with cs.namespace("value"):
                value = _Value(cs)
            with cs.namespace("note"):
                notes.append(_input_note(cs, value, h_sig, i == 1, rt))
            lhs.add_lc(value.lc())
    with cs.namespace("total value of left hand side"):
        total = _Value(cs)
    cs.enforce(lhs, ONE, total.lc(), "left hand side can be expressed as a 64-bit unsigned integer")
    cms = []
    for i in range(2):
        with cs.namespace("output", i):
            with cs.namespace("value"):
                value = _Value(cs)
            with cs.namespace("note"):
                cms.append(_output_note(cs, value, phi, h_sig, i == 1))
            rhs.add_lc(value.lc())
    cs.enforce(lhs, ONE, rhs, "balance equation")
    public = rt + h_sig
    for nf, mac in notes:
        public += nf + mac
    for cm in cms:
        public += cm
    public += vpub_old.bits_le() + vpub_new.bits_le()
    with cs.namespace("input packing"):
        pack_into_inputs(cs, public)
