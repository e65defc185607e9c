"""Arithmetic backends behind one interface (base.Backend): cuda, cpu (native), reference."""

from __future__ import annotations

import threading

from cuzk.backends.base import Backend
from cuzk.settings import settings

_lock = threading.Lock()
_instances: dict[str, Backend] = {}


def _make(name: str) -> Backend:
    if name == "reference":
        from cuzk.backends.reference import ReferenceBackend

        return ReferenceBackend()
    if name == "cpu":
        from cuzk.backends.cpu import CpuBackend

        return CpuBackend()
    if name == "cuda":
        from cuzk.backends import cuda

        return cuda.CudaBackend()
    raise ValueError(f"unknown backend {name!r}; expected auto, cuda, cpu or reference")


def _cuda_usable() -> bool:
    try:
        from cuzk.backends import cuda
    except Exception:  # module absent or CuPy missing/broken
        return False
    probe = getattr(cuda, "is_available", None)
    try:
        return bool(probe()) if probe else True
    except Exception:
        return False


def available() -> list[str]:
    """Backend names that can be created here, fastest first."""
    from cuzk.backends.cpu import native_module

    names = []
    if _cuda_usable():
        names.append("cuda")
    if native_module() is not None:
        names.append("cpu")
    names.append("reference")
    return names


def get_backend(name: str | None = "auto") -> Backend:
    """A shared backend instance by name; "auto" (or None) picks cuda, else cpu, else reference.

    The CUZK_BACKEND environment variable overrides "auto".
    """
    if name is None or name == "auto":
        name = settings().backend
    with _lock:
        if name in _instances:
            return _instances[name]
        if name == "auto":
            last: Exception | None = None
            for candidate in available():
                try:
                    backend = _make(candidate)
                except Exception as exc:  # e.g. a GPU that fails to initialise
                    last = exc
                    continue
                _instances["auto"] = _instances[candidate] = backend
                return backend
            raise RuntimeError(f"no backend could be created: {last}")
        backend = _make(name)
        _instances[name] = backend
        return backend


__all__ = ["Backend", "available", "get_backend"]
