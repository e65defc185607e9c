"""What the daemon's status reads of a CUDA device: its model name, total and free memory."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

pytest.importorskip("cupy")
from cuzk.backends import cuda  # noqa: E402

if not cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from cuzk.server.device_memory import device_memory, device_name  # noqa: E402


def test_device_memory_and_name() -> None:
    import cupy as cp

    total, free = device_memory("cuda:0")
    assert total == cp.cuda.runtime.memGetInfo()[1] and 0 < free <= total
    name = device_name("cuda:0")
    assert name and name != "cuda:0"
    assert device_memory("cpu") == (0, 0) and device_name("cpu") == "cpu"
    assert device_memory(f"cuda:{cp.cuda.runtime.getDeviceCount() + 5}") == (0, 0)
