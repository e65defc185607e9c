"""Circuits the daemon serves, built from `[srs.circuits.<id>]` config tables.

A table names where the proving key comes from and, optionally, how many partitions a job of
this circuit must have:

    [srs.circuits.porep-mini]
    synthetic = { curve = "bls12_381", constraints = 1024 }   # dev-setup key + witness generator
    partitions = 10            # optional: jobs with another count are rejected

    [srs.circuits.my-circuit]
    key = "/path/to/key"       # a key-cache file; jobs send witnesses
    # zkey = "/path/to/circuit_final.zkey"   # or a snarkjs key
    # wasm = "/path/to/circuit_js/circuit.wasm"  # circom's witness generator: jobs may also
    #                                            # send inputs_json (the circuit's input.json)

    [srs.circuits.porep-32g]
    filecoin = { proof = "porep", sector_size = "32GiB" }   # jobs send one C1 output
    # proof = "winning-post" (CRITICAL priority), "window-post" (a job per partition),
    # "snap-update", "snap-update-poseidon": jobs send a job input (filecoin/job_envelope.py)
    # params = "/var/tmp/filecoin-proof-parameters" (default: FIL_PROOFS_PARAMETER_CACHE)
    # dev_keys = true: development keys when the published .params are absent (NOT FOR PRODUCTION)
    # cache_dir: recorded matrices, development keys, converted params (default CUZK_CACHE_DIR)

The key is wrapped in a loader that records the circuit's curve and variable count once it is
loaded, so the daemon can check witnesses before they reach the engine.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuzk.engine.types import CircuitSpec
from cuzk.model.keys import ProvingKey
from cuzk.server import validation
from cuzk.settings import ConfigError

_TABLE_KEYS = {"synthetic", "filecoin", "key", "zkey", "r1cs", "wasm", "partitions", "description"}


@dataclass
class CircuitInfo:
    circuit_id: str
    spec: CircuitSpec
    partitions: int | None = None  # required partition count, if the circuit fixes one
    takes_inputs: bool = False  # has a witness generator (jobs may send inputs)
    curve: Any = None  # cuzk.curves.Curve, once the key has been seen
    n_vars: int | None = None
    filecoin: dict[str, Any] | None = None  # the `filecoin` table: routes Curio's proof kinds here
    # What its jobs may carry, checked at submit (cuzk.server.validation); None: implied by spec
    schema: validation.InputSchema | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def learn(self, pk: ProvingKey) -> ProvingKey:
        with self._lock:
            self.curve, self.n_vars = pk.curve, pk.n_vars
        return pk


def _load_key_file(path: Path) -> ProvingKey:
    from cuzk.engine.srs import load_key_path  # zkey, bellman params or key-cache file

    return load_key_path(path)


_SYNTHETIC_KEYS = {"curve", "constraints", "log2", "n_public", "mults", "convention",
                   "setup_seed", "cache_dir"}


def _synthetic_spec(where: str, params: dict[str, Any]) -> CircuitSpec:
    """`synthetic = { curve, constraints | log2, n_public, mults, convention, setup_seed,
    cache_dir }` → a cuzk.circuits.synthetic circuit whose jobs send a seed per partition."""
    from cuzk.circuits import synthetic
    from cuzk.groth16.dev_keys import DEFAULT_SETUP_SEED, development_key

    unknown = set(params) - _SYNTHETIC_KEYS
    if unknown:
        raise ConfigError(
            f"{where} synthetic: unknown key(s) {sorted(unknown)} (known: {sorted(_SYNTHETIC_KEYS)})"
        )
    if ("constraints" in params) == ("log2" in params):
        raise ConfigError(f"{where} synthetic = {params!r}: give constraints or log2 (one)")
    kw = {k: params[k] for k in ("n_public", "mults") if k in params}
    curve = params.get("curve", "bls12_381")
    try:
        if "log2" in params:
            circ = synthetic.for_domain(curve, int(params["log2"]), **kw)
        else:
            circ = synthetic.SyntheticCircuit(curve, int(params["constraints"]), **kw)
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{where} synthetic = {params!r}: {exc}") from None
    convention = params.get("convention", "snarkjs")
    if convention not in ("snarkjs", "bellman"):
        raise ConfigError(f"{where} synthetic convention = {convention!r}: 'snarkjs' or 'bellman'")
    cache = params.get("cache_dir")
    cache_dir = Path(cache).expanduser() if cache else None
    setup_seed = str(params.get("setup_seed", DEFAULT_SETUP_SEED))

    def load() -> ProvingKey:  # made or read on first use, not at startup
        return development_key(circ, convention, cache_dir, setup_seed)

    return CircuitSpec(key=load, witness_fn=circ.witness_fn(),
                       description=json.dumps(circ.describe()))


_FILECOIN_KEYS = {"proof", "sector_size", "params", "dev_keys", "cache_dir"}
FILECOIN_PROOFS = ("porep", "winning-post", "window-post", "snap-update", "snap-update-poseidon")


def _filecoin_circuit(proof: str, size: int, cache_dir: Path | None) -> Any:
    """The partition circuit of a proof kind and sector size (PoRepCircuit, PoStCircuit or
    UpdateCircuit: each has parameter_set, keys, witness_fn, split_job, params.describe())."""
    if proof == "porep":
        from cuzk.filecoin.porep.c2 import PoRepCircuit

        return PoRepCircuit.for_sector(size, cache_dir)
    if proof in ("winning-post", "window-post"):
        from cuzk.filecoin.post import PoStType
        from cuzk.filecoin.post.prove import PoStCircuit

        typ = PoStType.WINNING if proof == "winning-post" else PoStType.WINDOW
        return PoStCircuit(typ, size, cache_dir)
    from cuzk.filecoin.update.constants import PUBLISHED_SIZES, RegisteredUpdateProof
    from cuzk.filecoin.update.prove import UpdateCircuit

    return UpdateCircuit(RegisteredUpdateProof(PUBLISHED_SIZES.index(size)),
                         proof == "snap-update-poseidon", cache_dir)


def _filecoin_spec(where: str, params: dict[str, Any]) -> CircuitSpec:
    """`filecoin = { proof, sector_size, params, dev_keys, cache_dir }` → a Filecoin partition
    circuit of a sector size. proof = "porep": a job is one C1 output (checked: its registered
    proof is of this size and its vanilla proofs verify), split into its partitions;
    "winning-post" / "window-post": a job is one partition's PoSt job input, "snap-update" /
    "snap-update-poseidon" a sector update's (cuzk/filecoin/job_envelope.py), its vanilla
    proofs checked at submit; WinningPoSt jobs run at CRITICAL priority whatever the request
    says. Each partition's witness is synthesized natively from the checked input; the key is
    the published .params (in `params`, else FIL_PROOFS_PARAMETER_CACHE) with the matrices
    from the record cache, or, with dev_keys, development keys where the published ones are
    absent."""
    from cuzk.engine.types import Priority
    from cuzk.filecoin.params.files import parameter_files
    from cuzk.filecoin.porep.constants import parse_sector_size

    unknown = set(params) - _FILECOIN_KEYS
    if unknown:
        raise ConfigError(f"{where} filecoin: unknown key(s) {sorted(unknown)} "
                          f"(known: {sorted(_FILECOIN_KEYS)})")
    proof = params.get("proof")
    if proof not in FILECOIN_PROOFS:
        raise ConfigError(f"{where} filecoin proof = {proof!r}: one of "
                          + ", ".join(f'"{p}"' for p in FILECOIN_PROOFS))
    try:
        sector = parse_sector_size(params.get("sector_size", ""))
    except ValueError as exc:
        raise ConfigError(f"{where} filecoin sector_size: {exc}") from None
    dev = params.get("dev_keys", False)
    if not isinstance(dev, bool):
        raise ConfigError(f"{where} filecoin dev_keys = {dev!r}: true or false")
    params_dir = Path(str(params["params"])).expanduser() if params.get("params") else None
    cache_dir = Path(str(params["cache_dir"])).expanduser() if params.get("cache_dir") else None
    circuit = _filecoin_circuit(proof, sector.size, cache_dir)
    files = parameter_files(circuit.parameter_set, params_dir)
    if not dev and not files.exists("params"):
        raise ConfigError(f"{where} filecoin: {files.params.name} is not in {files.directory}; "
                          "fetch the published parameters, point params (or "
                          "FIL_PROOFS_PARAMETER_CACHE) at them, or set dev_keys = true for "
                          "development keys (NOT FOR PRODUCTION)")

    def load() -> ProvingKey:
        return circuit.keys(params_dir, allow_dev=dev).pk

    desc = {"filecoin": proof, "sector_size": sector.name, "circuit": circuit.params.describe(),
            "parameter_files": circuit.parameter_set.stem, "dev_keys": dev}
    floor = Priority.CRITICAL if proof == "winning-post" else Priority.LOW
    return CircuitSpec(key=load, witness_fn=circuit.witness_fn(), description=json.dumps(desc),
                       job_input=circuit.split_job, witness_into=True, min_priority=floor)


def _checked_by(src: Any, r1cs_path: Path, where: str) -> Any:
    """A key source whose key carries the circuit's full R1CS (with C), so every partition's
    witness is checked constraint by constraint before proving. snarkjs zkeys hold only A and B,
    so without this a wrong witness is caught only by verify-after-prove."""

    def load() -> ProvingKey:
        import dataclasses

        from cuzk.formats.r1cs import read_r1cs

        pk = src() if callable(src) else src if isinstance(src, ProvingKey) else _load_key_file(Path(src))
        r1cs = read_r1cs(r1cs_path)
        if (r1cs.curve.name, r1cs.n_vars, r1cs.n_public) != (pk.curve.name, pk.n_vars, pk.n_public):
            raise ConfigError(
                f"{where} r1cs = {str(r1cs_path)!r} is a {r1cs.curve.name} circuit with "
                f"{r1cs.n_vars} variables and {r1cs.n_public} public inputs; the key has "
                f"{pk.curve.name}, {pk.n_vars} and {pk.n_public}"
            )
        return dataclasses.replace(pk, r1cs=r1cs, meta={**pk.meta, "c_from_ab": False})

    return load


def _wasm_witness_fn(wasm: Path, info: CircuitInfo) -> Any:
    """A witness generator over circom's .wasm: a partition's inputs_json is the circuit's
    input.json. One WitnessCalculator per synthesis thread (a wasmtime store is single-threaded);
    compiled modules are cached on disk, so each thread's first call is cheap."""
    from cuzk.circuits.circom_input import InputError
    from cuzk.circuits.circom_witness import WitnessCalculator

    local = threading.local()

    def witness(inputs: Any, index: int) -> Any:
        if isinstance(inputs, bytes | bytearray):
            try:
                inputs = json.loads(inputs)
            except ValueError:
                raise InputError(f"partition {index}: inputs are not JSON") from None
        wc = getattr(local, "wc", None)
        if wc is None:
            wc = local.wc = WitnessCalculator(wasm)
        if info.curve is not None and wc.prime != info.curve.r:
            raise InputError(f"{wasm.name} computes over another field than the key's "
                             f"{info.curve.name}")
        return wc.calculate(inputs, name=f"partition {index} inputs_json")

    return witness


