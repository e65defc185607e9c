"""HTTP endpoint beside the gRPC port: GET /status (JSON), /metrics (Prometheus), /healthz."""

from __future__ import annotations

import json
import logging
import os
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cuzk.server.client import message_dict
from cuzk.server.grpc_server import token_ok
from cuzk.server.metrics import Metrics
from cuzk.server.service import ProvingService

log = logging.getLogger("cuzk.server")


def _handler(service: ProvingService, metrics: Metrics, token: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "cuzk"

        def address_string(self) -> str:  # unix sockets have no client address
            return str(self.client_address[0]) if self.client_address else "unix"

        def log_message(self, fmt: str, *args: Any) -> None:
            log.debug("http %s " + fmt, self.address_string(), *args)

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split("?", 1)[0]
            if path == "/healthz":
                return self._send(200, b"ok\n", "text/plain")
            if token and not token_ok(self.headers.get("Authorization"), token):
                return self._send(401, b"missing or wrong bearer token\n", "text/plain")
            try:
                if path == "/metrics":
                    return self._send(200, metrics.text().encode(), "text/plain; version=0.0.4")
                if path == "/status":
                    d = message_dict(service.status())
                    d.pop("job")
                    d["engine"] = json.loads(d.pop("engine_status_json") or "{}")
                    d["store"] = service.store.counts()
                    return self._send(200, json.dumps(d, indent=1).encode(), "application/json")
            except Exception as exc:  # report, never kill the endpoint
                log.exception("http %s failed", path)
                return self._send(500, f"{type(exc).__name__}: {exc}\n".encode(), "text/plain")
            self._send(404, b"try /status, /metrics or /healthz\n", "text/plain")

    return Handler


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self) -> tuple[Any, Any]:
        req, _ = super().get_request()
        return req, ("unix", 0)


class HttpEndpoint:
    def __init__(self, listen: str, service: ProvingService, metrics: Metrics, token: str = "") -> None:
        handler = _handler(service, metrics, token)
        self.server: socketserver.BaseServer
        if listen.startswith("unix:"):
            path = listen[5:].removeprefix("//")
            if os.path.exists(path):
                os.unlink(path)
            self.server = _UnixHTTPServer(path, handler)
            self.address = listen
        else:
            host, port = listen.rsplit(":", 1)
            srv = ThreadingHTTPServer((host.strip("[]"), int(port)), handler)
            srv.daemon_threads = True
            self.server = srv
            self.address = f"{host}:{srv.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="cuzk-http", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
