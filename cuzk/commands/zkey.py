"""`cuzk zkey export solidityverifier|soliditycalldata|verificationkey` (snarkjs's argument
order): a Solidity verifier contract for a BN254 key, a proof's calldata for it, the key's
verification_key.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    z = subparsers.add_parser("zkey", help="snarkjs zkey exports (Solidity verifier, calldata, vk)")
    zsub = z.add_subparsers(dest="zkey_command", metavar="COMMAND")
    e = zsub.add_parser("export", help="export from a key or proof")
    esub = e.add_subparsers(dest="export_command", metavar="WHAT")

    s = esub.add_parser(
        "solidityverifier",
        help="solidityverifier: ZKEY VERIFIER_SOL (as snarkjs zkey export solidityverifier)",
        description="Write a Solidity contract that verifies proofs of this BN254 key with the "
        "EVM's precompiles; verifyProof(a, b, c, pubSignals) has snarkjs's ABI.",
    )
    s.add_argument("key", type=Path, help="proving key (.zkey) or verification_key.json")
    s.add_argument("out", type=Path, help="Solidity file to write")
    s.add_argument("--contract", default="Groth16Verifier", help="contract name")
    s.set_defaults(func=cmd_solidityverifier)

    c = esub.add_parser(
        "soliditycalldata",
        help="soliditycalldata: PUBLIC_JSON PROOF_JSON (as snarkjs zkey export soliditycalldata)",
        description="Print verifyProof's arguments for a proof, as snarkjs prints them.",
    )
    c.add_argument("public", type=Path, help="public signals JSON")
    c.add_argument("proof", type=Path, help="proof JSON")
    c.set_defaults(func=cmd_soliditycalldata)

    v = esub.add_parser(
        "verificationkey",
        help="verificationkey: ZKEY VK_JSON (as snarkjs zkey export verificationkey)",
    )
    v.add_argument("key", type=Path, help="proving key (.zkey)")
    v.add_argument("out", type=Path, help="verification_key.json to write")
    v.set_defaults(func=cmd_verificationkey)

    for p in (z, e):
        p.set_defaults(func=lambda args, p=p: (p.print_help(), 2)[1])


def _err(msg: str) -> int:
    print(f"ERROR: {msg}", file=sys.stderr)
    return 1


def _read_vk(path: Path):  # noqa: ANN202
    from cuzk.formats.snarkjs_json import read_vk_json
    from cuzk.formats.zkey import read_zkey_vk

    if path.suffix == ".json":
        return read_vk_json(path)
    return read_zkey_vk(path)


def cmd_solidityverifier(args: argparse.Namespace) -> int:
    from cuzk.formats.errors import FormatError
    from cuzk.formats.solidity import verifier_contract

    try:
        text = verifier_contract(_read_vk(args.key), args.contract)
        args.out.write_text(text)
    except (FormatError, ValueError, OSError) as exc:
        return _err(str(exc))
    return 0


def cmd_soliditycalldata(args: argparse.Namespace) -> int:
    from cuzk.formats.errors import FormatError
    from cuzk.formats.snarkjs_json import read_proof_json, read_public_json
    from cuzk.formats.solidity import calldata

    try:
        proof = read_proof_json(args.proof)
        public = read_public_json(args.public, proof.curve)
        print(calldata(proof, public))
    except (FormatError, ValueError, OSError) as exc:
        return _err(str(exc))
    return 0


def cmd_verificationkey(args: argparse.Namespace) -> int:
    from cuzk.formats.errors import FormatError
    from cuzk.formats.snarkjs_json import write_vk_json
    from cuzk.formats.zkey import read_zkey_vk

    try:
        write_vk_json(args.out, read_zkey_vk(args.key))
    except (FormatError, ValueError, OSError) as exc:
        return _err(str(exc))
    return 0
