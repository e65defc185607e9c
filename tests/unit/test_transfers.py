"""The transfer inventory's bookkeeping (cuzk.backends.transfers): a partition's scope reaches
the threads its tasks run in, pending event times are counted once known, TIMELINE details
round-trip through `cuzk timeline analyze`, and the Prometheus collector exposes the totals."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from prometheus_client import CollectorRegistry, generate_latest

from cuzk.backends import transfers
from cuzk.engine.timeline import TimelineEvent
from cuzk.server.metrics import Transfers
from cuzk.tools import timeline as tl


def test_scope_reaches_tasks_in_other_threads() -> None:
    inv, other = transfers.Inventory(), transfers.Inventory()

    def copy() -> None:
        transfers.record("key", transfers.H2D, 100, True, 0.001)

    with transfers.counting(inv), ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda f: f(), [transfers.run_in_context(copy) for _ in range(3)]))
        pool.submit(copy).result()  # not bound: counted nowhere but in the totals
        t = threading.Thread(target=transfers.run_in_context(copy))
        t.start()
        t.join()
    with transfers.counting(other):
        copy()
    assert len(inv) == 4 and inv.bytes(kind="key") == 400
    assert len(other) == 1
    assert transfers.current() is None


def test_pending_event_times_count_once_known() -> None:
    done = [False]
    c = transfers.record("witness", transfers.H2D, 1 << 20, True,
                         lambda: 0.002 if done[0] else None)  # fmt: skip
    assert c.seconds is None and c.gbps is None
    done[0] = True
    assert c.seconds == 0.002
    assert abs((c.gbps or 0) - (1 << 20) / 0.002 / 1e9) < 1e-9


def test_detail_round_trips_through_the_analysis() -> None:
    inv = transfers.Inventory()
    with transfers.counting(inv):
        transfers.record("key", transfers.H2D, 4096, True, 0.004)
        transfers.record("witness", transfers.H2D, 1024, False, 0.001)
        transfers.record("result", transfers.D2H, 96, False, 0.0001)
    d = inv.detail()
    assert d["xfer_key_bytes"] == 4096 and d["xfer_pageable_bytes"] == 1120
    assert d["xfer_slowest"] == "key:pinned:4096:4.000"
    ev = TimelineEvent(2.0, "GPU_END", "j", {"partition": "0", "device": "cuda:0",
                                              "worker": "w0", **{k: str(v) for k, v in d.items()}})
    line = ev.line()
    start = TimelineEvent(1.0, "GPU_START", "j", {"partition": "0", "device": "cuda:0"})
    rep = tl.analyze([start, tl.parse_line(line)])  # type: ignore[list-item]
    p = rep.partitions[0]
    assert p.transfers == {"key": 4096, "witness": 1024, "result": 96}
    assert p.slowest == ("key", "pinned", 4096, 4.0)
    text = "\n".join(tl.format_transfers(rep))
    assert "slowest copies" in text and "4.0 KiB" in text


def test_prometheus_exposes_the_totals() -> None:
    transfers.record("control", transfers.D2H, 8, False, 0.5)
    reg = CollectorRegistry()
    reg.register(Transfers())
    text = generate_latest(reg).decode()
    assert 'cuzk_transfer_bytes_total{direction="d2h",kind="control",memory="pageable"}' in text
    assert "cuzk_transfer_seconds_total" in text and "cuzk_transfer_copies_total" in text
