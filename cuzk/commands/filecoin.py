"""`cuzk filecoin hash ...` (native Filecoin hashers), `cuzk filecoin circuit-info GADGET`
(constraint counts of a circuit gadget, shape mode), `cuzk filecoin params` (parameter file
names, commands/filecoin_params.py), the PoRep verbs `seal`, `c1-verify`, `porep-info`
(commands/filecoin_porep.py), C2, `prove-commit`, `verify-commit`
(commands/filecoin_commit.py), and PoSt / SnapDeals, `prove-post`, `verify-post`,
`prove-update`, `verify-update`, `gen-post`, `gen-update` (commands/filecoin_post.py)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn


class _Parser(argparse.ArgumentParser):
    """Bad arguments give one line and exit 2, no usage dump."""

    def error(self, message: str) -> NoReturn:
        print(f"ERROR: {self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


def _err(msg: str, code: int = 2) -> int:
    print(f"ERROR: {msg}", file=sys.stderr)
    return code


def parse_hex(text: str, what: str = "input") -> bytes:
    """Hex with an optional 0x prefix; ValueError naming the problem."""
    t = text[2:] if text[:2] in ("0x", "0X") else text
    if len(t) % 2:
        raise ValueError(f"{what} has an odd number of hex digits ({len(t)})")
    try:
        return bytes.fromhex(t)
    except ValueError:
        raise ValueError(f"{what} is not hex: {text!r}") from None


def register(subparsers: argparse._SubParsersAction) -> None:
    f = subparsers.add_parser("filecoin", help="Filecoin circuits: native hashers, circuit-info, "
                              "params, test sealing (seal, c1-verify), C2 (prove-commit, verify-commit), "
                              "PoSt and SnapDeals (prove-post, prove-update, verify-*, gen-*)")
    fsub = f.add_subparsers(dest="filecoin_command", metavar="COMMAND", parser_class=_Parser)
    f.set_defaults(func=lambda args: (f.print_help(), 2)[1])

    h = fsub.add_parser("hash", help="native Filecoin hashers")
    hsub = h.add_subparsers(dest="hash_command", metavar="HASHER", parser_class=_Parser)
    h.set_defaults(func=lambda args: (h.print_help(), 2)[1])
    for reg in HASH_COMMANDS:
        reg(hsub)

    ci = fsub.add_parser(
        "circuit-info",
        help="constraint counts of a circuit gadget (shape mode: no matrices are built)",
        description="Counts constraints, inputs, aux variables, non-zeros of A, B, C and the "
        "variables appearing in A and B, as bellperson would synthesize the circuit.",
    )
    gsub = ci.add_subparsers(dest="gadget", metavar="GADGET", parser_class=_Parser)
    ci.set_defaults(func=lambda args: (ci.print_help(), 2)[1])
    from cuzk.filecoin.gadget_table import GADGETS

    for entry in GADGETS.values():
        g = gsub.add_parser(entry.name, help=entry.help, description=entry.help)
        for opt in entry.options:
            g.add_argument(f"--{opt.name.replace('_', '-')}", dest=opt.name, type=opt.type,
                           default=opt.default, help=opt.help, choices=opt.choices)
        g.add_argument("--json", action="store_true", help="print one JSON object")
        g.set_defaults(func=cmd_circuit_info, entry=entry)

    from cuzk.commands.filecoin_commit import add_commit_commands
    from cuzk.commands.filecoin_params import add_params
    from cuzk.commands.filecoin_porep import add_porep_commands
    from cuzk.commands.filecoin_post import add_post_commands

    add_params(fsub)
    add_porep_commands(fsub)
    add_commit_commands(fsub)
    add_post_commands(fsub)


def _register_sha256(hsub: argparse._SubParsersAction) -> None:
    s = hsub.add_parser(
        "sha256",
        help="SHA-256 truncated to a field element (filecoin-hashers Sha256Hasher)",
        description="Prints the field element (0x, big-endian hex) of SHA-256 over the bytes "
        "given, with the digest's two top bits cleared (trim_to_fr32). With --domains each "
        "argument must be a 32-byte domain (little-endian), hashed as a Merkle node.",
    )
    s.add_argument("data", nargs="+", help="hex bytes (concatenated)")
    s.add_argument("--domains", action="store_true", help="each argument is a 32-byte domain")
    s.set_defaults(func=cmd_hash_sha256)


def _register_poseidon(hsub: argparse._SubParsersAction) -> None:
    from cuzk.commands.filecoin_poseidon import add_hash_poseidon

    add_hash_poseidon(hsub)


# Each adds one hasher under `cuzk filecoin hash`.
HASH_COMMANDS = [_register_sha256, _register_poseidon]


def cmd_hash_sha256(args: argparse.Namespace) -> int:
    from cuzk.filecoin.hashers.sha256 import DOMAIN_BYTES, sha256_fr

    try:
        parts = [parse_hex(x, f"argument {i + 1}") for i, x in enumerate(args.data)]
        if args.domains:
            for i, p in enumerate(parts):
                if len(p) != DOMAIN_BYTES:
                    raise ValueError(f"argument {i + 1} is {len(p)} bytes, a domain is {DOMAIN_BYTES}")
    except ValueError as exc:
        return _err(str(exc))
    print(f"0x{sha256_fr(b''.join(parts)):064x}")
    return 0


def circuit_info(entry: Any, opts: dict[str, Any]) -> dict[str, Any]:
    from cuzk.filecoin.cs import synthesize_shape

    if entry.validate is not None:
        entry.validate(opts)
    shape = synthesize_shape(entry.circuit(opts))
    info: dict[str, Any] = {"gadget": entry.name, "options": opts}
    info.update(shape.as_dict())
    info["gadget_constraints"] = shape.constraints - entry.input_constraints(opts)
    expected = entry.expected(opts)
    if expected is not None:
        info["expected_gadget_constraints"] = expected
    if entry.describe is not None:
        info["circuit"] = entry.describe(opts)
    if entry.params_id is not None:
        info["params_id"] = entry.params_id(opts)
    return info


def cmd_circuit_info(args: argparse.Namespace) -> int:
    entry = args.entry
    opts = {o.name: getattr(args, o.name) for o in entry.options}
    try:
        info = circuit_info(entry, opts)
    except ValueError as exc:
        return _err(str(exc))
    if args.json:
        print(json.dumps(info, sort_keys=True))
        return 0
    optstr = ", ".join(f"{k}={v}" for k, v in opts.items() if v is not None)
    exp = info.get("expected_gadget_constraints")
    known = f" (rust-fil-proofs' tests: {exp:,})" if exp is not None else ""
    if "circuit" in info:
        lines = [
            f"circuit:              {entry.name}: {info['circuit']}",
            f"constraints:          {info['constraints']:,}{known}; "
            f"{info['constraints_with_inputs']:,} with the {info['inputs']} appended input "
            "constraint(s)",
        ]
    else:
        lines = [
            f"gadget:               {entry.name}" + (f" ({optstr})" if optstr else ""),
            f"gadget constraints:   {info['gadget_constraints']:,}"
            + (f" (bellperson's tests: {exp:,})" if exp is not None else ""),
            f"circuit constraints:  {info['constraints']:,} (with the inputs' allocation); "
            f"{info['constraints_with_inputs']:,} with the {info['inputs']} appended input "
            "constraint(s)",
        ]
    lines += [
        f"public inputs:        {info['public_inputs']:,} (plus ONE)",
        f"aux variables:        {info['aux']:,}",
        f"non-zeros:            A {info['nnz_a']:,}  B {info['nnz_b']:,}  C {info['nnz_c']:,}",
        f"variables in A / B:   {info['vars_in_a']:,} / {info['vars_in_b']:,}",
    ]
    print("\n".join(lines))
    return 0
