"""`cuzk groth16 prove|fullprove|verify` (snarkjs's argument order) and `cuzk setup` (development keys,
NOT FOR PRODUCTION)."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cuzk.groth16.errors import UnsatisfiedConstraint

if TYPE_CHECKING:
    import numpy as np

    from cuzk.curves import Curve


_KEY_HELP = "proving key: .zkey, bellman params or .cuzkkey"


def _prove_arguments(p: argparse.ArgumentParser, *leading: tuple[str, str]) -> None:
    """The positionals (`leading` first, then the proof and public outputs) and options that
    prove and fullprove share."""
    for name, what in leading:
        p.add_argument(name, type=Path, help=what)
    p.add_argument("proof", type=Path, help="proof JSON to write")
    p.add_argument("public", type=Path, help="public signals JSON to write")
    p.add_argument("--backend", default="auto", help="auto (default), cuda, cpu or reference")
    p.add_argument(
        "--r1cs",
        type=Path,
        help="circom .r1cs of the circuit: checks the witness and names a failing constraint "
        "(signal names from a .sym file beside it); required for bellman params",
    )
    p.add_argument("--curve", default=None, help="curve of bellman params (default bls12_381)")
    p.add_argument("--no-verify", action="store_true", help="skip the verification after proving")
    p.add_argument("--no-cache", action="store_true", help="do not use the native key cache")


def register(subparsers: argparse._SubParsersAction) -> None:
    g = subparsers.add_parser("groth16", help="snarkjs-compatible Groth16 prove / verify")
    gsub = g.add_subparsers(dest="groth16_command", metavar="COMMAND")

    p = gsub.add_parser(
        "prove",
        help="prove: ZKEY WTNS PROOF_JSON PUBLIC_JSON (as snarkjs groth16 prove)",
        description="Make a Groth16 proof from a proving key (snarkjs .zkey, bellman params or "
        "a cuzk key cache) and a circom .wtns witness; writes snarkjs proof.json / public.json. "
        "The proof is verified before it is written.",
    )
    _prove_arguments(p, ("key", _KEY_HELP), ("wtns", "witness (.wtns)"))
    p.set_defaults(func=cmd_prove)

    f = gsub.add_parser(
        "fullprove",
        help="fullprove: INPUT_JSON WASM ZKEY PROOF_JSON PUBLIC_JSON (as snarkjs groth16 fullprove)",
        description="Compute the witness with circom's witness generator (.wasm, run in "
        "wasmtime, no Node.js) from an input JSON, then prove as `groth16 prove` does. Nothing "
        "is written when the input does not satisfy the circuit.",
    )
    _prove_arguments(
        f,
        ("input", "input signals (input.json)"),
        ("wasm", "circom's witness generator (circuit_js/circuit.wasm)"),
        ("key", _KEY_HELP),
    )
    f.set_defaults(func=cmd_fullprove)

    v = gsub.add_parser(
        "verify",
        help="verify: VK_JSON PUBLIC_JSON PROOF_JSON (as snarkjs groth16 verify)",
        description="Exit 0 only for a valid proof.",
    )
    v.add_argument("vk", type=Path, help="verification_key.json")
    v.add_argument("public", type=Path, help="public signals JSON")
    v.add_argument("proof", type=Path, help="proof JSON")
    v.set_defaults(func=cmd_verify)
    g.set_defaults(func=lambda args: (g.print_help(), 2)[1])

    s = subparsers.add_parser(
        "setup",
        help="development trusted setup from a seed (NOT FOR PRODUCTION)",
        description="Make a Groth16 proving key for a circom .r1cs with toxic waste derived "
        "from --seed. NOT FOR PRODUCTION: whoever knows the seed can forge proofs.",
    )
    s.add_argument("r1cs", type=Path, help="circom .r1cs")
    s.add_argument("out", type=Path, help="key to write: .zkey (snarkjs) or bellman params")
    s.add_argument("--seed", default=None, help="seed for the toxic waste (default: random)")
    s.add_argument("--convention", choices=["snarkjs", "bellman"], default="snarkjs")
    s.add_argument("--vk", type=Path, default=None, help="also write verification_key.json")
    s.add_argument("--backend", default="auto", help="auto (default), cuda, cpu or reference")
    s.set_defaults(func=cmd_setup)


def _err(msg: str) -> int:
    print(f"ERROR: {msg}", file=sys.stderr)
    return 1


def _load_r1cs(path: Path):  # noqa: ANN202
    from cuzk.formats.r1cs import read_r1cs
    from cuzk.formats.sym import read_sym

    r1cs = read_r1cs(path)
    sym = path.with_suffix(".sym")
    if sym.exists():
        try:
            r1cs.labels = {**r1cs.labels, "wires": read_sym(sym)}
        except OSError:
            pass
    return r1cs


def cmd_prove(args: argparse.Namespace) -> int:
    from cuzk.formats.errors import FormatError
    from cuzk.formats.wtns import read_wtns

    try:
        witness, wcurve = read_wtns(args.wtns)
    except (FormatError, ValueError, OSError) as exc:
        return _err(str(exc))
    return _prove_and_write(args, witness, wcurve)


def cmd_fullprove(args: argparse.Namespace) -> int:
    from cuzk.circuits.circom_input import InputError, read_input_json
    from cuzk.circuits.circom_witness import WitnessCalculator
    from cuzk.formats.binfile import curve_from_r
    from cuzk.formats.errors import FormatError

    try:
        inputs = read_input_json(args.input)
        wc = WitnessCalculator(args.wasm)
        wcurve = curve_from_r(wc.prime, str(args.wasm), "field prime")
        witness = wc.calculate(inputs, name=str(args.input))
    except (InputError, FormatError) as exc:
        return _err(str(exc))
    return _prove_and_write(args, witness, wcurve)


def _prove_and_write(args: argparse.Namespace, witness: np.ndarray, wcurve: Curve) -> int:
    """Prove `witness` with args.key, verify, then write args.proof and args.public; nothing
    is written when a step fails."""
    from cuzk.backends import get_backend
    from cuzk.formats.cache import load_proving_key
    from cuzk.formats.errors import FormatError
    from cuzk.formats.snarkjs_json import write_proof_json, write_public_json
    from cuzk.groth16 import qap
    from cuzk.groth16.prover import prove
    from cuzk.groth16.verifier import explain
    from cuzk.layout import fr_to_ints

    try:
        backend = get_backend(args.backend)
        r1cs = _load_r1cs(args.r1cs) if args.r1cs else None
        density = qap.with_public_rows(r1cs) if r1cs is not None else None
        pk = load_proving_key(args.key, curve=args.curve, density=density, cache=not args.no_cache)
    except (FormatError, ValueError, OSError, RuntimeError) as exc:
        return _err(str(exc))
    if wcurve.name != pk.curve.name:
        return _err(f"witness is over {wcurve.name}, the key over {pk.curve.name}")
    if len(witness) != pk.n_vars:
        return _err(f"witness has {len(witness)} values, the key expects {pk.n_vars}")
    if r1cs is not None and (r1cs.n_vars != pk.n_vars or r1cs.n_public != pk.n_public):
        return _err(
            f"--r1cs has {r1cs.n_vars} wires / {r1cs.n_public} public, the key "
            f"{pk.n_vars} / {pk.n_public}"
        )
    if pk.r1cs is None:
        if density is None:
            return _err("this key carries no constraints: pass the circuit with --r1cs")
        pk = replace(pk, r1cs=density)
    try:
        proof = prove(pk, witness, backend=backend, r1cs=r1cs)
    except UnsatisfiedConstraint as exc:
        return _err(str(exc))
    except ValueError as exc:
        return _err(str(exc))
    public = fr_to_ints(witness[1 : pk.n_public + 1])
    if not args.no_verify:
        why = explain(pk.vk, public, proof)
        if why is not None:
            hint = "" if r1cs else " (pass --r1cs to find the broken constraint)"
            return _err(f"the proof does not verify ({why}): the witness does not satisfy the circuit{hint}")
    write_proof_json(args.proof, proof)
    write_public_json(args.public, public)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from cuzk.formats.errors import FormatError
    from cuzk.formats.snarkjs_json import read_proof_json, read_public_json, read_vk_json
    from cuzk.groth16.verifier import explain

    for p in (args.vk, args.public, args.proof):
        if not p.is_file():
            print(f"ERROR: cannot read {p}", file=sys.stderr)
            return 2
    try:
        vk = read_vk_json(args.vk)
        proof = read_proof_json(args.proof, vk.curve)
        public = read_public_json(args.public, vk.curve)
        why = explain(vk, public, proof)
    except (FormatError, ValueError, KeyError, TypeError) as exc:
        why = str(exc) or type(exc).__name__
    if why is None:
        print("OK: proof is valid")
        return 0
    print(f"INVALID: {why}")
    return 1


def cmd_setup(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.formats.errors import FormatError
    from cuzk.formats.snarkjs_json import write_vk_json
    from cuzk.groth16.setup import WARNING, setup

    print(f"WARNING: {WARNING}. Never use this key for anything of value.", file=sys.stderr)
    seed = args.seed if args.seed is not None else os.urandom(32)
    try:
        r1cs = _load_r1cs(args.r1cs)
        pk = setup(r1cs, seed=seed, convention=args.convention, backend=get_backend(args.backend))
        if args.convention == "snarkjs":
            from cuzk.formats.zkey import write_zkey

            write_zkey(pk, args.out)
        else:
            from cuzk.formats.bellman import write_bellman_params

            write_bellman_params(pk, args.out)
        if args.vk is not None:
            write_vk_json(args.vk, pk.vk)
    except (FormatError, ValueError, OSError, RuntimeError) as exc:
        return _err(str(exc))
    print(
        f"wrote {args.out} ({args.convention}, {r1cs.curve.name}, {r1cs.n_constraints} constraints, "
        f"domain {pk.domain_size}) — development key, NOT FOR PRODUCTION",
        file=sys.stderr,
    )
    return 0
