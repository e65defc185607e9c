"""Filecoin/bellman Groth16 parameter files and verifying-key files.

Layout (bellperson `Parameters::write` / `VerifyingKey::write`), all points uncompressed
big-endian with zcash flag bits (see `points.py`), counts u32 big-endian:

    vk:     α_g1, β_g1, β_g2, γ_g2, δ_g1, δ_g2, u32 |ic|, ic points
    params: vk, then u32 |h| + h, u32 |l| + l, u32 |a| + a, u32 |b_g1| + b_g1, u32 |b_g2| + b_g2

h holds [τ^i·Z(τ)/δ] for i = 0 .. m-2 (coefficient basis), so the domain size m is |h| + 1;
l holds one point per auxiliary (private) variable, ic one per input including the constant.

No point is at infinity: bellperson's generator drops the points at infinity from a, b_g1 and
b_g2 (variables that never appear in A, resp. B) and its reader rejects infinity anywhere. So a
file does not say which variable each a/b point belongs to: a holds every input, then the aux
variables in A; b_g1 and b_g2 the inputs in B, then the aux variables in B, each in variable
order. Our keys keep one point per variable (infinity = zeros), so reading needs the circuit's
density (`cuzk.model.density.Density`, which the Filecoin circuits' shape mode gives without
any matrix), or its R1CS, or explicit boolean masks. Writing drops the points at infinity
again, so files we write load in bellperson. BN254 files use the same layout with BN254's flag
bits (our extension; bellman itself is BLS12-381).

Large files (a 32 GiB PoRep's params are ~47 GB) are never read whole: the file is mapped,
its sections located by their counts, and points decoded in chunks straight into their rows
(`convert_bellman_params` writes them into a key-cache file through writable maps).
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.formats import points
from cuzk.formats.binfile import PathLike, open_bytes
from cuzk.formats.errors import FormatError
from cuzk.model.density import Density
from cuzk.model.keys import ProvingKey, VerifyingKey
from cuzk.model.r1cs import R1CS

DensityLike = R1CS | Density | tuple[np.ndarray, np.ndarray] | None
Masks = tuple[np.ndarray, np.ndarray] | None

SECTIONS = ("h", "l", "a", "b_g1", "b_g2")
CHUNK = 1 << 16  # points decoded (or variables placed) per step: bounded temporary memory


class _Cursor:
    def __init__(self, data: memoryview, name: str, curve: Curve) -> None:
        self.data = data
        self.pos = 0
        self.name = name
        self.curve = curve

    def take(self, n: int, section: str) -> memoryview:
        if self.pos + n > len(self.data):
            raise FormatError(
                self.name,
                f"truncated: needs {n} bytes at offset {self.pos}, file has {len(self.data)}",
                section,
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def count(self, section: str) -> int:
        (n,) = struct.unpack(">I", self.take(4, f"{section} count"))
        return n

    def _points(self, n: int, section: str, g2: bool) -> np.ndarray:
        size = (points.g2_size if g2 else points.g1_size)(self.curve, False)
        if n * size > len(self.data) - self.pos:
            raise FormatError(
                self.name,
                f"truncated: {n} points need {n * size} bytes, {len(self.data) - self.pos} remain",
                section,
            )
        decode = points.g2_from_uncompressed if g2 else points.g1_from_uncompressed
        return decode(self.curve, self.take(n * size, section), n, self.name, section)

    def g1s(self, n: int, section: str) -> np.ndarray:
        return self._points(n, section, g2=False)

    def g2s(self, n: int, section: str) -> np.ndarray:
        return self._points(n, section, g2=True)


@dataclass
class _Vk:
    alpha_g1: np.ndarray
    beta_g1: np.ndarray
    beta_g2: np.ndarray
    gamma_g2: np.ndarray
    delta_g1: np.ndarray
    delta_g2: np.ndarray
    ic: np.ndarray

    def verifying_key(self, c: Curve) -> VerifyingKey:
        return VerifyingKey(c, self.alpha_g1, self.beta_g2, self.gamma_g2, self.delta_g2, self.ic)


def _read_vk(cur: _Cursor) -> _Vk:
    c = cur.curve
    fields = {}
    for what, g2 in (
        ("alpha_g1", False),
        ("beta_g1", False),
        ("beta_g2", True),
        ("gamma_g2", True),
        ("delta_g1", False),
        ("delta_g2", True),
    ):
        arr = cur.g2s(1, f"vk {what}") if g2 else cur.g1s(1, f"vk {what}")
        points.check_points(c, arr, g2, cur.name, f"vk {what}", subgroup=True)
        fields[what] = arr[0]
    n_ic = cur.count("vk ic")
    if n_ic < 1:
        raise FormatError(cur.name, "ic is empty (it needs at least the constant input)", "vk ic")
    ic = cur.g1s(n_ic, "vk ic")
    points.check_points(c, ic, False, cur.name, "vk ic", subgroup=True)
    return _Vk(ic=ic, **fields)


def read_bellman_vk(path: PathLike | bytes, curve: Curve | str = "bls12_381") -> VerifyingKey:
    data, name = open_bytes(path)
    c = get_curve(curve)
    cur = _Cursor(data, name, c)
    vk = _read_vk(cur)
    if cur.pos != len(data):
        raise FormatError(name, f"{len(data) - cur.pos} stray bytes after the verifying key")
    return vk.verifying_key(c)


# --- the sections of a params file ------------------------------------------------------------


@dataclass
class BellmanLayout:
    """A params file located, not decoded: the verifying key (decoded and checked) and, per
    section, the offset of its first point and its count (what bellperson's mapped parameters
    keep)."""

    name: str
    curve: Curve
    data: memoryview
    vk: _Vk
    sections: dict[str, tuple[int, int]]

    @property
    def n_inputs(self) -> int:
        return len(self.vk.ic)

    @property
    def n_aux(self) -> int:
        return self.sections["l"][1]

    @property
    def n_vars(self) -> int:
        return self.n_inputs + self.n_aux

    @property
    def domain_size(self) -> int:
        return self.sections["h"][1] + 1

    def count(self, section: str) -> int:
        return self.sections[section][1]

    def verifying_key(self) -> VerifyingKey:
        return self.vk.verifying_key(self.curve)


def scan_bellman_params(path: PathLike | bytes, curve: Curve | str = "bls12_381") -> BellmanLayout:
    """Locate the sections of a params file (memory-mapped; the points are not read)."""
    data, name = open_bytes(path)
    c = get_curve(curve)
    cur = _Cursor(data, name, c)
    vk = _read_vk(cur)
    sections: dict[str, tuple[int, int]] = {}
    for sec in SECTIONS:
        n = cur.count(sec)
        size = (points.g2_size if sec == "b_g2" else points.g1_size)(c, False)
        if n * size > len(data) - cur.pos:
            raise FormatError(
                name,
                f"truncated: {n} points need {n * size} bytes at offset {cur.pos}, "
                f"{len(data) - cur.pos} remain",
                sec,
            )
        sections[sec] = (cur.pos, n)
        cur.pos += n * size
    if cur.pos != len(data):
        raise FormatError(name, f"{len(data) - cur.pos} stray bytes after b_g2")
    lay = BellmanLayout(name, c, data, vk, sections)
    m = lay.domain_size
    if m & (m - 1):
        raise FormatError(name, f"{m - 1} H points: the domain size |h|+1 is not a power of two", "h")
    if lay.count("b_g1") != lay.count("b_g2"):
        raise FormatError(
            name, f"b_g1 has {lay.count('b_g1')} points but b_g2 has {lay.count('b_g2')}", "b_g2"
        )
    return lay


def _resolve(lay: BellmanLayout, density: DensityLike) -> Masks:
    """The (a, b) masks over the file's variables, checked against its counts."""
    name, n_in, n_vars = lay.name, lay.n_inputs, lay.n_vars
    if isinstance(density, R1CS):
        if density.n_vars != n_vars or density.n_public != n_in - 1:
            raise FormatError(
                name,
                f"R1CS has {density.n_vars} variables / {density.n_public} public, the key "
                f"{n_vars} / {n_in - 1}",
            )
        density = Density.from_r1cs(density)
    if isinstance(density, Density):
        if density.n_vars != n_vars or density.n_inputs != n_in:
            raise FormatError(
                name,
                f"the circuit has {density.n_vars} variables ({density.n_inputs} inputs with "
                f"ONE), the params file {n_vars} ({n_in} inputs, {lay.n_aux} aux): it is "
                "another circuit's key",
            )
        masks: Masks = density.masks()
        what = {
            "a": f"{density.n_inputs} inputs and {density.aux_in_a} aux variables in A",
            "b_g1": f"{density.inputs_in_b} inputs and {density.aux_in_b} aux variables in B",
        }
    elif density is None:
        masks = None
        what = {}
    else:
        a, b = (np.asarray(m, dtype=bool) for m in density)
        for m, sec in ((a, "a"), (b, "b_g1")):
            if m.shape != (n_vars,):
                raise FormatError(
                    name, f"density mask of {len(m)} variables, the key has {n_vars}", sec
                )
        masks = (a, b)
        what = {}
    for sec, k in (("a", 0), ("b_g1", 1), ("b_g2", 1)):
        have = lay.count(sec)
        if masks is None:
            if have != n_vars:
                raise FormatError(
                    name,
                    f"{have} points for {n_vars} variables: bellman omits points at infinity, "
                    "pass the circuit's density (or R1CS) to place them",
                    sec,
                )
            continue
        want = int(np.count_nonzero(masks[k]))
        if have != want:
            detail = what.get("b_g1" if k else "a")
            raise FormatError(
                name,
                f"{have} points, but the circuit's density marks {want} variables"
                + (f" ({detail})" if detail else "")
                + ": the file is not this circuit's key, or it is damaged",
                sec,
            )
    return masks


