"""Exact statistics computed from Arrow data, for sources without footers (CSV, JSON, memory).

``stats_from_arrow`` splits the rows into containers (by a container column, or one table /
record batch per container), then computes every leaf's min, max, null count and, for float
leaves, NaN count with one grouped aggregation per leaf (``Table.group_by(...).aggregate``):
no Python loop over rows or containers.

Rules that keep the bounds true under IEEE comparison:

- NaN is excluded from min/max (counted in ``nan_count``); an all-NaN container has null bounds.
- ``-0.0`` and ``+0.0`` compare equal, so Arrow's min may return either; the min is made
  ``-0.0`` whenever the container holds a ``-0.0`` zero, and the max ``+0.0`` whenever it
  holds a ``+0.0`` zero (the min of ``{-0.0, 0.0}`` is ``-0.0``, its max ``0.0``).
- A null parent struct makes its leaves null for that row.
- A dictionary column (pandas' categoricals), an extension column or a view
  (``string_view``, ``binary_view``) is described as its values, in their plain type
  (``string``, ``binary``: :func:`~prune_engine.stats.unify.plain_type`), as the same
  column's statistics from a Parquet file are; containers whose columns differ only in
  such an encoding are one column.
- Leaves inside lists and maps describe the elements (fields built with
  :func:`~prune_engine.stats.layout.element_field`); for a map the element is
  ``struct<key, value>``. The null count of an element that is itself a list or map is unknown.

>>> import pyarrow as pa, prune_engine as pe
>>> data = pa.table({"part": ["a", "b", "a"], "x": [3, None, 1]})
>>> stats = pe.stats_from_arrow(data, container="part")
>>> stats.column("min_values").to_pylist(), stats.column("null_count").to_pylist()
([{'x': 1}, {'x': None}], [{'x': 0}, {'x': 1}])
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._arrow_types import is_list_type, is_list_view, is_string_type
from prune_engine.errors import StatsError, listed, one_line
from prune_engine.stats import layout
from prune_engine.stats.table import StatsTable
from prune_engine.stats.unify import plain_type, plain_values

if TYPE_CHECKING:
    import pandas
    import polars

__all__ = ["stats_from_arrow", "ArrowData"]

#: what ``stats_from_arrow`` describes: one table, or one table per container
ArrowData = Union[pa.Table, pa.RecordBatch, "pandas.DataFrame", "polars.DataFrame",
                  Iterable[Union[pa.Table, pa.RecordBatch, "pandas.DataFrame", "polars.DataFrame"]]]


@dataclass
class LeafStats:
    """One stats field (a leaf or a nested struct) as four parallel arrays over containers.

    ``nans`` is ``None`` when the field holds no float leaf. Field objects carry the name and
    the element metadata, so that nested structs can be assembled from their children.
    """

    min_field: pa.Field
    mins: pa.Array
    maxs: pa.Array
    null_field: pa.Field
    nulls: pa.Array
    nan_field: pa.Field | None = None
    nans: pa.Array | None = None

    def renamed(self, name: str, kind: str | None = None) -> "LeafStats":
        """The same statistics under ``name``; ``kind`` ("list"/"map") marks element stats."""

        def field(f: pa.Field | None) -> pa.Field | None:
            if f is None:
                return None
            if kind is None:
                return pa.field(name, f.type, metadata=f.metadata)
            return layout.element_field(name, f.type, kind)

        return LeafStats(field(self.min_field), self.mins, self.maxs, field(self.null_field),
                         self.nulls, field(self.nan_field), self.nans)


def struct_stats(name: str, children: Sequence[LeafStats], length: int) -> LeafStats:
    """Assemble children's statistics into one struct field named ``name``."""
    mins = _struct([c.mins for c in children], [c.min_field for c in children], length)
    maxs = _struct([c.maxs for c in children], [c.min_field for c in children], length)
    nulls = _struct([c.nulls for c in children], [c.null_field for c in children], length)
    with_nan = [c for c in children if c.nans is not None]
    nan_field = nans = None
    if with_nan:
        nans = _struct([c.nans for c in with_nan], [c.nan_field for c in with_nan], length)
        nan_field = pa.field(name, nans.type)
    return LeafStats(pa.field(name, mins.type), mins, maxs, pa.field(name, nulls.type), nulls,
                     nan_field, nans)


