"""Fixed-base multiplication on the device: out[i] = s_i·B for one base B (setup)."""

from __future__ import annotations

from typing import Any

from cuzk.backends.cuda.device import Device
from cuzk.backends.cuda.launch import grid, u32
from cuzk.curves import Curve


def fixed_base_mul(device: Device, c: Curve, group: int, base: Any, scalars: Any) -> Any:
    """(n, 2, limbs) or (n, 2, 2, limbs) affine points on the device."""
    cp = device.cp
    fw = c.limbs * group
    n = int(scalars.shape[0])
    shape = (n, 2, c.limbs) if group == 1 else (n, 2, 2, c.limbs)
    out = cp.empty(shape, dtype=cp.uint64)
    if n == 0:
        return out
    b = device.to_device(base, kind="key").reshape(2 * fw)
    sc = device.to_device(scalars).reshape(n, 4)
    device.kernels(c, "aux", group)["fixed_base_mul"](grid(n, 128), (128,), (b, sc, u32(n), out))
    return out
