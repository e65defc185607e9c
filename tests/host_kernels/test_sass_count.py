"""scripts/sass_count.py's parser on a small nvdisasm-style listing (the tool binaries are not
needed): opcodes without predicate guards, one function's instructions, its largest loop."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("sass_count", ROOT / "scripts/sass_count.py")
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)

LISTING = """
	.section	.text._Z5otherv,"ax",@progbits
        /*0000*/                   MOV R1, c[0x0][0x28] ;
	.section	.text._Z4hotv,"ax",@progbits
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/                   IMAD.WIDE.U32 R4, P0, R2, R3, RZ ;
        /*0020*/                   IMAD.WIDE.U32.X R6, P0, R2, R3, R6, P0 ;
        /*0030*/              @!P1 BRA `(.L_x_2) ;
        /*0040*/                   MOV R8, R9 ;
.L_x_2:
        /*0050*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0060*/               @P2 BRA `(.L_x_1) ;
        /*0070*/                   EXIT ;
	.section	.text._Z5thirdv,"ax",@progbits
        /*0000*/                   EXIT ;
"""


def test_opcode_drops_guards_keeps_modifiers() -> None:
    assert sc.opcode("@!P1 BRA `(.L_x_2)") == "BRA"
    assert sc.opcode("@UP0 IMAD.WIDE.U32.X R6, P0, R2, R3, R6, P0") == "IMAD.WIDE.U32.X"
    assert sc.opcode("MOV R8, R9") == "MOV"


def test_function_and_largest_loop() -> None:
    ins, labels = sc.parse_function(LISTING, "_Z4hotv")
    assert len(ins) == 8 and labels == {"L_x_1": 1, "L_x_2": 5}
    a, b = sc.largest_loop(ins, labels)
    assert (a, b) == (1, 6)  # the backward branch to .L_x_1; the forward one is no loop
    m = sc.mix(ins[a : b + 1])
    assert m["IMAD.WIDE.U32"] == 1 and m["IMAD.WIDE.U32.X"] == 1 and m["BRA"] == 2
    assert sc.largest_loop(*sc.parse_function(LISTING, "_Z5thirdv")) is None
