"""The native key cache: a proving key in our array layout, memory-mapped on load.

File: 8-byte magic b"CUZKKEY\\0", u32 version, u32 0, u64 header length, a JSON header (curve,
sizes, convention, meta, and per array its offset, dtype and shape), then the raw arrays,
each starting on a 64-byte boundary. Loading maps the file once and hands out read-only numpy
views, so a daemon restart costs a page-in, not a parse of a multi-GB params file.

`load_proving_key(path)` reads any key file (zkey, bellman params or a cache file) and keeps
a cache copy under CUZK_CACHE_DIR (default ~/.cache/cuzk), keyed by the source's path, size
and mtime, so the next load of the same file is a map.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import mmap as _mmap
import os
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.formats.binfile import PathLike
from cuzk.formats.errors import FormatError
from cuzk.model.keys import ProvingKey, VerifyingKey
from cuzk.model.r1cs import CSR, R1CS
from cuzk.settings import settings

log = logging.getLogger(__name__)

MAGIC = b"CUZKKEY\0"
VERSION = 1
ALIGN = 64
_PREFIX = struct.Struct("<8sIIQ")

_PK_ARRAYS = (
    "alpha_g1", "beta_g1", "beta_g2", "delta_g1", "delta_g2",
    "a_g1", "b_g1", "b_g2", "l_g1", "h_g1",
)  # fmt: skip
_VK_ARRAYS = ("alpha_g1", "beta_g2", "gamma_g2", "delta_g2", "ic")


def _json_safe(obj: Any) -> Any:
    """meta/labels entries that survive JSON; arrays and other objects are dropped."""
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items() if _is_plain(v)}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj if _is_plain(v)]
    return obj


def _is_plain(v: Any) -> bool:
    if isinstance(v, dict | list | tuple):
        return True
    return v is None or isinstance(v, str | int | float | bool)


def r1cs_arrays(r: R1CS, labels: bool = True) -> tuple[dict, dict[str, np.ndarray]]:
    """An R1CS as a header entry (sizes, JSON-safe labels) and its CSR arrays `r1cs.<m>.*`."""
    info = {
        "n_vars": r.n_vars,
        "n_public": r.n_public,
        "n_constraints": r.n_constraints,
        "n_cols": {m: getattr(r, m).n_cols for m in "abc"},
        "labels": _json_safe(r.labels) if labels else {},
    }
    arrays = {}
    for m in "abc":
        csr = getattr(r, m)
        arrays[f"r1cs.{m}.indptr"] = np.asarray(csr.indptr, dtype=np.int64)
        arrays[f"r1cs.{m}.indices"] = np.asarray(csr.indices, dtype=np.int64)
        arrays[f"r1cs.{m}.values"] = np.asarray(csr.values, dtype=np.uint64)
    return info, arrays


def _collect(pk: ProvingKey) -> tuple[dict, dict[str, np.ndarray]]:
    arrays: dict[str, np.ndarray] = {k: np.asarray(getattr(pk, k)) for k in _PK_ARRAYS}
    arrays.update({f"vk.{k}": np.asarray(getattr(pk.vk, k)) for k in _VK_ARRAYS})
    r1cs_info = None
    if pk.r1cs is not None:
        r1cs_info, mats = r1cs_arrays(pk.r1cs)
        arrays.update(mats)
    header = {
        "format": "cuzk-key-cache",
        "version": VERSION,
        "curve": pk.curve.name,
        "n_vars": pk.n_vars,
        "n_public": pk.n_public,
        "domain_size": pk.domain_size,
        "h_convention": pk.h_convention,
        "meta": _json_safe(pk.meta),
        "r1cs": r1cs_info,
    }
    return header, arrays


def _plan(header: dict, specs: dict[str, tuple[tuple[int, ...], np.dtype]],
          magic: bytes = MAGIC, version: int = VERSION) -> tuple[bytes, int]:
    """Lay out the arrays after the header (header["arrays"] is filled in); returns the padded
    header and the file's total size."""
    layout: dict[str, dict] = {}
    # Offsets depend on the header length, which depends on the offsets' digits: lay out
    # with a generous header reservation, then pad the real header to it.
    reserve = 4096 + 160 * len(specs)
    offset = _round_up(_PREFIX.size + reserve)
    for name, (shape, dt) in specs.items():
        dt = np.dtype(dt)
        dt = dt.newbyteorder("<") if dt.byteorder == ">" else dt
        layout[name] = {"offset": offset, "dtype": dt.str, "shape": [int(s) for s in shape]}
        offset = _round_up(offset + int(np.prod(shape, dtype=np.int64)) * dt.itemsize)
    header["arrays"] = layout
    blob = json.dumps(header, separators=(",", ":")).encode()
    if len(blob) > reserve:
        raise ValueError("key cache header larger than its reservation (meta too large?)")
    blob = blob.ljust(reserve, b" ")
    return _PREFIX.pack(magic, version, 0, len(blob)) + blob, offset


