"""HTTP endpoint beside the gRPC port: GET /status (JSON), /metrics (Prometheus), /healthz.

With [daemon] tls_cert/tls_key set it speaks HTTPS with the same certificate as gRPC, so a
bearer token is never sent in the clear to a daemon that listens beyond loopback.
"""

from __future__ import annotations

import json
import logging
import os
import socketserver
import ssl
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
        timeout = 30  # a client that stalls (or never finishes a TLS handshake) frees its thread

        def setup(self) -> None:
            super().setup()
            if isinstance(self.connection, ssl.SSLSocket):
                # The handshake runs here, in the request's thread, not in the accept loop.
                self.connection.do_handshake()

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


class _QuietErrors:
    """Failed handshakes and dropped connections are the client's problem: log, no traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("http connection from %s failed", client_address, exc_info=True)


class _TcpHTTPServer(_QuietErrors, ThreadingHTTPServer):
    daemon_threads = True


class _UnixHTTPServer(_QuietErrors, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self) -> tuple[Any, Any]:
        req, _ = super().get_request()
        return req, ("unix", 0)


class HttpEndpoint:
    def __init__(self, listen: str, service: ProvingService, metrics: Metrics, token: str = "",
                 tls_cert: str = "", tls_key: str = "") -> None:
        handler = _handler(service, metrics, token)
        self.server: socketserver.BaseServer
        self._unix_path = ""
        if listen.startswith("unix:"):
            path = listen[5:].removeprefix("//")
            if os.path.exists(path):
                os.unlink(path)
            self.server = _UnixHTTPServer(path, handler)
            self.address = listen
            self._unix_path = path
        else:
            host, port = listen.rsplit(":", 1)
            try:
                srv = _TcpHTTPServer((host.strip("[]"), int(port)), handler)
            except OSError as exc:
                raise OSError(f"cannot listen on {listen} (http_listen): {exc.strerror or exc}") from None
            self.server = srv
            self.address = f"{host}:{srv.server_address[1]}"
        self.tls = bool(tls_cert)
        if tls_cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.load_cert_chain(os.path.expanduser(tls_cert), os.path.expanduser(tls_key))
            sock = self.server.socket  # type: ignore[attr-defined]
            self.server.socket = ctx.wrap_socket(  # type: ignore[attr-defined]
                sock, server_side=True, do_handshake_on_connect=False)
        self._thread = threading.Thread(target=self.server.serve_forever, name="cuzk-http", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._unix_path:
            try:
                os.unlink(self._unix_path)
            except FileNotFoundError:
                pass
