"""`cuzk wtns calculate WASM INPUT_JSON WTNS` (snarkjs's argument order): circom's witness
generator run in wasmtime, no Node.js; the .wtns equals snarkjs's byte for byte."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    w = subparsers.add_parser("wtns", help="circom witnesses (snarkjs wtns)")
    wsub = w.add_subparsers(dest="wtns_command", metavar="COMMAND")
    c = wsub.add_parser(
        "calculate",
        help="calculate: WASM INPUT_JSON WTNS (as snarkjs wtns calculate)",
        description="Run circom's witness generator (circuit_js/circuit.wasm) on an input JSON "
        "and write the .wtns witness. An input that misses a signal or breaks an assertion "
        "is an error naming it, and nothing is written.",
    )
    c.add_argument("wasm", type=Path, help="circom's witness generator (.wasm)")
    c.add_argument("input", type=Path, help="input signals (input.json)")
    c.add_argument("wtns", type=Path, help="witness to write (.wtns)")
    c.set_defaults(func=cmd_calculate)
    w.set_defaults(func=lambda args: (w.print_help(), 2)[1])


def cmd_calculate(args: argparse.Namespace) -> int:
    from cuzk.circuits.circom_input import InputError, read_input_json
    from cuzk.circuits.circom_witness import WitnessCalculator
    from cuzk.formats.binfile import curve_from_r
    from cuzk.formats.errors import FormatError
    from cuzk.formats.wtns import write_wtns

    try:
        inputs = read_input_json(args.input)
        wc = WitnessCalculator(args.wasm)
        curve = curve_from_r(wc.prime, str(args.wasm), "field prime")
        witness = wc.calculate(inputs, name=str(args.input))
        write_wtns(args.wtns, witness, curve)
    except (InputError, FormatError, OSError) as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    return 0
