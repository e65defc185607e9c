"""A recorded R1CS and its density, kept on disk and memory-mapped on load.

The file is the key cache's container (cuzk/formats/cache.py: prefix, JSON header, 64-byte
aligned raw arrays) with its own magic: the CSR arrays `r1cs.<a|b|c>.<indptr|indices|values>`
exactly as the engine consumes them, the density's two masks (`density.a`, `density.b`, one
byte per variable) and any extra arrays the writer adds (a circuit's constraint labels). A
load maps the file once: the matrices are read-only views, paged in as they are used, shared
by every process that maps the same file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cuzk.curves import get_curve
from cuzk.formats.binfile import PathLike
from cuzk.formats.cache import map_array_file, r1cs_arrays, r1cs_from_arrays, write_array_file
from cuzk.formats.errors import FormatError
from cuzk.model.density import Density
from cuzk.model.r1cs import R1CS

MAGIC = b"CUZKR1CS"
VERSION = 1


@dataclass
class R1CSFile:
    """What a cache file holds: the R1CS, its density (None if not stored), the writer's meta
    (JSON) and its extra arrays."""

    r1cs: R1CS
    density: Density | None
    meta: dict = field(default_factory=dict)
    extra: dict[str, np.ndarray] = field(default_factory=dict)


def save_r1cs(path: PathLike, r1cs: R1CS, density: Density | None = None,
              meta: dict | None = None, extra: dict[str, np.ndarray] | None = None) -> None:
    """Write the file atomically (a reader never sees half of it)."""
    info, arrays = r1cs_arrays(r1cs, labels=False)
    header = {"format": "cuzk-r1cs-cache", "curve": r1cs.curve.name, "r1cs": info,
              "meta": meta or {}, "density_inputs": None, "extra": sorted(extra or {})}
    if density is not None:
        if density.n_vars != r1cs.n_vars:
            raise ValueError(f"a density of {density.n_vars} variables for an R1CS of {r1cs.n_vars}")
        header["density_inputs"] = density.n_inputs
        arrays["density.a"] = density.a.view(np.uint8)
        arrays["density.b"] = density.b.view(np.uint8)
    for k, v in (extra or {}).items():
        arrays[f"extra.{k}"] = v
    write_array_file(path, header, arrays, MAGIC, VERSION)


def load_r1cs(path: PathLike, mmap: bool = True) -> R1CSFile:
    f = map_array_file(path, MAGIC, VERSION, what="cuzk R1CS cache", mmap=mmap)
    h = f.header
    try:
        curve = get_curve(h["curve"])
        r1cs = r1cs_from_arrays(h["r1cs"], curve, f.array)
        n_in = h.get("density_inputs")
        density = None
        if n_in is not None:
            density = Density(f.array("density.a").view(np.bool_), f.array("density.b").view(np.bool_),
                              int(n_in))
        extra = {k: f.array(f"extra.{k}") for k in h.get("extra", [])}
        meta = dict(h.get("meta") or {})
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f.name, f"unreadable R1CS cache: {exc}", "header") from None
    if r1cs is None:
        raise FormatError(f.name, "no R1CS in the file", "header")
    if density is not None and density.n_vars != r1cs.n_vars:
        raise FormatError(f.name, f"density of {density.n_vars} variables, R1CS of {r1cs.n_vars}")
    return R1CSFile(r1cs, density, meta, extra)
