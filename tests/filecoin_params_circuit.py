"""A small circuit of Filecoin gadgets whose density has every case a params file meets:
inputs in B and not, aux variables in A only, in B only, in both and in neither (only in C)."""

from __future__ import annotations

from cuzk.filecoin.cs import ONE, ConstraintSystem, R
from cuzk.filecoin.gadgets.multieq import MultiEq
from cuzk.filecoin.gadgets.multipack import compute_multipacking, pack_into_inputs
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.filecoin.params.names import ParameterSet

A, B, X = 0xDEADBEEF, 0x01234567, 123456789

# Names of our own: a parameter set the published manifest does not list.
PARAMS = ParameterSet("test", "cuzk-test-gadgets-merkletree-poseidon_hasher-8-0-0",
                      "cuzk::TestGadgets{uint32: 2; num: 3}", 2048)


def circuit(cs: ConstraintSystem) -> None:
    def v(x: int) -> int | None:
        return x if cs.wants_values else None

    a, b = UInt32.alloc(cs, v(A)), UInt32.alloc(cs, v(B))
    with cs.namespace("mix"):
        c = a.xor(cs, b.rotr(5))
        with MultiEq(cs) as meq:
            s = UInt32.addmany(meq, [a, c, UInt32.constant(0x9E3779B9)])
    pack_into_inputs(cs, s.bits)
    x = AllocatedNum.alloc_input(cs, v(X))  # an input in A and B
    sq = x.square(cs)  # sq: only ever in C
    t = cs.alloc(v(X * X % R), "t")
    u = cs.alloc(v(X + 1), "u")
    if cs.wants_constraints:
        cs.enforce([(t, 1)], ONE, [(sq.var, 1)], "t = sq")  # t in A only (ONE in B)
        cs.enforce(ONE, [(u, 1)], [(x.var, 1), (ONE, 1)], "u = x + 1")  # u in B only


def public_inputs() -> list[int]:
    m = 0xFFFFFFFF
    c = A ^ (((B >> 5) | (B << 27)) & m)
    s = (A + c + 0x9E3779B9) & m
    return compute_multipacking([bool(s >> i & 1) for i in range(32)]) + [X]
