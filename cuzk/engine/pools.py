"""The engine's two CPU thread pools: synthesis (partition workers and their native calls) and
GPU-side (GPU workers, the kernel backend of a CPU device, the CPU G2 MSM), each a thread count
for native calls and an optional core list.

A pool's workers pin themselves to its cores as they start (os.sched_setaffinity on the calling
thread, Linux); the native (OpenMP) threads a worker's calls start inherit that mask, so neither
pool's work can take the other's cores. Threads 0 means one per core of the pool's list, or the
native default (every core) without one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from cuzk.settings import ConfigError


def parse_cpus(text: str) -> tuple[int, ...]:
    """Cores from a list such as "0-11" or "0-3,8,10-11" (sorted, without repeats); "" is
    none (no pinning). ValueError on a malformed list."""
    text = text.strip()
    if not text:
        return ()
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        if not lo.strip().isdigit() or (sep and not hi.strip().isdigit()):
            raise ValueError(f"{part!r} is not a core or a range of cores (such as 0-11)")
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a:
            raise ValueError(f"range {part!r} runs backwards")
        out.update(range(a, b + 1))
    return tuple(sorted(out))


def format_cpus(cpus: tuple[int, ...] | frozenset[int] | set[int]) -> str:
    """The shortest list parse_cpus reads back ("0-3,8"); "" for none."""
    s = sorted(cpus)
    runs: list[str] = []
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        runs.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(runs)


def available_cpus() -> frozenset[int] | None:
    """Cores this process may run on (None where the OS cannot say)."""
    get = getattr(os, "sched_getaffinity", None)
    return frozenset(get(0)) if get is not None else None


def valid_cpus(text: str) -> tuple[int, ...]:
    """parse_cpus, every core one this process may use; ValueError (one line) if not."""
    cpus = parse_cpus(text)
    avail = available_cpus()
    if cpus and avail is not None:
        missing = [c for c in cpus if c not in avail]
        if missing:
            raise ValueError(f"core(s) {format_cpus(set(missing))} not available (this "
                             f"process may use {format_cpus(avail)})")
    if cpus and not hasattr(os, "sched_setaffinity"):
        raise ValueError("core lists need Linux (sched_setaffinity)")
    return cpus


def check_cpus(name: str, text: str) -> tuple[int, ...]:
    """valid_cpus with a one-line ConfigError naming the setting."""
    if not isinstance(text, str):
        raise ConfigError(f"{name} must be a core list string such as \"0-11\", got {text!r}")
    try:
        return valid_cpus(text)
    except ValueError as exc:
        raise ConfigError(f"{name} = {text!r}: {exc}") from None


@dataclass(frozen=True)
class CpuPool:
    name: str  # "synthesis" | "gpu"
    threads: int  # native threads per call as configured (0: see `native_threads`)
    cpus: tuple[int, ...] = ()  # () = not pinned

    @property
    def native_threads(self) -> int:
        """The thread count native calls get: as configured, else one per pinned core, else
        0 (the native default: every core)."""
        return self.threads or len(self.cpus)

    def pin(self) -> None:
        """Pin the calling thread (and the native threads it starts from now on) to the
        pool's cores; nothing without a core list."""
        if self.cpus:
            os.sched_setaffinity(0, self.cpus)

    def describe(self) -> str:
        n = self.native_threads
        threads = f"{n} thread(s)" if n else "all cores' threads"
        cores = f"cores {format_cpus(self.cpus)}" if self.cpus else "any core"
        return f"{self.name}: {threads} per native call, {cores}"
