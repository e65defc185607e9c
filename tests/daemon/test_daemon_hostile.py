"""A hostile client: malformed and oversized requests of every kind, several rounds in a row.
Each is refused with the right code and a message naming what is wrong; afterwards the daemon
is the same process, its memory is back near where it was, nothing bad was stored, and a valid
job completes."""

from __future__ import annotations

import os
import random
from collections.abc import Callable

import grpc
import numpy as np
import pytest
from daemon_harness import DaemonProc, tiny_circuit, verify_result, write_config

from cuzk.server.client import Client, ClientError
from cuzk.server.proto import pb

INV = grpc.StatusCode.INVALID_ARGUMENT
FULL = grpc.StatusCode.RESOURCE_EXHAUSTED


def _cases(c: Client, address: str) -> list[tuple[grpc.StatusCode | None, str, Callable[[], object]]]:
    circ = tiny_circuit()
    w = circ.witness(5, 0)
    r = circ.curve.r
    non_canonical = w.copy()
    non_canonical[3] = [(r >> (64 * k)) & (2**64 - 1) for k in range(4)]
    many = [pb.PartitionInput(inputs=b"x")] * 100_000  # ~0.5 MB: a huge job in a small request

    def js(*texts: str) -> list[pb.PartitionInput]:
        return [pb.PartitionInput(inputs_json=t) for t in texts]

    def raw(req: pb.SubmitProofRequest) -> object:
        return c._call("SubmitProof", req)

    def garbage() -> object:  # bytes that are no SubmitProofRequest at all
        with grpc.insecure_channel(address) as ch:
            call = ch.unary_unary("/cuzk.v1.ProvingEngine/SubmitProof",
                                  request_serializer=None, response_deserializer=None)
            return call(b"\xff\xfe" * 1000 + os.urandom(64), timeout=30)

    return [
        (INV, "partition 1: inputs_json.seed is a number (1.5), not an integer",
         lambda: c.submit("tiny-any", js('{"seed": 1}', '{"seed": 1.5}'))),
        (INV, "partition 0: inputs_json is not JSON: Infinity", lambda: c.submit(
            "tiny-any", js('{"seed": Infinity}'))),
        (INV, "partition 0: inputs_json.seed is -3, out of range",
         lambda: c.submit("tiny-any", js('{"seed": -3}'))),
        (INV, "partition 2: inputs_json has unknown field 'nope'",
         lambda: c.submit("tiny-any", js("1", "2", '{"nope": 1}'))),
        (INV, "partition 0: inputs_json lacks field 'seed'", lambda: c.submit("tiny-any", js("{}"))),
        (INV, "partition 0: inputs_json is not JSON: nested too deeply",
         lambda: c.submit("tiny-any", js("[" * 300_000))),
        (INV, "takes 2 partition(s) per job, got 1", lambda: c.submit("tiny", js("1"))),
        (INV, "no partitions", lambda: c.submit("tiny-any", [])),
        (INV, "takes one input per partition, not a job input",
         lambda: c.submit("tiny-any", job_input=os.urandom(1000))),
        (INV, "partition 0: witness is 33 bytes", lambda: c.submit(
            "tiny-witness", [pb.PartitionInput(witness=b"\1" * 33)])),
        (INV, "partition 0: witness has 65536 values", lambda: c.submit(
            "tiny-witness", [pb.PartitionInput(witness=b"\0" * (32 << 16))])),
        (INV, "partition 0: witness value 3 is not below the field modulus",
         lambda: c.submit("tiny-witness", [non_canonical])),
        (INV, "partition 0: circuit 'tiny-witness' has no witness generator",
         lambda: c.submit("tiny-witness", [7])),
        (INV, "unknown priority 99", lambda: raw(pb.SubmitProofRequest(
            request_id="p99", circuit_id="tiny-any", priority=99, partitions=js("1")))),
        (INV, "request_id is empty", lambda: raw(pb.SubmitProofRequest(
            circuit_id="tiny-any", partitions=js("1")))),
        (grpc.StatusCode.NOT_FOUND, "unknown circuit_id", lambda: c.submit("../../etc", js("1"))),
        (FULL, "a job of 100000 partitions is too large; split it (limit [daemon] "
               "max_partitions_per_job = 128)", lambda: c.submit("tiny-any", many)),
        (FULL, "(limit [daemon] max_request_bytes = 3145728)",
         lambda: c.submit("tiny-any", [os.urandom(3 << 20)])),
        (FULL, "larger than max", lambda: c.submit("tiny-any", [os.urandom(5 << 20)])),
        (None, "", garbage),
    ]


def test_hostile_client(tmp_path, rng: random.Random) -> None:  # type: ignore[no-untyped-def]
    cfg = write_config(tmp_path, max_message_bytes="4MiB", max_request_bytes="3MiB")
    d = DaemonProc(cfg, tmp_path).start()
    try:
        assert d.proc is not None
        pid = d.proc.pid
        with d.client() as c:
            verify_result(c.prove("tiny", [1, 2], timeout=120))  # warm: key HOT, pools made
            rss0 = 0
            for round_ in range(4):  # the first round warms gRPC's buffers and threads
                if round_ == 1:
                    rss0 = d.rss_bytes()
                cases = _cases(c, d.grpc)
                rng.shuffle(cases)
                for code, needle, fn in cases:
                    if code is None:  # garbage on the wire: refused, whatever gRPC calls it
                        with pytest.raises(grpc.RpcError) as rpc:
                            fn()
                        assert rpc.value.code() != grpc.StatusCode.OK
                        continue
                    with pytest.raises(ClientError) as exc:
                        fn()
                    assert exc.value.code == code, exc.value
                    assert needle in exc.value.message, exc.value.message
                    assert "Traceback" not in exc.value.message
            rss1 = d.rss_bytes()
            st = c.status()
            assert d.proc.poll() is None and d.proc.pid == pid  # the same process
            assert st["jobs_queued"] == st["jobs_running"] == 0
            assert st["total_proofs_failed"] == 0  # nothing bad reached the engine
            # memory back near where it was (the refused requests' buffers are gone)
            assert rss1 - rss0 < 64 * 2**20, (rss0, rss1)
            res = c.prove("tiny", [rng.randrange(2**40), 3], timeout=120)
            verify_result(res)
            w = tiny_circuit().witness(rng.randrange(2**32), 0)
            assert c.prove("tiny-witness", [np.ascontiguousarray(w)], timeout=120).ok
    finally:
        assert d.term() == 0, d.log()
