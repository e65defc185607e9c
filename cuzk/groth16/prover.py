"""The Groth16 prover, split into phases so the engine can hold a per-device lock over the
kernel region only:

    synthesize (CPU) → upload (device backends: a, b, c and w to the device, once)
    → kernels (h and the G1 MSMs: the GPU region) → g2_msm (CPU, concurrent)
    → assemble (a few small MSMs with r, s)

or, with the constraint evaluation on the device (the engine's default there):

    pending (CPU: the witness checked, nothing evaluated) → evaluate_on_device (w up once,
    a, b, c = A·w, B·w, C·w and the check on the device) → kernels → ...

`prove` runs the first order. A device backend (backends.base.DeviceBackend: CUDA): there `h` and the
witness stay on the device between the NTTs and the MSMs, and the key's arrays are kept
resident by the backend, so a proof moves only the partition's a, b, c and w to the device.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk.backends import get_backend, transfers
from cuzk.backends.base import Backend, alloc_host, is_device_backend
from cuzk.groth16 import qap
from cuzk.groth16.errors import UnsatisfiedConstraint
from cuzk.identity_cache import IdentityCache
from cuzk.layout import fr_from_ints
from cuzk.model.keys import Proof, ProvingKey
from cuzk.model.r1cs import R1CS


@dataclass
class Synthesized:
    """Evaluations of A·w, B·w, C·w on the domain (padded with zeros) and the witness
    (numpy arrays; device arrays after `upload` to a device backend)."""

    a: Any  # (domain_size, 4)
    b: Any
    c: Any
    witness: Any  # (n_vars, 4)
    on_device: bool = False  # set by upload


@dataclass
class KernelOutputs:
    h: Any  # (len(pk.h_g1), 4): the scalars of the H query (left on the device, if any)
    a_g1: np.ndarray  # Σ w_i·A_i  (2, L)
    b_g1: np.ndarray  # Σ w_i·B_i in G1
    b_g2: np.ndarray | None  # Σ w_i·B_i in G2 (None when computed separately by g2_msm)
    l_g1: np.ndarray  # Σ w_priv·L
    h_g1: np.ndarray  # Σ h_i·H_i


def _backend(backend: Backend | str | None) -> Backend:
    if backend is None or isinstance(backend, str):
        return get_backend(backend or "auto")
    return backend


def _host(x: Any) -> Any:
    """A device result on the host, counted in the transfer inventory."""
    return transfers.fetch(x)


# with_public_rows builds new CSR arrays when the key's matrices lack the public-input rows;
# do that once per key's R1CS, not once per proof (device backends keep the result resident,
# by its identity).
_key_rows: IdentityCache[R1CS] = IdentityCache()


def key_r1cs(r1cs: R1CS) -> R1CS:
    """qap.with_public_rows(r1cs), cached for as long as r1cs lives."""
    hit = _key_rows.get(r1cs)
    if hit is not None:
        return hit
    full = qap.with_public_rows(r1cs)
    return full if full is r1cs else _key_rows.put(r1cs, full)


def host_buffers(pk: ProvingKey, backend: Any = None) -> Synthesized:
    """Uninitialized a, b, c (domain_size, 4) and witness (n_vars, 4) host arrays for
    `synthesize(out=...)`, from the backend's allocator (backends.base.alloc_host: pinned
    memory for a CUDA backend, numpy otherwise)."""
    d, n = pk.domain_size, pk.n_vars
    return Synthesized(a=alloc_host(backend, (d, 4)), b=alloc_host(backend, (d, 4)),
                       c=alloc_host(backend, (d, 4)), witness=alloc_host(backend, (n, 4)))


def synthesize(
    pk: ProvingKey,
    witness: np.ndarray | Sequence[int],
    backend: Backend | str | None = None,
    check: bool = True,
    r1cs: R1CS | None = None,
    out: Synthesized | None = None,
) -> Synthesized:
    """Constraint evaluation (and, with check, the satisfiability check) for one witness.

    `r1cs` (full A, B, C) is used for the check when the key lacks C, as snarkjs zkeys do;
    without it such a key can only be checked by verifying the proof afterwards.

    `out` (from `host_buffers`, e.g. pinned memory the GPU reads directly) receives the
    results: a, b, c are written there by the constraint evaluation itself and the witness is
    copied in once; the returned Synthesized holds those same arrays.
    """
    be = _backend(backend)
    w = _witness(pk, witness)
    kr = key_r1cs(pk.r1cs)
    # zkey readers mark keys whose C matrix is absent (not merely empty) with meta c_from_ab.
    has_c = not pk.meta.get("c_from_ab", False)
    bufs = None
    if out is not None:
        w = _witness_into(out.witness, w)
        bufs = (out.a, out.b, out.c)
    a, b, c = qap.evaluate(kr, w, be, pk.domain_size, out=bufs)
    if c is None:
        # Without C, c = a∘b is what a satisfying witness gives.
        if out is None:
            c = np.zeros_like(a) if has_c else qap.fr_mul_arrays(pk.curve, a, b)
        else:
            c = out.c
            if has_c:
                c.fill(0)
            else:
                c[...] = qap.fr_mul_arrays(pk.curve, a, b)
    if check:
        if has_c:
            qap.check_satisfied(kr, a, b, c)
        elif r1cs is not None:
            full = key_r1cs(r1cs)
            fa, fb, fc = qap.evaluate(full, w, be, pk.domain_size)
            qap.check_satisfied(full, fa, fb, np.zeros_like(fa) if fc is None else fc)
    return Synthesized(a=a, b=b, c=c, witness=w)


def _witness(pk: ProvingKey, witness: np.ndarray | Sequence[int]) -> np.ndarray:
    """The witness as canonical (n_vars, 4) rows, checked against the key."""
    if pk.r1cs is None:
        raise ValueError("proving key has no constraint matrices")
    w = qap.witness_array(pk.curve, witness)
    if w.shape != (pk.n_vars, 4):
        raise ValueError(f"witness has {w.shape[0]} values, the key expects {pk.n_vars}")
    if int.from_bytes(w[0].tobytes(), "little") != 1:
        raise ValueError("witness[0] must be 1 (the constant-one wire)")
    return w


def _witness_into(out: Any, w: np.ndarray) -> np.ndarray:
    """w copied into the caller's buffer (pinned memory the device reads directly)."""
    if (not isinstance(out, np.ndarray) or out.shape != w.shape or out.dtype != np.uint64
            or not out.flags.c_contiguous):
        raise ValueError(f"out.witness must be a C-contiguous uint64 {w.shape} array")
    if out is not w:
        np.copyto(out, w)
    return out


