"""Filecoin's circuits (bellperson / rust-fil-proofs semantics): constraint system, gadgets,
native hashers. See docs/filecoin.md."""
