"""Templates: a gadget call recorded once per signature and replayed.

A gadget decorated with @template is a pure function of its arguments (Booleans, numbers,
UInt32s, lists of them, and static Python values). Its *signature* is everything that can
change the constraints it makes: the static values, which arguments are constants (and their
values), which are variables, which are negated, and which of them are the same variable.
The first call with a signature runs the gadget on a capture system whose input variables
are placeholders and keeps the recorded rows; every later call replays them, relocated to the
caller's variables, in O(arguments) Python work plus numpy work (record mode) or none (shape
mode). Witness mode runs the gadget itself, so values flow exactly as in a direct call.

Classes that can be template arguments implement either
  `_tpl_atom(self) -> (var | None, negated, constant)` and
  `_tpl_make(cls, var | None, negated, constant)` (one variable or constant), or
  `_tpl_parts(self) -> (static, children)` and `_tpl_build(cls, static, children)`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import Var
from cuzk.filecoin.cs.record import RecordCS

PH = 1 << 40  # capture keys from PH on stand for the template's argument variables (slots)

_STATIC = (int, str, bool, bytes, float, type(None))
F = TypeVar("F", bound=Callable[..., Any])


# --- flattening arguments and results ----------------------------------------------------------


def flatten(x: Any, atoms: list) -> Any:
    """A hashable description of x's structure (atoms replaced by their class); the atoms
    are appended to `atoms` in order."""
    t = type(x)
    if t is list or t is tuple:
        return (t, tuple([flatten(e, atoms) for e in x]))
    if hasattr(t, "_tpl_atom"):
        atoms.append(x)
        return t
    if hasattr(t, "_tpl_parts"):
        static, parts = x._tpl_parts()
        return (t, static, flatten(parts, atoms))
    if isinstance(x, _STATIC):
        return ("s", x)
    raise TypeError(f"a template argument cannot be a {t.__name__}")


def unflatten(tdef: Any, atoms: Iterator[tuple[Var | None, bool, Any]]) -> Any:
    """Rebuild a structure from its description and (var, negated, constant) triples."""
    if isinstance(tdef, type):
        return tdef._tpl_make(*next(atoms))
    head = tdef[0]
    if head == "s":
        return tdef[1]
    if head is list or head is tuple:
        return head(unflatten(d, atoms) for d in tdef[1])
    return head._tpl_build(tdef[1], unflatten(tdef[2], atoms))


def signature(args: tuple) -> tuple[Any, tuple[int, ...], list[Var]]:
    """(structure, atom codes, slot variables): codes are -1/-2 for the constants
    false/true (other constants go in the structure), -3/-4 for ONE / not ONE, and
    2·slot + negated for a variable, slots numbered by first appearance."""
    atoms: list = []
    tdef = flatten(args, atoms)
    slots: list[Var] = []
    ordinal: dict[Var, int] = {}
    codes = []
    consts = []
    for a in atoms:
        var, neg, const = a._tpl_atom()
        if var is None:
            if const is False or const is True:
                codes.append(-2 if const else -1)
            else:
                codes.append(-5)
                consts.append(const)
        elif var == 0:
            codes.append(-4 if neg else -3)
        else:
            o = ordinal.get(var)
            if o is None:
                o = ordinal[var] = len(slots)
                slots.append(var)
            codes.append(2 * o + (1 if neg else 0))
    return (tdef, tuple(consts)), tuple(codes), slots


def _placeholders(codes: tuple[int, ...], consts: tuple) -> Iterator[tuple[Var | None, bool, Any]]:
    ci = iter(consts)
    for c in codes:
        if c >= 0:
            yield (PH + (c >> 1), bool(c & 1), None)
        elif c == -1:
            yield (None, False, False)
        elif c == -2:
            yield (None, False, True)
        elif c == -5:
            yield (None, False, next(ci))
        else:
            yield (0, c == -4, None)


# --- recorded templates -----------------------------------------------------------------------


@dataclass
class TMat:
    lens: np.ndarray  # int64 (rows,)
    keys: np.ndarray  # int64 (nnz,), capture keys
    cids: np.ndarray  # int32 (nnz,), into Template.coeffs
    idx_aux: np.ndarray  # positions of internal aux keys
    idx_in: np.ndarray  # positions of internal input keys
    idx_slot: np.ndarray  # positions of argument keys
    slot_of: np.ndarray  # their slot numbers

    @classmethod
    def of(cls, lens: np.ndarray, keys: np.ndarray, cids: np.ndarray) -> TMat:
        idx_slot = np.nonzero(keys >= PH)[0]
        return cls(
            lens=lens, keys=keys, cids=cids,
            idx_aux=np.nonzero(keys < 0)[0],
            idx_in=np.nonzero((keys > 0) & (keys < PH))[0],
            idx_slot=idx_slot,
            slot_of=keys[idx_slot] - PH,
        )

    def stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """(internal aux, internal inputs, slots, ONE?) appearing in this matrix."""
        k = self.keys
        return (
            np.unique(~k[k < 0]),
            np.unique(k[(k > 0) & (k < PH)] - 1),
            np.unique(k[k >= PH] - PH),
            bool((k == 0).any()),
        )


@dataclass
class Template:
    name: str
    n_rows: int
    n_aux: int
    n_inputs: int
    mats: tuple[TMat, TMat, TMat]
    coeffs: list[int]
    labels: list[str]
    out_def: Any
    out_atoms: list[tuple[Var | None, bool, Any]]  # capture keys
    nnz: tuple[int, int, int]
    a_stats: tuple
    b_stats: tuple

    def outputs(self, aux_base: int, in_base: int, slots: Sequence[Var]) -> Any:
        def relocate() -> Iterator[tuple[Var | None, bool, Any]]:
            for var, neg, const in self.out_atoms:
                if var is None or var == 0:
                    yield (var, neg, const)
                elif var < 0:
                    yield (var - aux_base, neg, None)
                elif var >= PH:
                    yield (slots[var - PH], neg, None)
                else:
                    yield (var + in_base - 1, neg, None)

        return unflatten(self.out_def, relocate())


_TEMPLATES: dict[tuple, Template] = {}


def clear_templates() -> None:
    _TEMPLATES.clear()


def template_count() -> int:
    return len(_TEMPLATES)


class CaptureCS(RecordCS):
    """Records a template: keys stay in capture space (placeholders from PH on)."""


def capture(fn: Callable[..., Any], sig: tuple, codes: tuple[int, ...]) -> Template:
    (tdef, consts) = sig
    cap = CaptureCS(labels=True)
    args = unflatten(tdef, _placeholders(codes, consts))
    out = fn.__wrapped__(cap, *args)  # type: ignore[attr-defined]
    out_atoms_obj: list = []
    out_def = flatten(out, out_atoms_obj)
    out_atoms = [a._tpl_atom() for a in out_atoms_obj]
    (la, ka, ca), (lb, kb, cb), (lc_, kc, cc) = cap.matrices()
    mats = (TMat.of(la, ka, ca), TMat.of(lb, kb, cb), TMat.of(lc_, kc, cc))
    labels = cap.labels()
    return Template(
        name=getattr(fn, "__qualname__", str(fn)),
        n_rows=cap.n_constraints,
        n_aux=cap.n_aux,
        n_inputs=cap.n_inputs - 1,
        mats=mats,
        coeffs=list(cap._coeffs),
        labels=[labels[i] for i in range(cap.n_constraints)],
        out_def=out_def,
        out_atoms=out_atoms,
        nnz=(len(ka), len(kb), len(kc)),
        a_stats=mats[0].stats(),
        b_stats=mats[1].stats(),
    )


def lookup(fn: Callable[..., Any], args: tuple) -> tuple[Template, list[Var]]:
    sig, codes, slots = signature(args)
    key = (fn, sig, codes)
    t = _TEMPLATES.get(key)
    if t is None:
        t = _TEMPLATES[key] = capture(fn, sig, codes)
    return t, slots


def replay_call(cs: ConstraintSystem, fn: Callable[..., Any], args: tuple) -> Any:
    """Record or count a @template call by replaying its template (capturing it first)."""
    t, slots = lookup(fn, args)
    ab, ib = cs.n_aux, cs.n_inputs
    cs._replay(t, slots)  # type: ignore[attr-defined]
    return t.outputs(ab, ib, slots)


def template(fn: F) -> F:
    """Make a gadget `fn(cs, *args)` replayable (see the module docstring). Keyword arguments
    are not supported: pass everything positionally."""

    @functools.wraps(fn)
    def call(cs: ConstraintSystem, *args: Any) -> Any:
        return cs.call_template(call, args)

    return call  # type: ignore[return-value]
