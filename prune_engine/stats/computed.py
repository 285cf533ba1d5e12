"""Statistics computed from the column data, for chunks whose footers have none.

Some writers leave columns without footer statistics: Spark's default timestamps are INT96,
for which parquet-java writes no min/max; other writers skip statistics for some columns.
``collect_stats(..., compute_missing=True)`` reads exactly those column chunks (only the
containers and leaves whose min, max or null count the footer left unknown while the
container holds rows) and computes their bounds and null counts, so that a filter on them
prunes like any other.

What is computed, per container and leaf (leaves inside lists and maps are left as they are):

- min and max of the non-null values, as the footers would give them: NaN is ignored (a
  container of NaN only keeps its bounds unknown), a zero bound widens to ``-0.0`` (min)
  and ``+0.0`` (max);
- the null count, counting rows where the leaf or a struct above it is null;
- the NaN count of a float leaf, where the footer gave none (such a chunk is read anyway);
- a dictionary column (pandas' categoricals) or a view column (``string_view``, as some
  writers store it) is computed over its values, in the type of its statistics (``string``);
- INT96 timestamps are read as microseconds (pyarrow's ``coerce_int96_timestamp_unit="us"``:
  no wrap-around past 2262), the unit of their statistics (:mod:`.parquet`); values before
  1900 keep the bounds unknown, since readers disagree on them (Spark rebases INT96 from the
  Julian calendar and old zone offsets, ``org.apache.spark.legacyINT96``);
- a bound goes into the statistics' type as :func:`~.unify.cast_bounds` converts it: a min
  rounded down and a max up where the type's unit is coarser (nanoseconds read, microseconds
  held), unknown where it does not fit.

>>> import io, os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
>>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
>>> pq.write_table(pa.table({"x": [3, 1, None]}), path, write_statistics=False)
>>> pe.collect_stats(path, progress=False).column("max_values").to_pylist()
[{'x': None}]
>>> pe.collect_stats(path, compute_missing=True, progress=False).column("max_values").to_pylist()
[{'x': 3}]
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from prune_engine.stats import layout
from prune_engine.stats.unify import cast_bounds, plain_values

#: INT96 values before this instant keep their bounds unknown (see the module doc)
_INT96_FLOOR = dt.datetime(1900, 1, 1)


def missing(table: pa.Table) -> dict[tuple[str, ...], np.ndarray]:
    """Per row-value leaf, the containers whose min, max or null count is unknown while they
    hold rows (None: a file whose footer was not read, left alone)."""
    if layout.MIN_VALUES not in table.column_names or not table.num_rows:
        return {}
    rows = table.column(layout.NUM_RECORDS).to_numpy(zero_copy_only=False).astype(float)
    read = rows > 0  # NaN (a file whose footer was not read) is not
    out = {}
    for path, _, element in layout.leaves(table.schema.field(layout.MIN_VALUES).type):
        if element is not None:
            continue
        lo, hi, nulls = (layout.struct_leaf(table.column(name), path)
                         for name in (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT))
        unknown = np.zeros(table.num_rows, bool)
        for leaf in (lo, hi, nulls):
            unknown |= True if leaf is None else ~np.asarray(leaf.is_valid())
        if nulls is not None:  # all-null containers have nothing to compute
            unknown &= nulls.fill_null(-1).to_numpy(zero_copy_only=False) != rows
        mask = unknown & read
        if mask.any():
            out[path] = mask
    return out


def compute_missing(table: pa.Table, filesystem=None, locations: dict | None = None,
                    partitions=()) -> tuple[pa.Table, dict]:
    """``table`` with the unknown statistics of :func:`missing` computed from the data, and
    what was done: ``{"columns": [...], "containers": n}``. ``locations`` maps a file's name
    to its path on ``filesystem`` where they differ."""
    wanted = {p: m for p, m in missing(table).items() if p[0] not in set(partitions)}
    if not wanted:
        return table, {"columns": [], "containers": 0}
    todo = np.zeros(table.num_rows, bool)
    for mask in wanted.values():
        todo |= mask
    paths = table.column(layout.PATH).to_pylist()
    groups = table.column(layout.ROW_GROUP).to_pylist() if layout.ROW_GROUP in \
        table.column_names else [None] * table.num_rows
    results: dict[tuple, dict[int, tuple]] = {p: {} for p in wanted}
    opened: dict[str, Any] = {}
    for row in np.flatnonzero(todo):
        path, rg = paths[row], groups[row]
        pf = opened.get(path)
        if pf is None:
            pf = opened[path] = pq.ParquetFile((locations or {}).get(path, path),
                                               filesystem=filesystem,
                                               coerce_int96_timestamp_unit="us")
        leaves = [p for p, m in wanted.items() if m[row] and p[0] in pf.schema_arrow.names]
        tops = sorted({p[0] for p in leaves})
        data = pf.read(tops) if rg is None else pf.read_row_group(rg, tops)
        int96 = _int96_leaves(pf)
        for leaf in leaves:
            values = data.column(leaf[0]).combine_chunks()
            if len(leaf) > 1:
                values = pc.struct_field(values, list(leaf[1:]))
            results[leaf][row] = _bounds(values, int96=leaf in int96)
    out = table
    for leaf, found in results.items():
        out = _fill(out, leaf, found)
    return out, {"columns": sorted(".".join(p) for p, r in results.items() if r),
                 "containers": int(todo.sum())}


def _int96_leaves(pf: pq.ParquetFile) -> set[tuple[str, ...]]:
    schema = pf.schema
    return {tuple(schema.column(i).path.split(".")) for i in range(len(schema))
            if schema.column(i).physical_type == "INT96"}


def _bounds(values: pa.Array, int96: bool) -> tuple:
    """``(min, max, null count, NaN count)`` of one chunk's values (None where unknown; the
    NaN count is None for a type without NaN). A dictionary or a view is computed over its
    values (:func:`~.unify.plain_values`), which have a min and a max."""
    values = plain_values(values)
    nulls = values.null_count
    floating = pa.types.is_floating(values.type)
    nans = None
    if floating:  # NaN is no bound (pyarrow versions differ on min_max over NaN)
        nan = pc.fill_null(pc.is_nan(values), False)
        nans = pc.sum(nan).as_py() or 0
        values = values.filter(pc.invert(nan))
    if len(values) == values.null_count:
        return None, None, nulls, nans
    lo, hi = pc.min_max(values).values()
    if floating:
        lo = pa.scalar(-0.0 if lo.as_py() == 0 else lo.as_py(), lo.type)
        hi = pa.scalar(0.0 if hi.as_py() == 0 else hi.as_py(), hi.type)
    if int96 and lo.is_valid and lo.as_py() < _INT96_FLOOR:
        lo = hi = None
    return lo, hi, nulls, nans


def _fill(table: pa.Table, path: tuple[str, ...], found: dict[int, tuple]) -> pa.Table:
    """Set the computed values of ``path`` in the statistics structs (the NaN count where the
    table has one for the leaf), where they were unknown."""
    for slot, name in enumerate(layout.STAT_STRUCTS):
        if name not in table.column_names:
            continue
        column = table.column(name).combine_chunks()
        leaf = layout.struct_leaf(column, path)
        if leaf is None:
            continue
        values = leaf.to_pylist()
        for row, computed in found.items():
            if values[row] is None:
                values[row] = _convert(computed[slot], leaf.type, name == layout.MIN_VALUES)
        index = table.column_names.index(name)
        table = table.set_column(index, table.field(name),
                                 layout.with_struct_leaf(column, path, pa.array(values, leaf.type)))
    return table


def _convert(value, type_: pa.DataType, lower: bool = True):
    """``value`` (a computed bound, a ``pa.Scalar``, or a count) as a value of ``type_``: a
    bound as :func:`~.unify.cast_bounds` converts it (``lower``: a min), None when it does
    not fit."""
    if value is None:
        return None
    if isinstance(value, pa.Scalar):
        if not value.is_valid:
            return None
        return cast_bounds(pa.array([value]), type_, lower)[0].as_py()
    try:
        return pa.scalar(value, type_).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        return None
