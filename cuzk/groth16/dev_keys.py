"""Development keys (NOT FOR PRODUCTION) for circuits that build their own constraints, made
once per circuit shape and kept in the key cache.

A circuit here is anything with an `r1cs` and a `cache_name(convention, setup_seed)` that
changes whenever the constraints do (cuzk.circuits.synthetic.SyntheticCircuit). The key is made
by `setup.setup` from `setup_seed`, written as a key-cache file under `cache_dir` (default
<CUZK_CACHE_DIR or ~/.cache/cuzk>/synthetic) and memory-mapped from there on later runs.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

from cuzk.formats.cache import default_cache_dir, load_key_cache, save_key_cache
from cuzk.formats.errors import FormatError
from cuzk.groth16.setup import setup
from cuzk.identity_cache import IdentityCache
from cuzk.model.keys import ProvingKey
from cuzk.model.r1cs import R1CS

DEFAULT_SETUP_SEED = "cuzk-synthetic"
_SUBDIR = "synthetic"  # where the first such circuit's keys went; kept so caches stay valid


class KeyedCircuit(Protocol):
    @property
    def r1cs(self) -> R1CS: ...

    def cache_name(self, convention: str, setup_seed: str) -> str: ...


# A circuit object's keys by (convention, setup_seed), for as long as the circuit lives.
_made: IdentityCache[dict[tuple[str, str], ProvingKey]] = IdentityCache()
_lock = threading.Lock()


def development_key_path(circuit: KeyedCircuit, convention: str = "snarkjs",
                         cache_dir: str | Path | None = None,
                         setup_seed: str = DEFAULT_SETUP_SEED) -> Path:
    """The key-cache file `development_key` reads or writes."""
    d = Path(cache_dir) if cache_dir is not None else default_cache_dir() / _SUBDIR
    return d / f"{circuit.cache_name(convention, setup_seed)}.cuzkkey"


def development_key(circuit: KeyedCircuit, convention: str = "snarkjs",
                    cache_dir: str | Path | None = None, setup_seed: str = DEFAULT_SETUP_SEED,
                    backend: Any = None) -> ProvingKey:
    """The circuit's development-setup key (NOT for production): from the circuit's memo, else
    the cache file (memory-mapped), else made by `setup` and written there."""
    with _lock:
        memo = _made.get(circuit)
        if memo is None:
            memo = _made.put(circuit, {})
    key = (convention, setup_seed)
    if key in memo:
        return memo[key]
    path = development_key_path(circuit, convention, cache_dir, setup_seed)
    pk = None
    if path.exists():
        try:
            pk = load_key_cache(path)
        except FormatError:
            pk = None  # unreadable: make it again
    if pk is None:
        pk = setup(circuit.r1cs, setup_seed, convention=convention, backend=backend)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_key_cache(pk, path)
    memo[key] = pk
    return pk
