"""`cuzk filecoin prove-post`, `verify-post`, `prove-update`, `verify-update` and the test-input
generators `gen-post`, `gen-update` (registered by cuzk/commands/filecoin.py).

    cuzk filecoin gen-post window --sector-size 2KiB -o job.bin      # sealed test sectors
    cuzk filecoin prove-post job.bin -o proof.bin [--params DIR]
    cuzk filecoin verify-post job.bin proof.bin
    cuzk filecoin prove-post --registered-proof 10 --vanilla vanilla.json \\
        --randomness HEX --prover-id HEX --partition-index 0 -o proof.bin
    cuzk filecoin gen-update --sector-size 2KiB [--poseidon] -o job.bin
    cuzk filecoin prove-update job.bin -o proof.bin
    cuzk filecoin prove-update --registered-proof 0 --vanilla vanilla.json \\
        --comm-r-old HEX --comm-r-new HEX --comm-d-new HEX -o proof.bin

A job file is the daemon's job input (cuzk/filecoin/job_envelope.py); the flags give the same
fields as Curio passes them, `--vanilla` a JSON array of base64 strings (Go's
json.Marshal([][]byte), Curio's test data). Keys are the published parameter files in
--params (default FIL_PROOFS_PARAMETER_CACHE) by their v28 names; where they are absent,
development keys of the same circuit, said loudly: NOT FOR PRODUCTION. Inputs are checked
(every vanilla proof verifies) before anything is proved; nothing is written when a check
fails.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import time
from pathlib import Path
from typing import Any

from cuzk.commands.filecoin_commit import _err, _load_keys, _say, _wrote


def _common(p: argparse.ArgumentParser, prove: bool) -> None:
    p.add_argument("--vanilla", default=None,
                   help="the vanilla proofs: a JSON array of base64 strings (instead of a job file)")
    p.add_argument("--registered-proof", default=None, help="a registered proof name or number")
    p.add_argument("--params", default=None,
                   help="parameter directory (default: FIL_PROOFS_PARAMETER_CACHE)")
    if prove:
        p.add_argument("-o", "--output", required=True, help="where to write the proof bytes")
        p.add_argument("--no-dev-keys", action="store_true",
                       help="fail instead of using development keys when the .params is absent")
        p.add_argument("--backend", default="auto", help="auto, cpu or cuda")
    p.add_argument("--json", action="store_true", help="print a JSON summary")


def _post_fields(p: argparse.ArgumentParser) -> None:
    p.add_argument("--randomness", default=None, help="32 bytes hex")
    p.add_argument("--prover-id", default=None, help="32 bytes hex")
    p.add_argument("--miner-id", type=int, default=None, help="prover id of actor f0N instead")
    p.add_argument("--partition-index", type=int, default=None, help="WindowPoSt partition")


def _update_fields(p: argparse.ArgumentParser) -> None:
    for name in ("comm-r-old", "comm-r-new", "comm-d-new"):
        p.add_argument(f"--{name}", default=None, help="32 bytes hex")
    p.add_argument("--poseidon", action="store_true", help="the Poseidon comm_d variant")
    p.add_argument("--h", type=int, default=None, help="the update's h (default: the size's)")


def add_post_commands(fsub: argparse._SubParsersAction) -> None:
    p = fsub.add_parser(
        "prove-post", help="WinningPoSt / WindowPoSt: prove a partition from its vanilla proofs",
        description="Checks the inputs (registered proof, randomness, prover id, sector count, "
        "every vanilla proof), proves the partition and writes its 192-byte proof. Nothing is "
        "written when a check fails.")
    p.add_argument("job", nargs="?", help="a job file (gen-post, or the daemon's job input)")
    _post_fields(p)
    _common(p, prove=True)
    p.set_defaults(func=cmd_prove_post)

    v = fsub.add_parser(
        "verify-post", help="verify a PoSt proof",
        description="Computes the public inputs from the randomness, the partition index and "
        "the sectors (ids, comm_r) of the vanilla proofs and checks the proof. Prints `valid` "
        "and exits 0, or says why not and exits 1.")
    v.add_argument("job", nargs="?", help="the job file the proof was made from")
    v.add_argument("proof", help="the proof bytes prove-post wrote")
    _post_fields(v)
    _common(v, prove=False)
    v.set_defaults(func=cmd_verify_post)

    u = fsub.add_parser(
        "prove-update", help="SnapDeals: prove a sector update from its vanilla partition proofs",
        description="Checks the inputs (commitments, partition count, every partition's "
        "vanilla proof), proves every partition and writes the proofs (192 bytes each) in "
        "partition order. Nothing is written when a check fails.")
    u.add_argument("job", nargs="?", help="a job file (gen-update, or the daemon's job input)")
    _update_fields(u)
    _common(u, prove=True)
    u.set_defaults(func=cmd_prove_update)

    w = fsub.add_parser(
        "verify-update", help="verify a SnapDeals update proof",
        description="Computes every partition's public inputs from comm_r_old, comm_d_new, "
        "comm_r_new and h and checks each proof. Prints `valid` and exits 0, or says why not "
        "and exits 1.")
    w.add_argument("job", nargs="?", help="the job file the proof was made from")
    w.add_argument("proof", help="the proof bytes prove-update wrote")
    _update_fields(w)
    _common(w, prove=False)
    w.set_defaults(func=cmd_verify_update)

    g = fsub.add_parser(
        "gen-post", help="make a PoSt job file from sealed test sectors (test inputs)",
        description="Seals test sectors, draws their challenges from the randomness and writes "
        "one partition's job: the vanilla proofs as Curio passes them, the randomness, prover "
        "id and partition index. Values not given are random.")
    g.add_argument("kind", choices=("winning", "window"))
    g.add_argument("--sector-size", default="2KiB", help="2KiB or 8MiB (default 2KiB)")
    g.add_argument("--api-version", choices=("1.0.0", "1.2.0"), default=None,
                   help="WindowPoSt's API version (default 1.2.0, the chain's)")
    g.add_argument("--sectors", type=int, default=None,
                   help="sectors sealed (default: one partition's worth)")
    g.add_argument("--partition-index", type=int, default=0, help="which partition's job")
    g.add_argument("--seed", type=int, default=0, help="test data seed")
    _gen_common(g)
    g.add_argument("--randomness", default=None, help="32 bytes hex")
    g.add_argument("--prover-id", default=None, help="32 bytes hex")
    g.add_argument("--miner-id", type=int, default=None, help="prover id of actor f0N instead")
    g.set_defaults(func=cmd_gen_post)

    gu = fsub.add_parser(
        "gen-update", help="make a SnapDeals job file from an updated test sector (test inputs)",
        description="Seals a test sector, encodes new data into it and writes the update's job: "
        "every partition's vanilla proof and comm_r_old, comm_r_new, comm_d_new.")
    gu.add_argument("--sector-size", default="2KiB", help="2KiB or 8MiB (default 2KiB)")
    gu.add_argument("--poseidon", action="store_true", help="the Poseidon comm_d variant")
    gu.add_argument("--h", type=int, default=None, help="the update's h (default: the size's)")
    gu.add_argument("--seed", type=int, default=0, help="test data seed")
    _gen_common(gu)
    gu.set_defaults(func=cmd_gen_update)


def _gen_common(g: argparse.ArgumentParser) -> None:
    g.add_argument("-o", "--output", required=True, help="where to write the job file")
    g.add_argument("--vanilla-out", default=None,
                   help="also write the vanilla proofs as a JSON array of base64 strings")
    g.add_argument("--json", action="store_true", help="print a JSON summary")


def _hex32(text: str, what: str) -> bytes:
    """Hex bytes (their length is checked with the proof's rules, not here)."""
    from cuzk.commands.filecoin import parse_hex

    return parse_hex(text, what)


def read_vanilla(path: str) -> list[bytes]:
    """A JSON array of base64 strings; ValueError saying what is wrong."""
    try:
        items = json.loads(Path(path).read_bytes())
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        raise ValueError(f"{path}: expected a JSON array of base64 strings")
    try:
        return [base64.b64decode(x, validate=True) for x in items]
    except binascii.Error as exc:
        raise ValueError(f"{path}: not base64: {exc}") from None


def _flags_only(args: argparse.Namespace, names: tuple[str, ...]) -> None:
    given = [n for n in names if getattr(args, n.replace("-", "_")) not in (None, False)]
    if args.job is not None and given:
        raise ValueError(f"give a job file or --{', --'.join(given)}, not both")


def _post_job(args: argparse.Namespace) -> Any:
    from cuzk.filecoin.porep import prover_id_from_miner
    from cuzk.filecoin.post import RegisteredPoStProof
    from cuzk.filecoin.post.job import PoStJob

    _flags_only(args, ("vanilla", "registered-proof", "randomness", "prover-id", "miner-id",
                       "partition-index"))
    if args.job is not None:
        return PoStJob.from_bytes(Path(args.job).read_bytes())
    missing = [n for n in ("vanilla", "registered_proof", "randomness")
               if getattr(args, n) is None]
    if args.prover_id is None and args.miner_id is None:
        missing.append("prover_id")
    if missing:
        raise ValueError("give a job file, or --" + ", --".join(m.replace("_", "-") for m in missing))
    if args.prover_id is not None and args.miner_id is not None:
        raise ValueError("give --prover-id or --miner-id, not both")
    prover = (prover_id_from_miner(args.miner_id) if args.miner_id is not None
              else _hex32(args.prover_id, "--prover-id"))
    return PoStJob(RegisteredPoStProof.parse(args.registered_proof),
                   _hex32(args.randomness, "--randomness"), prover, read_vanilla(args.vanilla),
                   args.partition_index or 0)


def _update_job(args: argparse.Namespace) -> Any:
    from cuzk.filecoin.update.constants import RegisteredUpdateProof
    from cuzk.filecoin.update.job import UpdateJob

    _flags_only(args, ("vanilla", "registered-proof", "comm-r-old", "comm-r-new", "comm-d-new",
                       "poseidon", "h"))
    if args.job is not None:
        return UpdateJob.from_bytes(Path(args.job).read_bytes())
    missing = [n for n in ("vanilla", "registered_proof", "comm_r_old", "comm_r_new", "comm_d_new")
               if getattr(args, n) is None]
    if missing:
        raise ValueError("give a job file, or --" + ", --".join(m.replace("_", "-") for m in missing))
    return UpdateJob(RegisteredUpdateProof.parse(args.registered_proof),
                     _hex32(args.comm_r_old, "--comm-r-old"), _hex32(args.comm_r_new, "--comm-r-new"),
                     _hex32(args.comm_d_new, "--comm-d-new"), read_vanilla(args.vanilla),
                     args.poseidon, args.h)


def _prove(args: argparse.Namespace, what: str, make: Any) -> int:
    """Shared by prove-post and prove-update: `make(args)` -> (job, circuit); the circuit's
    check, keys and prove; the proof written last."""
    from cuzk.backends import get_backend
    from cuzk.filecoin.params.files import MissingParameterFile

    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        job, circuit = make(args)
        t0 = time.perf_counter()
        ins = circuit.check(job)
        timings["check_s"] = time.perf_counter() - t0
        _say(args, f"{job.kind} {job.registered_proof.name}: vanilla proofs verified in "
             f"{timings['check_s']:.2f} s")
        keys = _load_keys(args, circuit, timings)
        backend = get_backend(args.backend)
        t0 = time.perf_counter()
        proof = circuit.prove(ins, keys, backend=backend)
        timings["prove_s"] = time.perf_counter() - t0
        Path(args.output).write_bytes(proof)
    except MissingParameterFile as exc:
        return _err(str(exc), 2)
    except (ValueError, OSError) as exc:
        return _err(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 1)
    return _wrote(args, proof, keys, timings, t_start, what=f"{what} ",
                  summary={"proof": job.kind, "registered_proof": job.registered_proof.name})


def _verify(args: argparse.Namespace, make: Any) -> int:
    from cuzk.filecoin.params.files import MissingParameterFile

    try:
        job, circuit = make(args)
        proof = Path(args.proof).read_bytes()
        vk, dev = circuit.verifying_key(args.params)
        if dev:
            _say(args, "WARNING: verifying with the DEVELOPMENT verifying key (the published .vk "
                 "is absent; NOT FOR PRODUCTION)")
        t0 = time.perf_counter()
        why = circuit.verify(job, proof, vk)
        dt = time.perf_counter() - t0
    except (ValueError, OSError, MissingParameterFile) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if args.json:
            print(json.dumps({"valid": False, "reason": msg}))
            return 1
        return _err(msg, 1)
    if args.json:
        print(json.dumps({"valid": why is None, "reason": why, "development_key": dev,
                          "proof": job.kind, "registered_proof": job.registered_proof.name,
                          "seconds": round(dt, 3)}))
    elif why is None:
        print("valid")
    else:
        print(f"invalid: {why}")
    return 0 if why is None else 1


def _post_circuit(args: argparse.Namespace) -> tuple[Any, Any]:
    from cuzk.filecoin.post.prove import PoStCircuit

    job = _post_job(args)
    return job, PoStCircuit.for_proof(job.registered_proof)


def _update_circuit(args: argparse.Namespace) -> tuple[Any, Any]:
    from cuzk.filecoin.update.prove import UpdateCircuit

    job = _update_job(args)
    return job, UpdateCircuit.for_job(job)


def cmd_prove_post(args: argparse.Namespace) -> int:
    return _prove(args, "PoSt", _post_circuit)


def cmd_verify_post(args: argparse.Namespace) -> int:
    return _verify(args, _post_circuit)


def cmd_prove_update(args: argparse.Namespace) -> int:
    return _prove(args, "update", _update_circuit)


def cmd_verify_update(args: argparse.Namespace) -> int:
    return _verify(args, _update_circuit)


def _write_job(args: argparse.Namespace, job: Any, info: dict[str, Any]) -> int:
    blob = job.to_bytes()
    Path(args.output).write_bytes(blob)
    if args.vanilla_out is not None:
        Path(args.vanilla_out).write_text(json.dumps(
            [base64.b64encode(v).decode() for v in job.vanilla_proofs]))
    info = {"proof": job.kind, "registered_proof": job.registered_proof.name,
            "registered_proof_id": int(job.registered_proof), **info, "output": args.output,
            "bytes": len(blob), "vanilla_proofs": len(job.vanilla_proofs)}
    if args.json:
        print(json.dumps(info, sort_keys=True))
    else:
        for k, v in info.items():
            print(f"{k + ':':22}{v}")
    return 0


def cmd_gen_post(args: argparse.Namespace) -> int:
    import numpy as np

    from cuzk.filecoin.porep import prover_id_from_miner
    from cuzk.filecoin.porep.constants import ApiVersion
    from cuzk.filecoin.post import PoStType, RegisteredPoStProof
    from cuzk.filecoin.post.generate import (
        field_bytes,
        seal_sectors,
        window_vanilla_proofs,
        winning_vanilla_proofs,
    )
    from cuzk.filecoin.post.job import PoStJob

    try:
        typ = PoStType.WINNING if args.kind == "winning" else PoStType.WINDOW
        api = None if args.api_version is None else ApiVersion["V" + args.api_version.replace('.', '_')]
        rp = RegisteredPoStProof.for_size(typ, args.sector_size, api)
        cfg = rp.config()
        rng = np.random.default_rng(args.seed)
        randomness = field_bytes(rng) if args.randomness is None else _hex32(args.randomness, "--randomness")
        if args.prover_id is not None and args.miner_id is not None:
            raise ValueError("give --prover-id or --miner-id, not both")
        prover = (prover_id_from_miner(args.miner_id) if args.miner_id is not None
                  else field_bytes(rng) if args.prover_id is None else _hex32(args.prover_id, "--prover-id"))
        per = 1 if typ is PoStType.WINNING else cfg.sector_count
        n = args.sectors if args.sectors is not None else (2 if typ is PoStType.WINNING else per)
        if not 1 <= n <= 64:
            raise ValueError(f"--sectors {n}: give 1..64 test sectors")
        sectors = seal_sectors(cfg, n, seed=args.seed)
        if typ is PoStType.WINNING:
            if args.partition_index:
                raise ValueError("WinningPoSt has one partition")
            chosen, blobs = winning_vanilla_proofs(cfg, randomness, prover, sectors)
            extra: dict[str, Any] = {"challenged_sector": chosen.sector_id}
            part = 0
        else:
            parts = window_vanilla_proofs(cfg, randomness, sectors)
            part = args.partition_index
            if not 0 <= part < len(parts):
                raise ValueError(f"--partition-index {part}: {n} sectors make {len(parts)} partition(s)")
            blobs, extra = parts[part], {"partitions": len(parts)}
        job = PoStJob(rp, randomness, prover, blobs, part)
        extra |= {"randomness": randomness.hex(), "prover_id": prover.hex(),
                  "partition_index": part, "sectors": n}
        return _write_job(args, job, extra)
    except (ValueError, OSError) as exc:
        return _err(str(exc))


def cmd_gen_update(args: argparse.Namespace) -> int:
    from cuzk.filecoin.porep.constants import parse_sector_size
    from cuzk.filecoin.update.constants import PUBLISHED_SIZES, RegisteredUpdateProof
    from cuzk.filecoin.update.generate import make_test_update
    from cuzk.filecoin.update.job import UpdateJob

    try:
        size = parse_sector_size(args.sector_size).size
        if size not in PUBLISHED_SIZES:
            raise ValueError(f"{args.sector_size}: no registered update proof of that size")
        rp = RegisteredUpdateProof(PUBLISHED_SIZES.index(size))
        if size > 8 << 20:
            raise ValueError(f"{args.sector_size}: the test generator takes 2KiB or 8MiB")
        u = make_test_update(rp.params(args.poseidon), seed=args.seed, h=args.h)
        old, new, d_new = u.commitments()
        job = UpdateJob(rp, old, new, d_new, u.vanilla_proofs(), args.poseidon, args.h)
        return _write_job(args, job, {"comm_r_old": old.hex(), "comm_r_new": new.hex(),
                                      "comm_d_new": d_new.hex(), "h": u.h,
                                      "partitions": rp.params(args.poseidon).partition_count})
    except (ValueError, OSError) as exc:
        return _err(str(exc))
