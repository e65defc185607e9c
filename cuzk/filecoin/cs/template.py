"""Templates: a gadget call recorded once per signature and replayed.

A gadget decorated with @template is a pure function of its arguments (Booleans, numbers,
UInt32s, lists of them, and static Python values). Its *signature* is everything that can
change the constraints it makes: the static values, which arguments are constants (and their
values), which are variables, which are negated, and which of them are the same variable.
The first call with a signature runs the gadget on a capture system whose input variables
are placeholders and keeps the recorded rows; every later call replays them, relocated to the
caller's variables, in O(arguments) Python work plus numpy work (record mode) or none (shape
mode). Witness mode runs the template's witness program when it has one (natively,
cs/native_program.py, or with numpy, cs/program.py), else the gadget itself.

Classes that can be template arguments implement either
  `_tpl_atom(self) -> (var | None, negated, constant)`, `_tpl_value(self)` (the variable's
  own value or None) and `_tpl_make(cls, var | None, negated, constant, value=None)` (one
  variable or constant), or
  `_tpl_parts(self) -> (static, children)` and `_tpl_build(cls, static, children)`.
An atom class may add `_tpl_make_run(cls, vars, negs, values)`: `_tpl_make` over a run of
variables (outputs of witness programs are built with it). An atom class whose instances carry `var`, `neg` and (constants) `value` attributes meaning
exactly what `_tpl_atom` returns may set `_tpl_fast = True`: signatures then read them in bulk.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import Var
from cuzk.filecoin.cs.program import WitnessProgram, compile_program
from cuzk.filecoin.cs.record import RecordCS, sort_rows

PH = 1 << 40  # capture keys from PH on stand for the template's argument variables (slots)
TMP = 1 << 50  # capture keys from TMP on are temporaries (ConstraintSystem.let)

_STATIC = (int, str, bool, bytes, float, type(None))
F = TypeVar("F", bound=Callable[..., Any])


# --- flattening arguments and results ----------------------------------------------------------


_ATOM, _PARTS, _OTHER = 1, 2, 0
_KINDS: dict[type, int] = {}


def _kind(t: type) -> int:
    k = _KINDS.get(t)
    if k is None:
        k = _KINDS[t] = _ATOM if hasattr(t, "_tpl_atom") else _PARTS if hasattr(t, "_tpl_parts") else _OTHER
    return k


def flatten(x: Any, atoms: list, classes: set | None = None) -> Any:
    """A hashable description of x's structure (atoms replaced by their class); the atoms
    are appended to `atoms` in order (and their classes added to `classes`)."""
    t = type(x)
    if t is list or t is tuple:
        if x:  # a run of one atom class (a word's bits, a block) needs no per-element description
            c = type(x[0])
            if _kind(c) == _ATOM and len(set(map(type, x))) == 1:
                atoms.extend(x)
                if classes is not None:
                    classes.add(c)
                return ("A", t, c, len(x))
        return (t, tuple([flatten(e, atoms, classes) for e in x]))
    k = _kind(t)
    if k == _ATOM:
        atoms.append(x)
        if classes is not None:
            classes.add(t)
        return t
    if k == _PARTS:
        static, parts = x._tpl_parts()
        return (t, static, flatten(parts, atoms, classes))
    if isinstance(x, _STATIC):
        return ("s", x, t)  # the type too: True and 1 are different arguments
    raise TypeError(f"a template argument cannot be a {t.__name__}")


def unflatten(tdef: Any, atoms: Iterator[tuple]) -> Any:
    """Rebuild a structure from its description and (var, negated, constant[, value]) tuples
    (value: the variable's own value, witness mode only)."""
    if isinstance(tdef, type):
        return tdef._tpl_make(*next(atoms))
    head = tdef[0]
    if head == "s":
        return tdef[1]
    if head == "A":
        make = tdef[2]._tpl_make
        return tdef[1]([make(*next(atoms)) for _ in range(tdef[3])])
    if head is list or head is tuple:
        return head(unflatten(d, atoms) for d in tdef[1])
    return head._tpl_build(tdef[1], unflatten(tdef[2], atoms))


def _build(tdef: Any, vs: list, ns: list, xs: Sequence, pos: int) -> tuple[Any, int]:
    """unflatten() for variables only, from parallel lists of variables, negations and values
    (from position pos); runs of one class go through its `_tpl_make_run` when it has one."""
    if isinstance(tdef, type):
        return tdef._tpl_make(vs[pos], ns[pos], None, xs[pos]), pos + 1
    head = tdef[0]
    if head == "s":
        return tdef[1], pos
    if head == "A":
        cls, n = tdef[2], tdef[3]
        end = pos + n
        run = getattr(cls, "_tpl_make_run", None)
        if run is not None:
            objs = run(vs[pos:end], ns[pos:end], xs[pos:end])
        else:
            objs = [cls._tpl_make(vs[i], ns[i], None, xs[i]) for i in range(pos, end)]
        return tdef[1](objs), end
    if head is list or head is tuple:
        out = []
        for d in tdef[1]:
            obj, pos = _build(d, vs, ns, xs, pos)
            out.append(obj)
        return head(out), pos
    sub, pos = _build(tdef[2], vs, ns, xs, pos)
    return head._tpl_build(tdef[1], sub), pos


def signature(args: tuple, values: list | None = None) -> tuple[Any, tuple[int, ...], list[Var]]:
    """(structure, atom codes, slot variables): codes are -1/-2 for the constants
    false/true (other constants go in the structure), -3/-4 for ONE / not ONE, and
    2·slot + negated for a variable, slots numbered by first appearance. With `values` (a
    list) the slots' values are appended to it."""
    atoms: list = []
    classes: set = set()
    tdef = flatten(args, atoms, classes)
    if values is None and all(getattr(c, "_tpl_fast", False) for c in classes):
        return _signature_fast(tdef, atoms)
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
                if values is not None:
                    values.append(a._tpl_value())
            codes.append(2 * o + (1 if neg else 0))
    return (tdef, tuple(consts)), tuple(codes), slots


def _signature_fast(tdef: Any, atoms: list) -> tuple[Any, tuple[int, ...], list[Var]]:
    """signature() for atoms with `var`/`neg` attributes: the same result with less Python
    per atom (a compression has 768 atoms and is called thousands of times)."""
    consts: list = []
    if len(atoms) < 64:
        ordinal: dict[Var, int] = {}
        slots: list[Var] = []
        codes_l = []
        for a in atoms:
            v = a.var
            if v:  # not None, not ONE
                o = ordinal.get(v)
                if o is None:
                    o = ordinal[v] = len(slots)
                    slots.append(v)
                codes_l.append(2 * o + a.neg)
            else:
                codes_l.append(_special_code(a, consts))
        return (tdef, tuple(consts)), tuple(codes_l), slots
    vs = [a.var for a in atoms]
    ns = [a.neg for a in atoms]
    uniq = dict.fromkeys(vs)  # first appearance order
    special = None in uniq or 0 in uniq
    if special:
        uniq.pop(None, None)
        uniq.pop(0, None)
    slots = list(uniq)
    ordinal = dict(zip(slots, range(len(slots))))
    if special:
        codes = tuple([2 * ordinal[v] + n if v else _special_code(a, consts)
                       for a, v, n in zip(atoms, vs, ns)])
    else:
        codes = tuple([2 * ordinal[v] + n for v, n in zip(vs, ns)])
    return (tdef, tuple(consts)), codes, slots


def _special_code(a: Any, consts: list) -> int:
    var, neg, const = a._tpl_atom()
    if var is None:
        if const is False or const is True:
            return -2 if const else -1
        consts.append(const)
        return -5
    return -4 if neg else -3


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
    n_slots: int
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
    recipes: list[tuple] | None  # per aux variable, None if one has none (cs/program.py)
    sums: list[tuple]  # the linear combinations "sum" recipes refer to
    lets: list[tuple[int, tuple]]  # temporaries: (aux variables allocated before it, terms)
    _program: Any = None
    _native: Any = None
    _aux_outs: tuple | None = None

    def program(self) -> WitnessProgram | None:
        """The numpy witness program (bit recipes only), or None."""
        if self._program is None and self.recipes is not None and not self.n_inputs:
            self._program = compile_program(self.recipes, self.sums, self.n_slots) or False
        return self._program or None

    def native_program(self) -> Any:
        """The compiled program of the native engine (cuzk._native.WitnessProgram), or None
        (no extension, or an allocation without a recipe)."""
        if self._native is None:
            self._native = False
            if self.recipes is not None and not self.n_inputs:
                from cuzk.filecoin.cs.native_program import compile_native

                self._native = compile_native(self) or False
        return self._native or None

    def outputs(self, aux_base: int, in_base: int, slots: Sequence[Var],
                aux_values: np.ndarray | None = None, slot_values: Sequence | None = None) -> Any:
        def relocate() -> Iterator[tuple]:
            for var, neg, const in self.out_atoms:
                if var is None or var == 0:
                    yield (var, neg, const, None if var is None else 1)
                elif var < 0:
                    yield (var - aux_base, neg, None,
                           None if aux_values is None else int(aux_values[~var]))
                elif var >= PH:
                    yield (slots[var - PH], neg, None,
                           None if slot_values is None else slot_values[var - PH])
                else:
                    yield (var + in_base - 1, neg, None, None)

        return unflatten(self.out_def, relocate())

    def outputs_from(self, aux_base: int, in_base: int, slots: Sequence[Var], values: Sequence[int]) -> Any:
        """The outputs on the caller's variables, with `values` given for the variable atoms
        (aux or argument, in order) as a native program returns them."""
        if self._aux_outs is None:  # every output an aux variable of the template (the usual case)
            aux_only = all(v is not None and v < 0 for v, _, _ in self.out_atoms)
            self._aux_outs = ([v for v, _, _ in self.out_atoms], [n for _, n, _ in self.out_atoms]) \
                if aux_only else ()
        if self._aux_outs:
            vs, ns = self._aux_outs
            return _build(self.out_def, [v - aux_base for v in vs], ns, values, 0)[0]
        vals = iter(values)

        def relocate() -> Iterator[tuple]:
            for var, neg, const in self.out_atoms:
                if var is None or var == 0:
                    yield (var, neg, const, None if var is None else 1)
                elif var < 0:
                    yield (var - aux_base, neg, None, next(vals))
                elif var >= PH:
                    yield (slots[var - PH], neg, None, next(vals))
                else:
                    yield (var + in_base - 1, neg, None, None)

        return unflatten(self.out_def, relocate())

    def relocate_recipe(self, r: tuple, aux_base: int, slots: Sequence[Var], sum_base: int,
                        let_base: int) -> tuple:
        """A recipe of this template as recorded into another capture."""
        def key(k: int) -> int:
            return _relocate_key(k, aux_base, slots, let_base)

        def terms(ts: tuple) -> tuple:
            return tuple((key(v), c) for v, c in ts)

        kind = r[0]
        if kind == "sum":
            return ("sum", r[1] + sum_base, r[2])
        if kind in ("ch", "maj"):
            return (kind,) + tuple((key(v), n) for v, n in r[1:])
        if kind == "fbit":
            return ("fbit", key(r[1]), r[2])
        if kind == "lin":
            return ("lin", terms(r[1]))
        if kind == "mul":
            return ("mul", terms(r[1]), terms(r[2]), terms(r[3]))
        return (kind, key(r[1]), key(r[2]))


_TEMPLATES: dict[tuple, Template] = {}


def clear_templates() -> None:
    _TEMPLATES.clear()


def template_count() -> int:
    return len(_TEMPLATES)


class CaptureCS(RecordCS):
    """Records a template: keys stay in capture space (placeholders from PH on), and each
    aux variable's recipe."""

    wants_recipes = True

    def __init__(self, labels: bool = True) -> None:
        super().__init__(labels)
        self.recipes: list[tuple] | None = []
        self.sums: list[tuple] = []
        self._sum_ids: dict[int, int] = {}
        self.lets: list[tuple[int, tuple]] = []

    def let(self, terms: tuple) -> Var | None:
        self.lets.append((self.n_aux, tuple(terms)))
        return TMP + len(self.lets) - 1

    def alloc(self, value: int | bool | None = None, name: str | None = None,
              recipe: tuple | None = None) -> Var:
        if self.recipes is not None:
            if recipe is None:
                self.recipes = None
            elif recipe[0] == "sum":
                lc = recipe[1]
                k = self._sum_ids.get(id(lc))
                if k is None:
                    k = self._sum_ids[id(lc)] = len(self.sums)
                    self.sums.append(lc)  # kept alive, so its id stays unique
                self.recipes.append(("sum", k, recipe[2]))
            else:
                self.recipes.append(recipe)
        return super().alloc(value, name)

    def alloc_input(self, value: int | bool | None = None, name: str | None = None) -> Var:
        self.recipes = None
        return super().alloc_input(value, name)

    def _replay(self, t: Template, slots: Sequence[Var]) -> None:
        ab = self.n_aux
        super()._replay(t, slots)
        if self.recipes is None:
            return
        if t.recipes is None or t.n_inputs:
            self.recipes = None
            return
        base = len(self.sums)
        lb = len(self.lets)
        for lc in t.sums:
            self.sums.append(tuple((_relocate_key(v, ab, slots, lb), c) for v, c in lc))
        for pos, terms in t.lets:
            self.lets.append((pos + ab, tuple((_relocate_key(v, ab, slots, lb), c) for v, c in terms)))
        self.recipes.extend(t.relocate_recipe(r, ab, slots, base, lb) for r in t.recipes)


def _relocate_key(k: int, aux_base: int, slots: Sequence[Var], let_base: int) -> int:
    if k < 0:
        return k - aux_base
    if k >= TMP:
        return k + let_base
    if k >= PH:
        return slots[k - PH]
    return k


def capture(fn: Callable[..., Any], sig: tuple, codes: tuple[int, ...]) -> Template:
    (tdef, consts) = sig
    cap = CaptureCS(labels=True)
    args = unflatten(tdef, _placeholders(codes, consts))
    out = fn.__wrapped__(cap, *args)  # type: ignore[attr-defined]
    out_atoms_obj: list = []
    out_def = flatten(out, out_atoms_obj)
    out_atoms = [a._tpl_atom() for a in out_atoms_obj]
    mats = tuple(TMat.of(lens, *_presort(lens, keys, cids)) for lens, keys, cids in cap.matrices())
    labels = cap.labels()
    return Template(
        name=getattr(fn, "__qualname__", str(fn)),
        n_slots=max((c >> 1 for c in codes if c >= 0), default=-1) + 1,
        n_rows=cap.n_constraints,
        n_aux=cap.n_aux,
        n_inputs=cap.n_inputs - 1,
        mats=mats,
        coeffs=list(cap._coeffs),
        labels=[labels[i] for i in range(cap.n_constraints)],
        out_def=out_def,
        out_atoms=out_atoms,
        nnz=(len(mats[0].keys), len(mats[1].keys), len(mats[2].keys)),
        a_stats=mats[0].stats(),
        b_stats=mats[1].stats(),
        recipes=cap.recipes,
        sums=cap.sums,
        lets=cap.lets,
    )


def _presort(lens: np.ndarray, keys: np.ndarray, cids: np.ndarray) -> list[np.ndarray]:
    """Order each recorded row as it will be ordered after relocation in the usual case: ONE,
    the arguments (in slot order), the template's own inputs, its own aux variables."""
    indptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    rank = np.where(keys < 0, 3 * PH + ~keys, np.where(keys >= PH, keys, keys + 2 * PH))
    rank[keys == 0] = 0
    return sort_rows(indptr, rank, keys, cids)


def lookup(fn: Callable[..., Any], args: tuple,
           values: list | None = None) -> tuple[Template, list[Var]]:
    sig, codes, slots = signature(args, values)
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


def witness_call(cs: Any, fn: Callable[..., Any], args: tuple) -> Any:
    """Witness mode: run the template's witness program when it has one (natively when the
    extension has the engine, else with numpy when the arguments' values are small ints),
    else the gadget itself (always with engine "python")."""
    engine = cs.engine
    if engine == "python":
        return fn.__wrapped__(cs, *args)
    if engine == "native":
        try:
            t, slots = lookup(fn, args)
        except (TypeError, ValueError):  # an argument a template cannot describe here: run it
            return fn.__wrapped__(cs, *args)
        prog = t.native_program()
        if prog is not None:
            ab, ib = cs.n_aux, cs.n_inputs
            try:
                values = cs.run_native(prog, slots)
            except ValueError:  # an argument is not what the recording assumed (a non-bit bit)
                return fn.__wrapped__(cs, *args)
            return t.outputs_from(ab, ib, slots, values)
    values: list = []
    try:
        t, slots = lookup(fn, args, values)
    except (TypeError, ValueError):
        return fn.__wrapped__(cs, *args)
    prog = t.program()
    if prog is None or any(v is None or not 0 <= v < 1 << 62 for v in values):
        return fn.__wrapped__(cs, *args)
    aux = prog.run([int(v) for v in values])
    ab, ib = cs.n_aux, cs.n_inputs
    cs.extend_aux_small(aux)
    return t.outputs(ab, ib, slots, aux, values)


def template(fn: F) -> F:
    """Make a gadget `fn(cs, *args)` replayable (see the module docstring). Keyword arguments
    are not supported: pass everything positionally."""

    @functools.wraps(fn)
    def call(cs: ConstraintSystem, *args: Any) -> Any:
        return cs.call_template(call, args)

    return call  # type: ignore[return-value]
