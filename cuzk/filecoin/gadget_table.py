"""The gadgets `cuzk filecoin circuit-info` knows, one entry each; add yours with register().

An entry allocates the gadget's inputs (with deterministic pseudo-random values when the
system wants values), then runs the gadget on them. circuit-info reports the whole circuit
and the gadget's own constraint count (the total minus the input allocation's).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.gadgets.boolean import Boolean
from cuzk.filecoin.gadgets.sha256 import sha256, sha256_compression_function, sha256_iv
from cuzk.filecoin.gadgets.uint32 import UInt32


@dataclass(frozen=True)
class Option:
    """A command-line option of one gadget: --name, parsed with `type`."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple | None = None


@dataclass(frozen=True)
class GadgetEntry:
    name: str
    help: str
    inputs: Callable[[ConstraintSystem, dict[str, Any]], Any]  # allocate the gadget's inputs
    run: Callable[[ConstraintSystem, Any, dict[str, Any]], Any]  # the gadget on them
    options: tuple[Option, ...] = ()
    validate: Callable[[dict[str, Any]], None] | None = None  # ValueError for bad options
    expected: Callable[[dict[str, Any]], int | None] = field(default=lambda o: None)  # known count
    # a whole circuit rather than a gadget: what it is (one line), and its parameter file's id
    describe: Callable[[dict[str, Any]], str] | None = None
    params_id: Callable[[dict[str, Any]], str | None] | None = None

    def circuit(self, opts: dict[str, Any]) -> Callable[[ConstraintSystem], Any]:
        def circuit(cs: ConstraintSystem) -> Any:
            with cs.namespace("inputs"):
                ins = self.inputs(cs, opts)
            with cs.namespace(self.name):
                return self.run(cs, ins, opts)

        return circuit

    def input_constraints(self, opts: dict[str, Any]) -> int:
        from cuzk.filecoin.cs.base import ShapeCS

        cs = ShapeCS()
        self.inputs(cs, opts)
        return cs.n_constraints


GADGETS: dict[str, GadgetEntry] = {}


def register(entry: GadgetEntry) -> GadgetEntry:
    GADGETS[entry.name] = entry
    return entry


def alloc_bits(cs: ConstraintSystem, n: int, seed: int = 1) -> list[Boolean]:
    """n allocated bits (booleanity-constrained), pseudo-random values in witness mode."""
    rng = random.Random(seed) if cs.wants_values else None
    out = []
    for i in range(n):
        with cs.namespace("bit", i):
            out.append(Boolean.alloc(cs, None if rng is None else bool(rng.getrandbits(1))))
    return out


def _compression_inputs(cs: ConstraintSystem, o: dict[str, Any]) -> tuple:
    block = alloc_bits(cs, 512)
    if o["state"] == "iv":
        return block, sha256_iv()
    rng = random.Random(2) if cs.wants_values else None
    state = []
    for k in range(8):
        with cs.namespace("state", k):
            state.append(UInt32.alloc(cs, None if rng is None else rng.getrandbits(32)))
    return block, state


def _check_bits(o: dict[str, Any]) -> None:
    if o["bits"] < 0 or o["bits"] % 8:
        raise ValueError(f"--bits must be a non-negative multiple of 8, not {o['bits']}")


register(GadgetEntry(
    name="sha256-compression",
    help="one SHA-256 compression of 512 allocated bits (bellperson sha256_compression_function)",
    inputs=_compression_inputs,
    run=lambda cs, ins, o: sha256_compression_function(cs, ins[0], ins[1]),
    options=(Option("state", str, "iv", "the state: the constant IV or 8 allocated words",
                    ("iv", "variable")),),
    expected=lambda o: 25840 if o["state"] == "iv" else None,
))

register(GadgetEntry(
    name="sha256",
    help="SHA-256 of --bits allocated bits with constant padding (bellperson sha256)",
    inputs=lambda cs, o: alloc_bits(cs, o["bits"]),
    run=lambda cs, ins, o: sha256(cs, ins),
    options=(Option("bits", int, 512, "message length in bits (a multiple of 8)"),),
    validate=_check_bits,
    expected=lambda o: 44874 if o["bits"] == 512 else None,
))


