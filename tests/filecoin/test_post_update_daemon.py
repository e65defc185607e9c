"""PoSt and SnapDeals in the engine and the daemon (development keys, NOT FOR PRODUCTION):
`[srs.circuits.*] filecoin = { proof = "window-post" | "snap-update-poseidon" | ... }` jobs
sent as job inputs, proved and verified; bad job inputs refused at submit; WinningPoSt jobs
run at CRITICAL priority and overtake queued PoRep partitions (read from the TIMELINE)."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from filecoin_fixtures import update_job, window_post_jobs, winning_post_job

from cuzk.backends.cpu import native_module
from cuzk.filecoin.post.generate import field_bytes
from cuzk.filecoin.post.job import PoStJob

pytestmark = pytest.mark.skipif(native_module() is None, reason="needs the native CPU backend")

RNG = np.random.default_rng(32)
RANDOMNESS, PROVER_ID = field_bytes(RNG), field_bytes(RNG)


def _table(cid: str, proof: str, no_params: Path, c2_cache: Path, size: str = "2KiB") -> dict:
    return {"filecoin": {"proof": proof, "sector_size": size, "dev_keys": True,
                         "params": str(no_params), "cache_dir": str(c2_cache)}}


def _toml(cid: str, proof: str, no_params: Path, c2_cache: Path) -> str:
    return (f'[srs.circuits.{cid}]\nfilecoin = {{ proof = "{proof}", sector_size = "2KiB", '
            f'dev_keys = true, params = "{no_params}", cache_dir = "{c2_cache}" }}\n')


def _window_jobs() -> list[PoStJob]:
    return window_post_jobs(RANDOMNESS, PROVER_ID, seed=21)


def _winning_job() -> PoStJob:
    return winning_post_job(RANDOMNESS, PROVER_ID, seed=22)


def test_window_post_and_update_through_the_daemon(c2_cache: Path, no_params: Path,
                                                   tmp_path: Path) -> None:
    import grpc
    from daemon_harness import DaemonProc, write_config

    from cuzk.filecoin.post.prove import PoStCircuit
    from cuzk.filecoin.update.prove import UpdateCircuit
    from cuzk.server.client import ClientError

    window, update = _window_jobs(), update_job(poseidon=True, seed=23)
    extra = (_toml("window-2k", "window-post", no_params, c2_cache)
             + _toml("snap-2k", "snap-update-poseidon", no_params, c2_cache))
    d = DaemonProc(write_config(tmp_path, extra=extra), tmp_path).start()
    try:
        with d.client() as c:
            subs = [c.submit("window-2k", job_input=j.to_bytes()) for j in window]
            snap = c.submit("snap-2k", job_input=update.to_bytes())
            results = [c.await_proof(s.job_id, timeout=900) for s in subs]
            res_u = c.await_proof(snap.job_id, timeout=900)
            # refused at submit, nothing queued
            bad = bytearray(window[1].to_bytes())
            bad[-40] ^= 1  # comm_c of the last sector
            cases = [
                ("window-2k", bytes(bad), r"job input refused: sector \d+: hash\(comm_c"),
                ("window-2k", _winning_job().to_bytes(), "is not a window-post"),
                ("window-2k", window[0].to_bytes()[:-1], "bytes of vanilla proofs"),
                ("snap-2k", update_job(poseidon=False, seed=23).to_bytes(), "this circuit's"),
            ]
            for cid, job_input, message in cases:
                with pytest.raises(ClientError) as exc:
                    c.submit(cid, job_input=job_input)
                assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
                assert re.search(message, exc.value.message), exc.value.message
            assert c.status()["jobs_queued"] == 0
    finally:
        assert d.term() == 0, d.log()
    assert all(r.status == "COMPLETED" for r in [*results, res_u]), d.log()
    post = PoStCircuit.for_proof(window[0].registered_proof, c2_cache)
    vk, dev = post.verifying_key(no_params)
    assert dev
    for job, r in zip(window, results):
        assert post.verify(job, b"".join(r.proofs), vk) is None
    assert post.verify(window[0], b"".join(results[1].proofs), vk) is not None
    snap_c = UpdateCircuit.for_job(update, c2_cache)
    assert snap_c.verify(update, b"".join(res_u.proofs), snap_c.verifying_key(no_params)[0]) is None


def test_snap_update_32gib_is_a_16_partition_job(c2_cache: Path, no_params: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The table builds without loading anything; a 32 GiB update job is split into its 16
    partitions (the check is stubbed: a 32 GiB update is out of this machine's reach)."""
    from cuzk.filecoin.update.prove import UpdateCircuit
    from cuzk.server import circuits

    info = circuits.build("snap-32g", _table("snap-32g", "snap-update", no_params, c2_cache, "32GiB"))
    assert "16 partition(s) × 86 challenges" in json.loads(info.spec.description)["circuit"]
    monkeypatch.setattr(UpdateCircuit, "check", lambda self, data: "checked")
    assert info.spec.job_input(b"") == ["checked"] * 16
    poseidon = circuits.build("snap-p-32g", _table("x", "snap-update-poseidon", no_params,
                                                   c2_cache, "32GiB"))
    assert poseidon.spec.job_input(b"") == ["checked"]


