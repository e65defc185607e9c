"""Record mode's result kept on disk: a circuit's R1CS and density, built once per shape.

A circuit's matrices depend only on its structure (for PoRep: nodes, layers, challenges per
partition, tree shape), so they are recorded once and kept as a file in the key cache
directory (`<CUZK_CACHE_DIR or ~/.cache/cuzk>/r1cs/<name>-<hash>.cuzkr1cs`,
cuzk/formats/r1cs_cache.py), memory-mapped by every later load: the CLI and a daemon pay for
recording once per machine, not once per process.

The file name hashes the caller's key (the circuit's parameters) and the code version: a
SHA-256 of the source of every module that decides which constraints a circuit makes (the
constraint system, the gadgets, Poseidon's constants, the hashers, the Merkle shapes) plus the
circuit's own modules. Any edit there makes a new file; a stale one is simply never read.

The stored R1CS already has the input rows bellperson appends (`qap.with_public_rows`), so the
prover and the device backends use the mapped arrays as they are; its density is the one a
parameter file's points are placed by.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.filecoin.cs.record import ConstraintLabels, RecordCS
from cuzk.formats.cache import default_cache_dir, remove_orphans
from cuzk.formats.errors import FormatError
from cuzk.formats.r1cs_cache import load_r1cs, save_r1cs
from cuzk.groth16.qap import with_public_rows
from cuzk.model.density import Density
from cuzk.model.r1cs import R1CS

log = logging.getLogger(__name__)

SUBDIR = "r1cs"
SUFFIX = ".cuzkr1cs"
_FILECOIN = Path(__file__).resolve().parents[1]
# The modules every Filecoin circuit's constraints come from.
_BASE_SOURCES = ("cs", "gadgets", "poseidon", "hashers", "merkle.py")

_lock = threading.Lock()
_loaded: dict[Path, tuple[R1CS, Density]] = {}


@functools.cache
def code_version(extra: tuple[str, ...] = ()) -> str:
    """SHA-256 over the constraint-deciding sources (paths relative to cuzk/filecoin)."""
    h = hashlib.sha256(b"cuzk filecoin record v1")
    for rel in (*_BASE_SOURCES, *extra):
        p = _FILECOIN / rel
        for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
            h.update(f.relative_to(_FILECOIN).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def cache_path(name: str, key: str, sources: Sequence[str] = (),
               cache_dir: str | Path | None = None) -> Path:
    """The file a circuit's matrices are kept in."""
    d = Path(cache_dir) if cache_dir is not None else default_cache_dir() / SUBDIR
    digest = hashlib.sha256(f"{key}|{code_version(tuple(sources))}".encode()).hexdigest()[:20]
    return d / f"{name}-{digest}{SUFFIX}"


def record(circuit: Callable[[Any], Any]) -> tuple[R1CS, Density]:
    """Record the circuit (labels kept) with bellperson's input rows appended, and its density."""
    cs = RecordCS(labels=True)
    circuit(cs)
    r1cs = with_public_rows(cs.r1cs())
    return r1cs, Density.from_r1cs(r1cs)


def cached_r1cs(circuit: Callable[[Any], Any], name: str, key: str, sources: Sequence[str] = (),
                cache_dir: str | Path | None = None) -> tuple[R1CS, Density]:
    """The circuit's R1CS (input rows appended, labels kept) and density: from this process's
    memo, else the cache file (mapped), else recorded and written there. `key` names what the
    structure depends on; `sources` adds the circuit's own modules to the code version."""
    path = cache_path(name, key, sources, cache_dir)
    with _lock:
        hit = _loaded.get(path)
        if hit is not None:
            return hit
        path.parent.mkdir(parents=True, exist_ok=True)
        # one recorder per file across processes: the others wait and map its result
        with open(path.with_name(path.name + ".lock"), "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            got = _load(path)
            if got is None:
                remove_orphans(path)
                r1cs, density = record(circuit)
                extra = {}
                labels = r1cs.labels.get("constraints")
                if isinstance(labels, ConstraintLabels):
                    extra["labels"] = np.frombuffer(labels.to_json(), dtype=np.uint8)
                save_r1cs(path, r1cs, density, meta={"name": name, "key": key}, extra=extra)
                log.info("recorded %s: %d constraints, written to %s", name, r1cs.n_constraints, path)
                del r1cs, density
                got = _load(path)
                if got is None:
                    raise FormatError(str(path), "the R1CS cache just written does not read back")
        _loaded[path] = got
        return got


def _load(path: Path) -> tuple[R1CS, Density] | None:
    if not path.exists():
        return None
    try:
        f = load_r1cs(path)
    except FormatError as exc:
        log.warning("re-recording unreadable R1CS cache %s: %s", path, exc)
        return None
    if f.density is None:
        return None
    if "labels" in f.extra:
        f.r1cs.labels = {"constraints": ConstraintLabels.from_json(f.extra["labels"].tobytes())}
    return f.r1cs, f.density


def forget() -> None:
    """Drop this process's memo (tests; the files stay)."""
    with _lock:
        _loaded.clear()
