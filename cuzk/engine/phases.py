"""The prover phases the engine schedules, bound in one place.

The engine calls these five steps of one partition proof; `ProverPhases` maps them onto
cuzk.groth16 (prover, verifier) and cuzk.formats (proof encoding). Tests may pass another
object with the same methods to study scheduling without the arithmetic.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from cuzk.model.keys import ProvingKey


class Phases(Protocol):
    # May also take out= (buffers to write into); the engine passes it only when it does.
    def synthesize(self, pk: ProvingKey, witness: np.ndarray, backend: Any) -> Any: ...

    def kernels(self, pk: ProvingKey, syn: Any, backend: Any, g2: bool) -> Any: ...

    def g2_msm(self, pk: ProvingKey, syn: Any, backend: Any) -> Any: ...

    def assemble(self, pk: ProvingKey, outputs: Any, g2: Any, backend: Any) -> Any: ...

    def encode(self, proof: Any) -> bytes: ...

    def verify(self, pk: ProvingKey, public_inputs: list[int], proof: Any) -> bool: ...

    def public_inputs(self, pk: ProvingKey, syn: Any) -> list[int]: ...


class ProverPhases:
    """The real Groth16 phases (cuzk.groth16.prover)."""

    def __init__(self, check_witness: bool = True) -> None:
        from cuzk.groth16 import prover

        self._p = prover
        self.check_witness = check_witness

    def synthesize(self, pk: ProvingKey, witness: np.ndarray, backend: Any,
                   out: Any = None) -> Any:
        """out: buffers from prover.host_buffers to write a, b, c and the witness into."""
        return self._p.synthesize(pk, witness, backend, check=self.check_witness, out=out)

    def pending(self, pk: ProvingKey, witness: np.ndarray, out: Any = None) -> Any:
        """Optional phase (evaluate_on device): the witness alone, checked against the key
        (and copied into out, a leased witness buffer); upload evaluates the constraints on
        the device."""
        return self._p.pending(pk, witness, out=out)

    def upload(self, pk: ProvingKey, syn: Any, backend: Any) -> Any:
        """Optional phase (device backends): the partition's vectors to the device; for a
        pending partition, its witness, then a, b, c evaluated (and checked) there."""
        if syn.a is None:
            return self._p.evaluate_on_device(pk, syn, backend, check=self.check_witness)
        return self._p.upload(syn, backend)

    def kernels(self, pk: ProvingKey, syn: Any, backend: Any, g2: bool) -> Any:
        return self._p.kernels(pk, syn, backend, g2=g2)

    def g2_msm(self, pk: ProvingKey, syn: Any, backend: Any) -> Any:
        return self._p.g2_msm(pk, syn, backend)

    def assemble(self, pk: ProvingKey, outputs: Any, g2: Any, backend: Any) -> Any:
        # Fresh blinding r, s for every proof.
        r, s = self._p.random_scalar(pk.curve.r), self._p.random_scalar(pk.curve.r)
        return self._p.assemble(pk, outputs, r, s, backend, b_g2=g2)

    def encode(self, proof: Any) -> bytes:
        from cuzk.formats.proof_bytes import encode_proof

        return encode_proof(proof)

    def verify(self, pk: ProvingKey, public_inputs: list[int], proof: Any) -> bool:
        from cuzk.groth16.verifier import verify

        return bool(verify(pk.vk, public_inputs, proof))

    def public_inputs(self, pk: ProvingKey, syn: Any) -> list[int]:
        from cuzk.layout import fr_to_ints

        return fr_to_ints(np.asarray(syn.witness[1 : 1 + pk.n_public]))
