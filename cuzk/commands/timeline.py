"""`cuzk timeline analyze LOG [--png FILE]`: phase tables, GPU idle gaps, verdict, waterfall."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("timeline", help="analyze TIMELINE logs")
    tsub = p.add_subparsers(dest="timeline_command", metavar="ACTION")
    a = tsub.add_parser("analyze", help="phase table, GPU busy fraction, verdict, waterfall PNG")
    a.add_argument("log", help="a log file with TIMELINE lines (daemon log or timeline log)")
    a.add_argument("--png", help="write the waterfall chart here")
    a.add_argument("--segment", type=int, default=-1,
                   help="which engine run in the log (0 = first, -1 = last; default last)")
    a.add_argument("--max-partitions", type=int, default=200, help="rows in the partition table")
    a.set_defaults(func=run_analyze)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_analyze(args: argparse.Namespace) -> int:
    from cuzk.tools import timeline as tl

    try:
        events = tl.read_events(args.log)
    except OSError as exc:
        print(f"cuzk timeline: cannot read {args.log}: {exc}", file=sys.stderr)
        return 1
    if not events:
        print(f"cuzk timeline: no TIMELINE lines in {args.log}", file=sys.stderr)
        return 1
    try:
        report = tl.analyze(events, segment=args.segment)
    except IndexError:
        print(f"cuzk timeline: no segment {args.segment} in {args.log}", file=sys.stderr)
        return 1
    print(tl.format_report(report, max_partitions=args.max_partitions))
    if args.png:
        tl.waterfall_png(report, args.png)
        print(f"waterfall: {args.png}")
    return 0
