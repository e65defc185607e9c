"""Development keys (NOT FOR PRODUCTION) written as Filecoin's parameter files.

Where the published files are absent (CI, a laptop), a development setup of the same circuit
(`cuzk.groth16.setup`, toxic waste derived from a seed: anyone can forge proofs for it)
stands in, written in exactly the published format: `<stem>.params` with the points at
infinity left out by the circuit's density, `<stem>.vk`, `<stem>.meta`, so the same loader
reads them. Their digests go into the directory's own `parameters.json` (with a `note` saying
what they are), which the loader checks them against. They live apart from the real files:
`<CUZK_CACHE_DIR or ~/.cache/cuzk>/filecoin-dev-parameters` unless a directory is given.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuzk.filecoin.cs import synthesize_density, synthesize_r1cs
from cuzk.filecoin.params.files import (
    MANIFEST,
    ParameterFiles,
    file_digest,
    parameter_files,
    read_manifest,
    write_meta,
    write_text_atomically,
)
from cuzk.filecoin.params.names import ParameterSet
from cuzk.formats.bellman import write_bellman_params, write_bellman_vk
from cuzk.formats.cache import default_cache_dir
from cuzk.groth16.setup import WARNING, setup
from cuzk.model.density import Density
from cuzk.model.keys import ProvingKey
from cuzk.model.r1cs import R1CS

log = logging.getLogger(__name__)

DEV_SUBDIR = "filecoin-dev-parameters"
NOTE = "cuzk development setup, NOT FOR PRODUCTION"


def development_dir(directory: str | os.PathLike | None = None) -> Path:
    return Path(directory) if directory is not None else default_cache_dir() / DEV_SUBDIR


def write_parameter_files(files: ParameterFiles, pk: ProvingKey, density: Density,
                          circuit_id: str | None = None) -> None:
    """`pk` as `.params` (points at infinity left out per `density`), `.vk` and `.meta`, and
    their digests (and `circuit_id`, when given) in the directory's parameters.json."""
    if files.sector_size is None:
        raise ValueError("the .meta file needs the circuit's sector size")
    files.directory.mkdir(parents=True, exist_ok=True)
    write_bellman_params(pk, files.params, density=density)
    write_bellman_vk(pk, files.vk)
    write_meta(files.meta, files.sector_size)
    manifest = read_manifest(files.directory)
    for p in (files.params, files.vk):
        manifest[p.name] = {"cid": "", "digest": file_digest(p), "sector_size": files.sector_size,
                            "note": NOTE}
        if circuit_id is not None:
            manifest[p.name]["circuit"] = circuit_id
    write_text_atomically(files.directory / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def development_parameters(
    pset: ParameterSet,
    circuit: Callable[[Any], Any],
    directory: str | os.PathLike | None = None,
    seed: str | None = None,
    backend: Any = None,
    r1cs: R1CS | None = None,
    circuit_id: str | None = None,
) -> ParameterFiles:
    """The circuit's development parameter files under `pset`'s names, made once (the
    circuit recorded, unless its `r1cs` is given, a bellman-convention setup from `seed`,
    written) and reused after. `circuit_id` names the exact matrices (a record-cache file):
    files made for other matrices (an older version of the circuit's code) are made again."""
    files = parameter_files(pset, development_dir(directory))
    manifest = read_manifest(files.directory)
    if files.exists() and all(
        p.name in manifest and manifest[p.name].get("circuit") == circuit_id
        for p in (files.params, files.vk)
    ):
        return files
    if r1cs is None:
        _, density = synthesize_density(circuit)
        r1cs = synthesize_r1cs(circuit, labels=False)
        if Density.from_r1cs(r1cs) != density:
            raise AssertionError("shape and record modes disagree on the circuit's density")
    else:
        density = Density.from_r1cs(r1cs)
    log.warning("making development parameters for %s (%s) in %s", pset.stem, NOTE,
                files.directory)
    pk = setup(r1cs, seed or f"cuzk filecoin dev|{pset.stem}", convention="bellman",
               backend=backend)
    pk.meta["setup"] = WARNING
    write_parameter_files(files, pk, density, circuit_id)
    return files


def parameters_or_development(
    pset: ParameterSet,
    circuit: Callable[[Any], Any],
    directory: str | os.PathLike | None = None,
    dev_directory: str | os.PathLike | None = None,
    **kw: Any,
) -> tuple[ParameterFiles, bool]:
    """The published files when the parameter directory has them, else development keys of
    the same circuit standing in; the flag says which (True: development)."""
    real = parameter_files(pset, directory)
    if real.exists():
        return real, False
    return development_parameters(pset, circuit, dev_directory, **kw), True
