"""Errors raised by the Groth16 prover."""

from __future__ import annotations


class UnsatisfiedConstraint(ValueError):
    """The witness breaks constraint `index` (A·w ∘ B·w ≠ C·w there); no proof is made."""

    def __init__(self, index: int, label: str | None = None, detail: str = "") -> None:
        self.index = index
        self.label = label
        where = f"constraint {index}" + (f" ({label})" if label else "")
        super().__init__(f"witness does not satisfy {where}" + (f": {detail}" if detail else ""))
