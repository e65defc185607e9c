"""`cuzk filecoin params`: the parameter files of Filecoin's circuits, by name, and whether
the parameter directory has them (registered under `cuzk filecoin` by commands/filecoin.py).

    cuzk filecoin params --sector-size 32GiB
    cuzk filecoin params --registered-proof StackedDrg32GiBV1_1 --check --json
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

KINDS = ("porep", "winning-post", "window-post", "empty-sector-update",
         "empty-sector-update-poseidon")


def add_params(fsub: argparse._SubParsersAction) -> None:
    p = fsub.add_parser(
        "params",
        help="parameter file names (v28-...) and whether they are present",
        description="Prints each circuit's parameter-file stem (as rust-fil-proofs names it), "
        "the directory searched (FIL_PROOFS_PARAMETER_CACHE, else "
        "/var/tmp/filecoin-proof-parameters) and which of .params/.vk/.meta are there. "
        "Exit status 1 when a .params or .vk file listed is missing (or, with --check, damaged).",
    )
    p.add_argument("--sector-size", help="e.g. 2KiB, 32GiB (default: every published size)")
    p.add_argument("--kind", choices=KINDS, action="append",
                   help="circuit kind (repeatable; default: all)")
    p.add_argument("--registered-proof", help="a registered seal proof (name or 0..19)")
    p.add_argument("--dir", help="parameter directory (default: FIL_PROOFS_PARAMETER_CACHE)")
    p.add_argument("--check", action="store_true",
                   help="check the digests of the files present (reads them whole)")
    p.add_argument("--json", action="store_true", help="print one JSON object per line")
    p.set_defaults(func=cmd_params)


def _sets(args: argparse.Namespace) -> list[Any]:
    from cuzk.filecoin.params import names

    if args.registered_proof:
        return [names.seal_parameter_set(args.registered_proof)]
    sizes = ([names.parse_size(args.sector_size)] if args.sector_size
             else list(names.PUBLISHED_SECTOR_SIZES))
    make = {
        "porep": names.porep, "winning-post": names.winning_post,
        "window-post": names.window_post, "empty-sector-update": names.empty_sector_update,
        "empty-sector-update-poseidon": lambda s: names.empty_sector_update(s, poseidon=True),
    }  # fmt: skip
    out = []
    for size in sizes:
        for kind in args.kind or KINDS:
            if kind == "empty-sector-update-poseidon" and not args.kind \
                    and not names.sector_size(size).production:
                continue  # published for 32 and 64 GiB only
            out.append(make[kind](size))
    return out


def cmd_params(args: argparse.Namespace) -> int:
    from cuzk.filecoin.params import files
    from cuzk.formats.errors import FormatError

    try:
        sets = _sets(args)
        directory = files.parameter_dir(args.dir)
    except ValueError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 2
    status = 0
    for ps in sets:
        f = files.parameter_files(ps, directory)
        row: dict[str, Any] = {"kind": ps.kind, "sector_size": ps.sector_size, "stem": ps.stem,
                               "directory": str(directory)}
        for ext in files.EXTENSIONS:
            path = f.path(ext)
            row[ext] = path.stat().st_size if path.is_file() else None
            if ext != "meta" and row[ext] is None:
                status = 1
        if args.check:
            for ext in ("params", "vk"):
                if row[ext] is None:
                    continue
                try:
                    row[f"{ext}_digest"] = "ok" if files.check_digest(f.path(ext)) else "unlisted"
                except FormatError as exc:
                    row[f"{ext}_digest"] = str(exc)
                    status = 1
        if args.json:
            print(json.dumps(row, sort_keys=True))
            continue
        have = " ".join(f"{e}:{'-' if row[e] is None else row[e]}" for e in files.EXTENSIONS)
        checks = " ".join(f"{e}-digest:{row[f'{e}_digest']}" for e in ("params", "vk")
                          if f"{e}_digest" in row)
        print(f"{ps.kind:<29} {ps.sector_size:>12} {ps.stem}  [{have}]"
              + (f" {checks}" if checks else ""))
    if not args.json:
        print(f"directory: {files.describe_dir(directory)}")
    return status
