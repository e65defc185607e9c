"""The CUDA backend's knobs (cuzk/backends/cuda/tuning.py): read once from the environment,
range-checked, every variable documented in docs/tuning.md; and the backend's shape against
the DeviceBackend contract. Needs no GPU and no CuPy."""

from __future__ import annotations

from pathlib import Path

import pytest
from emulated_cuda import EmulatedCupy

from cuzk.backends.base import DeviceBackend
from cuzk.backends.cuda import CudaBackend, Tuning, tuning
from cuzk.settings import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_every_variable_is_documented() -> None:
    doc = (ROOT / "docs/tuning.md").read_text()
    names = tuning.env_names()
    assert len(names) == len(set(names)) >= 15
    missing = [n for n in names if f"`{n}`" not in doc]
    assert not missing, f"docs/tuning.md lacks {missing}"
    assert "tuning.md" in (ROOT / "docs/config.md").read_text()


def test_environment_values_are_read_and_checked() -> None:
    t = Tuning.from_env({"CUZK_CONCURRENT": "0", "CUZK_MAX_CONCURRENT": "2",
                         "CUZK_MSM_STREAM_ROWS": str(1 << 20), "CUZK_MSM_HOST_FINISH": "1,2",
                         "CUZK_MSM_MASK_MIN": "0", "CUZK_NVRTC_OPTIONS": "-lineinfo"})  # fmt: skip
    assert (t.concurrent, t.max_concurrent, t.msm_stream_rows) == (False, 2, 1 << 20)
    assert t.msm_host_finish == frozenset({1, 2}) and t.msm_mask_min == 0
    assert t.nvrtc_options == ("-lineinfo",)
    assert Tuning.from_env({}) == Tuning()
    for name, bad in (("CUZK_MSM_CHUNK", "1"), ("CUZK_MAX_CONCURRENT", "-1"),
                      ("CUZK_MSM_MASK_MIN", "2"), ("CUZK_CONCURRENT", "maybe"),
                      ("CUZK_MSM_HOST_FINISH", "3"), ("CUZK_MSM_SEG", "x")):  # fmt: skip
        with pytest.raises(ConfigError, match=name):
            Tuning.from_env({name: bad})


def test_fields_are_checked() -> None:
    for bad in (dict(ntt_tile_radix=8), dict(ntt_cols_log=12), dict(msm_dense=1.5),
                dict(msm_window=-1), dict(msm_acc_block=0)):  # fmt: skip
        with pytest.raises(ConfigError, match=next(iter(bad))):
            Tuning(**bad)


def test_the_backend_is_a_device_backend() -> None:
    be = CudaBackend(tuning=Tuning(msm_stream_rows=1 << 20), cupy=EmulatedCupy(1 << 30),
                     kernels=lambda *_a: {})  # fmt: skip
    assert isinstance(be, DeviceBackend)
    assert be.device_free_bytes() == 1 << 30
    assert not be.streams_host_bases and be.oom_reruns == 0 and be.concurrent
    # the streamed chunk halves down to 2^18 bases, then says it cannot
    assert [be.shrink_stream_chunks() for _ in range(4)] == [1 << 19, 1 << 18, 0, 0]
    old = be.retune(msm_stream_rows=1 << 22, concurrent=False)
    assert old.msm_stream_rows == 1 << 20 and be.stream_rows == 1 << 22 and not be.concurrent
    with pytest.raises(ConfigError):
        be.retune(msm_chunk=0)