def save_key_cache(pk: ProvingKey, path: PathLike) -> None:
    """Write `pk` as a cache file (atomically: a reader never sees half a file)."""
    header, arrays = _collect(pk)
    write_array_file(path, header, arrays)


def write_array_file(path: PathLike, header: dict, arrays: dict[str, np.ndarray],
                     magic: bytes = MAGIC, version: int = VERSION) -> None:
    """The container of this module (prefix, JSON header, 64-byte aligned raw arrays) with
    any arrays, written atomically; other cached objects (recorded R1CS) use it too."""
    arrays = {k: np.ascontiguousarray(a) for k, a in arrays.items()}
    head, total = _plan(header, {k: (a.shape, a.dtype) for k, a in arrays.items()}, magic, version)
    layout = header["arrays"]
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(head)
            for name, arr in arrays.items():
                f.seek(layout[name]["offset"])
                f.write(np.ascontiguousarray(arr, dtype=np.dtype(layout[name]["dtype"])))
            f.truncate(total)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class KeyCacheWriter:
    """A key-cache file laid out up front and filled in place through writable maps, so a key
    larger than memory (a 32 GiB PoRep's) is converted chunk by chunk. The arrays start as
    zeros (the point at infinity). `commit()` makes the file visible under its name at once;
    leaving the `with` block without it removes the file.

    The disk blocks the fill will write are reserved up front, so a full disk is an OSError
    here rather than a SIGBUS halfway through the fill. `rows` names the arrays written only
    in part (a, b_g1, b_g2: the variables not in A or B keep no point) with a mask of the rows
    that will be written; the blocks holding none of them stay holes."""

    def __init__(self, path: PathLike, *, curve: Curve, n_vars: int, n_public: int,
                 domain_size: int, h_convention: str, meta: dict | None = None,
                 rows: dict[str, np.ndarray] | None = None) -> None:
        L = curve.limbs
        g1, g2 = (2, L), (2, 2, L)
        n_h = domain_size - (1 if h_convention == "bellman" else 0)
        u64 = np.dtype(np.uint64)
        specs: dict[str, tuple[tuple[int, ...], np.dtype]] = {
            "alpha_g1": (g1, u64), "beta_g1": (g1, u64), "beta_g2": (g2, u64),
            "delta_g1": (g1, u64), "delta_g2": (g2, u64),
            "a_g1": ((n_vars, *g1), u64), "b_g1": ((n_vars, *g1), u64),
            "b_g2": ((n_vars, *g2), u64), "l_g1": ((n_vars - n_public - 1, *g1), u64),
            "h_g1": ((n_h, *g1), u64),
            "vk.alpha_g1": (g1, u64), "vk.beta_g2": (g2, u64), "vk.gamma_g2": (g2, u64),
            "vk.delta_g2": (g2, u64), "vk.ic": ((n_public + 1, *g1), u64),
        }  # fmt: skip
        header = {
            "format": "cuzk-key-cache", "version": VERSION, "curve": curve.name,
            "n_vars": n_vars, "n_public": n_public, "domain_size": domain_size,
            "h_convention": h_convention, "meta": _json_safe(meta or {}), "r1cs": None,
        }  # fmt: skip
        head, total = _plan(header, specs)
        self.path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        self._tmp = Path(tmp)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(head)
                f.truncate(total)  # unwritten rows read as zeros
                _reserve(f.fileno(), 0, len(head))
                for name, spec in header["arrays"].items():
                    size = int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize
                    if name in (rows or {}):
                        _reserve_rows(f.fileno(), spec["offset"], size, rows[name])
                    else:
                        _reserve(f.fileno(), spec["offset"], size)
            self.arrays: dict[str, np.ndarray] = {}
            for name, spec in header["arrays"].items():
                shape = tuple(spec["shape"])
                if int(np.prod(shape, dtype=np.int64)) == 0:
                    self.arrays[name] = np.zeros(shape, dtype=np.uint64)
                else:
                    self.arrays[name] = np.memmap(self._tmp, dtype=np.dtype(spec["dtype"]),
                                                  mode="r+", offset=spec["offset"], shape=shape)
        except BaseException as exc:
            self._tmp.unlink(missing_ok=True)
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                raise OSError(exc.errno, f"no space left in {self.path.parent} for the "
                              f"{total / 2**30:.2f} GiB key cache file {self.path.name}") from None
            raise
        self._done = False

    def commit(self) -> None:
        for arr in self.arrays.values():
            if isinstance(arr, np.memmap):
                arr.flush()
        self.arrays = {}
        os.replace(self._tmp, self.path)
        self._done = True

    def abort(self) -> None:
        self.arrays = {}
        if not self._done:
            self._tmp.unlink(missing_ok=True)
            self._done = True

    def __enter__(self) -> KeyCacheWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()


