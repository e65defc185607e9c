"""Every knob cuzk reads from the environment, read and checked in one place.

Config files (the daemon's TOML) are read by cuzk.server.config into cuzk.engine.config's
EngineConfig; the environment is read here, nowhere else, into `Settings`. A bad value is a
`ConfigError` naming the variable, the value and what it must be. docs/config.md lists every
variable (the test suite checks that it does).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A setting (config file or environment variable) with a value cuzk cannot use."""


def _read(env: Mapping[str, str], name: str, default: T, parse: Callable[[str], T],
          what: str, ok: Callable[[T], bool] = lambda _v: True) -> T:
    raw = env.get(name, "")
    if raw == "":
        return default
    try:
        value = parse(raw.strip())
    except (TypeError, ValueError, KeyError):  # KeyError: env_bool's table
        raise ConfigError(f"{name} must be {what}, got {raw!r}") from None
    if not ok(value):
        raise ConfigError(f"{name} must be {what}, got {raw!r}")
    return value


def env_int(env: Mapping[str, str], name: str, default: int, lo: int | None = None,
            hi: int | None = None) -> int:
    """An integer variable within [lo, hi] (either bound optional)."""
    what = "an integer" + (f" >= {lo}" if lo is not None else "") + \
        (f" <= {hi}" if hi is not None else "")
    return _read(env, name, default, lambda s: int(s, 0), what,
                 lambda v: (lo is None or v >= lo) and (hi is None or v <= hi))


def env_float(env: Mapping[str, str], name: str, default: float, lo: float, hi: float) -> float:
    return _read(env, name, default, float, f"a number in [{lo}, {hi}]",
                 lambda v: lo <= v <= hi)


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    table = {"1": True, "true": True, "yes": True, "on": True,
             "0": False, "false": False, "no": False, "off": False}
    return _read(env, name, default, lambda s: table[s.lower()], "one of 1/0, true/false")


def env_choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    return _read(env, name, default, str, "one of " + ", ".join(choices),
                 lambda v: v in choices)


def env_str(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get(name, "") or default


@dataclass(frozen=True)
class Settings:
    """The environment's knobs; `doc` metadata names each variable for docs/config.md."""

    backend: str = field(default="auto", metadata={"env": "CUZK_BACKEND"})
    cache_dir: str = field(default="", metadata={"env": "CUZK_CACHE_DIR"})
    address: str = field(default="", metadata={"env": "CUZK_ADDRESS"})
    token: str = field(default="", metadata={"env": "CUZK_TOKEN"})
    node_modules: str = field(default="", metadata={"env": "CUZK_NODE_MODULES"})
    cubin_dir: str = field(default="", metadata={"env": "CUZK_CUDA_CUBIN_DIR"})
    # Filecoin's own variable (rust-fil-proofs reads it too): where the .params/.vk files are.
    parameter_cache: str = field(default="", metadata={"env": "FIL_PROOFS_PARAMETER_CACHE"})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        return cls(
            backend=env_choice(e, "CUZK_BACKEND", "auto", ("auto", "cuda", "cpu", "reference")),
            cache_dir=env_str(e, "CUZK_CACHE_DIR"),
            address=env_str(e, "CUZK_ADDRESS"),
            token=env_str(e, "CUZK_TOKEN"),
            node_modules=env_str(e, "CUZK_NODE_MODULES"),
            cubin_dir=env_str(e, "CUZK_CUDA_CUBIN_DIR"),
            parameter_cache=env_str(e, "FIL_PROOFS_PARAMETER_CACHE"),
        )


def settings() -> Settings:
    """The current environment's settings (read on every call: cheap, and tests change it)."""
    return Settings.from_env()


def env_names() -> list[str]:
    """Every environment variable `Settings` reads."""
    return [f.metadata["env"] for f in fields(Settings) if "env" in f.metadata]


def as_dict(s: Any) -> dict[str, Any]:
    return {f.name: getattr(s, f.name) for f in fields(s)}
