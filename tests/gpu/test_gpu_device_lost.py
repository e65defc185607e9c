"""A real GPU left unusable (a kernel writing to an illegal address): CuPy's error is named
lost by the CUDA backend, and the engine, meeting it in a kernel region, marks its only device
lost and fails the job saying so. Each case runs in a process of its own, whose CUDA context
the fault ends. Skipped without CuPy or a GPU."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

pytest.importorskip("cupy")
from cuzk.backends import cuda  # noqa: E402

if not cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]

# A kernel that writes through a pointer no allocation owns: the context's sticky error.
_FAULT = '''
import cupy as cp

def fault() -> None:
    k = cp.RawKernel(r"""extern "C" __global__ void wild(int* p) { *(volatile int*)16 = *p; }""",
                     "wild")
    k((1,), (1,), (cp.zeros(1, dtype=cp.int32),))
    cp.cuda.Device().synchronize()
'''


def _run(body: str) -> dict:
    script = _FAULT + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_illegal_address_is_a_lost_device() -> None:
    got = _run('''
        import json
        from cuzk.backends.cuda import CudaBackend
        be = CudaBackend()  # before the fault: its methods classify, it launches nothing
        try:
            fault()
            print(json.dumps({"raised": None}))
        except Exception as exc:
            print(json.dumps({"raised": type(exc).__name__, "status": getattr(exc, "status", None),
                              "lost": be.is_device_lost(exc), "oom": be.is_out_of_memory(exc)}))
    ''')
    assert got["raised"] in ("CUDARuntimeError", "CUDADriverError"), got
    assert got["lost"] is True and got["oom"] is False, got


def test_the_engine_loses_a_faulting_device_and_fails_the_job() -> None:
    got = _run('''
        import json
        from cuzk.circuits.synthetic import for_domain
        from cuzk.curves import get_curve
        from cuzk.engine import CircuitSpec, Engine, EngineConfig, JobRequest, PartitionInput
        from cuzk.engine.phases import ProverPhases
        from cuzk.groth16.setup import setup

        class Faulting(ProverPhases):
            def kernels(self, pk, syn, backend, g2):
                fault()  # the region's first device work
                return super().kernels(pk, syn, backend, g2)

        circ = for_domain(get_curve("bn254"), 10)
        pk = setup(circ.r1cs, seed="gpu-device-lost", convention="bellman")
        eng = Engine(EngineConfig(devices=["cuda:0"], backend="cuda", warm_up=False,
                                  msm_tables=False), phases=Faulting()).start()
        eng.register_circuit("syn", CircuitSpec(key=pk, witness_fn=circ.witness_fn()))
        res = eng.await_job(eng.submit(JobRequest("lost", "syn", [
            PartitionInput(inputs={"seed": s}) for s in (1, 2)])), timeout=300)
        status = eng.engine_status()
        try:
            eng.submit(JobRequest("after", "syn", [PartitionInput(inputs={"seed": 3})]))
            refused = None
        except Exception as exc:
            refused = type(exc).__name__
        print(json.dumps({"state": str(res.state), "error": res.error,
                          "lost": status.lost_devices, "refused": refused}))
    ''')
    assert got["state"] == "FAILED", got
    assert "every device is lost (cuda:0: CUDA" in got["error"], got
    assert list(got["lost"]) == ["cuda:0"] and got["refused"] == "DeviceLost", got
