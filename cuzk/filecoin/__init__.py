"""Filecoin's proof circuits and hashes (PoRep, PoSt, SnapDeals) as rust-fil-proofs builds them."""