# --- decoding points into rows ----------------------------------------------------------------


def _native_on_curve(curve: Curve, pts: np.ndarray, g2: bool) -> np.ndarray | None:
    try:
        from cuzk import _native
    except ImportError:
        return None
    fn = getattr(_native, "g2_is_on_curve" if g2 else "g1_is_on_curve", None)
    if fn is None:
        return None
    return np.asarray(fn(curve.name, np.ascontiguousarray(pts)))


def _decode(lay: BellmanLayout, sec: str, i0: int, i1: int, infinity_ok: bool) -> np.ndarray:
    """Points i0..i1-1 of a section, checked: flags, coordinates below p, on the curve, and
    (unless infinity_ok, for legacy dense files) not the point at infinity."""
    c = lay.curve
    g2 = sec == "b_g2"
    size = (points.g2_size if g2 else points.g1_size)(c, False)
    off = lay.sections[sec][0]
    label = f"{sec} points {i0}..{i1 - 1}"
    raw = lay.data[off + i0 * size : off + i1 * size]
    decode = points.g2_from_uncompressed if g2 else points.g1_from_uncompressed
    pts = decode(c, raw, i1 - i0, lay.name, label)
    zero = ~pts.reshape(len(pts), -1).any(axis=1)
    if not infinity_ok and zero.any():
        j = int(np.flatnonzero(zero)[0])
        raise FormatError(
            lay.name,
            f"point #{i0 + j} is the point at infinity (bellperson leaves those out of a "
            "params file and refuses them)",
            sec,
        )
    ok = _native_on_curve(c, pts, g2)
    if ok is None:
        points.check_points(c, pts, g2, lay.name, label, subgroup=False)
    elif not ok.all():
        j = int(np.flatnonzero(~ok)[0])
        raise FormatError(lay.name, f"point #{i0 + j} is not on the curve", sec)
    return pts


