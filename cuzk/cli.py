"""The `cuzk` console script. Each command group lives in its own module under cuzk/commands/."""

from __future__ import annotations

import argparse
import importlib
import sys

# Command modules, each exposing `register(subparsers)`; a command's handler is stored as
# `func` on its parser and called with the parsed args, returning an exit code.
COMMAND_MODULES = [
    "cuzk.commands.groth16",  # groth16 prove / verify (snarkjs-compatible), setup
    "cuzk.commands.demo",  # the README's main job
    "cuzk.commands.daemon",  # daemon
    "cuzk.commands.client",  # submit / await / prove / cancel / status / preload / evict
    "cuzk.commands.bench",  # bench batch / sweep
    "cuzk.commands.timeline",  # timeline analyze
    "cuzk.commands.filecoin",  # filecoin hash / circuit-info
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cuzk", description=__doc__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that command group is not part of this build
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
