"""Large circuits stay cheap: shape mode counts thousands of SHA-256 compressions in seconds
(templates replay in O(arguments)), record mode relocates recorded arrays with numpy. Rates
are printed (run with -s); the bounds are loose so a loaded machine does not fail them."""

from __future__ import annotations

import time

from cuzk.filecoin.cs import (
    ConstraintSystem,
    check_satisfied,
    synthesize_r1cs,
    synthesize_shape,
    synthesize_witness,
)
from cuzk.filecoin.gadget_table import alloc_bits
from cuzk.filecoin.gadgets.sha256 import sha256_compression_function
from cuzk.filecoin.gadgets.uint32 import UInt32


def chain(n: int):
    """n compressions of one allocated block, each from the previous state (variable words)."""

    def circuit(cs: ConstraintSystem) -> None:
        block = alloc_bits(cs, 512)
        state = [UInt32.alloc(cs, (0x01010101 * k) if cs.wants_values else None) for k in range(8)]
        for i in range(n):
            with cs.namespace("compression", i):
                state = sha256_compression_function(cs, block, state)

    return circuit


def test_shape_counts_thousands_of_compressions() -> None:
    one = synthesize_shape(chain(1))
    two = synthesize_shape(chain(2))
    per = two.constraints - one.constraints
    n = 3000
    t = time.perf_counter()
    shape = synthesize_shape(chain(n))
    dt = time.perf_counter() - t
    assert shape.constraints == one.constraints + (n - 1) * per
    assert shape.aux == one.aux + (n - 1) * (two.aux - one.aux)
    assert shape.nnz_a == one.nnz_a + (n - 1) * (two.nnz_a - one.nnz_a)
    assert shape.vars_in_b == one.vars_in_b + (n - 1) * (two.vars_in_b - one.vars_in_b)
    print(f"\nshape: {n} compressions ({shape.constraints:,} constraints) in {dt:.2f} s: "
          f"{n / dt:,.0f} compressions/s, {shape.constraints / dt / 1e6:.1f} M constraints/s")
    assert dt < 60


def test_record_and_witness_rates() -> None:
    n = 40
    synthesize_shape(chain(1))  # the template is recorded once, outside the timing
    t = time.perf_counter()
    r1cs = synthesize_r1cs(chain(n), labels=False)
    dt_rec = time.perf_counter() - t
    rates = {}
    for engine in ("auto", "numpy"):
        synthesize_witness(chain(1), engine=engine)  # the witness program is compiled once
        t = time.perf_counter()
        w = synthesize_witness(chain(n), engine=engine)
        rates[engine] = time.perf_counter() - t
        check_satisfied(r1cs, w)
    m = r1cs.n_constraints
    print(f"\nrecord: {m:,} constraints in {dt_rec:.2f} s ({m / dt_rec / 1e6:.2f} M/s); witness: "
          + ", ".join(f"{e} {dt:.2f} s ({m / dt / 1e6:.2f} M/s)" for e, dt in rates.items()))
    assert dt_rec < 120 and max(rates.values()) < 300
