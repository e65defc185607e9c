"""snarkjs JSON files: proof.json, public.json, verification_key.json.

Points are decimal strings in snarkjs's projective form: G1 [x, y, "1"], G2
[[x0, x1], [y0, y1], ["1", "0"]], infinity with z = 0 (["0", "1", "0"]). Readers accept any
Jacobian z (x/z², y/z³), as snarkjs's own `fromObject` does. `curve` is snarkjs's name
("bn128" / "bls12381"). `vk_alphabeta_12` (e(α, β), only used by Solidity export) is omitted
on write; `snarkjs groth16 verify` does not read it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from cuzk.curves import Curve, get_curve
from cuzk.formats.binfile import PathLike
from cuzk.formats.errors import FormatError
from cuzk.layout import G1Ints, G2Ints, g1_from_ints, g1_to_ints, g2_from_ints, g2_to_ints
from cuzk.model.keys import Proof, VerifyingKey
from cuzk.reference import ec


def _load(path: PathLike | dict | list, name: str | None = None) -> tuple[Any, str]:
    if isinstance(path, dict | list):
        return path, name or "<json>"
    try:
        with open(path) as f:
            return json.load(f), str(path)
    except OSError as exc:
        raise FormatError(str(path), f"cannot open: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(str(path), f"not valid JSON: {exc}") from None


def _dump(path: PathLike, obj: Any) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def _int(v: Any, name: str, field: str) -> int:
    if isinstance(v, bool) or not isinstance(v, str | int):
        raise FormatError(name, f"expected a decimal string, got {type(v).__name__}", field)
    try:
        out = int(v)
    except ValueError:
        raise FormatError(name, f"{v!r} is not a decimal integer", field) from None
    if out < 0:
        raise FormatError(name, f"negative value {v!r}", field)
    return out


def _affine(group: ec.Group, jac: tuple[Any, Any, Any], name: str, field: str) -> Any:
    """snarkjs's projective (x, y, z) as an affine point on the curve (None at z = 0)."""
    pt = group.from_jac(jac)
    if not group.is_on_curve(pt):
        raise FormatError(name, "point is not on the curve", field)
    return pt


def g1_from_json(c: Curve, v: Any, name: str, field: str) -> G1Ints:
    if not isinstance(v, list) or len(v) not in (2, 3):
        raise FormatError(name, "G1 point must be a list [x, y, z]", field)
    x, y = (_int(t, name, field) for t in v[:2])
    z = _int(v[2], name, field) if len(v) == 3 else 1
    p = c.p
    if max(x, y, z) >= p:
        raise FormatError(name, "coordinate not reduced modulo p", field)
    return _affine(ec.g1(c), (x, y, z), name, field)


def g2_from_json(c: Curve, v: Any, name: str, field: str) -> G2Ints:
    if not isinstance(v, list) or len(v) not in (2, 3) or not all(
        isinstance(t, list) and len(t) == 2 for t in v
    ):
        raise FormatError(name, "G2 point must be a list [[x0, x1], [y0, y1], [z0, z1]]", field)
    x, y = ((_int(t[0], name, field), _int(t[1], name, field)) for t in v[:2])
    z = (_int(v[2][0], name, field), _int(v[2][1], name, field)) if len(v) == 3 else (1, 0)
    p = c.p
    if max(*x, *y, *z) >= p:
        raise FormatError(name, "coordinate not reduced modulo p", field)
    return _affine(ec.g2(c), (x, y, z), name, field)


def g1_to_json(pt: G1Ints) -> list[str]:
    return ["0", "1", "0"] if pt is None else [str(pt[0]), str(pt[1]), "1"]


def g2_to_json(pt: G2Ints) -> list[list[str]]:
    if pt is None:
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    (x0, x1), (y0, y1) = pt
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def _curve(obj: dict, name: str, curve: Curve | str | None) -> Curve:
    declared = obj.get("curve")
    if declared is None:
        if curve is None:
            raise FormatError(name, "no 'curve' field and no curve given")
        return get_curve(curve)
    try:
        c = get_curve(str(declared))
    except ValueError:
        raise FormatError(name, f"unsupported curve {declared!r}", "curve") from None
    if curve is not None and get_curve(curve) != c:
        raise FormatError(name, f"curve {declared!r} where {get_curve(curve).name} was expected", "curve")
    return c


def _protocol(obj: dict, name: str) -> None:
    proto = obj.get("protocol", "groth16")
    if proto != "groth16":
        raise FormatError(name, f"protocol {proto!r} is not groth16", "protocol")


