"""A Groth16 proof over a circuit built from the Filecoin gadgets, with the development setup
(bellman convention, as Filecoin's parameters): it verifies, and a tampered public input
does not."""

from __future__ import annotations

import random

import pytest

from cuzk.backends.cpu import native_module
from cuzk.filecoin.cs import ConstraintSystem, synthesize_r1cs, synthesize_shape, synthesize_witness
from cuzk.filecoin.gadgets.boolean import Boolean
from cuzk.filecoin.gadgets.multieq import MultiEq
from cuzk.filecoin.gadgets.multipack import compute_multipacking, pack_into_inputs
from cuzk.filecoin.gadgets.num import AllocatedNum
from cuzk.filecoin.gadgets.uint32 import UInt32
from cuzk.groth16.prover import prove
from cuzk.groth16.setup import setup
from cuzk.groth16.verifier import verify
from cuzk.layout import fr_to_ints

A, B, X = 0xDEADBEEF, 0x01234567, 123456789


def circuit(cs: ConstraintSystem) -> None:
    def v(x: int) -> int | None:
        return x if cs.wants_values else None

    a, b = UInt32.alloc(cs, v(A)), UInt32.alloc(cs, v(B))
    with cs.namespace("mix"):
        c = a.xor(cs, b.rotr(5))
        ch = UInt32.sha256_ch(cs, a, b, c)
        with MultiEq(cs) as meq:
            s = UInt32.addmany(meq, [a, ch, UInt32.constant(0x9E3779B9)])
    with cs.namespace("expose"):
        pack_into_inputs(cs, s.bits + [Boolean.constant(True)])
        x = AllocatedNum.alloc(cs, v(X))
        x.square(cs).inputize(cs)


def expected_public() -> list[int]:
    m = 0xFFFFFFFF
    c = A ^ (((B >> 5) | (B << 27)) & m)
    ch = (A & B) ^ (~A & c) & m
    s = (A + ch + 0x9E3779B9) & m
    bits = [bool(s >> i & 1) for i in range(32)] + [True]
    return compute_multipacking(bits) + [X * X]


@pytest.mark.skipif(native_module() is None, reason="needs the native CPU backend")
def test_proof_over_filecoin_gadgets_verifies() -> None:
    r1cs = synthesize_r1cs(circuit)
    w = synthesize_witness(circuit, n_inputs=synthesize_shape(circuit).inputs)
    public = fr_to_ints(w[1 : r1cs.n_public + 1])
    assert public == expected_public()
    pk = setup(r1cs, seed="cuzk filecoin gadgets", convention="bellman", backend="cpu")
    proof = prove(pk, w, backend="cpu")
    assert verify(pk.vk, public, proof)
    bad = list(public)
    bad[random.randrange(len(bad))] += 1
    assert not verify(pk.vk, bad, proof)
