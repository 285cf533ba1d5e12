"""Read statistics columns once per evaluation, as numpy views, with "unknown" defined once.

:class:`EvalContext` hands the tests the arrays they need: the bounds of a column
(``lo, lo_valid, hi, hi_valid``) and its :class:`Facts` (may it hold a value, a NULL, a NaN?).
Everything a container's statistics leave open reads as "unknown", and unknown keeps:

* a null ``min_values`` (or ``max_values``, ``null_count``) struct for a container: every field
  under it is unknown there (``pc.struct_field`` carries the parent's nulls down);
* a null leaf, a missing leaf, a NaN bound: that statistic is unknown;
* ``num_records`` null: the container may hold anything.

Validity masks are ``None`` when everything is valid, so that the common case costs no pass.
Results are cached on the :class:`~prune_engine.stats.table.StatsTable`, so a plan evaluated
again over the same table reuses them.

Where a source recorded why some containers' bounds went unused, ``explain`` says it after
"min/max unknown" (:meth:`EvalContext.bounds_notes`): today Iceberg manifests whose statistics
maps could not be matched to the table's columns (``metadata["iceberg"]["unused_statistics"]``,
see :mod:`prune_engine.stats.iceberg`), by the files' ``path``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import StatsError, listed
from prune_engine.evaluate.domains import Domain, FloatDomain, IntDomain
from prune_engine.stats import layout
from prune_engine.stats.layout import ColumnInfo
from prune_engine.stats.table import StatsTable


def both(a, b):
    """AND of two masks where None means all True."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def either_not(valid, test):
    """``~valid | test`` where ``valid`` None means all valid (the result: test)."""
    if valid is None:
        return test
    return test | ~valid


def where_known(test: np.ndarray, *valid) -> np.ndarray:
    """``test`` where every statistic it read is known (validity masks, None = all known).

    >>> where_known(np.array([True, True]), None, np.array([True, False])).tolist()
    [True, False]
    """
    out = test
    for v in valid:
        if v is not None:
            out = out & v
    return out


@dataclass
class Facts:
    """What a column's counts say about each container (None = possible everywhere).

    maybe_value: a non-null value may be present; maybe_null: a NULL may be present;
    maybe_nan: a NaN may be present; maybe_regular: a non-null, non-NaN value may be present.
    nan_counted: where ``maybe_nan`` was read from a valid ``nan_count`` (None: nowhere), which
    ``explain`` tells apart from a NaN count that is unknown.
    """

    maybe_value: np.ndarray | None
    maybe_null: np.ndarray | None
    maybe_nan: np.ndarray | None
    maybe_regular: np.ndarray | None
    nan_counted: np.ndarray | None = None


#: words of an unused statistics map's reason that say bounds were lost (its other maps are
#: counts, which leave the bounds known)
_BOUND_MAPS = ("lower_bounds", "upper_bounds")


def bounds_notes(metadata: dict[str, Any]) -> dict[str, str]:
    """Per data file (its ``path``): why its bounds went unused, as ``explain`` appends it to
    "min/max unknown": ``"Iceberg manifest <name>: <why>"``, the first reason about bounds
    (else the first), and how many more there are. Empty when nothing was recorded; entries
    of another shape are passed over (a note only explains, it decides nothing).

    >>> meta = {"iceberg": {"unused_statistics": [
    ...     {"manifest": "s3://b/t/metadata/m0.avro", "why": "it has no null_value_counts key",
    ...      "files": ["s3://b/t/a.parquet"]},
    ...     {"manifest": "s3://b/t/metadata/m0.avro", "why": "it has no lower_bounds key",
    ...      "files": ["s3://b/t/a.parquet"]}]}}
    >>> bounds_notes(meta)
    {'s3://b/t/a.parquet': 'Iceberg manifest m0.avro: it has no lower_bounds key, and 1 more'}
    >>> bounds_notes({})
    {}
    """
    iceberg = metadata.get("iceberg")
    entries = iceberg.get("unused_statistics") if isinstance(iceberg, dict) else None
    if not isinstance(entries, list):
        return {}
    reasons: dict[str, list[tuple[str, str]]] = {}
    for e in entries:
        if not isinstance(e, dict):
            continue
        manifest, why, files = e.get("manifest"), e.get("why"), e.get("files")
        if not (isinstance(manifest, str) and isinstance(why, str) and isinstance(files, list)):
            continue
        for f in files:
            if isinstance(f, str):
                reasons.setdefault(f, []).append((manifest, why))
    notes = {}
    for path, found in reasons.items():
        found.sort(key=lambda r: not any(word in r[1] for word in _BOUND_MAPS))
        manifest, why = found[0]
        more = f", and {len(found) - 1} more" if len(found) > 1 else ""
        notes[path] = f"Iceberg manifest {manifest.rsplit('/', 1)[-1]}: {why}{more}"
    return notes