# --- Poseidon (neptune's legacy circuit as rust-fil-proofs calls it) ----------------------------

# neptune circuit.rs test_poseidon_hash (2, 4, 8, 16, 24, 36); arity 11 by the same formula.
POSEIDON_CONSTRAINTS = {2: 311, 4: 377, 8: 505, 11: 598, 16: 761, 24: 1009, 36: 1385}


def alloc_nums(cs: ConstraintSystem, n: int, seed: int = 3) -> list:
    """n allocated field elements (no constraints), pseudo-random values in witness mode."""
    from cuzk.filecoin.cs.lc import R
    from cuzk.filecoin.gadgets.num import AllocatedNum

    rng = random.Random(seed) if cs.wants_values else None
    out = []
    for i in range(n):
        with cs.namespace("num", i):
            out.append(AllocatedNum.alloc(cs, None if rng is None else rng.randrange(R)))
    return out


def _check_arity(o: dict[str, Any]) -> None:
    if not 1 <= o["arity"] <= 36:
        raise ValueError(f"--arity must be 1..36 (Filecoin uses 2, 4, 8, 11, 16, 24, 36), not {o['arity']}")


def _check_elements(o: dict[str, Any]) -> None:
    if o["elements"] < 1:
        raise ValueError(f"--elements must be at least 1, not {o['elements']}")


def _poseidon(cs: ConstraintSystem, ins: list, o: dict[str, Any]) -> Any:
    from cuzk.filecoin.gadgets.poseidon import poseidon_hash

    return poseidon_hash(cs, ins, o["arity"])


def _poseidon_md(cs: ConstraintSystem, ins: list, o: dict[str, Any]) -> Any:
    from cuzk.filecoin.gadgets.poseidon import hash_md_circuit

    return hash_md_circuit(cs, ins)


register(GadgetEntry(
    name="poseidon",
    help="Poseidon of --arity allocated elements (neptune's legacy poseidon_hash, Merkle-tree tag)",
    inputs=lambda cs, o: alloc_nums(cs, o["arity"]),
    run=_poseidon,
    options=(Option("arity", int, 2, "preimage length, 1..36 (Filecoin: 2, 4, 8, 11, 16, 24, 36)"),),
    validate=_check_arity,
    expected=lambda o: POSEIDON_CONSTRAINTS.get(o["arity"]),
))

register(GadgetEntry(
    name="poseidon-md",
    help="filecoin-hashers' hash_md_circuit over --elements allocated elements (arity-36 chain)",
    inputs=lambda cs, o: alloc_nums(cs, o["elements"]),
    run=_poseidon_md,
    options=(Option("elements", int, 71, "number of elements (>= 1)"),),
    validate=_check_elements,
    expected=lambda o: 2770 if o["elements"] == 71 else None,
))


# --- Merkle inclusion, insertion, SDR labels --------------------------------------------------


def _por_shape(o: dict[str, Any]) -> Any:
    from cuzk.filecoin.merkle import TreeShape

    return TreeShape(o["arity"], o.get("sub", 0), o.get("top", 0))


def _por_leaves(o: dict[str, Any]) -> int:
    return o["leaves"] or _por_shape(o).default_leaves()


def _check_por(o: dict[str, Any]) -> None:
    shape = _por_shape(o)  # ValueError for a bad shape
    shape.check_leaves(_por_leaves(o))
    if not 0 <= o["challenge"] < _por_leaves(o):
        raise ValueError(f"--challenge must be a leaf index below {_por_leaves(o)}")


def _por_run(hasher: str) -> Callable[[ConstraintSystem, Any, dict[str, Any]], Any]:
    def run(cs: ConstraintSystem, ins: Any, o: dict[str, Any]) -> Any:
        from cuzk.filecoin.reference_circuits import por_test_circuit

        return por_test_circuit(_por_shape(o), hasher, _por_leaves(o), o["challenge"],
                                o["root"] == "private")(cs)

    return run