def _fill(lay: BellmanLayout, sec: str, out: np.ndarray, mask: np.ndarray | None,
          infinity_ok: bool = False) -> None:
    """Decode a section into `out`: row i for a dense section, else the rows the mask marks,
    in order (the rows left out stay as they are: zeros, the point at infinity)."""
    count = lay.count(sec)
    if mask is None:
        for i0 in range(0, count, CHUNK):
            i1 = min(i0 + CHUNK, count)
            out[i0:i1] = _decode(lay, sec, i0, i1, infinity_ok)
        return
    nxt = 0
    for v0 in range(0, len(mask), CHUNK):
        v1 = min(v0 + CHUNK, len(mask))
        m = mask[v0:v1]
        k = int(np.count_nonzero(m))
        if not k:
            continue
        pts = _decode(lay, sec, nxt, nxt + k, False)
        rows = out[v0:v1]
        if k == v1 - v0:
            rows[...] = pts
        else:
            rows[m] = pts
        nxt += k


def _fill_all(lay: BellmanLayout, masks: Masks, arrays: dict[str, np.ndarray]) -> None:
    for k in ("alpha_g1", "beta_g1", "beta_g2", "delta_g1", "delta_g2"):
        arrays[k][...] = getattr(lay.vk, k)
    for k in ("alpha_g1", "beta_g2", "gamma_g2", "delta_g2", "ic"):
        arrays[f"vk.{k}"][...] = getattr(lay.vk, k)
    _fill(lay, "h", arrays["h_g1"], None)
    _fill(lay, "l", arrays["l_g1"], None)
    a_mask, b_mask = masks if masks is not None else (None, None)
    _fill(lay, "a", arrays["a_g1"], a_mask, infinity_ok=masks is None)
    _fill(lay, "b_g1", arrays["b_g1"], b_mask, infinity_ok=masks is None)
    _fill(lay, "b_g2", arrays["b_g2"], b_mask, infinity_ok=masks is None)


