"""cuzk: a Groth16 proving engine and daemon for BLS12-381 and BN254."""

__version__ = "0.1.0"
