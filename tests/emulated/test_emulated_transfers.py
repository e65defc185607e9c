"""The transfer inventory of CudaBackend itself, on the emulated device: every host<->device
copy of a partition goes through cuzk.backends.transfers, with the kind and byte counts that
follow from the key's and the witness's sizes; pinned copies are timed by device events."""

from __future__ import annotations

import random

import numpy as np
import pytest
from emulated_cuda import EmulatedCudaBackend

from cuzk.backends import transfers
from cuzk.circuits.synthetic import SyntheticCircuit, for_domain
from cuzk.groth16 import prover
from cuzk.groth16.dev_keys import development_key
from cuzk.model.keys import ProvingKey

QUERIES = ("a_g1", "b_g1", "l_g1", "h_g1", "b_g2")
FR = 32  # bytes of one Fr value


@pytest.fixture(scope="module")
def circuit() -> SyntheticCircuit:
    return for_domain("bls12_381", 7, n_public=1)


@pytest.fixture(scope="module")
def pk(circuit: SyntheticCircuit, tmp_path_factory: pytest.TempPathFactory) -> ProvingKey:
    return development_key(circuit, convention="bellman", cache_dir=tmp_path_factory.mktemp("k"))


def _sums(pk: ProvingKey) -> int:
    """H, A, B₁, L in G1 and B₂ in G2: the five sums a partition's kernels bring back."""
    return 4 * int(pk.a_g1[0].nbytes) + int(pk.b_g2[0].nbytes)


def _kept(be: EmulatedCudaBackend, pk: ProvingKey) -> None:
    for q in QUERIES:
        be.keep_on_device(getattr(pk, q))
    be.keep_r1cs(prover.key_r1cs(pk.r1cs))


def test_a_partitions_copies_by_kind(cuda_host_kernels, circuit: SyntheticCircuit,
                                     pk: ProvingKey, rng: random.Random) -> None:  # fmt: skip
    """The key kept: a partition's a, b, c and witness go up once (witness), the five sums
    come back (result), nothing of the key moves; with the witness alone (constraints
    evaluated on the device) only the witness goes up."""
    be = EmulatedCudaBackend(cuda_host_kernels)
    _kept(be, pk)
    syn = prover.synthesize(pk, circuit.witness(rng.getrandbits(32), 0), "cpu")
    inv = transfers.Inventory()
    with transfers.counting(inv):
        prover.kernels(pk, prover.upload(syn, be), be)
    kinds = inv.by_kind()
    assert "key" not in kinds
    want = sum(int(x.nbytes) for x in (syn.a, syn.b, syn.c, syn.witness))
    assert want == 3 * pk.domain_size * FR + pk.n_vars * FR
    assert kinds["witness"].bytes == want and kinds["witness"].copies == 4
    assert kinds["result"].bytes == _sums(pk) and kinds["result"].copies == 5
    assert inv.bytes(direction=transfers.H2D, kind="witness") == want

    inv = transfers.Inventory()
    with transfers.counting(inv):
        dev = prover.evaluate_on_device(pk, prover.pending(pk, syn.witness), be)
        prover.kernels(pk, dev, be)
    kinds = inv.by_kind()
    assert kinds["witness"].bytes == pk.n_vars * FR and kinds["witness"].copies == 1
    assert kinds["result"].bytes == _sums(pk)
    assert "key" not in kinds


def test_a_key_not_kept_is_uploaded_by_each_partition(cuda_host_kernels,
                                                      circuit: SyntheticCircuit, pk: ProvingKey,
                                                      rng: random.Random) -> None:  # fmt: skip
    """Nothing kept (prover.prove's way): every query goes up with the MSM that reads it."""
    be = EmulatedCudaBackend(cuda_host_kernels)
    syn = prover.synthesize(pk, circuit.witness(rng.getrandbits(32), 0), "cpu")
    inv = transfers.Inventory()
    with transfers.counting(inv):
        prover.kernels(pk, prover.upload(syn, be), be)
    # the live bases (A and B have bases at infinity the MSMs leave out) or whole queries
    assert inv.bytes(kind="key") >= sum(int(getattr(pk, q).nbytes) for q in ("l_g1", "h_g1"))
    assert inv.by_kind()["result"].bytes == _sums(pk)


def test_pinned_copies_are_timed_by_events(cuda_host_kernels, circuit: SyntheticCircuit,
                                           pk: ProvingKey, rng: random.Random) -> None:  # fmt: skip
    """A witness in pinned memory goes up asynchronously, timed by the events around it;
    a pageable one is timed by the host clock; both appear in the totals."""
    be = EmulatedCudaBackend(cuda_host_kernels)
    w = circuit.witness(rng.getrandbits(32), 0)
    pinned = be.alloc_host(w.shape)
    np.copyto(pinned, w)
    before = transfers.TOTALS.snapshot().get(("witness", "h2d", "pinned"))
    inv = transfers.Inventory()
    with transfers.counting(inv):
        be.to_device(pinned)
        be.to_device(w)
        be.synchronize()
    up_pinned, up_pageable = inv.copies()
    assert up_pinned.pinned and not up_pageable.pinned
    assert up_pinned.nbytes == up_pageable.nbytes == w.nbytes
    assert up_pinned.seconds is not None and up_pageable.seconds is not None
    after = transfers.TOTALS.snapshot()[("witness", "h2d", "pinned")]
    assert after.bytes - (before.bytes if before else 0) == w.nbytes
    d = inv.detail()
    assert d["xfer_witness_bytes"] == 2 * w.nbytes and d["xfer_pageable_bytes"] == w.nbytes


def test_the_engine_reports_each_partitions_copies(cuda_host_kernels, circuit: SyntheticCircuit,
                                                   pk: ProvingKey) -> None:  # fmt: skip
    """The engine on CudaBackend (constraints evaluated on the device, the key resident): each
    GPU_END carries the partition's inventory: its witness up, in pinned memory (the leased
    buffer), the five sums back, none of the key."""
    from cuzk.engine import CircuitSpec, Engine, EngineConfig, JobRequest, JobState, PartitionInput

    be = EmulatedCudaBackend(cuda_host_kernels)
    cfg = EngineConfig(devices=["cuda:0"], backend="cuda", warm_up=False, msm_tables=False,
                       gpu_workers_per_device=1, partition_workers=1)
    eng = Engine(cfg, backends={"cuda:0": be}).start()
    try:
        eng.register_circuit("emu", CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        jid = eng.submit(JobRequest("xfer", "emu", [PartitionInput(inputs={"seed": s})
                                                    for s in (5, 6)]))
        res = eng.await_job(jid, timeout=600)
        assert res.state == JobState.COMPLETED, res.error
        assert eng.evaluates_on_device(pk)
    finally:
        eng.stop()
    ends = [e.detail for e in eng.timeline.events(jid) if e.event == "GPU_END"]
    assert len(ends) == 2
    for d in ends:
        assert int(d["xfer_witness_bytes"]) == pk.n_vars * FR
        assert int(d["xfer_result_bytes"]) == _sums(pk)
        assert "xfer_key_bytes" not in d
        # the witness went up pinned; the sums and the small reads between kernels pageable
        total = int(d["xfer_h2d_bytes"]) + int(d["xfer_d2h_bytes"])
        assert int(d["xfer_pageable_bytes"]) == total - pk.n_vars * FR
    be.check_emulation()
