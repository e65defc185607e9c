"""The transfer inventory through the engine, on the fake device (which records its copies
through cuzk.backends.transfers as the CUDA backend does): each partition's GPU_END lists its
copies by kind, with byte counts that follow from the key's and the witness's sizes; a key
streamed from pinned memory is counted per partition; `cuzk timeline analyze` reads it back."""

from __future__ import annotations

import random

import pytest
from fake_device import FakeDevice

from cuzk.backends import transfers
from cuzk.backends.cpu import native_module
from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.engine import CircuitSpec, Engine, EngineConfig, JobRequest, JobState, PartitionInput
from cuzk.engine.memory import proof_reserve_bytes
from cuzk.engine.phases import ProverPhases
from cuzk.model.keys import ProvingKey
from cuzk.tools import timeline as tl

pytestmark = pytest.mark.skipif(native_module() is None, reason="native CPU backend not built")

CID = "syn"


def _run(fake: FakeDevice, pk: ProvingKey, circuit: SyntheticCircuit, n: int,
         **cfg: object) -> tuple[Engine, str]:  # fmt: skip
    """An engine on `fake` that proved one job of n partitions (and is stopped), and the job."""
    conf = EngineConfig(devices=["cpu"], backend="cpu", warm_up=False, evaluate_on="host",
                        gpu_workers_per_device=1, partition_workers=1, **cfg)  # type: ignore[arg-type]
    eng = Engine(conf, phases=ProverPhases(), backends={"cpu": fake}).start()
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        eng.preload(CID)
        rng = random.Random(7)
        req = JobRequest("xfer", CID, [PartitionInput(inputs={"seed": rng.getrandbits(32)})
                                       for _ in range(n)])
        jid = eng.submit(req)
        res = eng.await_job(jid, timeout=300)
        assert res.state == JobState.COMPLETED, res.error
    finally:
        eng.stop()
    return eng, jid


def _ends(eng: Engine, jid: str) -> dict[int, dict[str, str]]:
    return {int(e.detail["partition"]): e.detail for e in eng.timeline.events(jid)
            if e.event == "GPU_END"}


def _abc_w_bytes(pk: ProvingKey) -> int:
    """A partition's a, b, c (one Fr per row of the domain) and witness (one per variable)."""
    fr = 4 * 8
    return 3 * pk.domain_size * fr + pk.n_vars * fr


def _sums_bytes(pk: ProvingKey, g2_on_device: bool) -> int:
    """The sums that come back: H, A, B₁, L in G1, and B₂ in G2 when the device computes it."""
    return 4 * int(pk.a_g1[0].nbytes) + (int(pk.b_g2[0].nbytes) if g2_on_device else 0)


@pytest.mark.parametrize("g2_on_cpu", (False, True))
def test_each_partition_lists_its_copies(circuit: SyntheticCircuit, pk: ProvingKey,
                                         g2_on_cpu: bool) -> None:
    """A HOT key on the device: a partition's copies are its vectors up and its sums back,
    no key bytes."""
    fake = FakeDevice()
    eng, jid = _run(fake, pk, circuit, 3, g2_on_cpu=g2_on_cpu)
    ends = _ends(eng, jid)
    assert sorted(ends) == [0, 1, 2]
    for d in ends.values():
        assert int(d["xfer_witness_bytes"]) == _abc_w_bytes(pk)
        assert int(d["xfer_result_bytes"]) == _sums_bytes(pk, not g2_on_cpu)
        assert "xfer_key_bytes" not in d
        assert int(d["xfer_h2d_bytes"]) == _abc_w_bytes(pk)
        assert int(d["xfer_d2h_bytes"]) == _sums_bytes(pk, not g2_on_cpu)
        # pooled (pinned) host buffers hold the vectors: only the sums come back pageable
        assert int(d["xfer_pageable_bytes"]) == _sums_bytes(pk, not g2_on_cpu)
        kind, memory, nbytes, ms = d["xfer_slowest"].split(":")
        assert kind in transfers.KINDS and memory in ("pinned", "pageable")
        assert int(nbytes) > 0 and float(ms) >= 0

    rep = tl.analyze(eng.timeline.events())
    parts = {p.partition: p for p in rep.partitions}
    assert all(p.transfers["witness"] == _abc_w_bytes(pk) for p in parts.values())
    text = tl.format_report(rep)
    assert "transfers per partition" in text and "slowest copies" in text


def test_a_streamed_key_is_counted_in_every_partition(circuit: SyntheticCircuit,
                                                     pk: ProvingKey) -> None:
    """Queries that do not fit stay in pinned host memory: every partition's MSMs stream
    them up, so each partition's key bytes are those queries' bytes, pinned."""
    reserve = proof_reserve_bytes(pk, 1)
    fake = FakeDevice(reserve + pk.a_g1.nbytes + pk.b_g1.nbytes + 1)
    eng, jid = _run(fake, pk, circuit, 2)
    streamed = [q for q in (pk.a_g1, pk.b_g1, pk.l_g1, pk.h_g1, pk.b_g2)
                if fake.kept_as(q) is not None and fake.kept_as(q).name == "HOST"]
    assert streamed, "nothing left on the host: the capacity no longer forces streaming"
    ends = _ends(eng, jid)
    for d in ends.values():
        assert int(d["xfer_key_bytes"]) == sum(int(q.nbytes) for q in streamed)
        assert int(d["xfer_witness_bytes"]) == _abc_w_bytes(pk)
    rep = tl.analyze(eng.timeline.events())
    assert all(p.transfers["key"] == sum(int(q.nbytes) for q in streamed)
               for p in rep.partitions)


def test_totals_count_the_key_placed_outside_any_partition(circuit: SyntheticCircuit,
                                                           pk: ProvingKey) -> None:
    """The key's queries go up once as it goes HOT: not in a partition's inventory, but in
    the process-wide totals the daemon's metrics read."""
    before = transfers.TOTALS.snapshot().get(("key", "h2d", "pageable"))
    fake = FakeDevice()
    eng, jid = _run(fake, pk, circuit, 1)
    after = transfers.TOTALS.snapshot()[("key", "h2d", "pageable")]
    placed = sum(c["bytes"] for c in fake.calls("keep_on_device"))
    assert placed > 0
    assert after.bytes - (before.bytes if before else 0) >= placed
    assert "xfer_key_bytes" not in _ends(eng, jid)[0]