_BLOCK = 4096


def _reserve(fd: int, offset: int, size: int) -> None:
    """Allocate the file's blocks over [offset, offset + size) where the filesystem can; a
    full disk raises OSError(ENOSPC)."""
    if size <= 0:
        return
    try:
        os.posix_fallocate(fd, offset, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # filesystems without it: sparse
            raise
    except AttributeError:  # platforms without posix_fallocate
        pass


def _reserve_rows(fd: int, offset: int, size: int, mask: np.ndarray) -> None:
    """Reserve the blocks of an array that hold at least one of the rows `mask` marks; runs of
    blocks holding none stay holes. Chunked: a 32 GiB PoRep's masks have 130 M rows."""
    mask = np.asarray(mask, dtype=bool)
    n = len(mask)
    if n == 0:
        return
    row = size // n
    if row > _BLOCK or row * n != size:
        _reserve(fd, offset, size)
        return
    first_blk, last_blk = offset // _BLOCK, (offset + size - 1) // _BLOCK
    used = np.zeros(last_blk - first_blk + 1, dtype=bool)
    step = 1 << 22
    for r0 in range(0, n, step):
        idx = np.flatnonzero(mask[r0:r0 + step]).astype(np.int64) + r0
        start = offset + idx * row
        used[start // _BLOCK - first_blk] = True  # a row of at most a block touches at most two
        used[(start + row - 1) // _BLOCK - first_blk] = True
    edges = np.flatnonzero(np.diff(np.concatenate(([0], used.view(np.int8), [0]))))
    for b0, b1 in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
        lo = max(offset, (first_blk + b0) * _BLOCK)
        hi = min(offset + size, (first_blk + b1) * _BLOCK)
        _reserve(fd, lo, hi - lo)


def _round_up(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def is_key_cache(path: PathLike) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) == MAGIC
    except OSError:
        return False


class ArrayFile:
    """A mapped container file: its JSON header and read-only views of its arrays."""

    def __init__(self, name: str, header: dict, buf: Any, size: int) -> None:
        self.name, self.header, self._buf, self._size = name, header, buf, size

    def array(self, key: str) -> np.ndarray:
        try:
            spec = self.header["arrays"][key]
            dt = np.dtype(spec["dtype"])
            shape = tuple(int(s) for s in spec["shape"])
            off = int(spec["offset"])
        except (KeyError, TypeError, ValueError) as exc:
            raise FormatError(self.name, f"bad or missing array entry: {exc}", key) from None
        count = int(np.prod(shape, dtype=np.int64))
        if off < 0 or off + count * dt.itemsize > self._size:
            raise FormatError(self.name, "truncated: array runs past the end of the file", key)
        return np.frombuffer(self._buf, dtype=dt, count=count, offset=off).reshape(shape)


def map_array_file(path: PathLike, magic: bytes = MAGIC, version: int = VERSION,
                   what: str = "cuzk key cache", mmap: bool = True) -> ArrayFile:
    """Open a container file (mapped, or read into memory with mmap=False), its prefix and
    header checked."""
    name = str(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < _PREFIX.size:
                raise FormatError(name, f"file too short ({size} bytes) for a {what}")
            buf: Any = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ) if mmap else f.read()
    except OSError as exc:
        raise FormatError(name, f"cannot open: {exc.strerror or exc}") from None
    got, ver, _, hlen = _PREFIX.unpack_from(buf, 0)
    if got != magic:
        raise FormatError(name, f"not a {what} (magic {got!r})")
    if ver != version:
        raise FormatError(name, f"{what} version {ver}, this build reads {version}")
    if _PREFIX.size + hlen > size:
        raise FormatError(name, "truncated: header cut off", "header")
    try:
        header = json.loads(bytes(buf[_PREFIX.size : _PREFIX.size + hlen]))
        if not isinstance(header.get("arrays"), dict):
            raise KeyError("arrays")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FormatError(name, f"unreadable header: {exc}", "header") from None
    return ArrayFile(name, header, buf, size)


def load_key_cache(path: PathLike, mmap: bool = True) -> ProvingKey:
    """A cache file -> ProvingKey whose arrays are read-only views of the mapped file
    (or private in-memory copies with mmap=False)."""
    f = map_array_file(path, mmap=mmap)
    name, header, arr = f.name, f.header, f.array
    try:
        curve = get_curve(header["curve"])
    except (ValueError, KeyError, TypeError) as exc:
        raise FormatError(name, f"unreadable header: {exc}", "header") from None

    try:
        vk = VerifyingKey(curve, *(arr(f"vk.{k}") for k in _VK_ARRAYS))
        r1cs = r1cs_from_arrays(header.get("r1cs"), curve, arr)
        pk = ProvingKey(
            curve=curve,
            n_vars=int(header["n_vars"]),
            n_public=int(header["n_public"]),
            domain_size=int(header["domain_size"]),
            **{k: arr(k) for k in _PK_ARRAYS},
            h_convention=header["h_convention"],
            vk=vk,
            r1cs=r1cs,
            meta=dict(header.get("meta") or {}),
        )
    except (KeyError, TypeError) as exc:
        raise FormatError(name, f"header misses {exc}", "header") from None
    _check_shapes(pk, name)
    pk.meta["cache_path"] = name
    return pk


def r1cs_from_arrays(info: dict | None, curve: Curve, arr: Any) -> R1CS | None:
    """The R1CS r1cs_arrays wrote, its matrices views of `arr(name)`'s arrays."""
    if not info:
        return None
    mats = {
        m: CSR(
            indptr=arr(f"r1cs.{m}.indptr"),
            indices=arr(f"r1cs.{m}.indices"),
            values=arr(f"r1cs.{m}.values"),
            n_cols=int(info["n_cols"][m]),
        )
        for m in "abc"
    }
    return R1CS(
        curve=curve,
        n_vars=int(info["n_vars"]),
        n_public=int(info["n_public"]),
        a=mats["a"],
        b=mats["b"],
        c=mats["c"],
        n_constraints=int(info["n_constraints"]),
        labels=dict(info.get("labels") or {}),
    )


def _check_shapes(pk: ProvingKey, name: str) -> None:
    L = pk.curve.limbs
    g1, g2 = (2, L), (2, 2, L)
    want = {
        "alpha_g1": g1, "beta_g1": g1, "delta_g1": g1, "beta_g2": g2, "delta_g2": g2,
        "a_g1": (pk.n_vars, *g1), "b_g1": (pk.n_vars, *g1), "b_g2": (pk.n_vars, *g2),
        "l_g1": (pk.n_vars - pk.n_public - 1, *g1),
        "h_g1": (pk.domain_size - (1 if pk.h_convention == "bellman" else 0), *g1),
    }  # fmt: skip
    for k, shape in want.items():
        if tuple(getattr(pk, k).shape) != shape:
            raise FormatError(name, f"shape {getattr(pk, k).shape}, expected {shape}", k)
    if tuple(pk.vk.ic.shape) != (pk.n_public + 1, *g1):
        raise FormatError(name, f"shape {pk.vk.ic.shape}, expected {(pk.n_public + 1, *g1)}", "vk.ic")


def default_cache_dir() -> Path:
    d = settings().cache_dir
    return Path(d) if d else Path.home() / ".cache" / "cuzk"


def _sniff(path: PathLike) -> str:
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise FormatError(str(path), f"cannot open: {exc.strerror or exc}") from None
    if head == MAGIC:
        return "cache"
    if head[:4] == b"zkey":
        return "zkey"
    return "bellman"


def _masks(density: Any) -> tuple[np.ndarray, np.ndarray]:
    from cuzk.model.density import Density

    if isinstance(density, R1CS):
        return Density.from_r1cs(density).masks()
    if isinstance(density, Density):
        return density.masks()
    a, b = density
    return np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)


def load_proving_key(
    path: PathLike,
    curve: Curve | str | None = None,
    density: Any = None,
    cache: bool = True,
    cache_dir: PathLike | None = None,
    verify_source: Callable[[Path], None] | None = None,
) -> ProvingKey:
    """Any proving key file -> ProvingKey, parsed once and memory-mapped from then on.

    zkey files carry their curve; bellman params do not (`curve` defaults to BLS12-381,
    Filecoin's) and need the circuit's `density` (a `cuzk.model.density.Density`, its R1CS,
    or masks; see `bellman.read_bellman_params`) unless a/b hold a point per variable. A
    bellman file with a Density or masks is converted into the cache chunk by chunk (never
    held in memory); with an R1CS it is read in memory and the R1CS kept on the key, as
    before. `verify_source(path)` runs before the source is parsed (not when a converted copy
    is used): e.g. a digest check.
    """
    from cuzk.formats.bellman import read_bellman_params
    from cuzk.formats.zkey import read_zkey

    kind = _sniff(path)
    if kind == "cache":
        return load_key_cache(path)
    c = get_curve(curve or "bls12_381")

    def parse() -> ProvingKey:
        if verify_source is not None:
            verify_source(Path(path))
        if kind == "zkey":
            return read_zkey(path)
        return read_bellman_params(path, c, density)

    if not cache:
        return parse()
    src = Path(path).resolve()
    st = src.stat()
    h = hashlib.sha256(f"{src}|{st.st_size}|{st.st_mtime_ns}|{VERSION}|{kind}".encode())
    if kind == "bellman":
        h.update(c.name.encode())
        if density is not None:
            for m in _masks(density):
                h.update(np.packbits(m).tobytes())
    cdir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cdir / f"{src.stem}-{h.hexdigest()[:20]}.cuzkkey"
    if target.exists():
        try:
            return load_key_cache(target)
        except FormatError as exc:
            log.warning("rebuilding unreadable key cache %s: %s", target, exc)
    try:
        cdir.mkdir(parents=True, exist_ok=True)
        lock = open(target.with_name(target.name + ".lock"), "w")  # noqa: SIM115  held below
    except OSError as exc:
        log.warning("cannot write key cache %s: %s", target, exc)
        return parse()
    with lock:
        # one writer per file across processes (daemons sharing a cache folder): the others
        # wait here and map its result
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            try:
                return load_key_cache(target)
            except FormatError:
                pass
        remove_orphans(target)
        return _build(target, kind, src, path, c, density, parse, verify_source)


def available_memory() -> int:
    """Bytes of memory available to a new allocation (Linux's MemAvailable; else all of it)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def remove_orphans(target: Path) -> None:
    """Temporary files of `target` (this module's writers name them `.<name>.<random>`) that a
    killed writer left. Call it holding the lock its writers take, so no live writer has one:
    a 32 GiB key's is 75 GB, its recorded matrices' 32 GB; they must not pile up."""
    for tmp in target.parent.glob(f".{target.name}.*"):
        try:
            size = tmp.stat().st_size
            tmp.unlink()
            log.info("removed %s (%.2f GiB) left by an interrupted write", tmp, size / 2**30)
        except OSError:
            pass


def _build(target: Path, kind: str, src: Path, path: PathLike, c: Curve, density: Any,
           parse: Callable[[], ProvingKey],
           verify_source: Callable[[Path], None] | None) -> ProvingKey:
    from cuzk.formats.bellman import convert_bellman_params, read_bellman_params

    if kind == "bellman" and not isinstance(density, R1CS):
        try:
            if verify_source is not None:
                verify_source(src)
            convert_bellman_params(src, target, c, density)
            return load_key_cache(target)
        except OSError as exc:
            # in memory the key takes about its converted size; a 32 GiB PoRep's (75 GB) would
            # be killed for memory, so a clear error is the better answer there
            need, have = 2 * src.stat().st_size, available_memory()
            if need > have:
                raise OSError(exc.errno, f"cannot write the key cache {target} ({exc.strerror or exc}), "
                              f"and reading {src.name} into memory instead needs about "
                              f"{need / 2**30:.1f} GiB, more than the {have / 2**30:.1f} GiB "
                              "available: free space there, or point `[srs] key_cache_dir` (the daemon) or "
                              "CUZK_CACHE_DIR elsewhere") from None
            log.warning("cannot write key cache %s (%s): reading %s in memory", target, exc, src)
            return read_bellman_params(path, c, density)
    pk = parse()
    try:
        save_key_cache(pk, target)
    except OSError as exc:
        log.warning("cannot write key cache %s: %s", target, exc)
        return pk
    return load_key_cache(target)
