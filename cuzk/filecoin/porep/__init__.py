"""Filecoin's StackedDRG PoRep (seal commit phase 2): the circuit and its public inputs."""
