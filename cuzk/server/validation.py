"""What a job request may carry, per circuit kind, checked at submit before anything is stored.

Each circuit the daemon serves declares an input schema (circuits.py picks it from the
circuit's table): synthetic circuits take a seed per partition, key/zkey circuits full
witnesses, circuits with a circom .wasm also inputs_json, job-input circuits (Filecoin C1
outputs, vanilla proofs) one job input that the circuit checks and splits. A request that does
not fit is refused with RequestInvalid naming the partition and the field; what passes comes
back as the engine's PartitionInputs, parsed once.

The schemas read plain values (`Partition`), not protobuf messages, so they do not depend on
the wire format's field numbers.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cuzk.engine.errors import is_ours
from cuzk.engine.types import PartitionInput

if TYPE_CHECKING:
    from cuzk.server.circuits import CircuitInfo

log = logging.getLogger("cuzk.server")

SEED_LIMIT = 2**64  # a synthetic circuit's witness is determined by the seed's low 64 bits
# Deepest JSON nesting a request may carry. json's C decoder recurses per level: past the
# recursion limit (which a library may raise, py_ecc to 100000) it overflows the C stack.
MAX_JSON_DEPTH = 256


class RequestInvalid(ValueError):
    """A request that cannot be proved: gRPC INVALID_ARGUMENT. The message names the
    partition and the field when the fault is in one ("partition 3: inputs_json.seed is
    1.5, not an integer"): `message` reads as the field's predicate."""

    def __init__(self, message: str, partition: int | None = None, field: str | None = None) -> None:
        head = f"partition {partition}: " if partition is not None else ""
        super().__init__(f"{head}{field} {message}" if field else f"{head}{message}")
        self.partition = partition
        self.field = field


@dataclass(frozen=True)
class Partition:
    """One partition as a request carries it, whatever the wire format: a full witness
    (canonical Fr, 32 little-endian bytes per value), raw inputs, or an input JSON text."""

    witness: bytes = b""
    inputs: bytes = b""
    inputs_json: str = ""


# Loads the circuit's key (so its curve and variable count are known); raises when it cannot.
KeyLoader = Callable[[], None]


class InputSchema:
    """The inputs one circuit kind takes. `partition` checks and parses one partition;
    `job_input` one job input into the partitions' inputs."""

    kind = "witness"
    takes_job_input = False
    generates_witness = False  # has a witness generator: partitions may send inputs

    def partition(self, info: CircuitInfo, index: int, p: Partition,
                  load_key: KeyLoader) -> PartitionInput:
        if p.witness:
            return PartitionInput(witness=check_witness(info, index, p.witness, load_key))
        if p.inputs or p.inputs_json:
            if not self.generates_witness:
                given = "inputs_json" if p.inputs_json else "inputs"
                raise RequestInvalid(f"circuit {info.circuit_id!r} has no witness generator; "
                                     f"send the full witness, not {given}", index)
            return self.inputs(info, index, p)
        raise RequestInvalid(f"partition {index} is empty: set witness, inputs or inputs_json")

    def inputs(self, info: CircuitInfo, index: int, p: Partition) -> PartitionInput:
        raise NotImplementedError

    def job_input(self, info: CircuitInfo, raw: Any) -> list[Any]:
        raise RequestInvalid(f"circuit {info.circuit_id!r} takes one input per partition, "
                             "not a job input", None, "job_input")


class WitnessSchema(InputSchema):
    """A key or zkey without a witness generator: each partition is a full witness."""


class SeedSchema(InputSchema):
    """A synthetic circuit: each partition is a seed, as inputs_json `{"seed": n}` (or a bare
    n) with 0 <= n < 2^64, or raw bytes (any) that are hashed to one; or a full witness."""

    kind = "seed"
    generates_witness = True
    FIELDS = ("seed",)

    def inputs(self, info: CircuitInfo, index: int, p: Partition) -> PartitionInput:
        if not p.inputs_json:  # any bytes (hashed); their size is the request's bounds' matter
            return PartitionInput(inputs=bytes(p.inputs))
        obj = parse_json(p.inputs_json, index)
        if isinstance(obj, dict):
            check_fields(obj, self.FIELDS, self.FIELDS, index)
            value = obj["seed"]
        else:
            value = obj
        return PartitionInput(inputs={"seed": _seed(value, index)})


def _seed(v: Any, index: int) -> int:
    where = "inputs_json.seed"
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and not math.isfinite(v):
            raise RequestInvalid(f"is {v}, not an integer", index, where)
        raise RequestInvalid(f"is {_type_name(v)} ({_short(v)}), not an integer", index, where)
    if not 0 <= v < SEED_LIMIT:
        raise RequestInvalid(f"is {_short(v)}, out of range: 0 <= seed < 2^64", index, where)
    return v


class CircomSchema(InputSchema):
    """A circuit with circom's witness generator: a partition may send inputs_json (or inputs
    holding the same JSON), the circuit's input.json. Signal names and value counts are checked
    against the .wasm's input signals, values against the field, before the job is accepted."""

    kind = "circom inputs_json"
    generates_witness = True

    def __init__(self, wasm: Path) -> None:
        self.wasm = wasm
        self._lock = threading.Lock()
        self._wc: Any = None  # a WitnessCalculator for its signal table (single-threaded)

    def inputs(self, info: CircuitInfo, index: int, p: Partition) -> PartitionInput:
        from cuzk.circuits.circom_input import InputError, parse_inputs

        field = "inputs_json" if p.inputs_json else "inputs"
        text = p.inputs_json if p.inputs_json else _utf8(p.inputs, index, field)
        obj = parse_json(text, index, field)
        if not isinstance(obj, dict):
            raise RequestInvalid(f"is {_type_name(obj)}, not a JSON object of input signals",
                                 index, field)
        with self._lock:
            wc = self._calculator()
            try:
                values = parse_inputs(obj, wc.prime, field)
            except InputError as exc:
                raise RequestInvalid(str(exc), index) from None
            given = 0
            for name, vals in values.items():
                size = wc.input_signal_size(name)
                if size == 0:
                    raise RequestInvalid(f"has {name!r}, not an input signal of the circuit",
                                         index, field)
                if len(vals) != size:
                    raise RequestInvalid(f"gives {len(vals)} value(s) for signal {name!r}; the "
                                         f"circuit's {name} has {size}", index, field)
                given += size
            if given < wc.n_inputs:
                raise RequestInvalid(f"{field}: {wc._missing(set(values), given)}", index)
        return PartitionInput(inputs=obj)

    def _calculator(self) -> Any:
        if self._wc is None:
            from cuzk.circuits.circom_witness import WitnessCalculator

            self._wc = WitnessCalculator(self.wasm)
        return self._wc


class JobInputSchema(InputSchema):
    """A circuit whose job is one input (a Filecoin C1 output, vanilla proofs with their
    randomness): the circuit's own `job_input` reads and checks it and makes the partitions.
    Its own refusals (cuzk's ValueErrors: C2Error, VanillaProofError...) name what is wrong;
    anything else it raises is a malformed input it did not foresee, refused without the
    Python text (which goes to the log)."""

    kind = "job_input"
    takes_job_input = True

    def __init__(self, what: str = "job input") -> None:
        self.what = what

    def partition(self, info: CircuitInfo, index: int, p: Partition,
                  load_key: KeyLoader) -> PartitionInput:
        raise RequestInvalid(f"circuit {info.circuit_id!r} takes one job input (job_input), "
                             "not partitions")

    def job_input(self, info: CircuitInfo, raw: Any) -> list[Any]:
        """`raw`: the job input's bytes, or the Filecoin fields of a routed Curio request."""
        split = info.spec.job_input
        if split is None:
            raise RequestInvalid(f"circuit {info.circuit_id!r} has no job input reader")
        if isinstance(raw, (bytes, bytearray, memoryview)):
            raw = bytes(raw)
            if json_depth(_json_part(raw)) > MAX_JSON_DEPTH:
                raise RequestInvalid(f"job input refused: the {self.what} nests deeper than "
                                     f"{MAX_JSON_DEPTH} levels")
        try:
            return list(split(raw))
        except json.JSONDecodeError as exc:
            raise RequestInvalid(f"job input refused: the {self.what} is not JSON: {exc}") from None
        except ValueError as exc:
            if not is_ours(exc):  # a library's words (int(), struct...): log them, say malformed
                log.warning("circuit %s: job input refused", info.circuit_id, exc_info=True)
                raise RequestInvalid(f"job input refused: the {self.what} is malformed (it "
                                     "could not be read)") from None
            raise RequestInvalid(f"job input refused: {exc}") from None
        except RecursionError:
            raise RequestInvalid(f"job input refused: the {self.what} is nested too deeply") from None
        except Exception as exc:  # not one the reader foresaw: log it, tell the client plainly
            log.warning("circuit %s: job input refused by %s", info.circuit_id,
                        type(exc).__name__, exc_info=True)
            raise RequestInvalid(f"job input refused: the {self.what} is malformed (it "
                                 "could not be read)") from None


def schema_for(info: CircuitInfo) -> InputSchema:
    """The circuit's declared schema, else the one its spec implies (for circuit kinds that
    do not declare one)."""
    if info.schema is not None:
        return info.schema
    if info.spec.job_input is not None:
        return JobInputSchema()
    if info.takes_inputs:
        return _GeneratorSchema()
    return WitnessSchema()


class _GeneratorSchema(InputSchema):
    """A witness generator whose inputs are not declared: JSON is checked to be JSON."""

    kind = "inputs"
    generates_witness = True

    def inputs(self, info: CircuitInfo, index: int, p: Partition) -> PartitionInput:
        if p.inputs_json:
            return PartitionInput(inputs=parse_json(p.inputs_json, index))
        return PartitionInput(inputs=bytes(p.inputs))


def check_request(info: CircuitInfo, partitions: Sequence[Partition], job_input: bytes,
                  load_key: KeyLoader, max_partitions: int | None = None) -> list[PartitionInput]:
    """The engine's partitions for a request, or RequestInvalid (ResourceBound past
    `max_partitions`). Nothing is stored by this."""
    if job_input:
        parts = check_job_input(info, job_input, len(partitions), max_partitions)
        return [PartitionInput(inputs=x) for x in parts]
    return check_partitions(info, partitions, load_key, max_partitions)


def check_job_input(info: CircuitInfo, raw: Any, n_partitions: int = 0,
                    max_partitions: int | None = None) -> list[Any]:
    """A job input read, checked and split by its circuit: the partitions' inputs."""
    schema = schema_for(info)
    if not schema.takes_job_input:
        schema.job_input(info, raw)  # raises: this circuit takes partitions
    if n_partitions:
        raise RequestInvalid("give job_input or partitions, not both")
    parts = schema.job_input(info, raw)
    _count(info, len(parts), max_partitions, "the job input makes ")
    return parts


def check_partitions(info: CircuitInfo, partitions: Sequence[Partition], load_key: KeyLoader,
                     max_partitions: int | None = None) -> list[PartitionInput]:
    """Each partition checked against the circuit's schema (the count first, so a huge job is
    refused before any of it is parsed)."""
    schema = schema_for(info)
    if schema.takes_job_input:
        raise RequestInvalid(f"circuit {info.circuit_id!r} takes one job input (job_input), "
                             "not partitions")
    n = len(partitions)
    if n == 0:
        raise RequestInvalid("no partitions: send one PartitionInput per partition")
    _count(info, n, max_partitions, "got ")
    return [schema.partition(info, i, p, load_key) for i, p in enumerate(partitions)]


class ResourceBound(Exception):
    """A request over one of the daemon's bounds: gRPC RESOURCE_EXHAUSTED, naming the bound
    (its config key) and its value."""

    def __init__(self, bound: str, value: int, message: str) -> None:
        super().__init__(f"{message} (limit {bound} = {value})")
        self.bound = bound
        self.value = value


def _count(info: CircuitInfo, n: int, max_partitions: int | None, said: str) -> None:
    if info.partitions is not None and n != info.partitions:
        raise RequestInvalid(f"circuit {info.circuit_id!r} takes {info.partitions} partition(s) "
                             f"per job, {said}{n}")
    if max_partitions is not None and n > max_partitions:
        raise ResourceBound("[daemon] max_partitions_per_job", max_partitions,
                            f"a job of {n} partitions is too large; split it")


# --- shared checks --------------------------------------------------------------------------


def parse_json(text: str, index: int, field: str = "inputs_json") -> Any:
    """JSON as a client may send it: standard JSON only (no NaN or Infinity)."""

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    if json_depth(text) > MAX_JSON_DEPTH:
        raise RequestInvalid(f"is not JSON: nested too deeply (more than {MAX_JSON_DEPTH} "
                             "levels)", index, field)
    try:
        return json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise RequestInvalid("is not JSON: nested too deeply", index, field) from None
    except ValueError as exc:
        raise RequestInvalid(f"is not JSON: {exc}", index, field) from None


def json_depth(data: bytes | str) -> int:
    """An upper bound on JSON nesting beyond MAX_JSON_DEPTH (0 when too few brackets to
    reach it): the deepest running count of opening brackets less closing ones, brackets
    inside strings counted too. Linear, in chunks at numpy speed."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= MAX_JSON_DEPTH:
            return 0
        data = data.encode("utf-8", "surrogatepass")
    elif data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return 0
    deepest = level = 0
    chunk = 1 << 20
    for lo in range(0, len(data), chunk):
        a = np.frombuffer(data, np.uint8, min(chunk, len(data) - lo), lo)
        step = ((a == 0x5B) | (a == 0x7B)).astype(np.int32) - ((a == 0x5D) | (a == 0x7D))
        run = np.cumsum(step) + level
        deepest = max(deepest, int(run.max()))
        level = int(run[-1])
    return deepest


def _json_part(raw: bytes) -> bytes:
    """The JSON a job input holds: all of it when it is text, else its first line (a JSON
    header before binary data, as the PoSt and update job inputs are)."""
    try:
        raw.decode("utf-8")
        return raw
    except UnicodeDecodeError:
        return raw.split(b"\n", 1)[0]


def check_fields(obj: dict[str, Any], known: Sequence[str], required: Sequence[str],
                 index: int, field: str = "inputs_json") -> None:
    unknown = sorted(set(obj) - set(known))
    if unknown:
        raise RequestInvalid(f"has unknown field {unknown[0]!r} (known: {', '.join(known)})",
                             index, field)
    missing = [k for k in required if k not in obj]
    if missing:
        raise RequestInvalid(f"lacks field {missing[0]!r}", index, field)


def check_witness(info: CircuitInfo, i: int, raw: bytes, load_key: KeyLoader) -> np.ndarray:
    """A full witness: (n_vars, 4) canonical Fr of the circuit's curve, witness[0] = 1."""
    if len(raw) % 32:
        raise RequestInvalid(f"is {len(raw)} bytes, not a multiple of 32 (each Fr value is 4 "
                             "little-endian uint64 limbs)", i, "witness")
    if info.n_vars is None:
        load_key()  # the variable count and curve come from the key (jobs need it anyway)
    n = len(raw) // 32
    if info.n_vars is not None and n != info.n_vars:
        raise RequestInvalid(f"has {n} values, circuit {info.circuit_id!r} has {info.n_vars} "
                             "variables", i, "witness")
    w = np.frombuffer(raw, dtype="<u8").reshape(n, 4)
    if n and (w[0, 0] != 1 or w[0, 1:].any()):
        raise RequestInvalid("must be 1 (the constant wire)", i, "witness[0]")
    if info.curve is not None:
        r = info.curve.r
        r_limbs = np.array([(r >> (64 * k)) & (2**64 - 1) for k in range(4)], dtype=np.uint64)
        # Lexicographic compare from the top limb: value >= r anywhere is non-canonical.
        ge = np.zeros(n, bool)
        eq = np.ones(n, bool)
        for k in (3, 2, 1, 0):
            ge |= eq & (w[:, k] > r_limbs[k])
            eq &= w[:, k] == r_limbs[k]
        ge |= eq
        if ge.any():
            j = int(np.argmax(ge))
            raise RequestInvalid(f"value {j} is not below the field modulus (send canonical Fr "
                                 "values, not Montgomery form)", i, "witness")
    return w


def _utf8(raw: bytes, index: int, field: str) -> str:
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise RequestInvalid("is not UTF-8 JSON", index, field) from None


def _type_name(v: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(v), type(v).__name__)


def _short(v: Any) -> str:
    s = json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else str(v)
    return s if len(s) <= 40 else s[:37] + "..."