def build(circuit_id: str, table: dict[str, Any]) -> CircuitInfo:
    where = f"[srs.circuits.{circuit_id}]"
    unknown = set(table) - _TABLE_KEYS
    if unknown:
        raise ConfigError(
            f"{where} unknown key(s) {sorted(unknown)} (known: {sorted(_TABLE_KEYS)})"
        )
    sources = [k for k in ("synthetic", "filecoin", "key", "zkey") if k in table]
    if len(sources) != 1:
        raise ConfigError(
            f"{where} needs exactly one of synthetic / filecoin / key / zkey, got {sources or 'none'}"
        )
    parts = table.get("partitions")
    if parts is not None and (not isinstance(parts, int) or isinstance(parts, bool) or parts < 1):
        raise ConfigError(f"{where} partitions = {parts!r}: expected an integer >= 1")

    kind = sources[0]
    if kind == "synthetic":
        params = table["synthetic"]
        if not isinstance(params, dict):
            raise ConfigError(f"{where} synthetic = {params!r}: expected a table")
        spec = _synthetic_spec(where, params)
        info = CircuitInfo(circuit_id, spec, parts, takes_inputs=True,
                           schema=validation.SeedSchema())
    elif kind == "filecoin":
        params = table["filecoin"]
        if not isinstance(params, dict):
            raise ConfigError(f"{where} filecoin = {params!r}: expected a table")
        spec = _filecoin_spec(where, params)
        info = CircuitInfo(circuit_id, spec, parts, takes_inputs=True, filecoin=dict(params),
                           schema=validation.JobInputSchema(
                               "C1 output" if params.get("proof") == "porep" else "job input"))
    else:
        path = Path(str(table[kind])).expanduser()
        if not path.exists():
            raise ConfigError(f"{where} {kind} = {str(table[kind])!r}: file not found")
        info = CircuitInfo(circuit_id, CircuitSpec(key=path), parts,
                           schema=validation.WitnessSchema())
        spec = info.spec

    if "wasm" in table:
        if kind in ("synthetic", "filecoin"):
            raise ConfigError(f"{where} wasm: {kind} circuits make their own witnesses")
        wasm_path = Path(str(table["wasm"])).expanduser()
        if not wasm_path.is_file():
            raise ConfigError(f"{where} wasm = {str(table['wasm'])!r}: file not found")
        spec.witness_fn = _wasm_witness_fn(wasm_path, info)
        info.takes_inputs = True
        info.schema = validation.CircomSchema(wasm_path)

    if "r1cs" in table:
        if kind in ("synthetic", "filecoin"):
            raise ConfigError(f"{where} r1cs: {kind} circuits carry their own constraints")
        r1cs_path = Path(str(table["r1cs"])).expanduser()
        if not r1cs_path.exists():
            raise ConfigError(f"{where} r1cs = {str(table['r1cs'])!r}: file not found")
        spec.key = _checked_by(spec.key, r1cs_path, where)

    # Wrap the key source so the daemon learns the curve and n_vars when it loads.
    src = spec.key
    if isinstance(src, ProvingKey):
        info.learn(src)
    elif callable(src):
        spec.key = lambda: info.learn(src())
    else:
        p = Path(src)
        spec.key = lambda: info.learn(_load_key_file(p))
    spec.description = str(table.get("description", spec.description or kind))
    return info