def pending(pk: ProvingKey, witness: np.ndarray | Sequence[int],
            out: np.ndarray | None = None) -> Synthesized:
    """A partition whose constraints are evaluated later, on the device (evaluate_on_device):
    the witness checked against the key, a, b, c None. `out` (an (n_vars, 4) uint64 array,
    e.g. pinned host memory) receives the witness, so its upload is a direct copy."""
    w = _witness(pk, witness)
    if out is not None:
        w = _witness_into(out, w)
    return Synthesized(a=None, b=None, c=None, witness=w)


def evaluate_on_device(pk: ProvingKey, syn: Synthesized, backend: Backend | str | None = None,
                       check: bool = True) -> Synthesized:
    """synthesize's constraint evaluation (and, with check, the check a·b = c) on a device
    backend with evaluate_r1cs, for a pending partition: only the witness crosses to the
    device. Keys without C (snarkjs zkeys) get c = a·b, unchecked, as in synthesize without
    r1cs. Returns the partition on the device (as upload would)."""
    be = _backend(backend)
    kr = key_r1cs(pk.r1cs)
    w = be.to_device(syn.witness)  # type: ignore[attr-defined]
    a, b, c = be.evaluate_r1cs(kr, w, pk.domain_size)  # type: ignore[attr-defined]
    has_c = not pk.meta.get("c_from_ab", False)
    if c is None:
        if has_c:
            c = be.to_device(np.zeros((pk.domain_size, 4), dtype=np.uint64))  # type: ignore[attr-defined]
        else:
            c = be.fr_mul(pk.curve, a, b)  # type: ignore[attr-defined]
    if check and has_c:
        m = kr.n_rows
        i = be.fr_first_mismatch(pk.curve, a[:m], b[:m], c[:m])  # type: ignore[attr-defined]
        if i >= 0:
            rows = tuple(_host(x[i : i + 1]) for x in (a, b, c))
            raise UnsatisfiedConstraint(i, qap.constraint_label(kr, i), qap.describe_row(*rows))
    return Synthesized(a=a, b=b, c=c, witness=w, on_device=True)


def upload(syn: Synthesized, backend: Backend | str | None = None) -> Synthesized:
    """The partition's a, b, c and witness on the backend's device, each copied once, so the
    engine can move them before it takes the device lock. Host backends get syn back."""
    be = _backend(backend)
    if not is_device_backend(be) or syn.on_device:
        return syn
    up = be.to_device  # type: ignore[attr-defined]
    return Synthesized(a=up(syn.a), b=up(syn.b), c=up(syn.c), witness=up(syn.witness),
                       on_device=True)


