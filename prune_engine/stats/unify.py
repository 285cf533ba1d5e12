"""Schema drift: one type for a column whose type differs across files, and arrays brought to it.

The files of one lake rarely share one schema: a column added later is missing from the older
files, an int32 became an int64, a struct gained a field. :func:`unify_types` gives the type
both sides convert to exactly (integers and floats widen, string/binary go large, decimals
grow to hold both, timestamps take the finer unit; a change that loses values, or a list in
some files and not in others, is a :class:`StatsError`); :func:`conform` brings an array to
that type, a struct field the array lacks becoming null (unknown, so it never prunes);
:func:`concat_stats` does both for whole statistics tables.

A module of its own because the rule is one and has several users: ``collect_stats`` (files of
different schemas, slices joined by ``merge_parts``, ``update_stats``'s old and new rows) and
``pe.scan``'s unified schema (:mod:`prune_engine.scanning.schema`).

>>> import pyarrow as pa
>>> old, new = pa.struct([("a", pa.int32())]), pa.struct([("a", pa.int64()), ("b", pa.string())])
>>> unify_types(old, new, "")
StructType(struct<a: int64, b: string>)
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from prune_engine.errors import StatsError
from prune_engine.stats import layout

__all__ = ["unify_types", "conform", "concat_stats"]


def _is_int(t: pa.DataType) -> bool:
    return pa.types.is_integer(t)


def unify_types(a: pa.DataType, b: pa.DataType, where: str) -> pa.DataType:
    """The type both ``a`` and ``b`` convert to exactly, or a :class:`StatsError`.

    ``where``: the dotted prefix of the column, for the error message (``""`` at the top).

    >>> import pyarrow as pa
    >>> unify_types(pa.uint32(), pa.int32(), ""), unify_types(pa.float32(), pa.float64(), "")
    (DataType(int64), DataType(double))
    >>> unify_types(pa.int64(), pa.string(), "s.")
    Traceback (most recent call last):
    prune_engine.errors.StatsError: column s changes type across files: int64 vs string
    """
    if a.equals(b, check_metadata=True):  # ``==`` ignores the fields' element marks
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        fields = {f.name: f for f in a}
        for f in b:
            if f.name in fields:
                old = fields[f.name]
                if layout.is_element_field(old) != layout.is_element_field(f):
                    raise StatsError(f"column {where}{f.name}: a list/map in some files, not in "
                                     "others", column=f"{where}{f.name}")
                merged = unify_types(old.type, f.type, f"{where}{f.name}.")
                fields[f.name] = pa.field(f.name, merged, metadata=old.metadata)
            else:
                fields[f.name] = f
        return pa.struct(list(fields.values()))
    if _is_int(a) and _is_int(b):
        sa, sb = pa.types.is_signed_integer(a), pa.types.is_signed_integer(b)
        if sa == sb:
            return a if a.bit_width >= b.bit_width else b
        unsigned, signed = (b, a) if sa else (a, b)
        if signed.bit_width > unsigned.bit_width:
            return signed
        if unsigned.bit_width < 64:
            return pa.int64()
    if pa.types.is_floating(a) and pa.types.is_floating(b):
        return a if a.bit_width >= b.bit_width else b
    if pa.types.is_list(a) and pa.types.is_list(b):  # value sets (``value_set``)
        return pa.list_(unify_types(a.value_type, b.value_type, where))
    for small, large in ((pa.string(), pa.large_string()), (pa.binary(), pa.large_binary())):
        if {a, b} == {small, large}:
            return large
    if pa.types.is_decimal(a) and pa.types.is_decimal(b):
        scale = max(a.scale, b.scale)
        precision = max(a.precision - a.scale, b.precision - b.scale) + scale
        if precision <= 76:
            return pa.decimal128(precision, scale) if precision <= 38 else \
                pa.decimal256(precision, scale)
    if pa.types.is_timestamp(a) and pa.types.is_timestamp(b) and a.tz == b.tz:
        order = "smun"
        return a if order.index(a.unit[0]) >= order.index(b.unit[0]) else b
    raise StatsError(f"column {where.rstrip('.') or '?'} changes type across files: {a} vs {b}",
                     column=where.rstrip("."))


def conform(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` in the unified ``target`` type: missing struct fields become null (unknown).

    >>> import pyarrow as pa
    >>> s = pa.array([{"a": 1}, None], pa.struct([("a", pa.int32())]))
    >>> conform(s, pa.struct([("a", pa.int64()), ("b", pa.string())])).to_pylist()
    [{'a': 1, 'b': None}, None]
    """
    if array.type == target:
        return array
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        names = [f.name for f in array.type]
        children = [conform(array.field(names.index(f.name)), f.type) if f.name in names
                    else pa.nulls(len(array), f.type) for f in target]
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    return array.cast(target)


def concat_stats(tables: Sequence[pa.Table]) -> pa.Table:
    """Concatenate stats tables of different files, unifying their schemas (see above).

    A column one table lacks is null (unknown) in its rows; ``None`` entries are left out.
    The statistics structs (``min_values``, ...) unify field by field, as :func:`unify_types`.

    >>> import pyarrow as pa
    >>> a = pa.table({"container": ["a"], "max_values": pa.array([{"x": 1}])})
    >>> b = pa.table({"container": ["b"], "max_values": pa.array([{"y": "z"}])})
    >>> concat_stats([a, None, b]).column("max_values").to_pylist()
    [{'x': 1, 'y': None}, {'x': None, 'y': 'z'}]
    """
    tables = [t for t in tables if t is not None]
    columns: dict[str, pa.Field] = {}
    for table in tables:
        for f in table.schema:
            if f.name in columns:
                merged = unify_types(columns[f.name].type, f.type, "" if f.name in
                                     layout.STAT_STRUCTS else f"{f.name}.")
                columns[f.name] = pa.field(f.name, merged)
            else:
                columns[f.name] = f
    schema = pa.schema(list(columns.values()))
    conformed = []
    for table in tables:
        arrays = []
        for f in schema:
            if f.name in table.column_names:
                arrays.append(conform(table.column(f.name).combine_chunks(), f.type))
            else:
                arrays.append(pa.nulls(table.num_rows, f.type))
        conformed.append(pa.Table.from_arrays(arrays, schema=schema))
    return pa.concat_tables(conformed) if conformed else pa.table({})
