"""Filecoin's parameter files (docs/filecoin.md, "Parameter files"): their names
(`names`: the `v28-...` stems rust-fil-proofs derives from each circuit's public parameters),
where they are and how they are read and checked (`files`), and development keys written in
the same format where the published ones are absent (`dev`)."""

from cuzk.filecoin.params.files import (
    DEFAULT_PARAMETER_DIR,
    MissingParameterFile,
    ParameterFiles,
    check_digest,
    file_digest,
    load_parameters,
    load_verifying_key,
    parameter_dir,
    parameter_files,
    params_verifying_key,
    read_meta,
    write_meta,
)
from cuzk.filecoin.params.names import (
    ParameterSet,
    RegisteredProof,
    empty_sector_update,
    porep,
    published,
    registered_post_proof,
    registered_seal_proof,
    window_post,
    winning_post,
)

__all__ = [
    "DEFAULT_PARAMETER_DIR", "MissingParameterFile", "ParameterFiles", "ParameterSet",
    "RegisteredProof", "check_digest", "empty_sector_update", "file_digest", "load_parameters",
    "load_verifying_key", "parameter_dir", "parameter_files", "params_verifying_key", "porep",
    "published", "read_meta", "registered_post_proof", "registered_seal_proof", "window_post",
    "winning_post", "write_meta",
]