def kernels(
    pk: ProvingKey, syn: Synthesized, backend: Backend | str | None = None, g2: bool = True
) -> KernelOutputs:
    """h and the G1 MSMs (plus the G2 MSM when g2): the part worth a GPU.

    On a device backend h and w stay there from the NTTs to the MSMs; only the five sums come
    back (h stays on the device), so the call returns once the device is done."""
    be = _backend(backend)
    curve = pk.curve
    device = is_device_backend(be)
    if device:
        syn = upload(syn, be)
        if len(pk.h_g1) > int(syn.a.shape[0]):
            raise ValueError(f"key has {len(pk.h_g1)} H points for a domain of {syn.a.shape[0]}")
    w = syn.witness

    def msm(points: Any, scalars: Any, group: int = 1) -> np.ndarray:
        f = be.g1_msm if group == 1 else be.g2_msm
        return _host(f(curve, points, scalars))

    def h_part() -> tuple[Any, np.ndarray]:
        if device:
            n = int(syn.a.shape[0])
            omega, shift, coefficients = qap.domain_params(curve, n, pk.h_convention)
            h = be.groth16_h(curve, syn.a, syn.b, syn.c, omega, shift, coefficients)
            h = h[: len(pk.h_g1)]
        else:
            h = qap.compute_h(curve, syn.a, syn.b, syn.c, pk.h_convention, len(pk.h_g1), be)
        return h, msm(pk.h_g1, h)

    # h then its MSM is the longest chain: first, so it starts first. A, B₁ and L share the
    # witness as scalars (L its aux part, the last len(L) values): a device backend sorts their
    # digits once (g1_msm_tasks).
    tasks: list[Any] = [h_part]
    if device and len(pk.l_g1) == len(w) - pk.n_public - 1:
        for f in be.g1_msm_tasks(curve, [pk.a_g1, pk.b_g1, pk.l_g1], w):  # type: ignore[attr-defined]
            tasks.append(lambda f=f: _host(f()))
    else:
        tasks += [
            lambda: msm(pk.a_g1, w),
            lambda: msm(pk.b_g1, w),
            lambda: msm(pk.l_g1, w[pk.n_public + 1 :]),
        ]
    if g2:
        tasks.append(lambda: msm(pk.b_g2, w, 2))
    res = be.run_concurrently(tasks) if device else [t() for t in tasks]  # type: ignore[attr-defined]
    (h, h_g1), a_g1, b_g1, l_g1 = res[:4]
    return KernelOutputs(
        h=h, a_g1=a_g1, b_g1=b_g1, b_g2=res[4] if g2 else None, l_g1=l_g1, h_g1=h_g1
    )


def g2_msm(pk: ProvingKey, syn: Synthesized, backend: Backend | str | None = None) -> np.ndarray:
    """Σ w_i·B_i in G2, separate so it can run on the CPU beside the GPU kernels."""
    return _host(_backend(backend).g2_msm(pk.curve, pk.b_g2, syn.witness))


def assemble(
    pk: ProvingKey,
    outputs: KernelOutputs,
    r: int,
    s: int,
    backend: Backend | str | None = None,
    b_g2: np.ndarray | None = None,
) -> Proof:
    """A = α + ΣA + rδ, B = β + ΣB + sδ, C = ΣL + ΣH + s·A + r·B₁ − rs·δ, each one small MSM."""
    be = _backend(backend)
    curve = pk.curve
    fr = curve.r
    r, s = r % fr, s % fr
    b2 = outputs.b_g2 if b_g2 is None else b_g2
    if b2 is None:
        raise ValueError("the G2 sum is missing: pass b_g2= or run kernels with g2=True")

    def g1(points: list[np.ndarray], ks: list[int]) -> np.ndarray:
        return be.g1_msm(curve, np.ascontiguousarray(np.stack(points)), fr_from_ints(curve, ks))

    a = g1([pk.alpha_g1, outputs.a_g1, pk.delta_g1], [1, 1, r])
    b1 = g1([pk.beta_g1, outputs.b_g1, pk.delta_g1], [1, 1, s])
    b = be.g2_msm(
        curve, np.ascontiguousarray(np.stack([pk.beta_g2, b2, pk.delta_g2])), fr_from_ints(curve, [1, 1, s])
    )
    c = g1(
        [outputs.l_g1, outputs.h_g1, a, b1, pk.delta_g1],
        [1, 1, s, r, -r * s],
    )
    return Proof(curve=curve, a=a, b=b, c=c)


def random_scalar(fr: int) -> int:
    """A uniformly random non-zero Fr element from the OS's secure source."""
    return 1 + secrets.randbelow(fr - 1)


def prove(
    pk: ProvingKey,
    witness: np.ndarray | Sequence[int],
    r: int | None = None,
    s: int | None = None,
    backend: Backend | str | None = None,
    check: bool = True,
    r1cs: R1CS | None = None,
) -> Proof:
    """A Groth16 proof; fresh random r, s unless given (tests pass them to compare backends)."""
    be = _backend(backend)
    syn = synthesize(pk, witness, be, check=check, r1cs=r1cs)
    out = kernels(pk, syn, be)
    fr = pk.curve.r
    return assemble(
        pk,
        out,
        random_scalar(fr) if r is None else r,
        random_scalar(fr) if s is None else s,
        be,
    )
