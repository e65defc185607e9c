"""gRPC adapter: cuzk.v1.ProvingEngine over ProvingService, bearer-token auth, TLS, limits."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc

from cuzk.server.limits import client_of
from cuzk.server.metrics import Metrics
from cuzk.server.proto import pb, rpc
from cuzk.server.service import ProvingService, ServiceError

log = logging.getLogger("cuzk.server")


class _Servicer(rpc.ProvingEngineServicer):
    def __init__(self, service: ProvingService, metrics: Metrics) -> None:
        self.s = service
        self.m = metrics

    def _call(self, context: grpc.ServicerContext, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except ServiceError as exc:
            self.m.rejected.labels(exc.code.name).inc()
            context.abort(exc.code, exc.message)
        except Exception as exc:  # a bug must not take the daemon down; tell the client
            log.exception("internal error")
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}: {exc}")

    def SubmitProof(self, request: pb.SubmitProofRequest, context: grpc.ServicerContext) -> Any:
        resp = self._call(context, lambda: self.s.submit(request, client_of(context.peer())))
        if not resp.duplicate:
            self.m.submitted.inc()
        return resp

    def AwaitProof(self, request: pb.AwaitProofRequest, context: grpc.ServicerContext) -> Any:
        timeout = request.timeout_ms / 1000.0 if request.timeout_ms else None
        return self._call(context, lambda: self.s.await_job(request.job_id, timeout, context.is_active))

    def Prove(self, request: pb.ProveRequest, context: grpc.ServicerContext) -> Any:
        sub = self.SubmitProof(request.submit, context)
        timeout = request.timeout_ms / 1000.0 if request.timeout_ms else None
        res = self._call(context, lambda: self.s.await_job(sub.job_id, timeout, context.is_active))
        return pb.ProveResponse(result=res)

    def CancelProof(self, request: pb.CancelProofRequest, context: grpc.ServicerContext) -> Any:
        return self._call(context, lambda: self.s.cancel(request.job_id))

    def GetStatus(self, request: pb.GetStatusRequest, context: grpc.ServicerContext) -> Any:
        return self._call(context, lambda: self.s.status(request.job_id))

    def GetMetrics(self, request: pb.GetMetricsRequest, context: grpc.ServicerContext) -> Any:
        return self._call(context, lambda: pb.GetMetricsResponse(prometheus_text=self.m.text()))

    def PreloadSRS(self, request: pb.PreloadSrsRequest, context: grpc.ServicerContext) -> Any:
        return self._call(context, lambda: self.s.preload(request.circuit_id))

    def EvictSRS(self, request: pb.EvictSrsRequest, context: grpc.ServicerContext) -> Any:
        return self._call(context, lambda: self.s.evict(request.circuit_id))


def token_ok(header: str | None, token: str) -> bool:
    """`authorization: Bearer <token>`, compared in constant time."""
    if not header or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(header[7:].strip().encode(), token.encode())


class _AuthInterceptor(grpc.ServerInterceptor):
    def __init__(self, token: str, metrics: Metrics) -> None:
        self.token = token
        self.metrics = metrics

        def deny(request: Any, context: grpc.ServicerContext) -> Any:
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          "missing or wrong bearer token: send metadata "
                          "'authorization: Bearer <token>' (cuzk --token / CUZK_TOKEN)")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        md = dict(details.invocation_metadata or ())
        if token_ok(md.get("authorization"), self.token):
            return continuation(details)
        self.metrics.rejected.labels("UNAUTHENTICATED").inc()
        return self._deny


def build_server(
    service: ProvingService,
    metrics: Metrics,
    listen: str,
    threads: int,
    max_message_bytes: int,
    token: str = "",
    tls_cert: str = "",
    tls_key: str = "",
) -> tuple[grpc.Server, int]:
    """A started-later grpc.Server bound to `listen`; returns it and the bound port (0 for
    unix sockets)."""
    options = [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.so_reuseport", 0),
    ]
    interceptors = [_AuthInterceptor(token, metrics)] if token else []
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="cuzk-grpc"),
        options=options, interceptors=interceptors,
    )
    rpc.add_ProvingEngineServicer_to_server(_Servicer(service, metrics), server)
    try:
        if tls_cert:
            creds = grpc.ssl_server_credentials(
                [(Path(tls_key).expanduser().read_bytes(), Path(tls_cert).expanduser().read_bytes())]
            )
            port = server.add_secure_port(listen, creds)
        else:
            port = server.add_insecure_port(listen)
    except RuntimeError as exc:  # newer grpcio raises where older ones returned port 0
        raise OSError(f"cannot listen on {listen} (address in use?): {exc}") from None
    if port == 0 and not listen.startswith("unix:"):
        raise OSError(f"cannot listen on {listen} (address in use?)")
    return server, port
