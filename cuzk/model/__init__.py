"""The data model every other layer shares: proving/verifying keys and proofs (`keys`), the
R1CS container with its CSR matrices (`r1cs`). Plain dataclasses over numpy arrays in the
layout of docs/ARCHITECTURE.md; they import nothing of cuzk above `curves`."""
