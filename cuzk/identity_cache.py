"""Values attached to an object for as long as it lives, keyed by its identity.

numpy arrays are not hashable, so a cache of "what was computed for this array" (a device copy
of a key's points, its window tables, a matrix with its public rows added) is keyed by `id()`
and checked against a weak reference; the entry goes when the object does. An object that
cannot be weakly referenced is held strongly until its entry is popped.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class _Strong:
    """Stands in for a weak reference to an object that cannot be weakly referenced."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __call__(self) -> Any:
        return self._obj


def ref(obj: Any, callback: Any = None) -> Any:
    """A weak reference to obj, or a strong stand-in when obj cannot have one."""
    try:
        return weakref.ref(obj, callback) if callback is not None else weakref.ref(obj)
    except TypeError:
        return _Strong(obj)


class IdentityCache(Generic[V]):
    """A dict from live objects (by identity) to values; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[Any, V]] = {}

    def get(self, obj: Any) -> V | None:
        with self._lock:
            hit = self._entries.get(id(obj))
        if hit is None or hit[0]() is not obj:
            return None
        return hit[1]

    def put(self, obj: Any, value: V) -> V:
        key = id(obj)

        def gone(r: Any, key: int = key) -> None:
            with self._lock:
                hit = self._entries.get(key)
                if hit is not None and hit[0] is r:
                    del self._entries[key]

        with self._lock:
            self._entries[key] = (ref(obj, gone), value)
        return value

    def pop(self, obj: Any) -> V | None:
        with self._lock:
            hit = self._entries.get(id(obj))
            if hit is None or hit[0]() is not obj:
                return None
            del self._entries[id(obj)]
        return hit[1]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def values(self) -> list[V]:
        with self._lock:
            return [v for r, v in self._entries.values() if r() is not None]

    def __contains__(self, obj: Any) -> bool:
        return self.get(obj) is not None

    def __len__(self) -> int:
        return len(self.values())

    def __iter__(self) -> Iterator[V]:
        return iter(self.values())
