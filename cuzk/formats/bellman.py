"""Filecoin/bellman Groth16 parameter files and verifying-key files.

Layout (bellperson `Parameters::write` / `VerifyingKey::write`), all points uncompressed
big-endian with zcash flag bits (see `points.py`), counts u32 big-endian:

    vk:     α_g1, β_g1, β_g2, γ_g2, δ_g1, δ_g2, u32 |ic|, ic points
    params: vk, then u32 |h| + h, u32 |l| + l, u32 |a| + a, u32 |b_g1| + b_g1, u32 |b_g2| + b_g2

h holds [τ^i·Z(τ)/δ] for i = 0 .. m-2 (coefficient basis), so the domain size m is |h| + 1;
l holds one point per auxiliary (private) variable, ic one per input including the constant.

Bellman's generator drops the points at infinity from a, b_g1 and b_g2 (variables that never
appear in A, resp. B) and its reader rejects infinity anywhere, so a file does not say which
variable each a/b point belongs to. Our keys keep one point per variable (infinity = zeros),
so reading a file whose a/b are shorter than n_vars needs the density: an R1CS (A-columns used,
plus every input, which bellman binds with an `x_i·0 = 0` constraint; B-columns used) or
explicit boolean masks. Writing filters infinity out again, so files we write load in
bellperson. BN254 files use the same layout with BN254's flag bits (our extension; bellman
itself is BLS12-381).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.formats import points
from cuzk.formats.binfile import PathLike, open_bytes
from cuzk.formats.errors import FormatError
from cuzk.model.keys import ProvingKey, VerifyingKey
from cuzk.model.r1cs import R1CS

Density = R1CS | tuple[np.ndarray, np.ndarray] | None


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
    return VerifyingKey(c, vk.alpha_g1, vk.beta_g2, vk.gamma_g2, vk.delta_g2, vk.ic)


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


def write_bellman_vk(pk: ProvingKey, path: PathLike) -> None:
    """The verifying-key file (bellman's VerifyingKey::write needs β_g1 and δ_g1 too, so it
    is written from the proving key)."""
    with open(path, "wb") as f:
        f.write(_vk_bytes(pk))


def _nonzero(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(len(arr), -1).any(axis=1)


def bellman_density(source: ProvingKey | R1CS) -> tuple[np.ndarray, np.ndarray]:
    """(a_mask, b_mask) over the variables: which ones have a/b points in a bellman file."""
    if isinstance(source, ProvingKey):
        return _nonzero(source.a_g1), _nonzero(source.b_g1)
    n = source.n_vars
    masks = []
    for k, m in enumerate((source.a, source.b)):
        used = _nonzero(np.asarray(m.values)) if m.nnz else np.zeros(0, bool)
        mask = np.zeros(n, dtype=bool)
        mask[np.asarray(m.indices)[used]] = True
        if k == 0:
            mask[: source.n_public + 1] = True
        masks.append(mask)
    return masks[0], masks[1]


def _expand(arr: np.ndarray, n_vars: int, mask: np.ndarray | None, name: str, section: str) -> np.ndarray:
    if len(arr) == n_vars:  # already one point per variable
        return arr
    if mask is None:
        raise FormatError(
            name,
            f"{len(arr)} points for {n_vars} variables: bellman omits points at infinity, "
            "pass the circuit's R1CS (or density masks) to place them",
            section,
        )
    if len(mask) != n_vars or int(mask.sum()) != len(arr):
        raise FormatError(
            name,
            f"{len(arr)} points but the density marks {int(mask.sum())} of {len(mask)} variables "
            f"(the key has {n_vars})",
            section,
        )
    out = np.zeros((n_vars, *arr.shape[1:]), dtype=np.uint64)
    out[np.asarray(mask, dtype=bool)] = arr
    return out


def read_bellman_params(
    path: PathLike | bytes, curve: Curve | str = "bls12_381", density: Density = None
) -> ProvingKey:
    """A bellman/Filecoin params file -> ProvingKey (h_convention "bellman")."""
    data, name = open_bytes(path)
    c = get_curve(curve)
    cur = _Cursor(data, name, c)
    vk = _read_vk(cur)
    h = cur.g1s(cur.count("h"), "h")
    l_g1 = cur.g1s(cur.count("l"), "l")
    a = cur.g1s(cur.count("a"), "a")
    b_g1 = cur.g1s(cur.count("b_g1"), "b_g1")
    b_g2 = cur.g2s(cur.count("b_g2"), "b_g2")
    if cur.pos != len(data):
        raise FormatError(name, f"{len(data) - cur.pos} stray bytes after b_g2")
    m = len(h) + 1
    if m & (m - 1):
        raise FormatError(name, f"{len(h)} H points: the domain size |h|+1 is not a power of two", "h")
    n_inputs = len(vk.ic)
    n_vars = n_inputs + len(l_g1)
    if len(b_g1) != len(b_g2):
        raise FormatError(name, f"b_g1 has {len(b_g1)} points but b_g2 has {len(b_g2)}", "b_g2")
    if isinstance(density, R1CS):
        if density.n_vars != n_vars or density.n_public != n_inputs - 1:
            raise FormatError(
                name,
                f"R1CS has {density.n_vars} variables / {density.n_public} public, the key "
                f"{n_vars} / {n_inputs - 1}",
            )
        masks: tuple = bellman_density(density)
    elif density is None:
        masks = (None, None)
    else:
        masks = density
    return ProvingKey(
        curve=c,
        n_vars=n_vars,
        n_public=n_inputs - 1,
        domain_size=m,
        alpha_g1=vk.alpha_g1,
        beta_g1=vk.beta_g1,
        beta_g2=vk.beta_g2,
        delta_g1=vk.delta_g1,
        delta_g2=vk.delta_g2,
        a_g1=_expand(a, n_vars, masks[0], name, "a"),
        b_g1=_expand(b_g1, n_vars, masks[1], name, "b_g1"),
        b_g2=_expand(b_g2, n_vars, masks[1], name, "b_g2"),
        l_g1=l_g1,
        h_g1=h,
        h_convention="bellman",
        vk=VerifyingKey(c, vk.alpha_g1, vk.beta_g2, vk.gamma_g2, vk.delta_g2, vk.ic),
        r1cs=density if isinstance(density, R1CS) else None,
        meta={"source": "bellman", "path": name},
    )


def write_bellman_params(pk: ProvingKey, path: PathLike) -> None:
    """Write a params file bellperson can read: points at infinity are dropped from a, b_g1
    and b_g2 (read it back with `density=bellman_density(pk)` or the circuit's R1CS)."""
    c = pk.curve
    if pk.h_convention != "bellman":
        raise ValueError(f"bellman params hold coefficient-basis H points; this key is {pk.h_convention}")
    if len(pk.h_g1) != pk.domain_size - 1:
        raise ValueError(f"H has {len(pk.h_g1)} points, expected domain_size-1={pk.domain_size - 1}")
    b1 = _nonzero(pk.b_g1)
    if not np.array_equal(b1, _nonzero(pk.b_g2)):
        raise ValueError("b_g1 and b_g2 are at infinity for different variables")
    a = np.asarray(pk.a_g1)[_nonzero(pk.a_g1)]
    with open(path, "wb") as f:
        f.write(_vk_bytes(pk))
        for arr, g2 in (
            (pk.h_g1, False),
            (pk.l_g1, False),
            (a, False),
            (np.asarray(pk.b_g1)[b1], False),
            (np.asarray(pk.b_g2)[b1], True),
        ):
            f.write(struct.pack(">I", len(arr)))
            f.write((points.g2_to_uncompressed if g2 else points.g1_to_uncompressed)(c, arr))
