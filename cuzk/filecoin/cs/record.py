"""Record mode: the constraint matrices as cuzk's R1CS (CSR over Fr).

Rows are kept as chunks of numpy arrays: rows enforced one by one collect in Python lists
until the next replayed template (or the end) turns them into a chunk; a replayed template
is one chunk made by relocating its recorded arrays, so it costs numpy work, not Python
work per constraint. Coefficients are ids into one table of distinct values, converted to
Fr limbs once at the end.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cuzk.curves import get_curve
from cuzk.filecoin.cs.base import ConstraintSystem
from cuzk.filecoin.cs.lc import LinearLike, Var, merged
from cuzk.layout import fr_from_ints
from cuzk.model.r1cs import CSR, R1CS

_Mat = tuple[np.ndarray, np.ndarray, np.ndarray]  # row lengths, keys, coefficient ids


class ConstraintLabels(dict):
    """Row → namespace path, computed on lookup from the recorded segments (a dict subclass
    so cuzk.groth16.qap.constraint_label accepts it)."""

    def __init__(self, n_rows: int, segs: list[tuple[int, str, list[str]]]) -> None:
        super().__init__()
        self._n = n_rows
        self._starts = [s[0] for s in segs]
        self._segs = segs

    def __contains__(self, i: object) -> bool:
        return isinstance(i, int | np.integer) and 0 <= int(i) < self._n and bool(self._segs)

    def __getitem__(self, i: int) -> str:
        i = int(i)
        if not 0 <= i < self._n or not self._segs:
            raise KeyError(i)
        k = bisect.bisect_right(self._starts, i) - 1
        start, prefix, labels = self._segs[k]
        rel = labels[i - start]
        return f"{prefix}/{rel}" if prefix else rel

    def get(self, i: Any, default: Any = None) -> Any:
        return self[i] if i in self else default

    def __len__(self) -> int:
        return self._n if self._segs else 0

    def __bool__(self) -> bool:
        return bool(self._segs)

    def to_json(self) -> bytes:
        """The segments as JSON (a label list replayed many times is written once), for a
        recorded R1CS kept on disk (cs/record_cache.py)."""
        ids: dict[int, int] = {}
        lists: list[list[str]] = []
        segs = []
        for start, prefix, labels in self._segs:
            k = ids.get(id(labels))
            if k is None:
                k = ids[id(labels)] = len(lists)
                lists.append(labels)
            segs.append((start, prefix, k))
        return json.dumps({"rows": self._n, "lists": lists, "segs": segs},
                          separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, blob: bytes) -> ConstraintLabels:
        obj = json.loads(blob)
        lists = obj["lists"]
        return cls(int(obj["rows"]), [(int(a), str(p), lists[k]) for a, p, k in obj["segs"]])


class RecordCS(ConstraintSystem):
    """Records A, B, C. `labels` keeps each constraint's namespace path (cheap: replayed
    templates share their label lists)."""

    def __init__(self, labels: bool = True) -> None:
        super().__init__()
        self._cid: dict[int, int] = {1: 0}
        self._coeffs: list[int] = [1]
        self._pk: tuple[list[int], list[int], list[int]] = ([], [], [])
        self._pc: tuple[list[int], list[int], list[int]] = ([], [], [])
        self._pl: tuple[list[int], list[int], list[int]] = ([], [], [])
        self._prows = 0
        self._chunks: list[tuple[_Mat, _Mat, _Mat]] = []
        self._labels_on = labels
        self._plabels: list[str] = []
        self._segs: list[tuple[int, str, list[str]]] = []
        self._tcids: dict[int, tuple[Any, np.ndarray]] = {}  # id → (template, its ids here)

    def enforce(self, a: LinearLike, b: LinearLike, c: LinearLike, name: str | None = None) -> None:
        self.n_constraints += 1
        self._prows += 1
        ids = self._cid
        coeffs = self._coeffs
        for m, lc in ((0, a), (1, b), (2, c)):
            keys = self._pk[m]
            cids = self._pc[m]
            n = 0
            for v, co in merged(lc).items():
                if co:
                    keys.append(v)
                    i = ids.get(co)
                    if i is None:
                        i = ids[co] = len(coeffs)
                        coeffs.append(co)
                    cids.append(i)
                    n += 1
            self._pl[m].append(n)
        if self._labels_on:
            self._plabels.append(self.path(name))

    def _flush(self) -> None:
        if not self._prows:
            return
        start = self.n_constraints - self._prows
        mats = []
        for m in range(3):
            mats.append((
                np.array(self._pl[m], dtype=np.int64),
                np.array(self._pk[m], dtype=np.int64),
                np.array(self._pc[m], dtype=np.int32),
            ))
            self._pl[m].clear()
            self._pk[m].clear()
            self._pc[m].clear()
        self._chunks.append((mats[0], mats[1], mats[2]))
        if self._labels_on:
            self._segs.append((start, "", self._plabels))
            self._plabels = []
        self._prows = 0

    def _template_cids(self, t: Any) -> np.ndarray:
        hit = self._tcids.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        ids, coeffs = self._cid, self._coeffs
        out = []
        for co in t.coeffs:
            i = ids.get(co)
            if i is None:
                i = ids[co] = len(coeffs)
                coeffs.append(co)
            out.append(i)
        arr = np.array(out, dtype=np.int32)
        self._tcids[id(t)] = (t, arr)  # holding t keeps its id from being reused
        return arr

    def _replay(self, t: Any, slots: Sequence[Var]) -> None:
        self._flush()
        ab, ib = self.n_aux, self.n_inputs
        sa = np.asarray(slots, dtype=np.int64) if len(slots) else np.zeros(0, np.int64)
        gc = self._template_cids(t)
        mats = []
        for tm in t.mats:
            keys = tm.keys.copy()
            keys[tm.idx_aux] -= ab
            keys[tm.idx_in] += ib - 1
            keys[tm.idx_slot] = sa[tm.slot_of]
            mats.append((tm.lens, keys, gc[tm.cids]))
        self._chunks.append((mats[0], mats[1], mats[2]))
        if self._labels_on:
            self._segs.append((self.n_constraints, self.path(), t.labels))
        self.n_aux += t.n_aux
        self.n_inputs += t.n_inputs
        self.n_constraints += t.n_rows

    def call_template(self, fn: Callable[..., Any], args: tuple) -> Any:
        from cuzk.filecoin.cs.template import replay_call

        return replay_call(self, fn, args)

    # --- results --------------------------------------------------------------------------

    def matrices(self) -> tuple[_Mat, _Mat, _Mat]:
        """(row lengths, keys, coefficient ids) per matrix, all rows so far."""
        self._flush()
        out = []
        for m in range(3):
            parts = [c[m] for c in self._chunks]
            if not parts:
                out.append((np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32)))
                continue
            out.append(tuple(np.concatenate([p[k] for p in parts]) for k in range(3)))
        if len(self._chunks) > 1:  # keep one chunk so a second call is cheap
            self._chunks = [(out[0], out[1], out[2])]  # type: ignore[list-item]
        return out[0], out[1], out[2]  # type: ignore[return-value]

    def labels(self) -> ConstraintLabels:
        self._flush()
        return ConstraintLabels(self.n_constraints, self._segs if self._labels_on else [])

    def label(self, row: int) -> str | None:
        return self.labels().get(row)

    def r1cs(self) -> R1CS:
        """The circuit's constraints as cuzk's R1CS over BLS12-381 (witness layout
        [ONE, inputs..., aux...]); the input constraints bellperson appends are not included
        (cuzk.groth16.qap.with_public_rows adds exactly those rows)."""
        curve = get_curve("bls12_381")
        n_in = self.n_inputs
        n_vars = n_in + self.n_aux
        table = fr_from_ints(curve, self._coeffs).reshape(-1, 4)
        mats = []
        for lens, keys, cids in self.matrices():
            cols = np.where(keys >= 0, keys, n_in - 1 - keys)
            indptr = np.zeros(len(lens) + 1, dtype=np.int64)
            np.cumsum(lens, out=indptr[1:])
            cols, cids = sort_rows(indptr, cols, cols, cids)
            mats.append(CSR(indptr=indptr, indices=cols, values=table[cids], n_cols=n_vars))
        return R1CS(
            curve=curve,
            n_vars=n_vars,
            n_public=n_in - 1,
            a=mats[0],
            b=mats[1],
            c=mats[2],
            n_constraints=self.n_constraints,
            labels={"constraints": self.labels()},
        )


def sort_rows(indptr: np.ndarray, rank: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    """`arrays` (one entry per term) with each row's terms ordered by `rank`. Only rows out of
    order are touched: replayed templates are recorded in the order they end up in, except
    where two argument variables swap places."""
    if len(rank) < 2:
        return list(arrays)
    drop = np.nonzero(rank[1:] <= rank[:-1])[0] + 1  # positions not above their predecessor
    row = np.searchsorted(indptr, drop, side="right") - 1
    row = row[indptr[row] != drop]  # a row's first term has no predecessor in it
    if not len(row):
        return list(arrays)
    rows = row[np.concatenate(([True], row[1:] != row[:-1]))]  # row is non-decreasing
    lo, hi = indptr[rows], indptr[rows + 1]
    n = hi - lo
    first = np.zeros(len(rows), dtype=np.int64)
    np.cumsum(n[:-1], out=first[1:])
    pos = np.repeat(lo - first, n) + np.arange(int(n.sum()), dtype=np.int64)
    sub = rank[pos]
    sub = sub - sub.min()
    key = np.repeat(np.arange(len(rows), dtype=np.int64), n) * (int(sub.max()) + 1) + sub
    order = np.argsort(key, kind="stable")
    out = []
    for a in arrays:
        a = a.copy()
        a[pos] = a[pos][order]
        out.append(a)
    return out
