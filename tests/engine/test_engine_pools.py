"""The engine's CPU thread pools (cuzk/engine/pools.py): core lists parsed and checked (a bad
one is a one-line config error), the status names each pool's size and cores, and the native
work of each pool runs on its cores: the OpenMP teams that synthesis and the GPU-side calls
start report (sched_getcpu, from inside the team) only their pool's cores."""

from __future__ import annotations

import os
import random
import threading
from typing import Any

import pytest

from cuzk.backends.cpu import native_module
from cuzk.circuits.synthetic import SyntheticCircuit
from cuzk.engine import CircuitSpec, Engine, EngineConfig, JobRequest, JobState, PartitionInput
from cuzk.engine.phases import ProverPhases
from cuzk.engine.pools import available_cpus, format_cpus, parse_cpus
from cuzk.model.keys import ProvingKey
from cuzk.settings import ConfigError

CID = "syn"


def test_core_lists_parse_and_print_back() -> None:
    assert parse_cpus("") == ()
    assert parse_cpus("0-3, 8,10-11,2") == (0, 1, 2, 3, 8, 10, 11)
    assert format_cpus(parse_cpus("0-3,8,10-11")) == "0-3,8,10-11"
    for bad in ("0-", "a", "3-1", "1,,2", "-2"):
        with pytest.raises(ValueError):
            parse_cpus(bad)


def test_a_bad_core_list_is_a_one_line_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^synthesis_cpus = '0-x': '0-x' is not a core") as e:
        EngineConfig(synthesis_cpus="0-x")
    assert "\n" not in str(e.value)
    avail = available_cpus()
    if avail is None:
        pytest.skip("the OS does not report this process's cores")
    beyond = max(avail) + 1
    with pytest.raises(ConfigError, match=rf"gpu_cpus = '{beyond}': core\(s\) {beyond} not "
                                          r"available \(this process may use "):
        EngineConfig(gpu_cpus=str(beyond))


def test_the_daemon_config_rejects_a_bad_core_list(tmp_path: Any) -> None:
    from cuzk.server import config as cfg

    p = tmp_path / "c.toml"
    p.write_text('[gpus]\ncpus = "1-0"\n')
    with pytest.raises(ConfigError, match=r"\[gpus\] cpus = '1-0': range '1-0' runs backwards"):
        cfg.load(str(p), [])
    p.write_text('[synthesis]\ncpus = "0"\nthreads = 3\n')
    eng = cfg.load(str(p), []).engine_dict()
    assert eng["synthesis_cpus"] == "0" and eng["synthesis_threads"] == 3


class WhereTeamsRun(ProverPhases):
    """The prover's phases, each also running a native team of its backend's size from the
    worker's thread and recording the cores it ran on, by pool."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.seen: dict[str, set[int]] = {"synthesis": set(), "gpu": set()}
        self.sizes: dict[str, set[int]] = {"synthesis": set(), "gpu": set()}

    def _team(self, pool: str, backend: Any) -> None:
        from cuzk import _native

        cpus = _native.team_cpus(backend.threads)
        with self.lock:
            self.seen[pool].update(cpus)
            self.sizes[pool].add(len(cpus))

    def synthesize(self, pk: ProvingKey, witness: Any, backend: Any, out: Any = None) -> Any:
        self._team("synthesis", backend)
        return super().synthesize(pk, witness, backend, out=out)

    def kernels(self, pk: ProvingKey, syn: Any, backend: Any, g2: bool) -> Any:
        self._team("gpu", backend)
        return super().kernels(pk, syn, backend, g2)


@pytest.mark.skipif(native_module() is None or not hasattr(native_module(), "team_cpus"),
                    reason="native CPU backend not built (or without team_cpus)")
def test_each_pools_native_work_runs_on_its_cores(circuit: SyntheticCircuit,
                                                  pk: ProvingKey) -> None:
    avail = available_cpus()
    if avail is None or not {0, 1} <= avail:
        pytest.skip("needs cores 0 and 1")
    phases = WhereTeamsRun()
    cfg = EngineConfig(devices=["cpu"], backend="cpu", partition_workers=2,
                       gpu_workers_per_device=2, synthesis_threads=2, gpu_threads=3,
                       synthesis_cpus="0", gpu_cpus="1", evaluate_on="host")
    eng = Engine(cfg, phases=phases).start()
    try:
        eng.register_circuit(CID, CircuitSpec(key=pk, witness_fn=circuit.witness_fn()))
        rng = random.Random(3)
        jid = eng.submit(JobRequest("pools", CID, [PartitionInput(inputs={"seed": rng.getrandbits(32)})
                                                   for _ in range(4)]))
        res = eng.await_job(jid, timeout=300)
        assert res.state == JobState.COMPLETED, res.error
        pools = eng.engine_status().to_dict()["pools"]
    finally:
        eng.stop()
    assert pools == {"synthesis": {"threads": 2, "cpus": "0"}, "gpu": {"threads": 3, "cpus": "1"}}
    # every native team of a pool: its configured size, on its core only
    assert phases.sizes == {"synthesis": {2}, "gpu": {3}}
    assert phases.seen == {"synthesis": {0}, "gpu": {1}}
    assert os.sched_getaffinity(0) == avail  # the caller's own thread was never pinned


def test_pools_unpinned_by_default() -> None:
    cfg = EngineConfig()
    assert cfg.synthesis_pool.cpus == () and cfg.gpu_pool.cpus == ()
    assert cfg.synthesis_pool.native_threads == 0
    assert EngineConfig(gpu_cpus="0").gpu_pool.native_threads == 1  # a thread per pinned core
