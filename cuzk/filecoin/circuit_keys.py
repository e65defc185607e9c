"""One Filecoin partition circuit's matrices, parameter files and keys, for every prover
(porep/c2.py, post/prove.py, update/prove.py).

    circuit.r1cs()                    # recorded once per shape (record cache), mapped after
    circuit.keys(params_dir)          # the published .params/.vk by their v28 names, else
                                      # development keys of this circuit, made once
    circuit.verifying_key(params_dir) # the .vk alone, and whether it is a development one
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.filecoin.cs import synthesize_witness
from cuzk.filecoin.cs.record_cache import SUBDIR, cache_path, cached_r1cs
from cuzk.filecoin.params.dev import DEV_SUBDIR, NOTE, development_parameters
from cuzk.filecoin.params.files import (
    ParameterFiles,
    load_parameters,
    load_verifying_key,
    parameter_files,
)
from cuzk.filecoin.params.names import ParameterSet
from cuzk.formats.errors import FormatError
from cuzk.formats.proof_bytes import decode_proof
from cuzk.groth16.verifier import explain
from cuzk.model.density import Density
from cuzk.model.keys import ProvingKey, VerifyingKey
from cuzk.model.r1cs import R1CS

log = logging.getLogger(__name__)

__all__ = ["CircuitKeys", "Keys"]


@dataclass
class Keys:
    """A circuit's keys: the proving key (its R1CS attached, for constraint evaluation), the
    verifying key, where they came from and whether they are development keys."""

    pk: ProvingKey
    vk: VerifyingKey
    files: ParameterFiles
    development: bool

    def describe(self) -> str:
        what = f"DEVELOPMENT keys ({NOTE})" if self.development else "published parameters"
        return f"{what}: {self.files.params}"


class CircuitKeys:
    """A partition circuit known by its name, what its structure depends on (`key`), the
    modules its constraints come from (`sources`, relative to cuzk/filecoin), its blank form
    and its published parameter set. `cache_dir` (default CUZK_CACHE_DIR, else ~/.cache/cuzk)
    holds the recorded matrices, development keys and converted parameter files."""

    def __init__(self, name: str, key: str, sources: tuple[str, ...],
                 blank: Callable[[], Callable[[Any], Any]], parameter_set: ParameterSet,
                 n_public: int, cache_dir: str | os.PathLike | None = None) -> None:
        self.name = name
        self.key = key
        self.sources = sources
        self._blank = blank
        self.parameter_set = parameter_set
        self.n_public = n_public
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._keys: dict[tuple[str, bool], Keys] = {}

    def _sub(self, name: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / name

    def blank(self) -> Callable[[Any], Any]:
        return self._blank()

    def r1cs(self) -> tuple[R1CS, Density]:
        return cached_r1cs(self.blank(), self.name, self.key, self.sources, self._sub(SUBDIR))

    @property
    def r1cs_id(self) -> str:
        """The record-cache file's name: a new code version makes new development keys."""
        return cache_path(self.name, self.key, self.sources, self._sub(SUBDIR)).name

    @property
    def n_inputs(self) -> int:
        """ONE and the public inputs."""
        return self.n_public + 1

    def keys(self, params_dir: str | os.PathLike | None = None, allow_dev: bool = True,
             backend: Any = None) -> Keys:
        """The published files when the parameter directory (FIL_PROOFS_PARAMETER_CACHE) has
        them, else, with allow_dev, development keys of this circuit (made once, then mapped)."""
        real = parameter_files(self.parameter_set, params_dir)
        dev = not real.exists("params")
        cache_key = (str(real.directory), dev)
        if cache_key in self._keys:
            return self._keys[cache_key]
        r1cs, density = self.r1cs()
        if dev:
            if not allow_dev:
                real.require("params")  # raises MissingParameterFile naming the file
            files = development_parameters(self.parameter_set, self.blank(), self._sub(DEV_SUBDIR),
                                           backend=backend, r1cs=r1cs, circuit_id=self.r1cs_id)
            log.warning("proving %s with DEVELOPMENT keys (%s): proofs will not verify on chain",
                        self.name, NOTE)
        else:
            files = real
        pk = load_parameters(self.parameter_set, density, files.directory, cache_dir=self.cache_dir)
        pk = dataclasses.replace(pk, r1cs=r1cs, meta={**pk.meta, "development": dev})
        keys = Keys(pk, load_verifying_key(self.parameter_set, files.directory), files, dev)
        self._keys[cache_key] = keys
        return keys

    def verifying_key(self, params_dir: str | os.PathLike | None = None,
                      ) -> tuple[VerifyingKey, bool]:
        """The `.vk` alone (the published one, else the development one, made if absent)."""
        real = parameter_files(self.parameter_set, params_dir)
        if real.exists("vk"):
            return load_verifying_key(self.parameter_set, real.directory), False
        files = development_parameters(self.parameter_set, self.blank(), self._sub(DEV_SUBDIR),
                                       r1cs=self.r1cs()[0], circuit_id=self.r1cs_id)
        return load_verifying_key(self.parameter_set, files.directory), True

    def witness_of(self, circuit: Callable[[Any], Any], buf: np.ndarray | None = None) -> np.ndarray:
        """A valued circuit's assignment [ONE, inputs, aux] (canonical limbs), into `buf` when
        given (the engine's partition buffer), else one allocated at its final size."""
        if buf is None:
            buf = np.empty((self.r1cs()[0].n_vars, 4), dtype=np.uint64)
        return synthesize_witness(circuit, out=buf, n_inputs=self.n_inputs)


def first_failing_partition(proof: bytes, n: int, public_inputs: Callable[[int], list[int]],
                            vk: VerifyingKey) -> str | None:
    """None when each of the `n` equal slices of `proof` (one partition's 192 bytes each; the
    caller has checked the length) verifies with `public_inputs(k)`, else why the first does
    not, naming its partition."""
    size = len(proof) // n
    for k in range(n):
        try:
            p = decode_proof("bls12_381", proof[k * size : (k + 1) * size], "proof")
        except FormatError as exc:
            return f"partition {k}: not a proof: {exc}"
        why = explain(vk, public_inputs(k), p)
        if why is not None:
            return f"partition {k}: {why}"
    return None