def _por_expected(hasher: str) -> Callable[[dict[str, Any]], int | None]:
    def expected(o: dict[str, Any]) -> int | None:
        from cuzk.filecoin.reference_circuits import expected_por_constraints

        return expected_por_constraints(hasher, _por_shape(o), _por_leaves(o), o["root"] == "private")

    return expected


_POR_COMMON = (
    Option("leaves", int, 0, "leaves in the tree (default: 64 per base tree, as por_circuit.rs)"),
    Option("root", str, "public", "the root is a public input or private", ("public", "private")),
    Option("challenge", int, 0, "the leaf proved (witness values only)"),
)

register(GadgetEntry(
    name="por-sha256",
    help="PoRCircuit over a binary (or --arity 4 / 8) SHA-256 tree (storage-proofs-core por.rs)",
    inputs=lambda cs, o: None,
    run=_por_run("sha256"),
    options=(Option("arity", int, 2, "base tree arity", (2, 4, 8)), *_POR_COMMON),
    validate=_check_por,
    expected=_por_expected("sha256"),
))

register(GadgetEntry(
    name="por-poseidon",
    help="PoRCircuit over a Poseidon tree of shape --arity[-sub[-top]] (storage-proofs-core por.rs)",
    inputs=lambda cs, o: None,
    run=_por_run("poseidon"),
    options=(Option("arity", int, 8, "base tree arity", (2, 4, 8, 16)),
             Option("sub", int, 0, "sub-tree arity (0: none)", (0, 2, 4, 8, 16)),
             Option("top", int, 0, "top-tree arity (0: none; needs --sub)", (0, 2, 4, 8, 16)),
             *_POR_COMMON),
    validate=_check_por,
    expected=_por_expected("poseidon"),
))


def _check_label(o: dict[str, Any]) -> None:
    if not 1 <= o["layer"] < 1 << 32:
        raise ValueError(f"--layer must be 1..2^32-1, not {o['layer']}")
    if not 0 <= o["node"] < 1 << 64:
        raise ValueError(f"--node must be a u64, not {o['node']}")


register(GadgetEntry(
    name="create-label",
    help="create_label.rs's test circuit: 38×256 allocated bits (37 parents, replica id), "
         "the layer and node constants, create_label_circuit (SHA-256 over 39×256 bits)",
    inputs=lambda cs, o: None,
    run=lambda cs, ins, o: _label_circuit(o)(cs),
    options=(Option("layer", int, 3, "layer index (1: 6 parents repeated, else 14)"),
             Option("node", int, 22, "node index (a constant)")),
    validate=_check_label,
    expected=lambda o: 532025 if (o["layer"], o["node"]) == (3, 22) else None,
))


def _label_circuit(o: dict[str, Any]) -> Callable[[ConstraintSystem], Any]:
    from cuzk.filecoin.reference_circuits import create_label_test_circuit

    return create_label_test_circuit(o["layer"], o["node"])


def _check_insertion(o: dict[str, Any]) -> None:
    s = o["size"]
    if s < 2 or s & (s - 1) or s > 1 << 10:
        raise ValueError(f"--size must be a power of two 2..1024, not {s}")
    if not 0 <= o["index"] < s:
        raise ValueError(f"--index must be below --size {s}")


def _insertion_run(cs: ConstraintSystem, ins: Any, o: dict[str, Any]) -> Any:
    from cuzk.filecoin.gadgets.insertion import insert

    x, bits, elements = ins
    return insert(cs, x, bits, elements)


def _insertion_expected(o: dict[str, Any]) -> int:
    from cuzk.filecoin.reference_circuits import insertion_constraints

    return insertion_constraints(o["size"])


def _insertion_inputs(cs: ConstraintSystem, o: dict[str, Any]) -> Any:
    from cuzk.filecoin.reference_circuits import insertion_inputs

    return insertion_inputs(cs, o["size"], o["index"])


register(GadgetEntry(
    name="insertion",
    help="insert a number among --size − 1 others at an index given by bits (insertion.rs)",
    inputs=_insertion_inputs,
    run=_insertion_run,
    options=(Option("size", int, 8, "the list's size after insertion (a power of two)"),
             Option("index", int, 0, "the insertion index (witness values only)")),
    validate=_check_insertion,
    expected=lambda o: _insertion_expected(o),
))


