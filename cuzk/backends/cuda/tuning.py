"""The CUDA backend's knobs: one validated dataclass, read once from the environment.

Every field has a default that is right for the cards the backend was tuned on; docs/tuning.md
says what each one does and when to change it. Fields with an `env` name are read from that
variable by `Tuning.from_env` (a bad value is a `cuzk.settings.ConfigError` naming it); the
others are set through the constructor or `CudaBackend.retune` by tests and benchmarks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from cuzk.settings import ConfigError, Settings, env_bool, env_float, env_int, env_str

STREAM_ROWS_MIN = 1 << 18  # shrink_stream_chunks stops here


def _env(name: str) -> dict[str, str]:
    return {"env": name}


@dataclass(frozen=True)
class Tuning:
    """The knobs, checked on construction (ConfigError)."""

    # -- what a user sets: concurrency and memory -------------------------------------------
    concurrent: bool = field(default=True, metadata=_env("CUZK_CONCURRENT"))
    max_concurrent: int = field(default=0, metadata=_env("CUZK_MAX_CONCURRENT"))
    msm_stream_rows: int = field(default=1 << 22, metadata=_env("CUZK_MSM_STREAM_ROWS"))
    cubin_dir: str = field(default="", metadata=_env("CUZK_CUDA_CUBIN_DIR"))
    # -- what an expert tunes for a card -----------------------------------------------------
    nvrtc_options: tuple[str, ...] = field(default=(), metadata=_env("CUZK_NVRTC_OPTIONS"))
    msm_chunk: int = field(default=32, metadata=_env("CUZK_MSM_CHUNK"))
    msm_task_chunk: int = field(default=256, metadata=_env("CUZK_MSM_TASK_CHUNK"))
    msm_flat_chunk: int = field(default=128, metadata=_env("CUZK_MSM_FLAT_CHUNK"))
    msm_acc_block: int = field(default=256, metadata=_env("CUZK_MSM_ACC_BLOCK"))
    msm_acc_block_g2: int = field(default=256, metadata=_env("CUZK_MSM_ACC_BLOCK_G2"))
    msm_seg: int = field(default=16, metadata=_env("CUZK_MSM_SEG"))
    msm_scatter_passes: int = field(default=0, metadata=_env("CUZK_MSM_SCATTER_PASSES"))
    msm_mask_min: float = field(default=1 / 64, metadata=_env("CUZK_MSM_MASK_MIN"))
    msm_affine_rounds: int = field(default=4, metadata=_env("CUZK_MSM_AFFINE_ROUNDS"))
    msm_host_finish: frozenset[int] = field(default=frozenset({2}),
                                            metadata=_env("CUZK_MSM_HOST_FINISH"))
    # -- tests and benchmarks (no environment variable) --------------------------------------
    msm_window: int = 0  # a fixed window width for MSMs without tables (0: the cost model)
    msm_dense: float | None = None  # the share of scalars above 1 (None: sampled, G2 only)
    msm_flat: bool | None = None  # flat first-level chunks: None when skewed, or always/never
    msm_affine_min: int = 1 << 24  # heavy-bucket entries before batch-affine rounds pay
    msm_tables: bool = True  # False: MSMs ignore built window tables
    msm_share_sort: bool = True  # g1_msm_tasks sorts the digits once for its base arrays
    ntt_tile_log: int = 11  # elements per NTT tile (log2): 2^11 x 32 B of shared memory
    ntt_cols_log: int = 2  # consecutive elements per tile row after the first pass (log2)
    ntt_threads: int = 256  # threads per NTT tile
    ntt_tile_radix: int = 0  # 2 or 4 (stages one at a time or in pairs); 0: by size

    def __post_init__(self) -> None:
        def bad(name: str, what: str) -> ConfigError:
            return ConfigError(f"tuning {name} must be {what}, got {getattr(self, name)!r}")

        for name, lo, hi in (("max_concurrent", 0, 1 << 10), ("msm_stream_rows", 1, 1 << 31),
                             ("msm_chunk", 2, 1 << 20), ("msm_task_chunk", 0, 1 << 20),
                             ("msm_flat_chunk", 0, 1 << 20), ("msm_acc_block", 1, 1024),
                             ("msm_acc_block_g2", 1, 1024), ("msm_seg", 1, 1 << 16),
                             ("msm_scatter_passes", 0, 1 << 10), ("msm_affine_rounds", 0, 32),
                             ("msm_window", 0, 31), ("msm_affine_min", 0, 1 << 62),
                             ("ntt_tile_log", 1, 14), ("ntt_threads", 1, 1024)):  # fmt: skip
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise bad(name, f"an integer in [{lo}, {hi}]")
        if not 0 <= self.ntt_cols_log <= self.ntt_tile_log:
            raise bad("ntt_cols_log", "in [0, ntt_tile_log]")
        if self.ntt_tile_radix not in (0, 2, 4):
            raise bad("ntt_tile_radix", "0, 2 or 4")
        if not 0.0 <= self.msm_mask_min <= 1.0:
            raise bad("msm_mask_min", "in [0, 1]")
        if self.msm_dense is not None and not 0.0 <= self.msm_dense <= 1.0:
            raise bad("msm_dense", "None or in [0, 1]")
        if not set(self.msm_host_finish) <= {1, 2}:
            raise bad("msm_host_finish", "a set of the groups 1 and 2")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Tuning:
        """The defaults with the environment's CUZK_* variables (os.environ when env is None),
        then `overrides` (field values)."""
        e = os.environ if env is None else env
        d = cls()
        values: dict[str, Any] = dict(
            concurrent=env_bool(e, "CUZK_CONCURRENT", d.concurrent),
            max_concurrent=env_int(e, "CUZK_MAX_CONCURRENT", d.max_concurrent, 0, 1 << 10),
            msm_stream_rows=env_int(e, "CUZK_MSM_STREAM_ROWS", d.msm_stream_rows, 1, 1 << 31),
            cubin_dir=Settings.from_env(e).cubin_dir,
            nvrtc_options=tuple(env_str(e, "CUZK_NVRTC_OPTIONS").split()),
            msm_chunk=env_int(e, "CUZK_MSM_CHUNK", d.msm_chunk, 2, 1 << 20),
            msm_task_chunk=env_int(e, "CUZK_MSM_TASK_CHUNK", d.msm_task_chunk, 0, 1 << 20),
            msm_flat_chunk=env_int(e, "CUZK_MSM_FLAT_CHUNK", d.msm_flat_chunk, 0, 1 << 20),
            msm_acc_block=env_int(e, "CUZK_MSM_ACC_BLOCK", d.msm_acc_block, 1, 1024),
            msm_acc_block_g2=env_int(e, "CUZK_MSM_ACC_BLOCK_G2", d.msm_acc_block_g2, 1, 1024),
            msm_seg=env_int(e, "CUZK_MSM_SEG", d.msm_seg, 1, 1 << 16),
            msm_scatter_passes=env_int(e, "CUZK_MSM_SCATTER_PASSES", d.msm_scatter_passes, 0,
                                       1 << 10),
            msm_mask_min=env_float(e, "CUZK_MSM_MASK_MIN", d.msm_mask_min, 0.0, 1.0),
            msm_affine_rounds=env_int(e, "CUZK_MSM_AFFINE_ROUNDS", d.msm_affine_rounds, 0, 32),
            msm_host_finish=host_finish_groups(
                env_str(e, "CUZK_MSM_HOST_FINISH", "2"), "CUZK_MSM_HOST_FINISH"),
        )  # fmt: skip
        values.update(overrides)
        return cls(**values)


def host_finish_groups(spec: str, name: str = "msm_host_finish") -> frozenset[int]:
    """Comma-separated groups (1, 2) whose MSMs combine their window sums on the host; "0" or
    "" for none."""
    try:
        groups = {int(g) for g in spec.replace(" ", "").split(",") if g not in ("", "0")}
    except ValueError:
        groups = {0}
    if not groups <= {1, 2}:
        raise ConfigError(f"{name} must be groups 1 and/or 2 (\"1,2\", \"2\", \"0\"), "
                          f"got {spec!r}")
    return frozenset(groups)


def env_names() -> list[str]:
    """Every environment variable Tuning.from_env reads."""
    return [f.metadata["env"] for f in fields(Tuning) if "env" in f.metadata]
