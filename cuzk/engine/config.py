"""Engine configuration: one dataclass, built from the daemon's TOML tables or a flat dict."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from cuzk.engine import pools
from cuzk.settings import ConfigError

_BACKENDS = ("auto", "cpu", "cuda", "reference")
_EVALUATE_ON = ("auto", "host", "device")

# Aliases so the daemon can pass its TOML sections flattened as `section.key`.
_ALIASES = {
    "gpus.devices": "devices",
    "gpus.gpu_workers_per_device": "gpu_workers_per_device",
    "gpus.gpu_threads": "gpu_threads",
    "gpus.cpus": "gpu_cpus",
    "synthesis.cpus": "synthesis_cpus",
    "gpus.msm_tables": "msm_tables",
    "gpus.msm_table_reserve_bytes": "msm_table_reserve_bytes",
    "gpus.warm_up": "warm_up",
    "synthesis.threads": "synthesis_threads",
    "synthesis.partition_workers": "partition_workers",
    "synthesis.evaluate_on": "evaluate_on",
    "pipeline.synthesis_concurrency": "synthesis_concurrency",
    "pipeline.max_gpu_queue_depth": "max_gpu_queue_depth",
    "pipeline.fair_quantum": "fair_quantum",
    "srs.memory_budget_bytes": "srs_memory_budget_bytes",
    "srs.key_cache_dir": "key_cache_dir",
    "memory.srs_budget_bytes": "srs_memory_budget_bytes",
}


@dataclass
class EngineConfig:
    # Devices: "cpu" or "cuda:<n>"; empty = every CUDA GPU when the backend is cuda, else ["cpu"].
    devices: list[str] = field(default_factory=list)
    gpu_workers_per_device: int = 2
    gpu_threads: int = 0  # threads of the kernel backend on a CPU device (0 = all)
    synthesis_threads: int = 0  # threads of native synthesis calls (0 = all)
    # Core lists ("0-11,16") the two pools pin their threads to (pools.py); "" = not pinned.
    gpu_cpus: str = ""
    synthesis_cpus: str = ""
    partition_workers: int = 2  # partitions synthesized at once
    # Where a, b, c = A·w, B·w, C·w are computed: "host" (partition workers, CPU) or "device"
    # (GPU workers, before the device lock; partition workers then only make witnesses);
    # "auto": device when every device backend can (CUDA; far faster than the host's cores).
    evaluate_on: str = "auto"
    synthesis_concurrency: int = 1  # jobs synthesizing at once
    # Partitions a job synthesizes before it yields its slot to a waiting job of its priority
    # (jobs of equal priority take turns: a small job behind a large one waits this long).
    fair_quantum: int = 1
    max_gpu_queue_depth: int = 4  # synthesized partitions waiting for a GPU worker
    srs_memory_budget_bytes: int = 0  # HOT-tier key bytes; 0 = unlimited
    key_cache_dir: str | None = None
    timeline_log_path: str | None = None
    verify_after_prove: bool = False
    g2_on_cpu: bool = False  # B·G2 MSM on the CPU backend outside the device lock
    # Precomputed MSM window tables for HOT keys' G1 queries (device backends that offer them).
    msm_tables: bool = True
    # Device memory left free after building tables: the proofs' working buffers need it.
    msm_table_reserve_bytes: int = 16 << 30
    # One throwaway partition's device work when a key goes HOT on a device (first-use costs
    # paid before the first job).
    warm_up: bool = True
    backend: str = "auto"
    keep_jobs: int = 10000  # finished jobs kept for status/await

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        ints_pos = ("gpu_workers_per_device", "partition_workers", "synthesis_concurrency",
                    "max_gpu_queue_depth", "keep_jobs", "fair_quantum")
        for name in ints_pos:
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"{name} must be an integer >= 1, got {v!r}")
        for name in ("gpu_threads", "synthesis_threads", "srs_memory_budget_bytes",
                     "msm_table_reserve_bytes"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ConfigError(f"{name} must be an integer >= 0, got {v!r}")
        for name in ("verify_after_prove", "g2_on_cpu", "msm_tables", "warm_up"):
            v = getattr(self, name)
            if not isinstance(v, bool):
                raise ConfigError(f"{name} must be a bool, got {v!r}")
        for name in ("gpu_cpus", "synthesis_cpus"):
            pools.check_cpus(name, getattr(self, name))
        if self.evaluate_on not in _EVALUATE_ON:
            raise ConfigError(f"evaluate_on must be one of {_EVALUATE_ON}, got {self.evaluate_on!r}")
        if self.backend not in _BACKENDS:
            raise ConfigError(f"backend must be one of {_BACKENDS}, got {self.backend!r}")
        if isinstance(self.devices, str):
            self.devices = [d.strip() for d in self.devices.split(",") if d.strip()]
        if not isinstance(self.devices, list):
            raise ConfigError(f"devices must be a list of device names, got {self.devices!r}")
        for d in self.devices:
            if not isinstance(d, str) or not (d == "cpu" or _is_cuda_name(d)):
                raise ConfigError(f"devices entry must be 'cpu' or 'cuda:<n>', got {d!r}")
        for name in ("key_cache_dir", "timeline_log_path"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, (str, os.PathLike)):
                raise ConfigError(f"{name} must be a path string, got {v!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        """Build from a flat dict or one with nested TOML sections; unknown keys are errors."""
        flat: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, dict):
                for sub, v in value.items():
                    flat[f"{key}.{sub}"] = v
            else:
                flat[key] = value
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in flat.items():
            name = _ALIASES.get(key, key)
            if name not in names:
                raise ConfigError(f"unknown engine config key {key!r} (value {value!r})")
            if name == "devices" and isinstance(value, list):
                # TOML configs may list GPU ordinals: devices = [0, 1]
                value = [f"cuda:{v}" if isinstance(v, int) else v for v in value]
            kwargs[name] = value
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def synthesis_pool(self) -> pools.CpuPool:
        return pools.CpuPool("synthesis", self.synthesis_threads,
                             pools.parse_cpus(self.synthesis_cpus))

    @property
    def gpu_pool(self) -> pools.CpuPool:
        return pools.CpuPool("gpu", self.gpu_threads, pools.parse_cpus(self.gpu_cpus))

    @property
    def buffered_partitions_bound(self) -> int:
        """Most synthesized partitions alive at once, per the pipeline's structure: those in
        the GPU queue, one per GPU worker, one per partition worker (blocked on a full queue)."""
        n_dev = max(1, len(self.devices))
        return self.max_gpu_queue_depth + n_dev * self.gpu_workers_per_device + self.partition_workers


def _is_cuda_name(d: str) -> bool:
    head, _, idx = d.partition(":")
    return head == "cuda" and idx.isdigit()
