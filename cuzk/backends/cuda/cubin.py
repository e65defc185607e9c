"""Prebuilt cubins instead of NVRTC at first use (the ahead-of-time kernel cache).

`scripts/nvrtc_check.py --cubin-dir DIR` compiles every module the backend builds to a cubin for
one real architecture (sm_XY) and writes DIR/<key>.cubin with DIR/<key>.json beside it (name
expression -> lowered, i.e. mangled, kernel name). With env CUZK_CUDA_CUBIN_DIR=DIR the backend
loads a module from there when the key matches, and compiles as usual otherwise.

The key covers everything that changes the binary: the module source (kernels.cu with the
headers' hash, modules.source()), the NVRTC options (modules.options()) without the -I include
paths, which differ between machines, the sorted name expressions and the target arch. Not the
NVRTC version: a cubin from another toolkit that the driver refuses makes the backend warn and
compile instead.

No CuPy here: the key and the file layout are shared with the script and CPU tests.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

_INCLUDE_FLAGS = ("-I", "--include-path", "-include-path")


def portable_options(options: Iterable[str]) -> list[str]:
    """The options without include paths (-I DIR, -IDIR, --include-path[=]DIR)."""
    out: list[str] = []
    skip_next = False
    for o in options:
        if skip_next:
            skip_next = False
            continue
        if o in _INCLUDE_FLAGS:
            skip_next = True  # the path is the next option
            continue
        if o.startswith("-I") or o.startswith(("--include-path=", "-include-path=")):
            continue
        out.append(o)
    return out


def arch_of(compute_capability: str | int) -> str:
    """The target arch, "sm_90", from CuPy's Device().compute_capability ("90")."""
    return f"sm_{compute_capability}"


def cache_key(source: str, options: Iterable[str], names: Iterable[str], arch: str) -> str:
    """sha256 (hex) over the source, the portable options, the sorted names and the arch."""
    blob = json.dumps(
        {
            "source": source,
            "options": portable_options(options),
            "names": sorted(names),
            "arch": arch,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def cache_dir(directory: str) -> Path | None:
    """The cache directory (Tuning.cubin_dir, env CUZK_CUDA_CUBIN_DIR), or None when unset or
    not a directory."""
    if not directory:
        return None
    p = Path(directory)
    return p if p.is_dir() else None


def paths(directory: Path | str, key: str) -> tuple[Path, Path]:
    """(cubin, json) paths of one key."""
    d = Path(directory)
    return d / f"{key}.cubin", d / f"{key}.json"


def lookup(directory: Path | str, key: str, names: Iterable[str]) -> tuple[Path, dict] | None:
    """(cubin path, name expression -> lowered name) when both files exist and the map holds
    every name; None otherwise."""
    cubin, meta = paths(directory, key)
    if not (cubin.is_file() and meta.is_file()):
        return None
    try:
        lowered = json.loads(meta.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(lowered, dict) or any(n not in lowered for n in names):
        return None
    return cubin, lowered


def write(directory: Path | str, key: str, cubin: bytes, lowered: dict[str, str]) -> Path:
    """Write DIR/<key>.cubin and DIR/<key>.json (each through a temporary file and a rename,
    the map last, so a reader never sees a map without its cubin). Returns the cubin path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    cpath, mpath = paths(d, key)
    for path, data in ((cpath, cubin), (mpath, json.dumps(lowered, indent=1).encode())):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return cpath


__all__ = ["arch_of", "cache_dir", "cache_key", "lookup", "portable_options", "write"]
