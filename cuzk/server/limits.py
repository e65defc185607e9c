"""What one request and one client may ask of the daemon: the bounds, and the count of pending
jobs and request bytes held against them, in all and per client.

A client is the peer's address without its port (each connection of a host counts as the same
client; all local unix-socket clients are one). Over a bound, a request is refused with
ResourceBound naming the bound's config key and value: gRPC RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from cuzk.server.validation import ResourceBound

__all__ = ["Admission", "Limits", "ResourceBound", "client_of"]


@dataclass(frozen=True)
class Limits:
    max_partitions_per_job: int = 128  # NI-PoRep's 126 partitions fit
    max_request_bytes: int = 256 * 2**20
    max_pending_jobs: int = 1024
    max_pending_bytes: int = 2 * 2**30
    max_pending_jobs_per_client: int = 256
    max_pending_bytes_per_client: int = 2**30


def client_of(peer: str) -> str:
    """The client a gRPC peer string names: "ipv4:10.0.0.5:51234" → "ipv4:10.0.0.5",
    "ipv6:[::1]:5000" → "ipv6:[::1]", "unix:..." → "unix"."""
    if peer.startswith("unix"):
        return "unix"
    head, sep, port = peer.rpartition(":")
    return head if sep and port.isdigit() and head not in ("ipv4", "ipv6") else peer


class Admission:
    """Pending jobs and their request bytes, in all and by client (thread-safe). Each job is
    held under a key (its request id while it is being stored, then its job id) until it is
    released, once."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self.jobs = 0
        self.bytes = 0
        self._held: dict[str, tuple[str, int]] = {}  # key -> (client, bytes)
        self._by_client: dict[str, list[int]] = {}  # client -> [jobs, bytes]

    def check_size(self, nbytes: int) -> None:
        lim = self.limits.max_request_bytes
        if nbytes > lim:
            raise ResourceBound("[daemon] max_request_bytes", lim,
                                f"the request is {nbytes} bytes; send a smaller job")

    def admit(self, key: str, client: str, nbytes: int) -> None:
        """Hold a new job of `nbytes` within every bound, or raise ResourceBound."""
        lim = self.limits
        with self._lock:
            jobs, held = self._by_client.get(client, (0, 0))
            if self.jobs >= lim.max_pending_jobs:
                raise ResourceBound("[daemon] max_pending_jobs", lim.max_pending_jobs,
                                    f"{self.jobs} jobs are pending; retry later")
            if self.bytes + nbytes > lim.max_pending_bytes:
                raise ResourceBound("[memory] max_pending_bytes", lim.max_pending_bytes,
                                    f"pending requests hold {self.bytes} bytes and this one is "
                                    f"{nbytes}; retry later")
            if jobs >= lim.max_pending_jobs_per_client:
                raise ResourceBound("[daemon] max_pending_jobs_per_client",
                                    lim.max_pending_jobs_per_client,
                                    f"{jobs} jobs of this client ({client}) are pending; retry "
                                    "once some finish")
            if held + nbytes > lim.max_pending_bytes_per_client:
                raise ResourceBound("[memory] max_pending_bytes_per_client",
                                    lim.max_pending_bytes_per_client,
                                    f"pending requests of this client ({client}) hold {held} "
                                    f"bytes and this one is {nbytes}; retry once some finish")
            self._add(key, client, nbytes)

    def hold(self, key: str, nbytes: int, client: str = "") -> None:
        """Hold a job without checking, unless it is held already (a job the store kept
        across a restart: its client is not known)."""
        with self._lock:
            if key not in self._held:
                self._add(key, client, nbytes)

    def rekey(self, old: str, new: str) -> None:
        with self._lock:
            if old in self._held:
                self._held[new] = self._held.pop(old)

    def release(self, key: str) -> None:
        with self._lock:
            got = self._held.pop(key, None)
            if got is None:
                return
            client, nbytes = got
            self.jobs -= 1
            self.bytes -= nbytes
            c = self._by_client[client]
            c[0] -= 1
            c[1] -= nbytes
            if c[0] <= 0:
                del self._by_client[client]

    def client(self, client: str) -> tuple[int, int]:
        """(pending jobs, pending bytes) of a client."""
        with self._lock:
            jobs, held = self._by_client.get(client, (0, 0))
            return jobs, held

    def _add(self, key: str, client: str, nbytes: int) -> None:
        self._held[key] = (client, nbytes)
        self.jobs += 1
        self.bytes += nbytes
        c = self._by_client.setdefault(client, [0, 0])
        c[0] += 1
        c[1] += nbytes
