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
    RegisteredPoStProof,
    empty_sector_update,
    porep,
    porep_parameters,
    published,
    registered_post_proof,
    registered_seal_proof,
    seal_parameter_set,
    window_post,
    winning_post,
)

__all__ = [
    "DEFAULT_PARAMETER_DIR", "MissingParameterFile", "ParameterFiles", "ParameterSet",
    "RegisteredPoStProof", "check_digest", "empty_sector_update", "file_digest",
    "load_parameters", "load_verifying_key", "parameter_dir", "parameter_files",
    "params_verifying_key", "porep", "porep_parameters", "published", "read_meta",
    "registered_post_proof", "registered_seal_proof", "seal_parameter_set", "window_post",
    "winning_post", "write_meta",
]
