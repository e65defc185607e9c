"""Where Filecoin's parameter files are, and reading them as rust-fil-proofs does.

The directory is `FIL_PROOFS_PARAMETER_CACHE` (read through `cuzk.settings`), else
`/var/tmp/filecoin-proof-parameters` (storage-proofs-core settings.rs). In it, a circuit's
files are `<stem>.params` (bellperson's Groth16 parameters), `<stem>.vk` (its verifying key)
and `<stem>.meta` (JSON `{"sector_size":N}`, which rust-fil-proofs writes beside them; the
parameter fetchers do not download it, so it may be absent).

Integrity: a file's digest is BLAKE2b-512 of its bytes, hex, cut to 32 characters, as
parameters.json records it (parameter_cache.rs `verify_production_entry`). The expected digest
comes from the directory's own `parameters.json` when it lists the file (development keys
written by `cuzk.filecoin.params.dev` are recorded there), else from the published manifest
shipped with cuzk. A params file is checked once, when it is converted into cuzk's key cache;
the converted copy is memory-mapped from then on.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cuzk.filecoin.params.names import ParameterSet
from cuzk.formats.bellman import read_bellman_vk, scan_bellman_params
from cuzk.formats.cache import load_proving_key
from cuzk.formats.errors import FormatError
from cuzk.model.density import Density
from cuzk.model.keys import ProvingKey, VerifyingKey
from cuzk.model.r1cs import R1CS
from cuzk.settings import settings

DEFAULT_PARAMETER_DIR = Path("/var/tmp/filecoin-proof-parameters")
MANIFEST = "parameters.json"
EXTENSIONS = ("params", "vk", "meta")


def parameter_dir(directory: str | os.PathLike | None = None) -> Path:
    """`directory`, else FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters."""
    if directory is not None:
        return Path(directory)
    env = settings().parameter_cache
    return Path(env) if env else DEFAULT_PARAMETER_DIR


def describe_dir(directory: Path) -> str:
    """The directory and where it came from (for messages)."""
    env = settings().parameter_cache
    if env and Path(env) == directory:
        return f"{directory} (FIL_PROOFS_PARAMETER_CACHE)"
    if directory == DEFAULT_PARAMETER_DIR and not env:
        return f"{directory} (the default; FIL_PROOFS_PARAMETER_CACHE is unset)"
    return str(directory)


class MissingParameterFile(FileNotFoundError):
    """A parameter file that is not where it is looked for; the message names both."""

    def __init__(self, path: Path, hint: str = "") -> None:
        self.path = path
        msg = f"missing Filecoin parameter file {path.name} in {describe_dir(path.parent)}"
        super().__init__(msg + (f": {hint}" if hint else ""))

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class ParameterFiles:
    """A circuit's files in one directory."""

    directory: Path
    stem: str
    sector_size: int | None = None

    def path(self, ext: str) -> Path:
        return self.directory / f"{self.stem}.{ext}"

    @property
    def params(self) -> Path:
        return self.path("params")

    @property
    def vk(self) -> Path:
        return self.path("vk")

    @property
    def meta(self) -> Path:
        return self.path("meta")

    def exists(self, *exts: str) -> bool:
        return all(self.path(e).is_file() for e in exts or ("params", "vk"))

    def require(self, ext: str) -> Path:
        p = self.path(ext)
        if not p.is_file():
            raise MissingParameterFile(
                p, "fetch the published parameters (`lotus fetch-params <size>`, or "
                "`paramfetch`), point FIL_PROOFS_PARAMETER_CACHE at them, or use "
                "development keys (cuzk.filecoin.params.dev)")
        return p


def parameter_files(pset: ParameterSet | str, directory: str | os.PathLike | None = None,
                    sector_size: int | None = None) -> ParameterFiles:
    """The files of a parameter set (or a stem `v28-...`) in the parameter directory."""
    if isinstance(pset, ParameterSet):
        return ParameterFiles(parameter_dir(directory), pset.stem, pset.sector_size)
    stem = str(pset)
    for ext in EXTENSIONS:
        stem = stem.removesuffix(f".{ext}")
    return ParameterFiles(parameter_dir(directory), stem, sector_size)


# --- .meta ------------------------------------------------------------------------------------


def read_meta(path: str | os.PathLike) -> int:
    """The sector size a .meta file records (rust-fil-proofs CacheEntryMetadata)."""
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise FormatError(name, f"cannot open: {exc.strerror or exc}") from None
    try:
        obj = json.loads(raw)
        size = obj["sector_size"]
    except (ValueError, KeyError, TypeError) as exc:
        raise FormatError(name, f"not a parameter metadata file ({exc})") from None
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise FormatError(name, f"sector_size must be a positive integer, got {size!r}")
    return size


