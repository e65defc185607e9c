"""gRPC stubs for cuzk.v1.ProvingEngine, generated from cuzk/v1/proving.proto.

The build generates them; in a checkout where they are missing or older than the .proto they
are generated on first import (needs grpcio-tools).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib
import tempfile
from pathlib import Path

from cuzk.server.proto import _generate

if not _generate.stubs_current():
    # Two processes importing at once must not read a half-written stub.
    _tag = hashlib.sha256(str(_generate.HERE).encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"cuzk-proto-{_tag}.lock", "w") as _lock:
        fcntl.flock(_lock, fcntl.LOCK_EX)
        if not _generate.stubs_current():
            _generate.generate()

pb = importlib.import_module("cuzk.server.proto.proving_pb2")
rpc = importlib.import_module("cuzk.server.proto.proving_pb2_grpc")

__all__ = ["pb", "rpc"]