def _struct(arrays: Sequence[pa.Array], fields: Sequence[pa.Field], length: int) -> pa.StructArray:
    if not arrays:
        return pa.array([{}] * length, pa.struct([]))
    return pa.StructArray.from_arrays(list(arrays), fields=list(fields))


def stats_table(container_ids: Sequence[str], num_records, top: Sequence[LeafStats],
                extra: dict[str, pa.Array] | None = None,
                leading: dict[str, pa.Array] | None = None) -> pa.Table:
    """The stats table in the DESIGN.md layout from top-level column statistics.

    ``leading`` columns (e.g. ``path``, ``row_group``) go right after ``container``; ``extra``
    columns (e.g. ``partition_values``, ``ngram_index``) go at the end.
    """
    n = len(container_ids)
    whole = struct_stats("", top, n)
    ids = container_ids if isinstance(container_ids, pa.Array) else \
        pa.array(list(container_ids), pa.string())
    columns: dict[str, pa.Array] = {layout.CONTAINER: ids.cast(pa.string())}
    columns.update(leading or {})
    columns[layout.NUM_RECORDS] = pa.array(num_records, pa.int64())
    columns[layout.MIN_VALUES] = whole.mins
    columns[layout.MAX_VALUES] = whole.maxs
    columns[layout.NULL_COUNT] = whole.nulls
    if whole.nans is not None:
        columns[layout.NAN_COUNT] = whole.nans
    columns.update(extra or {})
    return pa.table(columns)


# --------------------------------------------------------------------------------------------
# splitting rows into containers