def _gated(spec: Any, gate: threading.Event) -> Any:
    fn = spec.witness_fn

    def witness(inputs: Any, k: int, **kw: Any) -> Any:
        gate.wait(120)
        return fn(inputs, k, **kw)

    spec.witness_fn = witness
    return spec


def test_winning_post_overtakes_queued_porep(sealed_2k, keys_2k, c2_cache: Path,
                                             no_params: Path) -> None:
    """Two PoRep jobs, then a WinningPoSt job sent at NORMAL priority: the circuit makes it
    CRITICAL, so it is synthesized and proved before the PoRep job queued ahead of it (the
    first one was already running). The second PoRep job is cancelled once the WinningPoSt
    partition is on the worker (its proof would only cost time here)."""
    from cuzk.engine import Engine, EngineConfig, JobRequest, JobState, Priority
    from cuzk.server import circuits

    gate = threading.Event()
    eng = Engine(EngineConfig(partition_workers=1, gpu_workers_per_device=1, max_gpu_queue_depth=1,
                              synthesis_concurrency=1)).start()
    try:
        for cid, proof in (("porep-2k", "porep"), ("winning-2k", "winning-post")):
            info = circuits.build(cid, _table(cid, proof, no_params, c2_cache))
            eng.register_circuit(cid, _gated(info.spec, gate))
        eng.preload("winning-2k")
        eng.preload("porep-2k")
        first_porep, queued_porep = (eng.submit(JobRequest(f"porep-{i}", "porep-2k",
                                                           inputs=sealed_2k.c1)) for i in range(2))
        win = eng.submit(JobRequest("winning", "winning-2k", inputs=_winning_job().to_bytes()))
        assert eng.status(win).priority == Priority.CRITICAL
        assert eng.status(queued_porep).priority == Priority.NORMAL
        gate.set()
        deadline = time.monotonic() + 900
        while not any(e.job_id == win and e.event == "GPU_START" for e in eng.timeline.events()):
            assert time.monotonic() < deadline, "the WinningPoSt partition never reached a worker"
            time.sleep(0.05)
        assert eng.status(queued_porep).partitions_proved == 0
        eng.cancel(queued_porep)
        assert eng.await_job(win, timeout=900).state == JobState.COMPLETED
        assert eng.await_job(first_porep, timeout=900).state == JobState.COMPLETED
        events = eng.timeline.events()
    finally:
        eng.stop(drain=False)

    def at(job: str, event: str) -> list[float]:
        return [e.t_ms for e in events if e.job_id == job and e.event == event]

    # the TIMELINE: WinningPoSt synthesized before the PoRep partition queued ahead of it
    # (if that one started at all), proved while it was still waiting
    assert at(win, "SYNTH_START")[0] < min(at(queued_porep, "SYNTH_START"), default=float("inf"))
    assert at(win, "SYNTH_START")[0] > at(first_porep, "SYNTH_START")[0]
    assert at(win, "PROOF_DONE") and not at(queued_porep, "PROOF_DONE")
    # every GPU pickup took the highest priority queued at that moment
    rank = {first_porep: 1, queued_porep: 1, win: 3}
    queued: dict[tuple[str, str], int] = {}
    for e in events:
        key = (e.job_id, e.detail.get("partition", ""))
        if e.event == "GPU_QUEUE":
            assert e.detail["priority"] == ("CRITICAL" if e.job_id == win else "NORMAL")
            queued[key] = rank[e.job_id]
        elif e.event == "GPU_PICKUP":
            best = max(queued.values())
            assert queued.pop(key) == best