def read_proof_json(path: PathLike | dict, curve: Curve | str | None = None) -> Proof:
    obj, name = _load(path)
    if not isinstance(obj, dict):
        raise FormatError(name, "proof.json must be an object")
    _protocol(obj, name)
    c = _curve(obj, name, curve)
    for k in ("pi_a", "pi_b", "pi_c"):
        if k not in obj:
            raise FormatError(name, "missing field", k)
    a = g1_from_json(c, obj["pi_a"], name, "pi_a")
    b = g2_from_json(c, obj["pi_b"], name, "pi_b")
    cc = g1_from_json(c, obj["pi_c"], name, "pi_c")
    return Proof(curve=c, a=g1_from_ints(c, [a])[0], b=g2_from_ints(c, [b])[0], c=g1_from_ints(c, [cc])[0])


def proof_to_json(proof: Proof) -> dict:
    c = proof.curve
    return {
        "pi_a": g1_to_json(g1_to_ints(c, proof.a)[0]),
        "pi_b": g2_to_json(g2_to_ints(c, proof.b)[0]),
        "pi_c": g1_to_json(g1_to_ints(c, proof.c)[0]),
        "protocol": "groth16",
        "curve": c.snarkjs_name,
    }


def write_proof_json(path: PathLike, proof: Proof) -> None:
    _dump(path, proof_to_json(proof))


def read_public_json(path: PathLike | list, curve: Curve | str | None = None) -> list[int]:
    obj, name = _load(path)
    if not isinstance(obj, list):
        raise FormatError(name, "public.json must be a list of decimal strings")
    vals = [_int(v, name, f"[{i}]") for i, v in enumerate(obj)]
    if curve is not None:
        r = get_curve(curve).r
        for i, v in enumerate(vals):
            if v >= r:
                raise FormatError(name, "public input is not below the scalar field modulus", f"[{i}]")
    return vals


def write_public_json(path: PathLike, public: Sequence[int] | np.ndarray) -> None:
    if isinstance(public, np.ndarray):
        from cuzk.layout import fr_to_ints

        public = fr_to_ints(public)
    _dump(path, [str(int(v)) for v in public])


def read_vk_json(path: PathLike | dict, curve: Curve | str | None = None) -> VerifyingKey:
    obj, name = _load(path)
    if not isinstance(obj, dict):
        raise FormatError(name, "verification_key.json must be an object")
    _protocol(obj, name)
    c = _curve(obj, name, curve)
    for k in ("vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2", "IC"):
        if k not in obj:
            raise FormatError(name, "missing field", k)
    ic_obj = obj["IC"]
    if not isinstance(ic_obj, list) or not ic_obj:
        raise FormatError(name, "IC must be a non-empty list of G1 points", "IC")
    if "nPublic" in obj and _int(obj["nPublic"], name, "nPublic") != len(ic_obj) - 1:
        raise FormatError(name, f"nPublic={obj['nPublic']} but IC has {len(ic_obj)} points", "nPublic")
    ic = [g1_from_json(c, p, name, f"IC[{i}]") for i, p in enumerate(ic_obj)]
    return VerifyingKey(
        curve=c,
        alpha_g1=g1_from_ints(c, [g1_from_json(c, obj["vk_alpha_1"], name, "vk_alpha_1")])[0],
        beta_g2=g2_from_ints(c, [g2_from_json(c, obj["vk_beta_2"], name, "vk_beta_2")])[0],
        gamma_g2=g2_from_ints(c, [g2_from_json(c, obj["vk_gamma_2"], name, "vk_gamma_2")])[0],
        delta_g2=g2_from_ints(c, [g2_from_json(c, obj["vk_delta_2"], name, "vk_delta_2")])[0],
        ic=g1_from_ints(c, ic),
    )


def vk_to_json(vk: VerifyingKey) -> dict:
    c = vk.curve
    return {
        "protocol": "groth16",
        "curve": c.snarkjs_name,
        "nPublic": vk.n_public,
        "vk_alpha_1": g1_to_json(g1_to_ints(c, vk.alpha_g1)[0]),
        "vk_beta_2": g2_to_json(g2_to_ints(c, vk.beta_g2)[0]),
        "vk_gamma_2": g2_to_json(g2_to_ints(c, vk.gamma_g2)[0]),
        "vk_delta_2": g2_to_json(g2_to_ints(c, vk.delta_g2)[0]),
        "IC": [g1_to_json(p) for p in g1_to_ints(c, vk.ic)],
    }


def write_vk_json(path: PathLike, vk: VerifyingKey) -> None:
    _dump(path, vk_to_json(vk))
