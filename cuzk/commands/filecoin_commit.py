"""`cuzk filecoin prove-commit` and `cuzk filecoin verify-commit`: PoRep C2 from a C1 output
(registered by cuzk/commands/filecoin.py).

    cuzk filecoin prove-commit c1.json -o proof.bin [--params DIR]
    cuzk filecoin verify-commit c1.json proof.bin [--params DIR]

Both read the C1 output bare or in Curio's c1.json wrapper. The keys are the published
parameter files in DIR (default FIL_PROOFS_PARAMETER_CACHE, else
/var/tmp/filecoin-proof-parameters); where they are absent, development keys of the same
circuit, made once and kept in the cache directory, and said loudly: NOT FOR PRODUCTION.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def add_commit_commands(fsub: argparse._SubParsersAction) -> None:
    p = fsub.add_parser(
        "prove-commit",
        help="PoRep C2: prove a C1 output (192 bytes per partition)",
        description="Checks the C1 output (format, registered proof, every vanilla proof), "
        "synthesizes each partition's witness, proves it and writes the proofs concatenated "
        "in partition order. Nothing is written when a check fails.",
    )
    p.add_argument("c1", help="C1 output: bare JSON or Curio's c1.json")
    p.add_argument("-o", "--output", required=True, help="where to write the proof bytes")
    p.add_argument("--params", default=None,
                   help="parameter directory (default: FIL_PROOFS_PARAMETER_CACHE)")
    p.add_argument("--no-dev-keys", action="store_true",
                   help="fail instead of using development keys when the .params is absent")
    p.add_argument("--backend", default="auto", help="auto, cpu or cuda")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_prove_commit)

    v = fsub.add_parser(
        "verify-commit",
        help="verify a PoRep C2 proof against its C1 output",
        description="Computes every partition's public inputs from the C1 output (replica_id, "
        "comm_d, comm_r, the challenges and their parents) and checks each 192-byte proof "
        "with the verifying key. Prints `valid` and exits 0, or says why not and exits 1.",
    )
    v.add_argument("c1", help="C1 output: bare JSON or Curio's c1.json")
    v.add_argument("proof", help="the proof bytes prove-commit wrote")
    v.add_argument("--params", default=None,
                   help="parameter directory (default: FIL_PROOFS_PARAMETER_CACHE)")
    v.add_argument("--json", action="store_true", help="print a JSON summary")
    v.set_defaults(func=cmd_verify_commit)


def _err(msg: str, code: int = 2) -> int:
    print(f"ERROR: {msg}", file=sys.stderr)
    return code


def _say(args: argparse.Namespace, msg: str) -> None:
    if not args.json:
        print(msg, file=sys.stderr, flush=True)


def _load_keys(args: argparse.Namespace, circuit: Any, timings: dict[str, float]) -> Any:
    """The circuit's keys (published, else development unless --no-dev-keys), timed into
    timings["keys_s"], and said which they are (development keys loudly)."""
    t0 = time.perf_counter()
    keys = circuit.keys(args.params, allow_dev=not args.no_dev_keys)
    timings["keys_s"] = time.perf_counter() - t0
    if keys.development:
        _dev_banner(args, keys.describe())
    else:
        _say(args, f"keys: {keys.describe()}")
    return keys


def _wrote(args: argparse.Namespace, proof: bytes, keys: Any, timings: dict[str, float],
           t_start: float, what: str, summary: dict[str, Any]) -> int:
    """The closing line of a prove command (or its --json summary) once the proof is written."""
    partitions = len(proof) // 192
    summary = summary | {
        "partitions": partitions, "output": args.output, "bytes": len(proof),
        "development_keys": keys.development, "parameter_files": str(keys.files.params),
        "seconds": {k: round(v, 3) for k, v in timings.items()}
        | {"total_s": round(time.perf_counter() - t_start, 3)},
    }
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        print(f"wrote {args.output}: {len(proof)} bytes ({partitions} {what}partition proof(s) "
              f"of 192 bytes) in {summary['seconds']['total_s']:.1f} s"
              + ("  [DEVELOPMENT KEYS]" if keys.development else ""))
    return 0


def _dev_banner(args: argparse.Namespace, keys_desc: str) -> None:
    _say(args, f"WARNING: {keys_desc}\nWARNING: the published parameter files are absent; these "
         "proofs verify only against the development key, NOT on chain (NOT FOR PRODUCTION)")


def cmd_prove_commit(args: argparse.Namespace) -> int:
    from cuzk.backends import get_backend
    from cuzk.filecoin.params.files import MissingParameterFile
    from cuzk.filecoin.porep.c2 import C2Error, PoRepCircuit, check_c1, prove_c1, read_c1
    from cuzk.formats.errors import FormatError

    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        out = read_c1(Path(args.c1).read_bytes())
        circuit = PoRepCircuit.for_c1(out)
        t0 = time.perf_counter()
        check_c1(out, circuit)
        timings["check_s"] = time.perf_counter() - t0
        _say(args, f"{out.registered_proof.name}: {len(out.vanilla_proofs)} partition(s), vanilla "
             f"proofs verified in {timings['check_s']:.2f} s")
        keys = _load_keys(args, circuit, timings)
        backend = get_backend(args.backend)
        t0 = time.perf_counter()
        proof = prove_c1(out, keys, circuit, backend=backend, checked=True,
                         on_partition=lambda k, s: _say(args, f"partition {k}: proved in {s:.2f} s"))
        timings["prove_s"] = time.perf_counter() - t0
        Path(args.output).write_bytes(proof)
    except (C2Error, MissingParameterFile, FormatError, OSError) as exc:
        return _err(str(exc), 1 if isinstance(exc, C2Error) else 2)
    return _wrote(args, proof, keys, timings, t_start, what="",
                  summary={"registered_proof": out.registered_proof.name})


def cmd_verify_commit(args: argparse.Namespace) -> int:
    from cuzk.filecoin.params.files import MissingParameterFile
    from cuzk.filecoin.porep.c2 import C2Error, PoRepCircuit, read_c1, verify_c1_proof
    from cuzk.formats.errors import FormatError

    try:
        out = read_c1(Path(args.c1).read_bytes())
        proof = Path(args.proof).read_bytes()
        circuit = PoRepCircuit.for_c1(out)
        vk, dev = circuit.verifying_key(args.params)
        if dev:
            _say(args, "WARNING: verifying with the DEVELOPMENT verifying key (the published .vk "
                 "is absent; NOT FOR PRODUCTION)")
        t0 = time.perf_counter()
        why = verify_c1_proof(out, proof, vk)
        dt = time.perf_counter() - t0
    except (C2Error, MissingParameterFile, FormatError, OSError) as exc:
        if args.json:
            print(json.dumps({"valid": False, "reason": str(exc)}))
            return 1
        return _err(str(exc), 1)
    if args.json:
        print(json.dumps({"valid": why is None, "reason": why, "development_key": dev,
                          "registered_proof": out.registered_proof.name,
                          "partitions": len(out.vanilla_proofs), "seconds": round(dt, 3)}))
    elif why is None:
        print("valid")
    else:
        print(f"invalid: {why}")
    return 0 if why is None else 1