def _frame_table(data) -> pa.Table | None:
    """``data`` as one Arrow table when it is a pyarrow Table or RecordBatch, or a pandas or
    polars DataFrame (converted: ``pa.Table.from_pandas`` without the index, polars'
    ``to_arrow()``); else None. pandas and polars are not imported: an object can only be
    one of their frames if its library is loaded already."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    pandas, polars = sys.modules.get("pandas"), sys.modules.get("polars")
    if pandas is not None and isinstance(data, pandas.DataFrame):
        try:
            return pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowException, ValueError, TypeError) as e:
            raise StatsError(f"the pandas DataFrame cannot be converted to Arrow: {e}") from None
    if polars is not None:
        if isinstance(data, polars.LazyFrame):
            raise StatsError("a polars LazyFrame has no data yet: pass frame.collect()")
        if isinstance(data, polars.DataFrame):
            return data.to_arrow()
    return None


_ACCEPTED = "a pyarrow Table or RecordBatch, or a pandas or polars DataFrame"


def _as_table(item, what: str) -> pa.Table:
    table = _frame_table(item)
    if table is not None:
        return table
    if hasattr(item, "__arrow_c_stream__") or hasattr(item, "__arrow_c_array__"):
        return pa.table(item)
    raise StatsError(f"{what} must be {_ACCEPTED}, not {type(item).__name__}")


def _split_by_column(table: pa.Table, name: str) -> tuple[pa.Table, np.ndarray, list[str]]:
    if name not in table.column_names:
        raise StatsError(f"container column {name!r} is not a column of the data; "
                         f"columns: {listed(table.column_names)}", column=name)
    column = table.column(name)
    if column.null_count:
        raise StatsError(f"container column {name!r} holds {column.null_count} null value(s); "
                         "every row needs a container id", column=name)
    encoded = pc.dictionary_encode(column.combine_chunks())
    try:
        ids = encoded.dictionary.cast(pa.string()).to_pylist()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise StatsError(f"container column {name!r} of type {column.type} cannot be turned "
                         f"into string ids: {e}", column=name) from None
    if len(set(ids)) != len(ids):
        raise StatsError(f"container column {name!r}: distinct values map to the same string id",
                         column=name)
    gids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return table.drop_columns([name]), gids, ids


def _split_by_items(items: Iterable, ids) -> tuple[pa.Table, np.ndarray, list[str]]:
    tables = [_as_table(item, f"container #{i}") for i, item in enumerate(items)]
    if ids is None:
        ids = [str(i) for i in range(len(tables))]
    else:
        ids = [str(i) for i in ids]
        if len(ids) != len(tables):
            raise StatsError(f"container= lists {len(ids)} ids for {len(tables)} tables/batches")
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise StatsError(f"container ids must be unique; repeated: {dup[:10]}",
                         column=layout.CONTAINER, containers=dup[:10])
    if not tables:
        return pa.table({}), np.zeros(0, np.int64), ids
    try:
        table = pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        table = None
    if table is None:  # e.g. ``string`` in some, ``string_view`` or a dictionary in others
        try:
            table = pa.concat_tables([_plain_columns(t) for t in tables],
                                     promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            raise StatsError("the containers' schemas cannot be unified: "
                             f"{one_line(str(e))}") from None
    counts = [t.num_rows for t in tables]
    gids = np.repeat(np.arange(len(tables), dtype=np.int64), counts)
    return table, gids, ids


def _plain_columns(table: pa.Table) -> pa.Table:
    """``table`` with each column's values in their plain type (:func:`plain_values`: a
    dictionary decoded, a view as the large type), so that containers whose columns differ
    only in encoding concatenate."""
    return pa.table({f.name: plain_values(table.column(f.name).combine_chunks())
                     for f in table.schema})


# --------------------------------------------------------------------------------------------
# per-leaf grouped aggregation


def group_aggregate(columns: dict[str, pa.Array], aggs: list, gids: np.ndarray,
                    n: int) -> dict[str, pa.Array] | None:
    """``Table.group_by`` over container ids ``gids``, results scattered to ``0..n-1``.

    Returns ``{"<column>_<aggregation>": array of length n}``, null where a container has no
    rows, or ``None`` when an aggregation is not implemented for a column's type.
    """
    table = pa.table({"g": pa.array(gids, pa.int64()), **columns})
    try:
        result = table.group_by("g", use_threads=False).aggregate(aggs)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    slot = np.full(n, -1, np.int64)
    slot[result.column("g").to_numpy()] = np.arange(result.num_rows)
    slots = pa.array(slot, mask=slot < 0)
    return {name: result.column(name).combine_chunks().take(slots)
            for name in result.column_names if name != "g"}


def _leaf_stats(name: str, values: pa.Array, gids: np.ndarray, n: int) -> LeafStats:
    """min, max, null count (and NaN count for floats) of ``values`` per container id. A
    dictionary, an extension or a view is described as its values (:func:`plain_values`),
    in their plain type (``string`` for ``string_view``: :func:`plain_type`)."""
    typ = plain_type(values.type)
    values = plain_values(values)
    is_float = pa.types.is_floating(typ)
    columns = {"v": values}
    aggs = [("v", "count", pc.CountOptions(mode="only_null"))]
    bounded = "v"  # the column whose min and max are the bounds
    if is_float:
        raw = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
        zero = raw == 0  # nulls became NaN, never zero
        nan = pc.is_nan(values)
        columns["nan"] = pc.cast(nan, pa.int64())
        # NaN is no bound: an all-NaN container gets null bounds (pyarrow's grouped min and
        # max give it NaN, or +inf and -inf on older releases such as 18)
        columns["ordinary"] = pc.if_else(nan, pa.scalar(None, typ), values)
        bounded = "ordinary"
        columns["neg0"] = pa.array(zero & np.signbit(raw))
        columns["pos0"] = pa.array(zero & ~np.signbit(raw))
        sum0 = pc.ScalarAggregateOptions(min_count=0)
        aggs += [("nan", "sum", sum0), ("neg0", "any"), ("pos0", "any")]
    out = group_aggregate(columns, aggs + [(bounded, "min"), (bounded, "max")], gids, n)
    has_bounds = out is not None
    if not has_bounds:  # a type without an order: bounds unknown
        out = group_aggregate(columns, aggs, gids, n)
        out[f"{bounded}_min"] = out[f"{bounded}_max"] = pa.nulls(n, typ)
    nulls = pc.fill_null(out["v_count"], 0)  # no rows: no nulls
    mins, maxs = out[f"{bounded}_min"], out[f"{bounded}_max"]
    nan_field = nans = None
    if is_float:
        nans = pc.fill_null(out["nan_sum"], 0)
        nan_field = pa.field(name, pa.int64())
        if has_bounds:
            mins = _signed_zero_bound(mins, out["neg0_any"], out["pos0_any"], lower=True)
            maxs = _signed_zero_bound(maxs, out["neg0_any"], out["pos0_any"], lower=False)
    if mins.type != typ:  # a view's values, aggregated in the large type
        mins, maxs = mins.cast(typ), maxs.cast(typ)
    field = pa.field(name, typ)
    return LeafStats(field, mins, maxs, pa.field(name, pa.int64()), nulls, nan_field, nans)


def _signed_zero_bound(bound: pa.Array, neg0: pa.Array, pos0: pa.Array, lower: bool) -> pa.Array:
    """Fix the sign of a zero bound (the aggregation does not tell -0.0 from 0.0)."""
    typ = bound.type
    raw = np.asarray(bound.to_numpy(zero_copy_only=False), dtype=np.float64)
    missing = np.asarray(bound.is_null().to_numpy(zero_copy_only=False))
    has_neg = np.asarray(pc.fill_null(neg0, False).to_numpy(zero_copy_only=False), dtype=bool)
    has_pos = np.asarray(pc.fill_null(pos0, False).to_numpy(zero_copy_only=False), dtype=bool)
    zero = raw == 0
    if lower:  # -0.0 when a -0.0 is present, else +0.0
        raw = np.where(zero, np.where(has_neg, -0.0, 0.0), raw)
    else:  # +0.0 when a +0.0 is present, else -0.0
        raw = np.where(zero, np.where(has_pos, 0.0, -0.0), raw)
    raw = np.where(missing, 0.0, raw)
    return pa.array(raw, pa.float64(), mask=missing).cast(typ)


def column_stats(name: str, values: pa.Array, gids: np.ndarray, n: int) -> LeafStats:
    """Statistics of one (possibly nested) column, one entry per container id in ``0..n-1``."""
    typ = values.type
    if pa.types.is_struct(typ):
        children = [column_stats(typ.field(i).name, child, gids, n)
                    for i, child in enumerate(values.flatten())]
        return struct_stats(name, children, n)
    if pa.types.is_map(typ):
        entry = pa.struct([pa.field("key", typ.key_type), pa.field("value", typ.item_type)])
        return _element_stats(name, values.cast(pa.list_(entry)), gids, n, "map")
    if is_list_view(typ):
        return _element_stats(name, values.cast(pa.large_list(typ.value_field)), gids, n, "list")
    if is_collection(typ):
        return _element_stats(name, values, gids, n, "list")
    return _leaf_stats(name, values, gids, n)


def is_collection(typ: pa.DataType) -> bool:
    """A list-like or map type, whose leaves describe elements."""
    return pa.types.is_map(typ) or is_list_type(typ)


def element_stats(name: str, inner: LeafStats, element_type: pa.DataType, kind: str,
                  n: int) -> LeafStats:
    """Mark ``inner`` (statistics over the elements) as the element stats of column ``name``.

    When the elements are themselves collections, a null one is invisible to the leaf counts,
    so the null count is unknown.
    """
    if is_collection(element_type):
        inner.nulls = pa.nulls(n, inner.null_field.type)
    return inner.renamed(name, kind)


def _element_stats(name: str, lists: pa.Array, gids: np.ndarray, n: int, kind: str) -> LeafStats:
    elements = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    inner = column_stats(name, elements, gids[parents], n)
    return element_stats(name, inner, elements.type, kind, n)


# --------------------------------------------------------------------------------------------
# n-gram indexes


def _ngram_column(table: pa.Table, names: Sequence[str], gids: np.ndarray, n: int,
                  gram_size: int, case_insensitive: bool) -> pa.StructArray:
    from prune_engine.ngram.build import build_index_column

    order = np.argsort(gids, kind="stable")
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(gids, minlength=n), out=offsets[1:])
    fields, arrays = [], []
    for name in names:
        values = table.column(name).combine_chunks()
        if not plain_type(values.type).equals(values.type):  # a dictionary, a view
            values = plain_values(values)
        values = values.take(pa.array(order))
        built = build_index_column(values, offsets, gram_size=gram_size,
                                   case_insensitive=case_insensitive)
        arrays.append(built)
        fields.append(pa.field(name, built.type))  # binary, or large_binary past 2 GiB
    return pa.StructArray.from_arrays(arrays, fields=fields)


def ngram_columns(ngram, schema: pa.Schema) -> list[str]:
    """Validate ``ngram=`` (a column name or a list of them): existing string columns only."""
    if ngram is None:
        return []
    names = [ngram] if isinstance(ngram, str) else list(ngram)
    for name in names:
        if not isinstance(name, str) or name not in schema.names:
            raise StatsError(f"ngram= names {name!r}, which is not a column of the data; "
                             f"columns: {listed(schema.names)}", column=str(name))
        typ = schema.field(name).type
        if pa.types.is_dictionary(typ):
            typ = typ.value_type
        if not is_string_type(typ):
            raise StatsError(f"ngram= column {name!r} has type {typ}; an n-gram index needs a "
                             "string column", column=name)
    return names


# --------------------------------------------------------------------------------------------
# public entry point


def stats_from_arrow(data: ArrowData, container: str | Sequence[str] | None = None,
                     ngram: str | Sequence[str] | None = None, gram_size: int = 3,
                     ngram_case_insensitive: bool = False) -> StatsTable:
    """Exact statistics (min, max, null and NaN counts) of Arrow data, one row per container.

    ``data`` is one table (a pyarrow ``Table`` or ``RecordBatch``, a pandas ``DataFrame``
    (without its index: ``reset_index()`` first to describe it) or a polars ``DataFrame``),
    or an iterable of them, one per container. A table is split into containers by the column
    named ``container`` (container ids are its distinct values as strings, in first-seen order;
    the column itself is not described); an iterable's items are containers ``"0"``, ``"1"``,
    ... unless ``container`` lists their ids. A single table without ``container`` is one
    container ``"0"``. ``ngram`` names string columns to index into ``ngram_index`` (n-grams
    of ``gram_size``; ``ngram_case_insensitive=True`` also stores a case-folded set, for
    ``ILIKE``).

    >>> import pyarrow as pa, prune_engine as pe
    >>> stats = pe.stats_from_arrow([pa.table({"f": [0.0, -0.0, float("nan")]}),
    ...                              pa.table({"f": pa.array([], pa.float64())})])
    >>> stats.column("num_records").to_pylist(), stats.column("nan_count").to_pylist()
    ([3, 0], [{'f': 1}, {'f': 0}])
    >>> stats.column("min_values").to_pylist(), stats.column("max_values").to_pylist()
    ([{'f': -0.0}, {'f': None}], [{'f': 0.0}, {'f': None}])
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"day": ["mon", "mon", "tue"], "x": [4, 1, 9]})
    >>> pe.stats_from_arrow(frame, container="day").column("max_values").to_pylist()
    [{'x': 4}, {'x': 9}]
    """
    table = _frame_table(data)
    if isinstance(container, str):
        if table is None:
            raise StatsError("container= names a column, so data must be one pyarrow Table or "
                             "RecordBatch (or one pandas or polars DataFrame), not "
                             f"{type(data).__name__}")
        table, gids, ids = _split_by_column(table, container)
    elif table is not None:
        table, gids, ids = _split_by_items([table], container)
    else:
        try:
            if isinstance(data, (str, bytes, dict)):
                raise TypeError
            items = iter(data)
        except TypeError:
            raise StatsError(f"data must be {_ACCEPTED}, or an iterable of them (one per "
                             f"container), not {type(data).__name__}") from None
        table, gids, ids = _split_by_items(items, container)
    if isinstance(gram_size, bool) or not isinstance(gram_size, int) or gram_size < 1:
        raise StatsError(f"gram_size must be a positive int, not {gram_size!r}")
    names = ngram_columns(ngram, table.schema)
    n = len(ids)
    top = [column_stats(field.name, table.column(field.name).combine_chunks(), gids, n)
           for field in table.schema]
    extra = {}
    if names:
        extra[layout.NGRAM_INDEX] = _ngram_column(table, names, gids, n, gram_size,
                                                  ngram_case_insensitive)
    num_records = np.bincount(gids, minlength=n).astype(np.int64)
    return StatsTable(stats_table(ids, num_records, top, extra=extra))