def read_bellman_params(
    path: PathLike | bytes, curve: Curve | str = "bls12_381", density: DensityLike = None
) -> ProvingKey:
    """A bellman/Filecoin params file -> ProvingKey in memory (h_convention "bellman").

    `density` places the a/b points: a `Density` (from the circuit's shape), the circuit's
    R1CS (kept on the key), or (a_mask, b_mask). Without one, only a file whose a/b hold a
    point for every variable can be read. Large files: `convert_bellman_params`."""
    lay = scan_bellman_params(path, curve)
    masks = _resolve(lay, density)
    c, L = lay.curve, lay.curve.limbs
    n_vars, n_in = lay.n_vars, lay.n_inputs
    z = np.zeros
    arrays = {
        "alpha_g1": z((2, L), np.uint64), "beta_g1": z((2, L), np.uint64),
        "beta_g2": z((2, 2, L), np.uint64), "delta_g1": z((2, L), np.uint64),
        "delta_g2": z((2, 2, L), np.uint64),
        "a_g1": z((n_vars, 2, L), np.uint64), "b_g1": z((n_vars, 2, L), np.uint64),
        "b_g2": z((n_vars, 2, 2, L), np.uint64), "l_g1": z((lay.n_aux, 2, L), np.uint64),
        "h_g1": z((lay.domain_size - 1, 2, L), np.uint64),
        "vk.alpha_g1": z((2, L), np.uint64), "vk.beta_g2": z((2, 2, L), np.uint64),
        "vk.gamma_g2": z((2, 2, L), np.uint64), "vk.delta_g2": z((2, 2, L), np.uint64),
        "vk.ic": z((n_in, 2, L), np.uint64),
    }  # fmt: skip
    _fill_all(lay, masks, arrays)
    return ProvingKey(
        curve=c,
        n_vars=n_vars,
        n_public=n_in - 1,
        domain_size=lay.domain_size,
        alpha_g1=arrays["alpha_g1"],
        beta_g1=arrays["beta_g1"],
        beta_g2=arrays["beta_g2"],
        delta_g1=arrays["delta_g1"],
        delta_g2=arrays["delta_g2"],
        a_g1=arrays["a_g1"],
        b_g1=arrays["b_g1"],
        b_g2=arrays["b_g2"],
        l_g1=arrays["l_g1"],
        h_g1=arrays["h_g1"],
        h_convention="bellman",
        vk=lay.verifying_key(),
        r1cs=density if isinstance(density, R1CS) else None,
        meta={"source": "bellman", "path": lay.name},
    )


def convert_bellman_params(
    path: PathLike, target: PathLike, curve: Curve | str = "bls12_381",
    density: DensityLike = None, meta: dict | None = None,
) -> None:
    """A params file -> a key-cache file at `target`, chunk by chunk: neither file is ever
    held in memory. The cache carries no R1CS (pass it to the prover, or use
    read_bellman_params with the R1CS as density). Nothing is left at `target` on an error."""
    from cuzk.formats.cache import KeyCacheWriter

    lay = scan_bellman_params(path, curve)
    masks = _resolve(lay, density)
    rows = None if masks is None else {"a_g1": masks[0], "b_g1": masks[1], "b_g2": masks[1]}
    with KeyCacheWriter(
        target, curve=lay.curve, n_vars=lay.n_vars, n_public=lay.n_inputs - 1,
        domain_size=lay.domain_size, h_convention="bellman",
        meta={"source": "bellman", "path": lay.name, **(meta or {})}, rows=rows,
    ) as w:
        _fill_all(lay, masks, w.arrays)
        w.commit()


# --- writing ----------------------------------------------------------------------------------


def _vk_bytes(pk: ProvingKey) -> bytes:
    c = pk.curve
    g1 = lambda a: points.g1_to_uncompressed(c, np.asarray(a).reshape(1, 2, c.limbs))  # noqa: E731
    g2 = lambda a: points.g2_to_uncompressed(c, np.asarray(a).reshape(1, 2, 2, c.limbs))  # noqa: E731
    return b"".join(
        [
            g1(pk.alpha_g1),
            g1(pk.beta_g1),
            g2(pk.beta_g2),
            g2(pk.vk.gamma_g2),
            g1(pk.delta_g1),
            g2(pk.delta_g2),
            struct.pack(">I", len(pk.vk.ic)),
            points.g1_to_uncompressed(c, pk.vk.ic),
        ]
    )


