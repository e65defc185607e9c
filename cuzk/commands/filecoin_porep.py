"""`cuzk filecoin seal`, `cuzk filecoin c1-verify` and `cuzk filecoin porep-info` (registered
by cuzk/commands/filecoin.py).

    cuzk filecoin seal --sector-size 2KiB -o c1.json
    cuzk filecoin seal --sector-size 8MiB -o c1.json --data FILE --seed HEX --ticket HEX \\
        --prover-id HEX --sector-number 7
    cuzk filecoin c1-verify c1.json --prover-id HEX --sector-number 7
    cuzk filecoin porep-info --sector-size 32GiB

seal writes Curio's c1.json (`{"SectorNum", "Phase1Out": base64 of the C1 JSON, "SectorSize"}`)
unless --bare asks for the C1 output JSON itself; c1-verify reads either.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any


def _err(msg: str, code: int = 2) -> int:
    print(f"ERROR: {msg}", file=sys.stderr)
    return code


def _hex32(text: str, what: str) -> bytes:
    from cuzk.commands.filecoin import parse_hex

    b = parse_hex(text, what)
    if len(b) != 32:
        raise ValueError(f"{what} is 32 bytes (64 hex digits), got {len(b)}")
    return b


def add_porep_commands(fsub: argparse._SubParsersAction) -> None:
    s = fsub.add_parser(
        "seal",
        help="seal a test sector and write its C1 output (vanilla PoRep proofs)",
        description="Seals one sector in memory (tree_d, SDR labels, tree_c, the replica, "
        "tree_r_last, comm_r), derives the challenges from the seed and writes the C1 output "
        "as Curio's c1.json. Values not given are random.",
    )
    s.add_argument("--sector-size", default=None, help="2KiB, 8MiB, 512MiB (default 2KiB)")
    s.add_argument("--registered-proof", default=None,
                   help="a RegisteredSealProof name or id (default: the size's V1_1 proof)")
    s.add_argument("-o", "--output", required=True, help="where to write the JSON")
    s.add_argument("--data", default=None, help="user data file (fr32-padded here, zero-filled)")
    s.add_argument("--padded", action="store_true", help="--data is already fr32-padded")
    s.add_argument("--seed", default=None, help="interactive seed, 32 bytes hex")
    s.add_argument("--ticket", default=None, help="ticket, 32 bytes hex")
    s.add_argument("--prover-id", default=None, help="prover id, 32 bytes hex")
    s.add_argument("--miner-id", type=int, default=None, help="prover id of actor f0N instead")
    s.add_argument("--sector-number", type=int, default=None, help="sector number (u64)")
    s.add_argument("--porep-id", default=None,
                   help="32 bytes hex: replaces the registered proof's porep_id (test graphs)")
    s.add_argument("--bare", action="store_true", help="write the bare C1 output JSON")
    s.add_argument("--no-verify", action="store_true", help="skip the vanilla self-check")
    s.add_argument("--json", action="store_true", help="print a JSON summary")
    s.set_defaults(func=cmd_seal)

    v = fsub.add_parser(
        "c1-verify",
        help="verify a C1 output's vanilla proofs",
        description="Checks every partition's vanilla proofs against comm_r, comm_d, "
        "replica_id and the seed (challenges, Merkle inclusions, labels from the parent "
        "columns, encoding, comm_r = Poseidon(comm_c, comm_r_last)); with the prover id and "
        "sector number also the replica_id.",
    )
    v.add_argument("input", help="c1.json (Curio's wrapper) or a bare C1 output JSON")
    v.add_argument("--prover-id", default=None, help="prover id, 32 bytes hex")
    v.add_argument("--miner-id", type=int, default=None, help="prover id of actor f0N instead")
    v.add_argument("--sector-number", type=int, default=None,
                   help="sector number (default: the wrapper's SectorNum)")
    v.add_argument("--porep-id", default=None, help="32 bytes hex, if sealed with --porep-id")
    v.add_argument("--json", action="store_true", help="print a JSON summary")
    v.set_defaults(func=cmd_c1_verify)

    i = fsub.add_parser("porep-info", help="PoRep constants of a sector size or registered proof")
    i.add_argument("--sector-size", default=None)
    i.add_argument("--registered-proof", default=None)
    i.set_defaults(func=cmd_porep_info)


def _prover_id(args: argparse.Namespace) -> bytes | None:
    from cuzk.filecoin.porep import prover_id_from_miner

    if args.prover_id is not None and args.miner_id is not None:
        raise ValueError("give --prover-id or --miner-id, not both")
    if args.miner_id is not None:
        return prover_id_from_miner(args.miner_id)
    return None if args.prover_id is None else _hex32(args.prover_id, "--prover-id")


def _proof_for(args: argparse.Namespace) -> Any:
    from cuzk.filecoin.porep import RegisteredSealProof, parse_sector_size

    if args.registered_proof is not None:
        p = RegisteredSealProof.parse(args.registered_proof)
        if args.sector_size is not None and parse_sector_size(args.sector_size) != p.sector:
            raise ValueError(f"{p.name} is a {p.sector.name} proof, not {args.sector_size}")
        return p
    return RegisteredSealProof.for_size(args.sector_size or "2KiB")


def cmd_seal(args: argparse.Namespace) -> int:
    from cuzk.filecoin.porep import CurioC1, to_json
    from cuzk.filecoin.porep.seal import seal
    from cuzk.filecoin.porep.verify import VanillaProofError, verify_c1

    try:
        proof = _proof_for(args)
        data = None
        if args.data is not None:
            with open(args.data, "rb") as f:
                data = f.read()
        prover_id = _prover_id(args)
        seed = None if args.seed is None else _hex32(args.seed, "--seed")
        ticket = None if args.ticket is None else _hex32(args.ticket, "--ticket")
        porep_id = None if args.porep_id is None else _hex32(args.porep_id, "--porep-id")
        if args.sector_number is not None and not 0 <= args.sector_number < 1 << 64:
            raise ValueError("--sector-number must fit a u64")
        log = None if args.json else (lambda m: print(f"  {m}", file=sys.stderr))
        t0 = time.perf_counter()
        out, sector, inputs = seal(proof, data, padded=args.padded, prover_id=prover_id,
                                   sector_id=args.sector_number, ticket=ticket, seed=seed,
                                   porep_id=porep_id, log=log)
        seal_s = time.perf_counter() - t0
        if not args.no_verify:
            verify_c1(out, prover_id=inputs.prover_id, sector_id=inputs.sector_id,
                      config=sector.config)
        blob = to_json(out) if args.bare else CurioC1(inputs.sector_id, out, proof.sector.size).to_json()
        with open(args.output, "wb") as f:
            f.write(blob)
    except (OSError, ValueError, VanillaProofError) as exc:
        return _err(str(exc))
    summary = {
        "registered_proof": proof.name, "output": args.output, "bytes": len(blob),
        "sector_number": inputs.sector_id, "prover_id": inputs.prover_id.hex(),
        "ticket": inputs.ticket.hex(), "seed": inputs.seed.hex(),
        "porep_id": sector.config.porep_id.hex(), "replica_id": out.replica_id.hex(),
        "comm_d": out.comm_d.hex(), "comm_r": out.comm_r.hex(),
        "partitions": len(out.vanilla_proofs),
        "challenges_per_partition": sector.config.challenges_per_partition,
        "seal_seconds": round(seal_s, 3),
        "timings": {k: round(v, 3) for k, v in sector.timings.items()},
    }
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        for k in ("registered_proof", "sector_number", "prover_id", "ticket", "seed", "replica_id",
                  "comm_d", "comm_r", "partitions", "challenges_per_partition"):
            print(f"{k + ':':26}{summary[k]}")
        print(f"{'sealed in:':26}{seal_s:.2f} s")
        print(f"{'wrote:':26}{args.output} ({len(blob):,} bytes)")
    return 0


def cmd_c1_verify(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from cuzk.filecoin.porep import C1FormatError, load
    from cuzk.filecoin.porep.verify import VanillaProofError, verify_c1

    try:
        with open(args.input, "rb") as f:
            out, wrapper = load(f.read())
        prover_id = _prover_id(args)
        sector = args.sector_number
        if sector is None and wrapper is not None:
            sector = wrapper.sector_num
        cfg = out.config
        if args.porep_id is not None:
            cfg = replace(cfg, porep_id=_hex32(args.porep_id, "--porep-id"))
        t0 = time.perf_counter()
        verify_c1(out, prover_id=prover_id, sector_id=sector, config=cfg)
        dt = time.perf_counter() - t0
    except C1FormatError as exc:
        return _err(f"malformed C1 output: {exc}")
    except VanillaProofError as exc:
        if args.json:
            print(json.dumps({"valid": False, "error": str(exc), "partition": exc.partition,
                              "challenge_index": exc.challenge_index}))
        else:
            print(f"INVALID: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        return _err(str(exc))
    replica_checked = prover_id is not None and sector is not None
    if args.json:
        print(json.dumps({"valid": True, "registered_proof": out.registered_proof.name,
                          "partitions": len(out.vanilla_proofs),
                          "challenges": sum(len(p) for p in out.vanilla_proofs),
                          "replica_id_checked": replica_checked, "seconds": round(dt, 3)}))
    else:
        print(f"valid: {out.registered_proof.name}, {len(out.vanilla_proofs)} partition(s) × "
              f"{len(out.vanilla_proofs[0])} challenges"
              + ("" if replica_checked else " (replica_id not checked: give --prover-id or "
                 "--miner-id and the sector number)") + f"; {dt:.2f} s")
    return 0


def cmd_porep_info(args: argparse.Namespace) -> int:
    from cuzk.filecoin.params.names import porep_parameters
    from cuzk.filecoin.porep import PoRepConfig

    try:
        cfg = PoRepConfig.for_proof(_proof_for(args))
    except ValueError as exc:
        return _err(str(exc))
    info = cfg.describe()
    info["cache_identifier"] = porep_parameters(cfg).cache_id
    print(json.dumps(info, indent=1))
    return 0
