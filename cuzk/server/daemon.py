"""The daemon process: config → store, engine, service, gRPC + HTTP listeners; signals.

SIGTERM/SIGINT: stop accepting jobs, give running ones [daemon] shutdown_grace_s to finish,
leave the rest queued in the store (the next start resubmits them), then close the listeners.
A lost device (an error that leaves it unusable, with no other device left) stops the daemon
the same way at once and exits with EXIT_DEVICE_LOST, for a supervisor to restart it.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cuzk.engine.config import EngineConfig
from cuzk.engine.engine import Engine
from cuzk.server import circuits as circuits_mod
from cuzk.server.config import DaemonConfig, is_loopback
from cuzk.server.grpc_server import build_server
from cuzk.server.http import HttpEndpoint
from cuzk.server.metrics import Metrics
from cuzk.server.service import ProvingService, ServiceError
from cuzk.server.store import StoreUnavailable, open_store
from cuzk.settings import ConfigError

log = logging.getLogger("cuzk.server")

EXIT_DEVICE_LOST = 75  # EX_TEMPFAIL: restart me (a CUDA context cannot be recovered in-process)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        d: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "thread": record.threadName,
        }
        if record.exc_info:
            d["exc"] = self.formatException(record.exc_info)
        return json.dumps(d)


def setup_logging(level: str, fmt: str, file: str = "") -> None:
    handler: logging.Handler = (
        logging.FileHandler(Path(file).expanduser()) if file else logging.StreamHandler(sys.stderr)
    )
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.captureWarnings(True)  # Python warnings in the same format, not raw on stderr


def check_unix_free(listen: str) -> None:
    """Binding a unix socket replaces whatever file is at its path; refuse when another
    process still answers there (a stale file from a killed daemon is fine to replace)."""
    if not listen.startswith("unix:"):
        return
    path = listen[5:].removeprefix("//")
    if not os.path.exists(path):
        return
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(1.0)
        try:
            s.connect(path)
        except OSError:
            return  # nobody listening: a leftover
    raise OSError(f"cannot listen on {listen}: another process is listening there")


class Daemon:
    def __init__(self, config: DaemonConfig, phases: Any = None) -> None:
        self.config = config
        self._phases = phases  # tests may swap the prover phases; None = the real prover
        self._stop = threading.Event()
        self.exit_code = 0
        self.grpc_address = ""
        self.http_address = ""

    def start(self) -> None:
        c = self.config
        d = c["daemon"]
        try:
            infos = {cid: circuits_mod.build(cid, t) for cid, t in c.circuits.items()}
        except ConfigError as exc:
            raise ConfigError(f"{c.source}: {exc}") from None
        try:
            ecfg = EngineConfig.from_dict(c.engine_dict())
        except ValueError as exc:
            raise ConfigError(f"{c.source}: {exc}") from None
        for key in ("listen", "http_listen"):
            check_unix_free(d[key])
        try:
            self.store = open_store(c["store"], c.store_path())
        except StoreUnavailable as exc:
            raise ConfigError(f"{c.source}: [store] dsn: {exc} (is PostgreSQL running and "
                              "reachable from here?)") from None
        except ImportError as exc:
            raise ConfigError(f"{c.source}: [store] backend = \"postgres\" needs psycopg "
                              f"(pip install 'psycopg[binary]'): {exc}") from None
        removed = self.store.cleanup(c["store"]["retention"])
        if removed:
            log.info("store: removed %d job(s) past retention", removed)
        self.engine = Engine(ecfg, phases=self._phases)
        self.engine.on_device_lost = self._device_lost
        if c["store"]["backend"] == "postgres":
            from cuzk.server.cluster import ClusterService  # psycopg only for a cluster

            self.service: ProvingService = ClusterService(
                self.engine, self.store, infos, c["store"], limits=c.limits())
        else:
            self.service = ProvingService(self.engine, self.store, infos, limits=c.limits())
        self.metrics = Metrics(self.service)
        self.service.on_job_done = self.metrics.job_done
        token = c.auth_token
        for key in ("listen", "http_listen"):
            if token and not d["tls_cert"] and not is_loopback(d[key]):
                log.warning("[daemon] %s = %s is reachable from other machines without TLS: the "
                            "bearer token travels in the clear (set tls_cert/tls_key)", key, d[key])
        self.server, port = build_server(
            self.service, self.metrics, d["listen"], d["grpc_threads"], d["max_message_bytes"],
            token, d["tls_cert"], d["tls_key"],
        )
        # Bind every listener before the engine starts and recovered jobs are resubmitted.
        self.http = None
        if d["http_listen"]:
            self.http = HttpEndpoint(d["http_listen"], self.service, self.metrics, token,
                                     d["tls_cert"], d["tls_key"])
            self.http_address = self.http.address
        self.grpc_address = d["listen"] if d["listen"].startswith("unix:") else (
            d["listen"].rsplit(":", 1)[0] + f":{port}")
        if hasattr(self.service, "address"):  # a cluster node publishes where it listens
            self.service.address = self.grpc_address
        recovered = self.service.start()
        for cid in c["srs"]["preload"]:
            t0 = time.monotonic()
            try:
                self.service.preload(cid)
            except ServiceError as exc:
                raise ConfigError(f"{c.source}: [srs] preload {cid!r}: {exc.message}") from None
            log.info("preloaded key %s in %.0f ms", cid, (time.monotonic() - t0) * 1000)
        if self.http is not None:
            self.http.start()
        self.server.start()
        self._janitor = threading.Thread(target=self._cleanup_loop, name="cuzk-janitor", daemon=True)
        self._janitor.start()
        log.info("cuzk daemon listening grpc=%s http=%s tls=%s auth=%s circuits=%s recovered=%d pid=%d",
                 self.grpc_address, self.http_address or "off", bool(d["tls_cert"]), bool(token),
                 ",".join(sorted(infos)) or "none", recovered, os.getpid())

    def _cleanup_loop(self) -> None:
        retention = self.config["store"]["retention"]
        while not self._stop.wait(min(3600.0, max(retention / 4, 1.0))):
            try:
                n = self.store.cleanup(retention)
                if n:
                    log.info("store: removed %d job(s) past retention", n)
            except Exception:
                log.exception("store cleanup failed")

    def request_stop(self, *_: Any) -> None:
        self._stop.set()

    def _device_lost(self, device: str, reason: str) -> None:
        """The engine's last device is unusable: stop now, leaving the unfinished jobs queued
        in the store, and exit with EXIT_DEVICE_LOST so a supervisor restarts the daemon."""
        log.critical("%s lost (%s): stopping; unfinished jobs stay queued for the restart",
                     device, reason)
        self.exit_code = EXIT_DEVICE_LOST
        self._stop.set()

    def wait(self) -> None:
        while not self._stop.wait(0.5):
            pass

    def stop(self) -> None:
        # with no device left, nothing running can finish: keep it all queued at once
        grace = 0.0 if self.exit_code == EXIT_DEVICE_LOST else \
            self.config["daemon"]["shutdown_grace_s"]
        log.info("shutting down: finishing running jobs (up to %.0f s), keeping the rest queued", grace)
        self._stop.set()
        try:
            self.service.stop(grace)
        except Exception:
            if self.exit_code != EXIT_DEVICE_LOST:
                raise
            # freeing device memory may fail on a lost device; the store holds every
            # unfinished job as accepted, so the restart resubmits them all the same
            log.exception("stopping the engine after the device loss")
        # Awaiters of finished jobs have their answers by now; refuse new calls.
        self.server.stop(grace=2).wait(5)
        if self.http is not None:
            self.http.stop()
        self.store.close()
        log.info("cuzk daemon stopped")


def run(config: DaemonConfig, ready_file: str | None = None) -> int:
    """Run until SIGTERM/SIGINT; returns the exit code."""
    daemon = Daemon(config)
    signal.signal(signal.SIGTERM, daemon.request_stop)
    signal.signal(signal.SIGINT, daemon.request_stop)
    daemon.start()
    if ready_file:
        tmp = f"{ready_file}.tmp"
        with open(tmp, "w") as f:
            json.dump({"grpc": daemon.grpc_address, "http": daemon.http_address, "pid": os.getpid()}, f)
        os.replace(tmp, ready_file)
    daemon.wait()
    daemon.stop()
    return daemon.exit_code
