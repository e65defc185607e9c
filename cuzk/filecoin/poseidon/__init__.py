"""Poseidon over BLS12-381 Fr exactly as Filecoin uses it (neptune's `PoseidonConstants::new()`,
filecoin-hashers' arities and `hash_md`).

`constants(arity)` holds the parameters and neptune's preprocessing; `poseidon(values)` and
`hash_md(values)` are the Python hashes; `cuzk.filecoin.poseidon.native` hashes in bulk.
"""

from .matrices import R
from .params import ARITIES, MD_ARITY, PoseidonConstants, constants
from .reference import hash_md, poseidon

__all__ = ["ARITIES", "MD_ARITY", "PoseidonConstants", "R", "constants", "hash_md", "poseidon"]
