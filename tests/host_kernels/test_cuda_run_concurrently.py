"""CudaBackend.run_concurrently's scheduling on the host (no GPU needed): the emulated device's
streams and events (tests/emulated_cuda.py). With max_concurrent k (or msm_width k), at most k tasks run at once, they
start in order, k streams serve them, and the results come back in the tasks' order; a task out
of device memory is run again alone."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from emulated_cuda import CUDADriverError, CUDARuntimeError, EmulatedCupy, OutOfMemoryError

from cuzk.backends.base import DeviceBackend
from cuzk.backends.cuda import CudaBackend, Tuning
from cuzk.identity_cache import IdentityCache

_CUPY: IdentityCache[EmulatedCupy] = IdentityCache()  # each backend's emulated CuPy


def _backend(width: int, **tuning: Any) -> CudaBackend:
    """A backend on a fresh emulated device (tests/emulated_cuda.py), without kernels: its
    tasks here are plain Python."""
    cp = EmulatedCupy()
    be = CudaBackend(tuning=Tuning(max_concurrent=width, **tuning), cupy=cp,
                     kernels=lambda *_a: {})  # fmt: skip
    _CUPY.put(be, cp)
    return be


def _caller(be: CudaBackend) -> Any:
    """The stream the test's thread calls on (the device's null stream)."""
    return _CUPY.get(be).cuda.get_current_stream()


class _Probe:
    """Tasks that note how many run at once, in which order they start and on which stream."""

    def __init__(self, be: CudaBackend) -> None:
        self.cp = _CUPY.get(be)
        self.lock = threading.Lock()
        self.running = self.most = 0
        self.started: list[int] = []
        self.streams: set[int] = set()

    def task(self, i: int, together: threading.Barrier | None = None, fail: int = 0,
             error: Any = lambda: OutOfMemoryError(1, 0)) -> Any:
        """Task i; `together`: it waits there for the others of its batch (fails unless that
        many run at once); it raises error() the first `fail` times."""
        left, ran = [fail], [False]

        def run() -> int:
            with self.lock:
                self.running += 1
                self.most = max(self.most, self.running)
                self.started.append(i)
                self.streams.add(id(self.cp.cuda.get_current_stream()))
            if together is not None and not ran[0]:  # a rerun runs alone
                together.wait(timeout=30)
            ran[0] = True
            time.sleep(0.01)
            with self.lock:
                self.running -= 1
            if left[0] > 0:
                left[0] -= 1
                raise error()
            return i * i

        return run


@pytest.mark.parametrize("width", (0, 1, 2, 3))
def test_at_most_width_tasks_run_at_once_in_order(monkeypatch: pytest.MonkeyPatch,
                                                  width: int) -> None:
    be = _backend(width)
    probe = _Probe(be)
    want = 5 if width == 0 else width
    first = threading.Barrier(want)  # the first `want` tasks must run at once
    out = be.run_concurrently([probe.task(i, first if i < want else None) for i in range(5)])
    assert out == [i * i for i in range(5)]
    assert probe.most == want
    if want < 5:  # a task starts when an earlier one has ended: in order
        assert probe.started[want:] == list(range(want, 5))
    if want == 1:
        assert probe.streams == {id(_caller(be))}
    else:
        assert len(probe.streams) == want and id(_caller(be)) not in probe.streams
    assert be.concurrent_streams() == (0 if want == 1 else want)
    be.close()


@pytest.mark.parametrize("error", (lambda: OutOfMemoryError(1, 0),
                                   lambda: CUDADriverError(2), lambda: CUDARuntimeError(2)),
                         ids=("pool", "driver", "runtime"))
def test_a_task_out_of_memory_reruns_alone(monkeypatch: pytest.MonkeyPatch, error: Any) -> None:
    """The pool's failed allocation, or the driver's or runtime's out-of-memory status (a
    launch without room for its local memory on a full card)."""
    be = _backend(2)
    assert be.is_out_of_memory(error())
    probe = _Probe(be)
    pair = threading.Barrier(2)
    out = be.run_concurrently([probe.task(0, pair), probe.task(1, pair, fail=1, error=error),
                               probe.task(2)])
    assert out == [0, 1, 4] and be.oom_reruns == 1
    assert probe.started.count(1) == 2 and probe.most == 2
    be.close()


@pytest.mark.parametrize("error", (lambda: CUDADriverError(700), lambda: CUDARuntimeError(700),
                                   lambda: RuntimeError("2")), ids=("driver", "runtime", "other"))
def test_other_device_errors_are_not_out_of_memory(monkeypatch: pytest.MonkeyPatch,
                                                   error: Any) -> None:
    """Any other status (700: an illegal address) fails the region: no rerun."""
    be = _backend(2)
    assert not be.is_out_of_memory(error())
    probe = _Probe(be)
    with pytest.raises(type(error())):
        be.run_concurrently([probe.task(0), probe.task(1, fail=1, error=error)])
    assert be.oom_reruns == 0
    be.close()


@pytest.mark.parametrize(("error", "lost", "oom"), (
    (lambda: CUDARuntimeError(700), True, False),   # an illegal address: the context is gone
    (lambda: CUDADriverError(719), True, False),    # a launch failure
    (lambda: CUDARuntimeError(214), True, False),   # an uncorrectable ECC error
    (lambda: CUDADriverError(2), False, True),      # out of memory: a rerun can get past it
    (lambda: CUDARuntimeError(1), False, False),    # an invalid value: this call's mistake only
    (lambda: OutOfMemoryError(1, 0), False, True),
    (lambda: RuntimeError("700"), False, False),
))
def test_device_lost_names_the_errors_that_leave_the_device_unusable(
        monkeypatch: pytest.MonkeyPatch, error: Any, lost: bool, oom: bool) -> None:
    be = _backend(1)
    assert be.is_device_lost(error()) is lost
    assert be.is_out_of_memory(error()) is oom


def test_msm_width_limits_the_tasks_at_once() -> None:
    """msm_width(k) within its block: at most k at once (1: in turn on the caller's stream,
    and `concurrent` says so), 0: as configured; the configured limit comes back after."""
    be = _backend(0)
    assert isinstance(be, DeviceBackend) and be.concurrent
    for width, want in ((1, 1), (2, 2), (0, 4)):
        probe = _Probe(be)
        together = threading.Barrier(want) if want > 1 else None
        with be.msm_width(width):
            assert be.concurrent == (width != 1)
            tasks = [probe.task(i, together if i < want else None) for i in range(4)]
            assert be.run_concurrently(tasks) == [i * i for i in range(4)]
        assert probe.most == want and be.concurrent
    be.close()
    off = _backend(0, concurrent=False)
    probe = _Probe(off)
    assert off.run_concurrently([probe.task(i) for i in range(3)]) == [0, 1, 4]
    assert probe.most == 1 and not off.concurrent
