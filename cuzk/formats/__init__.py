"""Readers and writers for the files a Groth16 prover meets.

| module | files |
|---|---|
| `r1cs` | circom `.r1cs` -> R1CS; snarkjs's input-binding rows |
| `sym` | circom `.sym` signal names per wire |
| `wtns` | iden3 `.wtns` witnesses |
| `zkey` | snarkjs Groth16 `.zkey` (read and write) |
| `snarkjs_json` | proof.json, public.json, verification_key.json |
| `bellman` | Filecoin/bellman params and vk files (a/b placed by the circuit's density) |
| `proof_bytes` | compressed proofs (192 bytes on BLS12-381, 128 on BN254) |
| `cache` | the memory-mapped native key cache, `load_proving_key` |

Every reader raises `FormatError` (a ValueError) naming the file, section and problem.
"""

from cuzk.formats.bellman import (
    bellman_density,
    convert_bellman_params,
    read_bellman_params,
    read_bellman_vk,
    scan_bellman_params,
    write_bellman_params,
    write_bellman_vk,
)
from cuzk.formats.cache import KeyCacheWriter, load_key_cache, load_proving_key, save_key_cache
from cuzk.formats.errors import FormatError
from cuzk.formats.proof_bytes import decode_proof, encode_proof, proof_size
from cuzk.formats.r1cs import add_snarkjs_public_rows, read_r1cs, snarkjs_domain_size
from cuzk.formats.snarkjs_json import (
    proof_to_json,
    read_proof_json,
    read_public_json,
    read_vk_json,
    vk_to_json,
    write_proof_json,
    write_public_json,
    write_vk_json,
)
from cuzk.formats.sym import read_sym
from cuzk.formats.wtns import read_wtns, write_wtns
from cuzk.formats.zkey import read_zkey, read_zkey_vk, write_zkey

__all__ = [
    "FormatError",
    "KeyCacheWriter",
    "add_snarkjs_public_rows",
    "bellman_density",
    "convert_bellman_params",
    "decode_proof",
    "encode_proof",
    "load_key_cache",
    "load_proving_key",
    "proof_size",
    "proof_to_json",
    "read_bellman_params",
    "read_bellman_vk",
    "read_proof_json",
    "read_public_json",
    "read_r1cs",
    "read_sym",
    "read_vk_json",
    "read_wtns",
    "read_zkey",
    "read_zkey_vk",
    "save_key_cache",
    "scan_bellman_params",
    "snarkjs_domain_size",
    "vk_to_json",
    "write_bellman_params",
    "write_bellman_vk",
    "write_proof_json",
    "write_public_json",
    "write_vk_json",
    "write_wtns",
    "write_zkey",
]