def _write_atomically(path: PathLike, chunks: Iterator[bytes]) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            for b in chunks:
                f.write(b)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bellman_vk(pk: ProvingKey, path: PathLike) -> None:
    """The verifying-key file (bellman's VerifyingKey::write needs β_g1 and δ_g1 too, so it
    is written from the proving key)."""
    _write_atomically(path, iter([_vk_bytes(pk)]))


def _nonzero(arr: np.ndarray) -> np.ndarray:
    return np.asarray(arr).reshape(len(arr), -1).any(axis=1)


def bellman_density(source: ProvingKey | R1CS) -> tuple[np.ndarray, np.ndarray]:
    """(a_mask, b_mask) over the variables: which ones have a/b points in a bellman file."""
    if isinstance(source, ProvingKey):
        return _nonzero(source.a_g1), _nonzero(source.b_g1)
    return Density.from_r1cs(source).masks()


def _key_masks(pk: ProvingKey, density: DensityLike) -> tuple[np.ndarray, np.ndarray]:
    """The masks to write by: the key's own points at infinity, which must agree with the
    circuit's density when one is given (a disagreement means key and circuit differ)."""
    a_key, b_key = _nonzero(pk.a_g1), _nonzero(pk.b_g1)
    if not np.array_equal(b_key, _nonzero(pk.b_g2)):
        raise ValueError("b_g1 and b_g2 are at infinity for different variables")
    if density is None:
        return a_key, b_key
    if isinstance(density, R1CS):
        density = Density.from_r1cs(density)
    a, b = density.masks() if isinstance(density, Density) else density
    for mine, theirs, what in ((a_key, a, "A"), (b_key, b, "B")):
        theirs = np.asarray(theirs, dtype=bool)
        if theirs.shape != mine.shape:
            raise ValueError(f"density over {len(theirs)} variables, the key has {len(mine)}")
        diff = np.flatnonzero(mine != theirs)
        if len(diff):
            j = int(diff[0])
            has = "has a point" if mine[j] else "has no point"
            raise ValueError(
                f"variable {j}: the key {has} in {what} but the circuit's density says "
                f"{'it is' if theirs[j] else 'it is not'} in {what} (another circuit's key?)"
            )
    return a_key, b_key


def _encoded(c: Curve, arr: np.ndarray, mask: np.ndarray | None, g2: bool) -> Iterator[bytes]:
    """u32 count, then the points (the rows the mask marks) in chunks."""
    enc = points.g2_to_uncompressed if g2 else points.g1_to_uncompressed
    arr = np.asarray(arr)
    yield struct.pack(">I", len(arr) if mask is None else int(np.count_nonzero(mask)))
    for v0 in range(0, len(arr), CHUNK):
        rows = arr[v0 : v0 + CHUNK]
        if mask is not None:
            rows = rows[mask[v0 : v0 + CHUNK]]
        if len(rows):
            yield enc(c, rows)


def write_bellman_params(pk: ProvingKey, path: PathLike, density: DensityLike = None) -> None:
    """Write a params file bellperson can read: points at infinity are dropped from a, b_g1
    and b_g2 (read it back with the circuit's density, or `density=bellman_density(pk)`).
    With `density`, the key's points at infinity must be exactly the ones it implies."""
    c = pk.curve
    if pk.h_convention != "bellman":
        raise ValueError(f"bellman params hold coefficient-basis H points; this key is {pk.h_convention}")
    if len(pk.h_g1) != pk.domain_size - 1:
        raise ValueError(f"H has {len(pk.h_g1)} points, expected domain_size-1={pk.domain_size - 1}")
    a_mask, b_mask = _key_masks(pk, density)
    for arr, what in ((pk.h_g1, "h"), (pk.l_g1, "l")):
        zero = ~_nonzero(arr)
        if zero.any():
            raise ValueError(
                f"{what} point #{int(np.flatnonzero(zero)[0])} is at infinity (an "
                "unconstrained variable): bellperson refuses such a key, and so does our reader"
            )

    def chunks() -> Iterator[bytes]:
        yield _vk_bytes(pk)
        yield from _encoded(c, pk.h_g1, None, False)
        yield from _encoded(c, pk.l_g1, None, False)
        yield from _encoded(c, pk.a_g1, a_mask, False)
        yield from _encoded(c, pk.b_g1, b_mask, False)
        yield from _encoded(c, pk.b_g2, b_mask, True)

    _write_atomically(path, chunks())
