"""Client verbs against a running daemon: submit, await, prove, cancel, status, preload, evict.

The daemon is found at --address (or $CUZK_ADDRESS, default 127.0.0.1:9820); --token (or
$CUZK_TOKEN) is the bearer token when the daemon asks for one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--address", "-a", help="daemon address host:port or unix:/path ($CUZK_ADDRESS)")
    p.add_argument("--token", help="bearer token ($CUZK_TOKEN)")
    p.add_argument("--tls-ca", help="PEM certificate to trust when the daemon serves TLS")


def _job_args(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--circuit", "-C", help="registered circuit id")
    what.add_argument("--proof-kind", choices=["porep-c2", "snap-update", "window-post", "winning-post"],
                      help="a Filecoin proof as Curio sends it: the daemon picks the circuit "
                      "registered for the kind and --registered-proof's sector size")
    f = p.add_argument_group("Filecoin proof kinds (with --proof-kind)")
    f.add_argument("--registered-proof", type=int, default=None,
                   help="numeric RegisteredSealProof / RegisteredPoStProof / RegisteredUpdateProof")
    f.add_argument("--vanilla", action="append", default=[],
                   help="a vanilla proof file (PoSt: one per sector; SnapDeals: per partition)")
    f.add_argument("--randomness", help="PoSt challenge seed, hex")
    f.add_argument("--miner-id", type=int, default=0)
    f.add_argument("--sector-number", type=int, default=0)
    f.add_argument("--partition-index", type=int, default=0, help="WindowPoSt partition")
    g = p.add_argument_group("partitions (one PartitionInput each; pick one kind)")
    g.add_argument("--seeds", help="comma-separated seeds, one partition each (synthetic circuits)")
    g.add_argument("--partitions", "-n", type=int, help="N partitions with random seeds")
    g.add_argument("--witness", action="append", default=[],
                   help="a witness file per partition: .wtns or .npy (n_vars, 4) uint64")
    g.add_argument("--inputs-json", action="append", default=[],
                   help="a JSON file of circuit inputs per partition")
    g.add_argument("--c1", "--job-input", dest="c1",
                   help="one job input instead: a C1 output file (Filecoin PoRep circuits; "
                   "bare JSON or Curio's c1.json) or a PoSt / SnapDeals job file (cuzk filecoin "
                   "gen-post, gen-update), split into its partitions")
    p.add_argument("--request-id", help="idempotency key (default: random)")
    p.add_argument("--priority", default=None, choices=["low", "normal", "high", "critical"],
                   help="default: normal (a Filecoin kind: its own, e.g. WinningPoSt critical)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("submit", help="submit a job to the daemon; prints its job id")
    _common(p)
    _job_args(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("await", help="wait for a job and fetch its proofs")
    _common(p)
    p.add_argument("job_id")
    _await_args(p)
    p.set_defaults(func=cmd_await)

    p = sub.add_parser("prove", help="submit a job and wait for its proofs")
    _common(p)
    _job_args(p)
    _await_args(p)
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("cancel", help="cancel a queued or running job")
    _common(p)
    p.add_argument("job_id")
    p.set_defaults(func=cmd_cancel)

    p = sub.add_parser("status", help="daemon status (workers, queues, keys), or one job's")
    _common(p)
    p.add_argument("job_id", nargs="?", default="")
    p.add_argument("--json", action="store_true", help="print the full status as JSON")
    p.set_defaults(func=cmd_status)

    for verb, helptext in (("preload", "load a circuit's key into the hot tier"),
                           ("evict", "drop a circuit's key from memory")):
        p = sub.add_parser(verb, help=helptext)
        _common(p)
        p.add_argument("circuit_id")
        p.set_defaults(func=cmd_preload if verb == "preload" else cmd_evict)


def _await_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, help="give up after this many seconds")
    p.add_argument("--out", help="write proof_<i>.bin (and result.json) into this directory")
    p.add_argument("--snarkjs", action="store_true",
                   help="with --out, also write snarkjs proof_<i>.json and public_<i>.json")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _client(args: argparse.Namespace) -> Any:
    from cuzk.server.client import Client

    return Client(args.address, args.token, args.tls_ca)


def _partitions(args: argparse.Namespace) -> list[Any]:
    import numpy as np

    kinds = [bool(args.seeds), args.partitions is not None, bool(args.witness),
             bool(args.inputs_json), bool(args.c1)]
    if sum(kinds) != 1:
        raise SystemExit("give exactly one of --seeds, --partitions, --witness, --inputs-json, "
                         "--c1 / --job-input")
    if args.c1:
        return []
    if args.seeds:
        return [int(s) for s in args.seeds.split(",") if s.strip()]
    if args.partitions is not None:
        return [int.from_bytes(os.urandom(6), "little") for _ in range(args.partitions)]
    if args.inputs_json:
        return [json.loads(Path(f).read_text()) for f in args.inputs_json]
    out = []
    for f in args.witness:
        if f.endswith(".npy"):
            out.append(np.load(f))
        else:
            from cuzk.formats.wtns import read_wtns

            out.append(read_wtns(f)[0])
    return out


def _job_input(args: argparse.Namespace) -> bytes | None:
    return Path(args.c1).read_bytes() if args.c1 else None


def _submit(c: Any, args: argparse.Namespace) -> Any:
    """A job by circuit id (its partitions or job input), or a Filecoin proof kind."""
    if args.circuit:
        return c.submit(args.circuit, _partitions(args), args.request_id, args.priority or "normal",
                        _job_input(args))
    if args.registered_proof is None:
        raise SystemExit("--proof-kind needs --registered-proof")
    if args.proof_kind == "porep-c2" and not args.c1:
        raise SystemExit("--proof-kind porep-c2 needs --c1 (the C1 output)")
    return c.submit_filecoin(
        args.proof_kind, args.registered_proof, vanilla_proof=_job_input(args) or b"",
        vanilla_proofs=[Path(f).read_bytes() for f in args.vanilla],
        request_id=args.request_id, priority=args.priority or "default",
        randomness=bytes.fromhex(args.randomness or ""), miner_id=args.miner_id,
        sector_number=args.sector_number, partition_index=args.partition_index,
    )


def _fail(exc: Exception) -> int:
    print(f"cuzk: {exc}", file=sys.stderr)
    return 1


def cmd_submit(args: argparse.Namespace) -> int:
    from cuzk.server.client import ClientError

    try:
        with _client(args) as c:
            s = _submit(c, args)
    except ClientError as exc:
        return _fail(exc)
    if args.json:
        print(json.dumps(s.__dict__))
    else:
        print(s.job_id + ("  (duplicate request id: the earlier job)" if s.duplicate else ""))
    return 0


def _wait(c: Any, job_id: str, args: argparse.Namespace) -> Any:
    if args.no_progress or args.json or not sys.stderr.isatty():
        return c.await_proof(job_id, args.timeout, poll_s=5.0)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} partitions"),
                  TimeElapsedColumn(), transient=True) as prog:
        task = prog.add_task(f"job {job_id[:12]}", total=None)

        def show(info: dict[str, Any]) -> None:
            prog.update(task, total=info["partitions"] or None, completed=info["partitions_done"],
                        description=f"job {job_id[:12]} {info['state'].lower()}")

        return c.await_proof(job_id, args.timeout, poll_s=1.0, progress=show)


def _report(res: Any, args: argparse.Namespace) -> int:
    if args.out:
        d = Path(args.out)
        d.mkdir(parents=True, exist_ok=True)
        for i, p in enumerate(res.proofs):
            (d / f"proof_{i}.bin").write_bytes(p)
        (d / "proof.bin").write_bytes(res.proof)  # all partitions, as a Filecoin verifier takes it
        meta = {k: v for k, v in res.__dict__.items() if k != "proofs"}
        (d / "result.json").write_text(json.dumps(meta, indent=1))
        if args.snarkjs and res.ok:
            try:
                res.write_snarkjs(d)
            except ValueError as exc:
                return _fail(exc)
    if args.json:
        d = {k: v for k, v in res.__dict__.items() if k != "proofs"}
        d["proofs"] = [p.hex() for p in res.proofs]
        d["public_inputs"] = [[str(x) for x in p] for p in res.public_inputs]
        print(json.dumps(d))
    else:
        t = res.timings
        print(f"{res.job_id} {res.status}: {len(res.proofs)} proof(s), total {t['total_ms']} ms "
              f"(queue {t['queue_wait_ms']}, srs {t['srs_load_ms']}, synthesis {t['synthesis_ms']}, "
              f"gpu {t['gpu_ms']})" + (f" - {res.error}" if res.error else ""))
        if args.out:
            print(f"proofs written to {args.out}/")
    return 0 if res.ok else (3 if res.status == "TIMEOUT" else 1)


def cmd_await(args: argparse.Namespace) -> int:
    from cuzk.server.client import ClientError

    try:
        with _client(args) as c:
            res = _wait(c, args.job_id, args)
    except ClientError as exc:
        return _fail(exc)
    return _report(res, args)


def cmd_prove(args: argparse.Namespace) -> int:
    from cuzk.server.client import ClientError

    try:
        with _client(args) as c:
            s = _submit(c, args)
            if not args.json:
                print(f"job {s.job_id}" + (" (duplicate request id)" if s.duplicate else ""),
                      file=sys.stderr)
            res = _wait(c, s.job_id, args)
    except ClientError as exc:
        return _fail(exc)
    return _report(res, args)


def cmd_cancel(args: argparse.Namespace) -> int:
    from cuzk.server.client import ClientError

    try:
        with _client(args) as c:
            was = c.cancel(args.job_id)
    except ClientError as exc:
        return _fail(exc)
    print("cancelled" if was else "already finished")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from cuzk.server.client import ClientError

    try:
        with _client(args) as c:
            st = c.status(args.job_id)
    except ClientError as exc:
        return _fail(exc)
    if args.json:
        print(json.dumps(st, indent=1))
        return 0
    if args.job_id:
        j = st.get("job", {})
        print(f"{j.get('job_id')} {j.get('state')} {j.get('partitions_done', 0)}/{j.get('partitions', 0)} "
              f"partitions, circuit {j.get('circuit_id')}, request {j.get('request_id')}"
              + (f" - {j['error_message']}" if j.get("error_message") else ""))
        return 0
    eng = st.get("engine", {})
    print(f"uptime {st.get('uptime_seconds', 0)} s, proofs completed {st.get('total_proofs_completed', 0)}, "
          f"failed {st.get('total_proofs_failed', 0)}, circuits: {', '.join(st.get('circuits', []))}")
    for q in st.get("queues", []):
        print(f"  jobs  {q['proof_kind']:<14} pending {q.get('pending', 0)}  in progress {q.get('in_progress', 0)}")
    for q in st.get("stages", []):
        cap = f"/{q['capacity']}" if q.get("capacity") else ""
        print(f"  stage {q['name']:<14} pending {q.get('pending', 0)}{cap}  in progress {q.get('in_progress', 0)}")
    for g in st.get("gpus", []):
        mem = (f" vram {int(g['vram_free_bytes']) / 2**30:.1f}/{int(g['vram_total_bytes']) / 2**30:.1f} GiB free"
               if g.get("vram_total_bytes") else "")
        job = f" job {g['current_job_id']} ({g.get('current_proof_kind', '')})" if g.get("current_job_id") else ""
        print(f"  device {g['name']:<8} workers {g.get('workers', 0)} busy {g.get('busy_workers', 0)}{mem}{job}")
    if st.get("pinned_memory_bytes"):
        print(f"  pinned host memory {int(st['pinned_memory_bytes']) / 2**20:.1f} MiB "
              f"(limit {int(st.get('pinned_memory_limit_bytes', 0)) / 2**20:.1f} MiB)")
    for k in st.get("loaded_srs", []):
        print(f"  key {k['circuit_id']:<20} {k.get('tier', 'HOT')} {int(k.get('size_bytes', 0)) / 2**20:.1f} MiB "
              f"refs {k.get('ref_count', 0)}")
    for name, pool in (eng.get("pools") or {}).items():
        n = int(pool.get("threads", 0))
        size = f"{n} thread{'s' if n != 1 else ''}" if n else "a thread per core"
        print(f"  pool {name:<9} {size} per native call, cores {pool.get('cpus') or 'any'}")
    if eng:
        print(f"  buffered partitions {eng.get('buffered_partitions', 0)} "
              f"(max {eng.get('buffered_partitions_max', 0)}, bound {eng.get('buffered_partitions_bound', 0)})")
    return 0


def cmd_preload(args: argparse.Namespace) -> int:
    from cuzk.server.client import ClientError

    try:
        with _client(args) as c:
            already, ms = c.preload(args.circuit_id)
    except ClientError as exc:
        return _fail(exc)
    print(f"{args.circuit_id}: " + ("already loaded" if already else f"loaded in {ms} ms"))
    return 0


def cmd_evict(args: argparse.Namespace) -> int:
    from cuzk.server.client import ClientError

    try:
        with _client(args) as c:
            was, freed = c.evict(args.circuit_id)
    except ClientError as exc:
        return _fail(exc)
    print(f"{args.circuit_id}: " + (f"evicted, {freed} bytes freed" if was else "was not loaded"))
    return 0
