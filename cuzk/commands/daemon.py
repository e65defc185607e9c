"""`cuzk daemon --config FILE`: run the proving daemon (docs/config.md lists every knob)."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("daemon", help="run the proving daemon (gRPC + HTTP status/metrics)")
    p.add_argument("--config", "-c", help="TOML config file (default: built-in laptop defaults)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set pipeline.max_gpu_queue_depth=8")
    p.add_argument("--ready-file", help="write {grpc, http, pid} as JSON here once listening")
    p.add_argument("--check", action="store_true", help="validate the config and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cuzk.server import config as cfg
    from cuzk.settings import ConfigError

    try:
        conf = cfg.load(args.config, args.set)
    except ConfigError as exc:
        print(f"cuzk daemon: {exc}", file=sys.stderr)
        return 2
    if args.check:
        print(f"{conf.source}: ok ({len(conf.circuits)} circuit(s))")
        return 0
    from cuzk.server.daemon import run as run_daemon
    from cuzk.server.daemon import setup_logging

    log = conf["log"]
    setup_logging(log["level"], log["format"], log["file"])
    try:
        return run_daemon(conf, args.ready_file)
    except ConfigError as exc:
        print(f"cuzk daemon: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cuzk daemon: {exc}", file=sys.stderr)
        return 1
