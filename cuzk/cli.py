"""The `cuzk` console script. Each command group lives in its own module under cuzk/commands/."""

from __future__ import annotations

import argparse
import importlib
import sys

from cuzk.settings import ConfigError, Settings

# Command modules, each exposing `register(subparsers)`, with the top-level commands it adds;
# a command's handler is stored as `func` on its parser and called with the parsed args,
# returning an exit code.
COMMAND_MODULES = {
    "cuzk.commands.groth16": ("groth16", "setup"),  # snarkjs-compatible prove / fullprove / verify
    "cuzk.commands.wtns": ("wtns",),  # wtns calculate: circom's witness generator in wasmtime
    "cuzk.commands.zkey": ("zkey",),  # zkey export solidityverifier / soliditycalldata
    "cuzk.commands.demo": ("demo",),  # the README's main job
    "cuzk.commands.daemon": ("daemon",),
    "cuzk.commands.client": ("submit", "await", "prove", "cancel", "status", "preload", "evict"),
    "cuzk.commands.bench": ("bench",),  # bench batch / sweep
    "cuzk.commands.timeline": ("timeline",),  # timeline analyze
    "cuzk.commands.filecoin": ("filecoin",),  # hash, circuit-info, params, seal, ...
}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, only the command group they name is loaded (a group
    such as filecoin imports much more than `cuzk groth16 prove` needs)."""
    parser = argparse.ArgumentParser(prog="cuzk", description=__doc__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    first = next((a for a in argv or [] if not a.startswith("-")), None)
    wanted = [m for m, cmds in COMMAND_MODULES.items() if first in cmds] or list(COMMAND_MODULES)
    for name in wanted:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that command group is not part of this build
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    # A bad setting (an environment variable, a config value) is the user's to fix: one line
    # naming it, no traceback. The environment is checked before any command runs.
    try:
        Settings.from_env()
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"cuzk: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