def _combined(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


class EvalContext:
    """One evaluation over one statistics table."""

    def __init__(self, stats: StatsTable, on_invalid: str = "raise"):
        if on_invalid not in ("raise", "keep"):
            raise ValueError(f"on_invalid must be 'raise' or 'keep', not {on_invalid!r}")
        self.stats = stats
        self.n = stats.num_rows
        self.on_invalid = on_invalid
        self._cache = stats._cache
        #: containers whose statistics failed validation (kept), under on_invalid="keep"
        self.invalid: np.ndarray | None = None
        self._invalid_seen: set[str] = set()

    # raw columns ---------------------------------------------------------------------------
    def leaf(self, struct: str, path: tuple[str, ...]) -> pa.Array | None:
        """The leaf ``struct.path`` (e.g. ``min_values.st.a``) with parent nulls applied, or None."""
        key = ("leaf", struct, path)
        if key not in self._cache:
            self._cache[key] = self._read_leaf(struct, path)
        return self._cache[key]

    def _read_leaf(self, struct, path):
        table = self.stats.table
        if struct not in table.column_names:
            return None
        arr = _combined(table.column(struct))
        for name in path:
            t = arr.type
            if not pa.types.is_struct(t) or t.get_field_index(name) < 0:
                return None
            arr = pc.struct_field(arr, [t.get_field_index(name)])
        return arr

    def counts(self, struct: str, path: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray | None] | None:
        """An integer count column as int64 numpy ``(values, valid)``; None when missing."""
        key = ("counts", struct, path)
        if key not in self._cache:
            arr = self.leaf(struct, path) if path else (
                _combined(self.stats.table.column(struct)) if struct in self.stats.table.column_names else None)
            if arr is None:
                self._cache[key] = None
            else:
                dom = IntDomain(arr.type)
                vals, valid = dom.view(arr)
                self._cache[key] = (vals.astype(np.int64, copy=False), valid)
        return self._cache[key]

    # validated statistics ----------------------------------------------------------------
    def num_records(self):
        key = (self.on_invalid, "num_records")
        if key in self._cache:
            self._replay(layout.NUM_RECORDS)
        else:
            n, n_valid = self.counts(layout.NUM_RECORDS)
            bad = n < 0
            if n_valid is not None:
                bad &= n_valid
            self._cache[key] = (n, self._drop_invalid(layout.NUM_RECORDS, bad, n_valid, "a negative record count"))
        return self._cache[key]

    def bounds(self, info: ColumnInfo, domain: Domain):
        """``(lo, lo_valid, hi, hi_valid)`` for a column; NaN bounds read as unknown, and a
        container whose min exceeds its max is invalid."""
        key = (self.on_invalid, "bounds", info.path)
        if key in self._cache:
            self._replay(f"{layout.MIN_VALUES}.{info.name}")
            return self._cache[key]
        out = []
        for struct in (layout.MIN_VALUES, layout.MAX_VALUES):
            arr = self.leaf(struct, info.path)
            if arr is None:
                out.append((None, np.zeros(self.n, dtype=bool)))
                continue
            vals, valid = domain.view(arr)
            if isinstance(domain, FloatDomain):
                nan = np.isnan(vals)
                if nan.any():
                    valid = ~nan if valid is None else valid & ~nan
            out.append((vals, valid))
        (lo, lov), (hi, hiv) = out
        if lo is not None and hi is not None:
            bad = domain.compare_arrays(lo, ">", hi)
            if lov is not None:
                bad &= lov
            if hiv is not None:
                bad &= hiv
            if bad.any():
                name = f"{layout.MIN_VALUES}.{info.name}"
                self._fault(name, bad, f"min > max in {name} / {layout.MAX_VALUES}.{info.name}")
                keep_valid = ~bad
                lov = keep_valid if lov is None else lov & keep_valid
                hiv = keep_valid if hiv is None else hiv & keep_valid
        result = (lo, lov, hi, hiv)
        self._cache[key] = result
        return result

    def facts(self, info: ColumnInfo) -> Facts:
        key = (self.on_invalid, "facts", info.path)
        if key in self._cache:
            self.num_records()
            self._replay(f"{layout.NULL_COUNT}.{info.name}")
            self._replay(f"{layout.NAN_COUNT}.{info.name}")
            return self._cache[key]
        n, n_valid = self.num_records()
        not_empty = self.not_empty()
        nc = self.counts(layout.NULL_COUNT, info.path)
        if info.element:
            # element statistics: counts describe elements, not rows; only emptiness is certain
            nan_possible = not_empty if pa.types.is_floating(info.type) else np.zeros(self.n, dtype=bool)
            f = Facts(not_empty, not_empty, nan_possible, not_empty)
            self._cache[key] = f
            return f
        if nc is None:
            maybe_value, maybe_null = not_empty, not_empty
            nc_vals = nc_valid = None
        else:
            nc_vals, nc_valid = nc
            bad = where_known(nc_vals < 0, nc_valid) | where_known(nc_vals > n, nc_valid, n_valid)
            nc_valid = self._drop_invalid(f"{layout.NULL_COUNT}.{info.name}", bad, nc_valid,
                                          "a negative null count, or more nulls than records")
            no_values = nc_vals >= n
            if nc_valid is not None:
                no_values &= nc_valid
            if n_valid is not None:
                no_values &= n_valid
            maybe_value = ~no_values if no_values.any() else None
            has_null = either_not(nc_valid, nc_vals > 0)
            maybe_null = both(has_null, not_empty)
        maybe_nan = np.zeros(self.n, dtype=bool)
        maybe_regular = maybe_value
        nan_counted = None
        nan = self.counts(layout.NAN_COUNT, info.path) if info.has_nan_count else None
        if nan is not None and not pa.types.is_floating(info.type):
            self._drop_invalid(f"{layout.NAN_COUNT}.{info.name}", where_known(nan[0] > 0, nan[1]), nan[1],
                               f"NaNs counted in a {info.type} column, which cannot hold NaN")
        if pa.types.is_floating(info.type):
            if nan is None:
                maybe_nan = maybe_value if maybe_value is not None else np.ones(self.n, dtype=bool)
            else:
                nan_vals, nan_valid = nan
                bad = where_known(nan_vals < 0, nan_valid) | where_known(nan_vals > n, nan_valid, n_valid)
                if nc_vals is not None:
                    bad |= where_known(nan_vals + nc_vals > n, nan_valid, nc_valid, n_valid)
                nan_valid = self._drop_invalid(
                    f"{layout.NAN_COUNT}.{info.name}", bad, nan_valid,
                    "a negative NaN count, or more NaNs (with the nulls) than records")
                nan_counted = np.ones(self.n, dtype=bool) if nan_valid is None else nan_valid
                maybe_nan = both(maybe_value, either_not(nan_valid, nan_vals > 0))
                if maybe_nan is None:
                    maybe_nan = np.ones(self.n, dtype=bool)
                # nulls + NaNs <= records: NaNs filling the container leave room for no NULL
                # and no ordinary value, whether or not the null count is known
                all_nan = where_known(nan_vals >= n, nan_valid, n_valid)
                only_special = all_nan
                if nc_vals is not None:
                    only_special = all_nan | where_known(nan_vals + nc_vals >= n, nan_valid, nc_valid, n_valid)
                if only_special.any():
                    maybe_regular = both(maybe_value, ~only_special)
                if all_nan.any():
                    maybe_null = both(maybe_null, ~all_nan)
        f = Facts(both(maybe_value, not_empty), maybe_null, maybe_nan, both(maybe_regular, not_empty),
                  nan_counted)
        self._cache[key] = f
        return f

    def not_empty(self) -> np.ndarray | None:
        """False for containers known to hold no rows (None: there are none such)."""
        key = (self.on_invalid, "not_empty")
        if key not in self._cache:
            if layout.NUM_RECORDS not in self.stats.table.column_names:
                self._cache[key] = None
            else:
                n, n_valid = self.num_records()
                empty = n == 0
                if n_valid is not None:
                    empty &= n_valid
                self._cache[key] = ~empty if empty.any() else None
        return self._cache[key]

    def bounds_notes(self) -> np.ndarray | None:
        """Per container: why its source left its bounds unused (text, or None), for
        ``explain``; None when no source recorded any (:func:`bounds_notes`: built once per
        evaluation, and only when asked, from the statistics' ``metadata`` and ``path``)."""
        if not hasattr(self, "_notes"):
            self._notes = None
            notes = bounds_notes(self.stats.metadata) if self.stats.metadata else {}
            if notes and layout.PATH in self.stats.table.column_names:
                paths = self.stats.table.column(layout.PATH).to_pylist()
                out = np.array([notes.get(p) for p in paths], dtype=object)
                self._notes = out if any(v is not None for v in out) else None
        return self._notes

    def window(self, start: int, stop: int) -> EvalContext:
        """The same evaluation over containers ``start:stop`` only. Statistics are still read,
        validated and cached over the whole table (faults and ``invalid`` stay this
        context's), then sliced without a copy: a second test tree that only matters where a
        first one kept something reads just those containers."""
        return _Window(self, start, stop)

    # faults ------------------------------------------------------------------------------
    def _drop_invalid(self, column: str, bad: np.ndarray, valid, what: str):
        """Containers flagged ``bad`` in ``column`` (``what`` says why they are impossible):
        raise, or mark them invalid and the column unknown there."""
        if not bad.any():
            return valid
        self._fault(column, bad, f"impossible values in {column} ({what})")
        return ~bad if valid is None else valid & ~bad

    def _fault(self, column: str, bad: np.ndarray, what: str):
        idx = np.flatnonzero(bad)
        names = self._container_names(idx[:10])
        if self.on_invalid == "raise":
            raise StatsError(
                f"malformed statistics: {what}, in {len(idx)} container(s), first: "
                f"{listed(map(str, names), 150)}; "
                "pass on_invalid='keep' to keep those containers instead",
                column=column, containers=names)
        self._cache[("fault", column)] = (bad, what)
        self._replay(column)

    def _replay(self, column: str):
        """Under on_invalid="keep": keep the containers whose ``column`` failed validation."""
        if self.on_invalid == "raise":
            return  # nothing faulty was ever cached for this mode: a fault raises
        fault = self._cache.get(("fault", column))
        if fault is None or column in self._invalid_seen:
            return
        bad, what = fault
        self._invalid_seen.add(column)
        self.invalid = bad.copy() if self.invalid is None else self.invalid | bad
        warnings.warn(f"{int(bad.sum())} container(s) with {what} are kept (statistics treated as unknown)",
                      stacklevel=5)

    def _container_names(self, idx) -> list:
        table = self.stats.table
        if layout.CONTAINER in table.column_names:
            col = table.column(layout.CONTAINER)
            return [col[int(i)].as_py() for i in idx]
        return [int(i) for i in idx]


def _sliced(x, start: int, stop: int):
    """``x[start:stop]`` for what evaluation reads: numpy arrays, Arrow arrays, string bounds,
    :class:`Facts`, tuples of them (None stays None)."""
    if x is None or isinstance(x, (bool, np.bool_)):
        return x
    if isinstance(x, np.ndarray):
        return x[start:stop]
    if isinstance(x, tuple):
        return tuple(_sliced(v, start, stop) for v in x)
    if isinstance(x, Facts):
        return Facts(*(_sliced(getattr(x, f), start, stop) for f in Facts.__dataclass_fields__))
    if isinstance(x, (pa.Array, pa.ChunkedArray)):
        return x.slice(start, stop - start)
    return x.slice(start, stop)  # string bounds (:class:`~.strings.KeyedStrings`)


class _Window(EvalContext):
    """:meth:`EvalContext.window`: containers ``start:stop`` of ``parent``."""

    def __init__(self, parent: EvalContext, start: int, stop: int):
        self._parent, self._start, self._stop = parent, start, stop
        self.n = stop - start
        self.on_invalid = parent.on_invalid
        self.stats = StatsTable(parent.stats.table.slice(start, self.n))

    @property
    def invalid(self):
        return _sliced(self._parent.invalid, self._start, self._stop)

    def _slice(self, x):
        return _sliced(x, self._start, self._stop)

    def leaf(self, struct, path):
        return self._slice(self._parent.leaf(struct, path))

    def counts(self, struct, path=()):
        return self._slice(self._parent.counts(struct, path))

    def num_records(self):
        return self._slice(self._parent.num_records())

    def bounds(self, info, domain):
        return self._slice(self._parent.bounds(info, domain))

    def facts(self, info):
        return self._slice(self._parent.facts(info))

    def not_empty(self):
        return self._slice(self._parent.not_empty())

    def bounds_notes(self):
        return self._slice(self._parent.bounds_notes())

    def window(self, start, stop):
        return _Window(self._parent, self._start + start, self._start + stop)
