"""circom input JSON: signal names to flat lists of field elements, as snarkjs reads them.

Each top-level key names an input signal of `main` and holds a value or nested arrays of values
(flattened in row-major order). A nested object qualifies names with dots (`bus.field`), as
circom's own witness_calculator.js does for bus inputs. A value is a JSON integer, a boolean, or
a string holding a decimal (optionally negative) or a 0x/0o/0b-prefixed integer, as JavaScript's
BigInt parses it; values are taken modulo the field prime (negative ones wrap around).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class InputError(ValueError):
    """An input JSON that does not give the circuit what it needs; the message names the signal."""


def fnv1a64(name: str) -> int:
    """The 64-bit FNV-1a hash circom's witness code keys input signals by."""
    h = 0xCBF29CE484222325
    for ch in name:
        h ^= ord(ch)
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _bigint(v: Any, where: str) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        # JavaScript reads JSON numbers as doubles: snarkjs would silently round this one
        if abs(v) > 2**53 and int(float(v)) != v:
            raise InputError(f"{where}: the JSON number {v} is not exact as a double (snarkjs "
                             f"would read {int(float(v))}); write it as a string")
        return v
    if isinstance(v, float):
        if v.is_integer():
            return int(v)
        raise InputError(f"{where}: {v!r} is not an integer")
    if isinstance(v, str):
        s = v.strip()
        if s == "":
            return 0  # BigInt("") is 0
        try:
            if s[:2].lower() in ("0x", "0o", "0b"):
                return int(s, 0)
            if s.lstrip("+-").isdigit() and not s.startswith("+"):
                return int(s, 10)
        except ValueError:
            pass
        raise InputError(f"{where}: {v!r} is not an integer")
    raise InputError(f"{where}: expected a number or a string, got {type(v).__name__}")


def _flatten(v: Any, where: str, out: list[int]) -> None:
    if isinstance(v, list):
        for i, x in enumerate(v):
            _flatten(x, f"{where}[{i}]", out)
    else:
        out.append(_bigint(v, where))


def _qualify(prefix: str, v: Any, out: dict[str, Any]) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _qualify(f"{prefix}.{k}" if prefix else k, x, out)
    else:
        out[prefix] = v


def parse_inputs(obj: Any, prime: int, name: str = "input") -> dict[str, list[int]]:
    """{signal name: flat values below `prime`} from a parsed input JSON object."""
    if not isinstance(obj, dict):
        raise InputError(f"{name}: expected a JSON object of input signals, got {type(obj).__name__}")
    named: dict[str, Any] = {}
    _qualify("", obj, named)
    out: dict[str, list[int]] = {}
    for key, value in named.items():
        flat: list[int] = []
        _flatten(value, f"{name}: signal {key!r}", flat)
        out[key] = [x % prime for x in flat]
    return out


def read_input_json(path: str | Path) -> Any:
    """The parsed JSON of an input file, with a clear error when it is not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as exc:
        raise InputError(f"{path}: cannot open: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON: {exc}") from None
