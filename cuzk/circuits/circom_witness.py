"""circom's witness generator (the `<circuit>_js/<circuit>.wasm` circom --wasm writes) run in
wasmtime: input JSON in, the witness out as canonical Fr limbs, with no Node.js.

The module's protocol (circom 2): `init`, then per input value its 32-bit words through
`writeSharedRWMemory` and `setInputSignal(hash_hi, hash_lo, index)` (the hash is FNV-1a of the
signal name); the circuit runs as the last input lands. `getWitness(i)` then leaves witness value
i in the shared memory, read back word by word (least significant first). A failed `assert` or
`===` calls the imported `exceptionHandler` after `printErrorMessage` has passed circom's
"Error in template ... line: ..." lines.

Python calls into WebAssembly cost about a microsecond each, so the per-value word loops run in
a small helper module of our own, linked against the circuit's exports: setting the inputs and
reading the whole witness are a few calls, not one per 32-bit word. Compiled modules are kept in
the cuzk cache folder (keyed by the wasm's hash and the wasmtime version), so a circuit is
compiled once per machine.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.circuits.circom_input import InputError, fnv1a64, parse_inputs

__all__ = ["InputError", "WitnessCalculator", "WitnessError", "calculate_witness"]

# exceptionHandler codes of circom's runtime
_EXCEPTIONS = {
    1: "signal not found",
    2: "too many signals set",
    3: "signal already set",
    4: "assert failed",
    5: "not enough memory",
    6: "input signal array access exceeds the size",
    7: "out of bounds array access",
}

# The helper module: bulk copies between its own memory and the circuit's shared words.
_HELPER_WAT = """
(module
  (import "c" "writeSharedRWMemory" (func $write (param i32 i32)))
  (import "c" "readSharedRWMemory" (func $read (param i32) (result i32)))
  (import "c" "setInputSignal" (func $set (param i32 i32 i32)))
  (import "c" "getWitness" (func $get (param i32)))
  (memory (export "mem") 1)
  (func $fit (param $bytes i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $bytes) (i32.const 65535)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (drop (memory.grow (i32.sub (local.get $pages) (memory.size)))))))
  (func (export "reserve") (param $bytes i32) (call $fit (local.get $bytes)))
  ;; values [0, count) of one input signal, n32 words each, from mem[0..]
  (func (export "set_values") (param $hi i32) (param $lo i32) (param $count i32) (param $n32 i32)
    (local $i i32) (local $j i32) (local $p i32)
    (block $done (loop $each
      (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
      (local.set $j (i32.const 0))
      (block $w (loop $word
        (br_if $w (i32.ge_u (local.get $j) (local.get $n32)))
        (call $write (local.get $j) (i32.load (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $word)))
      (call $set (local.get $hi) (local.get $lo) (local.get $i))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each))))
  ;; witness values [from, from + count) into mem[0..], n32 words each
  (func (export "get_values") (param $from i32) (param $count i32) (param $n32 i32)
    (local $i i32) (local $j i32) (local $p i32)
    (call $fit (i32.mul (i32.mul (local.get $count) (local.get $n32)) (i32.const 4)))
    (block $done (loop $each
      (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
      (call $get (i32.add (local.get $from) (local.get $i)))
      (local.set $j (i32.const 0))
      (block $w (loop $word
        (br_if $w (i32.ge_u (local.get $j) (local.get $n32)))
        (i32.store (local.get $p) (call $read (local.get $j)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $word)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each))))
)
"""

_CHUNK = 1 << 18  # witness values per helper call (8 MiB of helper memory)


class _Abort(Exception):
    """Raised by the exceptionHandler import to unwind out of the generator."""


class WitnessError(InputError):
    """The input does not satisfy the circuit (a failed assertion or constraint), or the
    generator failed; carries circom's own lines."""


def _cache_dir() -> Path:
    from cuzk.settings import settings

    d = settings().cache_dir
    return (Path(d) if d else Path.home() / ".cache" / "cuzk") / "wasm"


def _load_module(engine: Any, wasm: bytes) -> Any:
    import wasmtime

    version = getattr(wasmtime, "__version__", "") or _wasmtime_version()
    key = hashlib.sha256(wasm + version.encode()).hexdigest()[:32]
    path = _cache_dir() / f"{key}.cwasm"
    if path.exists():
        try:
            return wasmtime.Module.deserialize_file(engine, str(path))
        except Exception:  # noqa: BLE001  an unreadable or stale cache entry: compile again
            pass
    module = wasmtime.Module(engine, wasm)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(module.serialize())
        tmp.replace(path)
    except OSError:
        pass  # a read-only home: compile every time
    return module


def _wasmtime_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wasmtime")
    except PackageNotFoundError:
        return "unknown"


def _sym_path(wasm_path: Path) -> Path:
    # circom -o OUT writes OUT/<c>.sym beside OUT/<c>_js/<c>.wasm
    return wasm_path.parent.parent / (wasm_path.stem + ".sym")


@dataclass
class _Errors:
    lines: list[str]
    code: int | None = None


class WitnessCalculator:
    """One circuit's witness generator, compiled once; `calculate` may be called many times
    (each call starts from `init`). Not thread-safe: one calculator per thread."""

    def __init__(self, wasm_path: str | os.PathLike[str]) -> None:
        import wasmtime

        self.path = Path(wasm_path)
        try:
            wasm = self.path.read_bytes()
        except OSError as exc:
            raise InputError(f"{self.path}: cannot open: {exc.strerror or exc}") from None
        if wasm[:4] != b"\0asm":
            raise InputError(f"{self.path}: not a WebAssembly module")
        self._engine = wasmtime.Engine()
        self._store = wasmtime.Store(self._engine)
        try:
            module = _load_module(self._engine, wasm)
        except wasmtime.WasmtimeError as exc:
            raise InputError(f"{self.path}: not a valid WebAssembly module: {exc}") from None
        self._errors = _Errors([])
        self._message: list[str] = []
        imports = []
        for imp in module.imports:
            if imp.module != "runtime":
                raise InputError(
                    f"{self.path}: imports {imp.module}.{imp.name}; not a circom 2 witness generator"
                )
            imports.append(wasmtime.Func(self._store, imp.type, self._host(imp.name)))
        self._inst = wasmtime.Instance(self._store, module, imports)
        ex = self._inst.exports(self._store)
        self._ex = ex
        needed = ("init", "setInputSignal", "getInputSignalSize", "getWitness", "getWitnessSize",
                  "getFieldNumLen32", "getRawPrime", "readSharedRWMemory", "writeSharedRWMemory",
                  "getInputSize", "getMessageChar")
        missing = [n for n in needed if n not in ex]
        if missing:
            raise InputError(f"{self.path}: not a circom 2 witness generator (no {missing[0]})")
        self.n32 = int(ex["getFieldNumLen32"](self._store))
        ex["getRawPrime"](self._store)
        self.prime = self._read_shared()
        self.n_witness = int(ex["getWitnessSize"](self._store))
        self.n_inputs = int(ex["getInputSize"](self._store))
        helper = wasmtime.Module(self._engine, _HELPER_WAT)
        self._helper = wasmtime.Instance(self._store, helper, [
            ex["writeSharedRWMemory"], ex["readSharedRWMemory"], ex["setInputSignal"],
            ex["getWitness"]])
        hx = self._helper.exports(self._store)
        self._mem, self._set, self._get = hx["mem"], hx["set_values"], hx["get_values"]
        self._reserve = hx["reserve"]

    # -- imports the generator calls ---------------------------------------------------------

    def _host(self, name: str) -> Any:
        def exception_handler(code: int) -> None:
            self._errors.code = int(code)
            raise _Abort(_EXCEPTIONS.get(int(code), f"error code {code}"))

        def print_error_message() -> None:
            self._errors.lines.append(self._take_message())

        def write_buffer_message() -> None:  # circom's log(): consumed, not printed
            msg = self._take_message()
            if msg != "\n":
                self._message.append(msg)

        def show_shared_rw_memory() -> None:
            self._message.append(str(self._read_shared()))

        table = {"exceptionHandler": exception_handler, "printErrorMessage": print_error_message,
                 "writeBufferMessage": write_buffer_message,
                 "showSharedRWMemory": show_shared_rw_memory}
        if name not in table:
            raise InputError(f"{self.path}: imports runtime.{name}, unknown to this runtime")
        return table[name]

    def _take_message(self) -> str:
        get = self._ex["getMessageChar"]
        chars = []
        while (c := int(get(self._store))) != 0:
            chars.append(chr(c))
        return "".join(chars)

    def _read_shared(self) -> int:
        rd = self._ex["readSharedRWMemory"]
        return sum((int(rd(self._store, j)) & 0xFFFFFFFF) << (32 * j) for j in range(self.n32))

    # -- the witness --------------------------------------------------------------------------

    def input_signal_size(self, name: str) -> int:
        """Number of values of input signal `name` of main, or 0 when it is not one (the
        generator answers -1 or 0 for a name it lacks, depending on its hash table slot)."""
        h = fnv1a64(name)
        return max(0, int(self._ex["getInputSignalSize"](self._store, h >> 32, h & 0xFFFFFFFF)))

    def calculate(self, inputs: Any, name: str = "input") -> np.ndarray:
        """The witness (n_witness, 4) canonical uint64 limbs for a parsed input JSON object.
        Raises InputError naming the signal for an unknown, short, long or missing input, and
        WitnessError with circom's lines when the input breaks an assertion."""
        import wasmtime

        values = parse_inputs(inputs, self.prime, name)
        self._errors = _Errors([])
        self._message = []
        self._ex["init"](self._store, 0)
        sizes = {}
        for key, vals in values.items():
            size = self.input_signal_size(key)
            if size == 0:
                raise InputError(f"{name}: signal {key!r} is not an input of the circuit")
            if len(vals) != size:
                few = "not enough" if len(vals) < size else "too many"
                raise InputError(
                    f"{name}: {few} values for input signal {key!r}: {len(vals)} given, "
                    f"the circuit's {key} has {size}"
                )
            sizes[key] = size
        given = sum(sizes.values())
        if given < self.n_inputs:
            raise InputError(f"{name}: {self._missing(set(sizes), given)}")
        try:
            for key, vals in values.items():
                h = fnv1a64(key)
                words = b"".join(v.to_bytes(4 * self.n32, "little") for v in vals)
                self._reserve(self._store, len(words))
                self._mem.write(self._store, words, 0)
                self._set(self._store, h >> 32, h & 0xFFFFFFFF, len(vals), self.n32)
            out = np.empty((self.n_witness, self.n32 // 2), dtype=np.uint64)
            for lo in range(0, self.n_witness, _CHUNK):
                count = min(_CHUNK, self.n_witness - lo)
                self._get(self._store, lo, count, self.n32)
                raw = self._mem.read(self._store, 0, count * 4 * self.n32)
                out[lo : lo + count] = np.frombuffer(raw, dtype="<u8").reshape(count, -1)
        except (_Abort, wasmtime.Trap, wasmtime.WasmtimeError) as exc:
            raise self._failure(exc, name) from None
        return out

    def _missing(self, given: set[str], n_given: int) -> str:
        head = f"the circuit has {self.n_inputs} input values, {n_given} given"
        sym = _sym_path(self.path)
        if not sym.exists():
            return (f"missing input signal(s): {head} (circom --sym writes {sym.name} beside "
                    f"{self.path.parent.name}/, which names them)")
        names: list[str] = []
        with open(sym, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split(",", 3)
                if len(parts) != 4 or not parts[3].startswith("main."):
                    continue
                rest = parts[3][5:]
                base = rest.split("[", 1)[0]
                if "." in rest or base in names or base in given:
                    continue  # a subcomponent's signal, or one already counted
                if self.input_signal_size(base) > 0:
                    names.append(base)
        if not names:
            return f"missing input signal(s): {head}"
        return f"missing input signal(s) {', '.join(repr(n) for n in names)} ({head})"

    def _failure(self, exc: Exception, name: str) -> InputError:
        lines = [ln.strip() for ln in self._errors.lines if ln.strip()]
        code = self._errors.code
        if code is None:
            return WitnessError(f"{self.path.name}: the witness generator failed: {exc}")
        what = _EXCEPTIONS.get(code, f"error code {code}")
        where = "; ".join(lines) if lines else "no location given"
        if code == 4:
            return WitnessError(
                f"{name} does not satisfy the circuit: {what}: {where}")
        return WitnessError(f"{name}: the witness generator stopped: {what}: {where}")


def calculate_witness(wasm_path: str | os.PathLike[str], inputs: Any,
                      name: str = "input") -> tuple[np.ndarray, int]:
    """(witness limbs, field prime) for one input object; see WitnessCalculator."""
    wc = WitnessCalculator(wasm_path)
    return wc.calculate(inputs, name), wc.prime