def write_meta(path: str | os.PathLike, sector_size: int) -> None:
    """`{"sector_size":N}`, byte for byte what rust-fil-proofs' serde_json writes."""
    write_text_atomically(Path(path), json.dumps({"sector_size": int(sector_size)}, separators=(",", ":")))


def write_text_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- digests ----------------------------------------------------------------------------------


def file_digest(path: str | os.PathLike, chunk: int = 1 << 24) -> str:
    """BLAKE2b-512 of the file, hex, first 32 characters (parameters.json's `digest`)."""
    h = hashlib.blake2b()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()[:32]


@functools.cache
def published_manifest() -> dict[str, dict]:
    """filecoin-proofs' parameters.json: file name -> {cid, digest, sector_size}."""
    return json.loads((Path(__file__).parent / MANIFEST).read_text())


def read_manifest(directory: Path) -> dict[str, dict]:
    p = directory / MANIFEST
    if not p.is_file():
        return {}
    try:
        obj = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise FormatError(str(p), f"unreadable manifest: {exc}") from None
    if not isinstance(obj, dict):
        raise FormatError(str(p), "a manifest is a JSON object of file name -> entry")
    return obj


def expected_entry(path: Path) -> tuple[dict, str] | None:
    """The manifest entry for a file and where it came from: its directory's parameters.json
    when that lists the file, else the published one, else None."""
    local = read_manifest(path.parent)
    if path.name in local:
        return local[path.name], str(path.parent / MANIFEST)
    if path.name in published_manifest():
        return published_manifest()[path.name], "the published parameters.json"
    return None


def check_digest(path: Path) -> bool:
    """Check a file against its manifest digest; False when no manifest lists it."""
    found = expected_entry(path)
    if found is None:
        return False
    entry, source = found
    got = file_digest(path)
    if got != entry.get("digest"):
        raise FormatError(
            str(path),
            f"digest {got} but {source} records {entry.get('digest')}: the file is damaged, "
            "incomplete or not the one the manifest describes",
        )
    return True


def _check_meta(files: ParameterFiles) -> None:
    if files.sector_size is not None and files.meta.is_file():
        size = read_meta(files.meta)
        if size != files.sector_size:
            raise FormatError(str(files.meta), f"records sector size {size}, the circuit's is "
                              f"{files.sector_size}")


# --- loading ----------------------------------------------------------------------------------


def load_verifying_key(pset: ParameterSet | str, directory: str | os.PathLike | None = None,
                       verify: bool = True) -> VerifyingKey:
    """The `.vk` file alone as a VerifyingKey (digest-checked when a manifest lists it)."""
    files = parameter_files(pset, directory)
    path = files.require("vk")
    if verify:
        check_digest(path)
    _check_meta(files)
    return read_bellman_vk(path)


def load_parameters(
    pset: ParameterSet | str,
    density: Density | None = None,
    directory: str | os.PathLike | None = None,
    *,
    r1cs: R1CS | None = None,
    verify: bool = True,
    cache: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> ProvingKey:
    """The `.params` file as a ProvingKey, its a/b points placed by the circuit's density
    (from its shape: `cuzk.filecoin.cs.synthesize_density`; or taken from `r1cs`, which is
    then also kept on the key for the prover). The first load converts the file into cuzk's
    key cache chunk by chunk (the digest checked on the way when a manifest lists the file);
    later loads map that copy."""
    files = parameter_files(pset, directory)
    path = files.require("params")
    _check_meta(files)
    if density is None:
        if r1cs is None:
            raise ValueError("pass the circuit's density (or its R1CS) to place the a/b points")
        density = Density.from_r1cs(r1cs)
    elif r1cs is not None and Density.from_r1cs(r1cs) != density:
        raise ValueError("the R1CS and the density given describe different circuits")
    pk = load_proving_key(path, "bls12_381", density=density, cache=cache, cache_dir=cache_dir,
                          verify_source=check_digest if verify else None)
    return dataclasses.replace(pk, r1cs=r1cs) if r1cs is not None else pk


def params_verifying_key(pset: ParameterSet | str,
                         directory: str | os.PathLike | None = None) -> VerifyingKey:
    """The verifying key at the head of the `.params` file (its points are not read)."""
    files = parameter_files(pset, directory)
    return scan_bellman_params(files.require("params")).verifying_key()
