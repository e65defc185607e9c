"""Stacked DRG (PoRep) pieces: labels (label.py) and their circuit (gadgets/create_label.py)."""
