"""The reference daemon's cuzk.v1 wire (what Curio's client speaks) against cuzk's daemon.

The reference messages come from tests/fixtures/reference_cuzk_v1.proto, written from the
reference's field table (not from cuzk's proto) and compiled here with grpc_tools. Its package
is `curioref.v1` so it loads beside cuzk's stubs; the wire carries no package names, and calls
go to /cuzk.v1.ProvingEngine/<method> directly. Checked: every reference field has the same
number and type in cuzk's proto; a reference request with every field set reads on cuzk's side
as meant; cuzk's responses read in the reference schema, extras skipped; proof kinds route to
circuits or are refused with what is missing; and (slow) a reference client proves a sealed
2 KiB sector's C1 output and gets one 192-byte proof that verifies.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from daemon_harness import DaemonProc, tiny_circuit, write_config
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from cuzk.server import proof_kinds as pk
from cuzk.server.proto import pb
from cuzk.server.service import filecoin_request

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "reference_cuzk_v1.proto"


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The reference messages, compiled from the fixture at test time."""
    import grpc_tools
    from grpc_tools import protoc

    out = tmp_path_factory.mktemp("refproto")
    include = str(Path(grpc_tools.__file__).parent / "_proto")
    rc = protoc.main(["grpc_tools.protoc", f"-I{FIXTURE.parent}", f"-I{include}",
                      f"--python_out={out}", str(FIXTURE)])
    assert rc == 0, "protoc failed on the reference fixture"
    name = "reference_cuzk_v1_pb2"
    spec = importlib.util.spec_from_file_location(name, out / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _call(address: str, method: str, request: Any, response_cls: Any, timeout: float = 60) -> Any:
    with grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", 64 << 20)]) as ch:
        fn = ch.unary_unary(f"/cuzk.v1.ProvingEngine/{method}",
                            request_serializer=lambda m: m.SerializeToString(),
                            response_deserializer=response_cls.FromString)
        return fn(request, timeout=timeout)


def _is_repeated(f: FieldDescriptor) -> bool:
    rep = getattr(f, "is_repeated", None)
    return rep if isinstance(rep, bool) else f.label == FieldDescriptor.LABEL_REPEATED


def _type_name(f: FieldDescriptor) -> str:
    """The field's type with the package left out (enum and message types by their name)."""
    if f.type == FieldDescriptor.TYPE_ENUM:
        return "enum " + f.enum_type.full_name.split(".", 2)[-1]
    if f.type == FieldDescriptor.TYPE_MESSAGE:
        return "message " + f.message_type.full_name.split(".", 2)[-1]
    return str(f.type)


def _enum_values(e: EnumDescriptor) -> dict[str, int]:
    return {v.name: v.number for v in e.values}


# --- the schema ---------------------------------------------------------------------------------


def test_field_table_matches_the_reference(ref: ModuleType) -> None:
    """Every reference message, field (number, name, type, repeated) and enum value is in
    cuzk's proto; cuzk's own fields use numbers the reference does not."""
    ours = pb.DESCRIPTOR
    theirs = ref.DESCRIPTOR
    assert theirs.message_types_by_name, "the fixture defines no messages"
    for name, rmsg in theirs.message_types_by_name.items():
        omsg: Descriptor | None = ours.message_types_by_name.get(name)
        assert omsg is not None, f"cuzk's proto lacks message {name}"
        for rf in rmsg.fields:
            of = omsg.fields_by_number.get(rf.number)
            assert of is not None, f"{name}: no field {rf.number} ({rf.name})"
            assert (of.name, _type_name(of), _is_repeated(of)) == (
                rf.name, _type_name(rf), _is_repeated(rf)), f"{name}.{rf.name} = {rf.number}"
        for et in rmsg.enum_types:
            assert _enum_values(omsg.enum_types_by_name[et.name]) == _enum_values(et), f"{name}.{et.name}"
        extra = [f for f in omsg.fields if f.number not in rmsg.fields_by_number]
        assert all(f.number >= 100 for f in extra), \
            f"{name}: cuzk's own fields below 100: {[(f.name, f.number) for f in extra if f.number < 100]}"
    for name, renum in theirs.enum_types_by_name.items():
        mine = _enum_values(ours.enum_types_by_name[name])
        assert {k: mine.get(k) for k in _enum_values(renum)} == _enum_values(renum), name


# --- requests: every field read as meant ---------------------------------------------------------

_COMM = [bytes(range(i, i + 32)) for i in (1, 40, 80)]
# CIDs of commitments as Curio's `key.Bytes()` sends them: v1, codec, multihash code, 0x20, digest
# (sealed: fil-commitment-sealed 0xf102 + poseidon-bls12_381-a2-fc1 0xb401;
#  unsealed: fil-commitment-unsealed 0xf101 + sha2_256-trunc254-padded 0x1012).
_SEALED_CID, _UNSEALED_CID = bytes.fromhex("0182e20381e80220"), bytes.fromhex("0181e203922020")
_CID = _UNSEALED_CID + _COMM[2]


def _full_submit(ref: ModuleType) -> Any:
    return ref.SubmitProofRequest(
        request_id="wdpost-1000-3", proof_kind=ref.WINDOW_POST_PARTITION, sector_size=2048,
        registered_proof=10, priority=ref.HIGH, vanilla_proof=b"c1-json",
        vanilla_proofs=[b"sector-a", b"sector-b"], sector_number=4242, miner_id=1000,
        randomness=bytes(range(32)), partition_index=3, sector_key_cid=_COMM[0],
        new_sealed_cid=_COMM[1], new_unsealed_cid=_CID,
    )


def test_reference_requests_read_as_meant(ref: ModuleType) -> None:
    sub = _full_submit(ref)
    got = pb.SubmitProofRequest.FromString(sub.SerializeToString())
    for f in sub.DESCRIPTOR.fields:
        want = getattr(sub, f.name)
        have = getattr(got, f.name)
        assert (list(have) if _is_repeated(f) else have) == (list(want) if _is_repeated(f) else want), f.name
    assert got.proof_kind == pb.WINDOW_POST_PARTITION and got.priority == pb.HIGH
    assert not got.circuit_id and not got.partitions and not got.job_input
    # ... and as the Filecoin side takes it.
    freq = filecoin_request(got, 2048)
    assert freq == pk.FilecoinRequest(
        proof_kind=3, registered_proof=10, sector_size=2048, vanilla_proof=b"c1-json",
        vanilla_proofs=[b"sector-a", b"sector-b"], sector_number=4242, miner_id=1000,
        randomness=bytes(range(32)), partition_index=3, comm_r_old=_COMM[0],
        comm_r_new=_COMM[1], comm_d_new=_COMM[2])
    assert freq.kind.label == "window-post"

    prove = pb.ProveRequest.FromString(ref.ProveRequest(submit=sub).SerializeToString())
    assert prove.submit == got and prove.timeout_ms == 0
    simple = [
        (ref.AwaitProofRequest(job_id="j1", timeout_ms=1500), pb.AwaitProofRequest),
        (ref.CancelProofRequest(job_id="j2"), pb.CancelProofRequest),
        (ref.PreloadSrsRequest(circuit_id="porep-32g"), pb.PreloadSrsRequest),
        (ref.EvictSrsRequest(circuit_id="snap-32g"), pb.EvictSrsRequest),
    ]
    for msg, cls in simple:
        mine = cls.FromString(msg.SerializeToString())
        assert {f.name: getattr(mine, f.name) for f in msg.DESCRIPTOR.fields} == \
               {f.name: getattr(msg, f.name) for f in msg.DESCRIPTOR.fields}
    assert pb.GetStatusRequest.FromString(ref.GetStatusRequest().SerializeToString()).job_id == ""


def test_reference_reads_cuzk_responses(ref: ModuleType) -> None:
    """cuzk's responses, extras included, read in the reference schema: the shared fields as
    sent, the extras skipped."""
    res = pb.AwaitProofResponse(
        job_id="j", status=pb.AwaitProofResponse.COMPLETED, proof=b"a" * 192 + b"b" * 192,
        error_message="", queue_wait_ms=1, srs_load_ms=2, synthesis_ms=3, gpu_compute_ms=4,
        total_ms=10, request_id="r", circuit_id="porep-32g",
        partition_proofs=[b"a" * 192, b"b" * 192])
    res.public_inputs.add(values=["1", "2"])
    res.partition_timings.add(partition=0, synthesis_ms=3, gpu_ms=4)
    got = ref.ProveResponse.FromString(pb.ProveResponse(result=res).SerializeToString()).result
    assert (got.job_id, got.status, got.proof, got.total_ms, got.gpu_compute_ms) == \
           ("j", ref.AwaitProofResponse.COMPLETED, b"a" * 192 + b"b" * 192, 10, 4)

    sub = ref.SubmitProofResponse.FromString(pb.SubmitProofResponse(
        job_id="j", queue_position=2, assigned_gpu="cuda:0", duplicate=True,
        state=pb.RUNNING).SerializeToString())
    assert (sub.job_id, sub.queue_position, sub.assigned_gpu) == ("j", 2, "cuda:0")

    st = pb.GetStatusResponse(total_proofs_completed=5, total_proofs_failed=1, uptime_seconds=9,
                              pinned_memory_bytes=7 << 20, pinned_memory_limit_bytes=8 << 20,
                              circuits=["porep-32g"], jobs_queued=1, engine_status_json="{}")
    st.gpus.add(ordinal=1, name="cuda:1", vram_total_bytes=80 << 30, vram_free_bytes=3 << 30,
                current_job_id="j", current_proof_kind="porep-c2", workers=2, busy_workers=1,
                current_circuit_id="porep-32g")
    st.loaded_srs.add(circuit_id="porep-32g", tier=pb.SRSStatus.WARM, size_bytes=99, ref_count=1)
    st.queues.add(proof_kind="porep-c2", pending=3, in_progress=1)
    st.stages.add(name="gpu", pending=2, in_progress=1, capacity=4)
    r = ref.GetStatusResponse.FromString(st.SerializeToString())
    g = r.gpus[0]
    assert (g.ordinal, g.name, g.vram_total_bytes, g.vram_free_bytes, g.current_job_id,
            g.current_proof_kind) == (1, "cuda:1", 80 << 30, 3 << 30, "j", "porep-c2")
    k = r.loaded_srs[0]
    assert (k.circuit_id, k.tier, k.size_bytes, k.ref_count) == ("porep-32g", ref.SRSStatus.WARM, 99, 1)
    q = r.queues[0]
    assert (q.proof_kind, q.pending, q.in_progress) == ("porep-c2", 3, 1) and len(r.queues) == 1
    assert (r.total_proofs_completed, r.total_proofs_failed, r.uptime_seconds,
            r.pinned_memory_bytes, r.pinned_memory_limit_bytes) == (5, 1, 9, 7 << 20, 8 << 20)
    cancel = ref.CancelProofResponse.FromString(
        pb.CancelProofResponse(was_running=True, state=pb.CANCELLED).SerializeToString())
    assert cancel.was_running


# --- routing ------------------------------------------------------------------------------------


class _Info:
    def __init__(self, proof: str, size: Any) -> None:
        self.filecoin = {"proof": proof, "sector_size": size}


def test_proof_kinds_route_by_kind_and_size() -> None:
    circuits = {"porep-32g": _Info("porep", "32GiB"), "my-porep-2k": _Info("porep", 2048),
                "wpost-32g": _Info("window-post", "32GiB"), "tiny": type("X", (), {"filecoin": None})()}
    assert pk.route(pk.POREP_SEAL_COMMIT, 8, 0, circuits)[1:] == ("porep-32g", 32 << 30)
    assert pk.route(pk.POREP_SEAL_COMMIT, 5, 2048, circuits)[1] == "my-porep-2k"
    assert pk.route(pk.WINDOW_POST_PARTITION, 13, 32 << 30, circuits)[1] == "wpost-32g"
    cases = [
        (pk.WINNING_POST, 3, 0, True, r"no circuit proves winning-post \(StackedDrgWinning32GiBV1\) "
                                      r"for 32g sectors: register \[srs.circuits.winning-32g\]"),
        (pk.SNAP_DEALS_UPDATE, 3, 0, True, r"\[srs.circuits.snap-32g\]"),
        (pk.POREP_SEAL_COMMIT, 9, 0, True, r"porep-64g.*registered for this kind: my-porep-2k, porep-32g"),
        (pk.POREP_SEAL_COMMIT, 77, 0, False, "registered_proof 77 for porep-c2: unknown"),
        (pk.POREP_SEAL_COMMIT, 8, 2048, False, "sector_size 2048 disagrees"),
        (pk.WINDOW_POST_PARTITION, 3, 0, False, "is a winning PoSt proof, not window"),
        (7, 0, 0, False, "proof_kind 7 is not a Filecoin proof kind"),
    ]
    import re

    for kind, reg, size, precondition, message in cases:
        with pytest.raises(pk.RouteError) as exc:
            pk.route(kind, reg, size, circuits)
        assert exc.value.precondition is precondition and re.search(message, str(exc.value)), str(exc.value)
    assert [pk.KINDS[k].default_priority.name for k in (1, 2, 3, 4)] == ["NORMAL", "NORMAL", "HIGH", "CRITICAL"]
    assert pk.commitment(_CID, "x") == _COMM[2]
    with pytest.raises(pk.RouteError, match="sector_key_cid is 5 bytes"):
        pk.commitment(b"12345", "sector_key_cid")
    sealed = _SEALED_CID + _COMM[0]
    assert pk.commitment(sealed, "x", pk.SEALED_CODEC) == _COMM[0]
    assert pk.commitment(_CID, "x", pk.UNSEALED_CODEC) == _COMM[2]
    for raw, codec, message in [
        (sealed, pk.UNSEALED_CODEC, "codec 0xf102, not fil-commitment-unsealed"),
        (_CID[:-1], None, "is 38 bytes: send the 32-byte"),
        (b"\x00" + _CID[1:], None, "is 39 bytes"),  # CIDv0 is not a commitment CID
        (bytes.fromhex("0182e203922020") + _COMM[0], None, "multihash 0x1012, not 0xb401"),
    ]:
        with pytest.raises(pk.RouteError, match=re.escape(message)):
            pk.commitment(raw, "x", codec)


def test_filecoin_fields_become_the_circuits_jobs() -> None:
    """The glue alone: a PoSt request's miner id becomes the prover id (its ID-address payload),
    a SnapDeals request's CIDs their digests; empty or impossible fields are refused naming
    the wire field."""
    window = pk.FilecoinRequest(pk.WINDOW_POST_PARTITION, 10, 2048, vanilla_proofs=[b"v"],
                                miner_id=1000, randomness=_COMM[0], partition_index=2)
    job = window.kind.job_input(window)
    assert (job.prover_id, job.randomness, job.partition_index, job.vanilla_proofs) == \
           (b"\xe8\x07" + bytes(30), _COMM[0], 2, [b"v"])
    assert int(job.registered_proof) == 10 and job.kind == "window-post"
    snap = pk.FilecoinRequest(pk.SNAP_DEALS_UPDATE, 0, 2048, vanilla_proofs=[b"p"],
                              comm_r_old=_COMM[0], comm_r_new=_COMM[1], comm_d_new=_COMM[2])
    u = snap.kind.job_input(snap)
    assert (u.comm_r_old, u.comm_r_new, u.comm_d_new, u.poseidon) == (*_COMM, False)
    for req, message in [
        (pk.FilecoinRequest(3, 10, 2048, vanilla_proofs=[b"v"], miner_id=1 << 63), "miner_id"),
        (pk.FilecoinRequest(3, 10, 2048), "vanilla_proofs is empty"),
        (pk.FilecoinRequest(2, 0, 2048, vanilla_proofs=[b"p"], comm_r_old=_COMM[0]),
         r"new_sealed_cid \(comm_r_new\) is empty"),
    ]:
        with pytest.raises(pk.RouteError, match=message):
            req.kind.job_input(req)


def test_daemon_refuses_kinds_it_cannot_prove(ref: ModuleType, tmp_path: Path) -> None:
    """A daemon without Filecoin circuits: each reference kind is refused naming the circuit
    to register (FAILED_PRECONDITION), bad registered proofs as INVALID_ARGUMENT; nothing is
    queued; status reads in the reference schema."""
    d = DaemonProc(write_config(tmp_path), tmp_path).start()
    pre, inv = grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT
    cases = [
        (dict(proof_kind=ref.POREP_SEAL_COMMIT, registered_proof=5, vanilla_proof=b"{}"), pre,
         "no circuit proves porep-c2 (StackedDrg2KiBV1_1) for 2k sectors: register [srs.circuits.porep-2k]"),
        (dict(proof_kind=ref.WINDOW_POST_PARTITION, registered_proof=10, vanilla_proofs=[b"v"],
              randomness=bytes(32), partition_index=1), pre, "[srs.circuits.wpost-2k]"),
        (dict(proof_kind=ref.WINNING_POST, registered_proof=0, vanilla_proofs=[b"v"]), pre,
         "[srs.circuits.winning-2k]"),
        (dict(proof_kind=ref.SNAP_DEALS_UPDATE, registered_proof=3, vanilla_proofs=[b"v"]), pre,
         "[srs.circuits.snap-32g]"),
        (dict(proof_kind=ref.POREP_SEAL_COMMIT, registered_proof=99), inv, "registered_proof 99"),
        (dict(proof_kind=ref.POREP_SEAL_COMMIT, registered_proof=5, sector_size=4096), inv,
         "disagrees with registered_proof StackedDrg2KiBV1_1"),
        (dict(proof_kind=ref.PROOF_KIND_UNSPECIFIED), inv, "name what to prove"),
    ]
    try:
        for i, (fields, code, message) in enumerate(cases):
            req = ref.SubmitProofRequest(request_id=f"r{i}", **fields)
            for method, msg, cls in (("SubmitProof", req, ref.SubmitProofResponse),
                                     ("Prove", ref.ProveRequest(submit=req), ref.ProveResponse)):
                with pytest.raises(grpc.RpcError) as exc:
                    _call(d.grpc, method, msg, cls)
                assert exc.value.code() == code and message in exc.value.details(), exc.value.details()
        st = _call(d.grpc, "GetStatus", ref.GetStatusRequest(), ref.GetStatusResponse)
        assert {q.proof_kind: (q.pending, q.in_progress) for q in st.queues} == \
               {"tiny": (0, 0), "tiny-any": (0, 0), "tiny-witness": (0, 0)}
        assert [g.name for g in st.gpus] == ["cpu"] and st.gpus[0].current_job_id == ""
        assert st.total_proofs_completed == 0
        with pytest.raises(grpc.RpcError) as exc:
            _call(d.grpc, "CancelProof", ref.CancelProofRequest(job_id="nope"), ref.CancelProofResponse)
        assert exc.value.code() == grpc.StatusCode.NOT_FOUND
        with d.client() as c:
            assert c.status()["jobs_queued"] == 0
    finally:
        assert d.term() == 0, d.log()


# --- a sealed sector proved by a reference client -------------------------------------------------


@pytest.mark.slow
def test_reference_client_proves_a_sealed_2k_sector(ref: ModuleType, sealed_2k, keys_2k,
                                                    c2_cache: Path, no_params: Path,
                                                    tmp_path: Path) -> None:
    """Curio's PoRep request (proof kind, registered proof, its c1.json wrapper as
    vanilla_proof) through Prove: one 192-byte proof that verifies against public inputs
    computed from the C1 output; cuzk's client reads the same job's per-partition extras."""
    from cuzk.filecoin.porep.c2 import verify_c1_proof
    from cuzk.filecoin.porep.public_inputs import c1_public_inputs

    table = (f'[srs.circuits.porep-2k]\nfilecoin = {{ proof = "porep", sector_size = "2KiB", '
             f'dev_keys = true, params = "{no_params}", cache_dir = "{c2_cache}" }}')
    d = DaemonProc(write_config(tmp_path, extra=table), tmp_path).start()
    try:
        sub = ref.SubmitProofRequest(
            request_id="porep-1000-7", proof_kind=ref.POREP_SEAL_COMMIT, sector_size=2048,
            registered_proof=5, priority=ref.NORMAL, vanilla_proof=sealed_2k.c1,
            sector_number=sealed_2k.sector_id, miner_id=1000)
        res = _call(d.grpc, "Prove", ref.ProveRequest(submit=sub), ref.ProveResponse, timeout=1500).result
        assert res.status == ref.AwaitProofResponse.COMPLETED, res.error_message
        assert len(res.proof) == 192 and res.total_ms > 0
        assert verify_c1_proof(sealed_2k.out, res.proof, keys_2k.vk) is None

        again = _call(d.grpc, "SubmitProof", sub, ref.SubmitProofResponse)
        assert again.job_id == res.job_id  # the request id is the idempotency key
        with d.client() as c:
            mine = c.await_proof(res.job_id, timeout=30)
            assert mine.ok and mine.circuit_id == "porep-2k" and mine.proofs == [res.proof]
            assert mine.public_inputs == [c1_public_inputs(sealed_2k.out, 0)]
            # The C1 output says StackedDrg2KiBV1_1 (5); a request claiming V1 (0) is refused.
            from cuzk.server.client import ClientError

            with pytest.raises(ClientError) as exc:
                c.submit_filecoin("porep-c2", 0, vanilla_proof=sealed_2k.c1)
            assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert "differs from the C1 output's StackedDrg2KiBV1_1" in exc.value.message
        st = _call(d.grpc, "GetStatus", ref.GetStatusRequest(), ref.GetStatusResponse)
        assert "porep-2k" in [k.circuit_id for k in st.loaded_srs]
        assert {q.proof_kind for q in st.queues} >= {"porep-c2"} and st.total_proofs_completed == 1
    finally:
        assert d.term() == 0, d.log()


# --- what status and submit report ---------------------------------------------------------------


class _HeldWitness:
    """A witness generator that waits for `go`: its job keeps the synthesis slot."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def __call__(self, inputs: Any, index: int) -> Any:
        self.go.wait(60)
        return tiny_circuit().witness(int(inputs["seed"]), index)


def test_status_reports_pinned_limit_queue_position_and_device(ref: ModuleType,
                                                                tmp_path: Path) -> None:
    """In-process service on one fake device (partition buffers reserved as the key goes HOT):
    pinned_memory_limit_bytes is the buffer pool's capacity plus the streamed queries, and
    the pinned bytes in use stay within it; SubmitProof's queue_position counts the jobs that
    get a synthesis slot first (a higher priority goes ahead) and assigned_gpu names the one
    device. Read in the reference schema."""
    from fake_device import FakeDevice

    from cuzk.backends.cpu import native_module
    from cuzk.engine.config import EngineConfig
    from cuzk.engine.engine import Engine
    from cuzk.engine.phases import ProverPhases
    from cuzk.engine.types import CircuitSpec
    from cuzk.groth16.dev_keys import development_key
    from cuzk.server import store as st
    from cuzk.server.circuits import CircuitInfo
    from cuzk.server.service import ProvingService
    from cuzk.server.validation import SeedSchema

    if native_module() is None:
        pytest.skip("native CPU backend not built")
    gate = _HeldWitness()
    info = CircuitInfo("held", CircuitSpec(key=development_key(tiny_circuit()), witness_fn=gate),
                       takes_inputs=True, schema=SeedSchema())
    eng = Engine(EngineConfig(devices=["cpu"], partition_workers=1, synthesis_concurrency=1,
                              warm_up=False), phases=ProverPhases(), backends={"cpu": FakeDevice()})
    svc = ProvingService(eng, st.JobStore(tmp_path / "jobs.sqlite"), {"held": info})
    svc.start()

    def submit(rid: str, priority: int = pb.NORMAL) -> Any:
        req = pb.SubmitProofRequest(request_id=rid, circuit_id="held", priority=priority,
                                    partitions=[pb.PartitionInput(inputs_json='{"seed": 1}')])
        return ref.SubmitProofResponse.FromString(svc.submit(req).SerializeToString())

    def status() -> Any:
        return ref.GetStatusResponse.FromString(svc.status().SerializeToString())

    try:
        eng.preload("held")
        es = eng.engine_status()
        pool = es.host_buffers
        ((shape, sets),) = pool.shapes.items()
        assert sets.allocated == pool.bound_per_shape and sets.set_bytes > 0
        streamed = sum(k.streamed_bytes for k in es.keys)
        s = status()
        assert s.pinned_memory_limit_bytes == pool.bound_per_shape * sets.set_bytes + streamed
        assert 0 < s.pinned_memory_bytes <= s.pinned_memory_limit_bytes

        first = submit("a")
        deadline = time.monotonic() + 30
        while eng.engine_status().synthesizing_jobs < 1 and time.monotonic() < deadline:
            time.sleep(0.01)  # the first job takes the only synthesis slot
        assert (first.queue_position, first.assigned_gpu) == (0, "cpu")
        assert submit("b").queue_position == 0  # next for the slot
        assert submit("c").queue_position == 1
        assert submit("d", pb.HIGH).queue_position == 0  # ahead of b and c
        assert [eng.queue_position(eng.job_id_for(r) or "") for r in "abcd"] == [0, 1, 2, 0]
        s = status()
        assert 0 < s.pinned_memory_bytes <= s.pinned_memory_limit_bytes
        gate.go.set()
        for rid in "abcd":
            assert svc.await_job(svc.store.get_by_request(rid).job_id, 60).status == \
                pb.AwaitProofResponse.COMPLETED
        done = submit("a")  # a duplicate of a finished job: nothing ahead, no device
        assert (done.queue_position, done.assigned_gpu) == (0, "")
    finally:
        gate.go.set()
        svc.stop(10)


# --- PoSt and SnapDeals proved for a reference client -------------------------------------------

_MINER = 1000


def _post_table(cid: str, proof: str, no_params: Path, c2_cache: Path) -> str:
    return (f'[srs.circuits.{cid}]\nfilecoin = {{ proof = "{proof}", sector_size = "2KiB", '
            f'dev_keys = true, params = "{no_params}", cache_dir = "{c2_cache}" }}\n')


@pytest.mark.slow
def test_reference_client_proves_post_and_snap(ref: ModuleType, c2_cache: Path, no_params: Path,
                                               tmp_path: Path) -> None:
    """Curio's WindowPoSt (a request per partition, a bincode FallbackPoStSectorProof per
    sector), WinningPoSt and SnapDeals (a bincode PartitionProof per partition, commitments as
    CIDs or 32 bytes) requests, miner id in place of the prover id, to one daemon with a table
    per kind: each answer's `proof` verifies with its circuit's verifier; a bad randomness, a
    tampered vanilla proof and commitments that do not match are refused at submit."""
    import numpy as np

    from cuzk.filecoin.porep.challenges import prover_id_from_miner
    from cuzk.filecoin.post import RegisteredPoStProof
    from cuzk.filecoin.post.generate import (
        field_bytes,
        seal_sectors,
        window_vanilla_proofs,
        winning_vanilla_proofs,
    )
    from cuzk.filecoin.post.job import PoStJob
    from cuzk.filecoin.post.prove import PoStCircuit
    from cuzk.filecoin.update.constants import RegisteredUpdateProof
    from cuzk.filecoin.update.generate import make_test_update
    from cuzk.filecoin.update.job import UpdateJob
    from cuzk.filecoin.update.prove import UpdateCircuit

    randomness = field_bytes(np.random.default_rng(77))
    prover_id = prover_id_from_miner(_MINER)
    window = RegisteredPoStProof.StackedDrgWindow2KiBV1_2  # Go's StackedDrgWindow2KiBV1_1 (10)
    winning = RegisteredPoStProof.StackedDrgWinning2KiBV1
    parts = window_vanilla_proofs(window.config(), randomness,
                                  seal_sectors(window.config(), 3, seed=31))
    _, win_blobs = winning_vanilla_proofs(winning.config(), randomness, prover_id,
                                          seal_sectors(winning.config(), 2, seed=32))
    snap = RegisteredUpdateProof.StackedDrg2KiBV1
    u = make_test_update(snap.params(), seed=33)
    comm_r_old, comm_r_new, comm_d_new = u.commitments()

    def window_req(k: int, **over: Any) -> Any:
        fields = dict(request_id=f"wdpost-{_MINER}-{k}", proof_kind=ref.WINDOW_POST_PARTITION,
                      registered_proof=int(window), vanilla_proofs=parts[k], miner_id=_MINER,
                      randomness=randomness, partition_index=k)
        return ref.SubmitProofRequest(**{**fields, **over})

    snap_req = ref.SubmitProofRequest(
        request_id=f"snap-{_MINER}-5", proof_kind=ref.SNAP_DEALS_UPDATE, sector_size=2048,
        registered_proof=int(snap), vanilla_proofs=u.vanilla_proofs(), sector_number=5,
        miner_id=_MINER, sector_key_cid=_SEALED_CID + comm_r_old, new_sealed_cid=comm_r_new,
        new_unsealed_cid=_UNSEALED_CID + comm_d_new)
    win_req = ref.SubmitProofRequest(
        request_id=f"winning-{_MINER}", proof_kind=ref.WINNING_POST, registered_proof=int(winning),
        vanilla_proofs=win_blobs, miner_id=_MINER, randomness=randomness)

    extra = (_post_table("wpost-2k", "window-post", no_params, c2_cache)
             + _post_table("winning-2k", "winning-post", no_params, c2_cache)
             + _post_table("snap-2k", "snap-update", no_params, c2_cache))
    d = DaemonProc(write_config(tmp_path, extra=extra), tmp_path).start()
    tampered = list(parts[0])
    blob = bytearray(tampered[1])
    blob[-40] ^= 1  # the second sector's comm_c
    tampered[1] = bytes(blob)
    refusals = [
        (window_req(0, request_id="short", randomness=randomness[:31]), "randomness must be 32 bytes"),
        (window_req(0, request_id="tampered", vanilla_proofs=tampered), r"sector \d+: hash\(comm_c"),
        (window_req(0, request_id="big-miner", miner_id=1 << 63), r"miner_id: .* below 2\^63"),
        (ref.SubmitProofRequest(request_id="no-comm", proof_kind=ref.SNAP_DEALS_UPDATE,
                                registered_proof=int(snap), vanilla_proofs=u.vanilla_proofs(),
                                sector_key_cid=comm_r_old, new_sealed_cid=comm_r_new),
         r"new_unsealed_cid \(comm_d_new\) is empty"),
        (ref.SubmitProofRequest(request_id="swapped", proof_kind=ref.SNAP_DEALS_UPDATE,
                                registered_proof=int(snap), vanilla_proofs=u.vanilla_proofs(),
                                sector_key_cid=comm_r_new, new_sealed_cid=comm_r_old,
                                new_unsealed_cid=comm_d_new), "comm_r"),
        (ref.SubmitProofRequest(request_id="bad-cid", proof_kind=ref.SNAP_DEALS_UPDATE,
                                registered_proof=int(snap), vanilla_proofs=u.vanilla_proofs(),
                                sector_key_cid=comm_r_old[:20], new_sealed_cid=comm_r_new,
                                new_unsealed_cid=comm_d_new), "sector_key_cid"),
    ]
    try:
        for req, message in refusals:
            with pytest.raises(grpc.RpcError) as exc:
                _call(d.grpc, "SubmitProof", req, ref.SubmitProofResponse)
            assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT, exc.value.details()
            assert re.search(message, exc.value.details()), exc.value.details()
        reqs = [window_req(0), window_req(1), win_req, snap_req]
        jobs = [_call(d.grpc, "SubmitProof", r, ref.SubmitProofResponse).job_id for r in reqs]
        results = [_call(d.grpc, "AwaitProof", ref.AwaitProofRequest(job_id=j),
                         ref.AwaitProofResponse, timeout=1500) for j in jobs]
        st = _call(d.grpc, "GetStatus", ref.GetStatusRequest(), ref.GetStatusResponse)
    finally:
        assert d.term() == 0, d.log()
    for r in results:
        assert r.status == ref.AwaitProofResponse.COMPLETED, r.error_message
    assert {q.proof_kind for q in st.queues} >= {"window-post", "winning-post", "snap-update"}
    post_c = PoStCircuit.for_proof(window, c2_cache)
    post_vk = post_c.verifying_key(no_params)[0]
    jobs_w = [PoStJob(window, randomness, prover_id, parts[k], k) for k in range(2)]
    for job, r in zip(jobs_w, results):
        assert len(r.proof) == 192 and post_c.verify(job, r.proof, post_vk) is None
    assert post_c.verify(jobs_w[0], results[1].proof, post_vk) is not None  # other sectors
    win_c = PoStCircuit.for_proof(winning, c2_cache)
    win_job = PoStJob(winning, randomness, prover_id, win_blobs)
    assert win_c.verify(win_job, results[2].proof, win_c.verifying_key(no_params)[0]) is None
    snap_c = UpdateCircuit(snap, False, c2_cache)
    snap_job = UpdateJob(snap, comm_r_old, comm_r_new, comm_d_new, u.vanilla_proofs())
    assert snap_c.verify(snap_job, results[3].proof, snap_c.verifying_key(no_params)[0]) is None
