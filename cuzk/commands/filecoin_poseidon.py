"""`cuzk filecoin hash poseidon`: Filecoin's Poseidon (neptune, BLS12-381 Fr) of a few values
(registered under `cuzk filecoin hash` by cuzk/commands/filecoin.py).

    cuzk filecoin hash poseidon --arity 2 1 0x02
    cuzk filecoin hash poseidon --md 1 1 1

Values are decimal or 0x-prefixed big-endian hex below r; the digest is printed as 0x-prefixed
big-endian hex (64 digits).
"""

from __future__ import annotations

import argparse
import sys


class _BadValue(ValueError):
    pass


def parse_value(text: str) -> int:
    """A field element from decimal or 0x-prefixed hex; ValueError unless 0 <= v < r."""
    from cuzk.filecoin.poseidon import R

    s = text.strip()
    try:
        v = int(s[2:], 16) if s[:2].lower() == "0x" else int(s, 10)
    except ValueError:
        raise _BadValue(f"{text!r} is not a decimal or 0x-prefixed hex number") from None
    if v < 0:
        raise _BadValue(f"{text} is negative")
    if v >= R:
        raise _BadValue(f"{text} is not below the BLS12-381 scalar field modulus r")
    return v


def format_value(v: int) -> str:
    return f"0x{v:064x}"


def add_hash_poseidon(hash_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register `poseidon` under a `cuzk filecoin hash` subcommand group."""
    p = hash_subparsers.add_parser(
        "poseidon",
        help="Poseidon of N values (--arity N) or filecoin-hashers' hash_md (--md)",
        description="Filecoin's Poseidon over BLS12-381 Fr (neptune's PoseidonConstants::new(): "
        "Merkle-tree domain tag, standard strength). --arity N hashes exactly N values; --md "
        "chains arity-36 hashes over any number (>= 2) of values as filecoin-hashers' hash_md. "
        "Values: decimal or 0x-prefixed big-endian hex below r. Prints 0x-prefixed big-endian hex.",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--arity", type=int, default=None, help="number of values (1..36)")
    mode.add_argument("--md", action="store_true", help="hash_md over the values")
    p.add_argument("values", nargs="*", help="field elements")
    p.set_defaults(func=cmd_hash_poseidon)
    return p


def cmd_hash_poseidon(args: argparse.Namespace) -> int:
    from cuzk.filecoin.poseidon import hash_md, poseidon

    try:
        values = [parse_value(v) for v in args.values]
        if args.md:
            if len(values) < 2:
                raise _BadValue(f"--md needs at least two values, got {len(values)}")
            digest = hash_md(values)
        else:
            if args.arity is None:
                raise _BadValue("give --arity N (N values) or --md")
            arity = args.arity
            if not 1 <= arity <= 36:
                raise _BadValue(f"--arity {arity} is outside 1..36")
            if len(values) != arity:
                raise _BadValue(f"--arity {arity} takes {arity} values, got {len(values)}")
            digest = poseidon(values)
    except _BadValue as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 2
    print(format_value(digest))
    return 0