# --- whole circuits -----------------------------------------------------------------------------


def _porep(name: str) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        from cuzk.filecoin.porep import circuit_info

        return getattr(circuit_info, name)(*args)

    return call


register(GadgetEntry(
    name="porep",
    help="the StackedDRG PoRep circuit of one partition (seal commit phase 2) for "
         "--sector-size (default 2KiB), or a test shape (--nodes, --layers, --challenges, --tree)",
    inputs=lambda cs, o: None,
    run=lambda cs, ins, o: _porep("circuit")(o)(cs),  # values: a sector sealed for the test
    options=(Option("sector_size", str, None, "sector size: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB"),
             Option("nodes", int, None, "test shape: nodes (leaves of every tree)"),
             Option("layers", int, None, "test shape: layers (default 2)"),
             Option("challenges", int, None, "test shape: challenges per partition (default 1)"),
             Option("tree", str, None, "test shape: tree_c / tree_r_last shape base-sub-top "
                    "(default 8-0-0)")),
    validate=_porep("circuit_params"),
    expected=_porep("expected_constraints"),
    describe=_porep("describe"),
    params_id=_porep("params_id"),
))


def _post(name: str, typ_name: str) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        from cuzk.filecoin.post import circuit_info
        from cuzk.filecoin.post.constants import PoStType

        return getattr(circuit_info, name)(PoStType(typ_name), *args)

    return call


_POST_OPTIONS = (
    Option("sector_size", str, None, "sector size: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB (default 2KiB)"),
    Option("leaves", int, None, "test shape: leaves per sector (default 64 per base tree)"),
    Option("tree", str, None, "test shape: tree_r_last shape base-sub-top (default 8-0-0)"),
    Option("sectors", int, None, "test shape: sectors per partition (default 3)"),
    Option("challenges", int, None, "test shape: challenges per sector (default 5)"),
    Option("api_version", str, None, "test shape: API version (default 1.1.0; 1.2.0 changes "
           "the challenges, not the circuit)"),
)

for _typ, _help in (("winning", "WinningPoSt: 66 one-challenge sectors"),
                    ("window", "WindowPoSt: one partition of 10-challenge sectors")):
    register(GadgetEntry(
        name=f"{_typ}-post",
        help=f"the fallback PoSt circuit, {_help} (storage-proofs-post fallback), for "
             "--sector-size (default 2KiB) or a test shape (--leaves, --tree, --sectors, --challenges)",
        inputs=lambda cs, o: None,
        run=lambda cs, ins, o, _t=_typ: _post("circuit", _t)(o)(cs),
        options=_POST_OPTIONS,
        validate=_post("circuit_params", _typ),
        expected=_post("expected_constraints", _typ),
        describe=_post("describe", _typ),
        params_id=_post("params_id", _typ),
    ))


def _update(name: str, poseidon: bool) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        from cuzk.filecoin.update import circuit_info

        return getattr(circuit_info, name)(poseidon, *args)

    return call


for _name, _poseidon, _help in (
        ("snap-update", False, "SnapDeals' EmptySectorUpdate circuit of one partition (comm_d_new "
                               "a SHA-256 tree)"),
        ("snap-update-poseidon", True, "SnapDeals' EmptySectorUpdate-Poseidon circuit (one "
                                       "partition, comm_d_new a Poseidon tree)")):
    register(GadgetEntry(
        name=_name,
        help=f"{_help} (storage-proofs-update), for --sector-size (default 2KiB; test sizes "
             "1KiB, 4KiB, 8KiB, 16KiB, 32KiB, 16MiB too)",
        inputs=lambda cs, o: None,
        run=lambda cs, ins, o, _p=_poseidon: _update("circuit", _p)(o)(cs),
        options=(Option("sector_size", str, None, "sector size (default 2KiB)"),),
        validate=_update("circuit_params", _poseidon),
        expected=_update("expected_constraints", _poseidon),
        describe=_update("describe", _poseidon),
        params_id=_update("params_id", _poseidon),
    ))
