"""Schema drift: one type for a column whose type differs across files, and arrays brought to it.

The files of one lake rarely share one schema: a column added later is missing from the older
files, an int32 became an int64, a struct gained a field. :func:`unify_types` gives the type
both sides convert to exactly (integers and floats widen, string/binary go large, decimals
grow to hold both, timestamps take the finer unit; a change that loses values, or a list in
some files and not in others, is a :class:`StatsError`); :func:`conform` brings an array to
that type, a struct field the array lacks becoming null (unknown, so it never prunes);
:func:`concat_stats` does both for whole statistics tables.

An encoding is not a type (:func:`plain_type`, :func:`plain_values`): a dictionary is its
values, and ``string_view`` / ``binary_view`` (which deltalake writes in some versions, and
pyarrow reads back from the Arrow schema a file stores) are ``string`` / ``binary``. Statistics
always hold the plain type: pyarrow has no ``take``, ``filter``, ``min`` or ``max`` for views,
and files of one column written as ``string`` by one writer and ``string_view`` by another
are one column.

Statistics are bounds, not values (``unify_types(..., bounds=True)``): a timestamp column in
nanoseconds in some files and another unit in others is held in microseconds, the unit whose
range holds every date (INT96 and far-future sentinels such as ``9999-12-31`` leave the
nanosecond range, which ends in 2262), and :func:`cast_bounds` converts a nanosecond min down
(floor) and a max up (ceil), so each stays a true bound; a value set (``value_set``) keeps
only values that convert exactly, else that container's set is unknown.

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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._arrow_types import UNIT_NS
from prune_engine.errors import StatsError
from prune_engine.stats import layout

__all__ = ["unify_types", "conform", "concat_stats", "conform_table", "cast_bounds",
           "plain_type", "plain_values"]

#: the view types and the plain types their values are
_VIEWS = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}


def plain_type(t: pa.DataType) -> pa.DataType:
    """The type ``t``'s values are, whatever their encoding: a dictionary's value type, an
    extension's storage type, ``string`` for ``string_view`` and ``binary`` for
    ``binary_view``; ``t`` itself otherwise.

    >>> plain_type(pa.dictionary(pa.int8(), pa.string_view())), plain_type(pa.large_string())
    (DataType(string), DataType(large_string))
    """
    if pa.types.is_dictionary(t):
        return plain_type(t.value_type)
    if isinstance(t, pa.BaseExtensionType):
        return plain_type(t.storage_type)
    return _VIEWS.get(t, t)


def plain_values(values: pa.Array) -> pa.Array:
    """``values`` in their :func:`plain_type`: a dictionary decoded, an extension array as its
    storage, a view cast. A view becomes the large type (no 2 GiB limit: a string view comes
    back as ``large_string``, which :func:`unify_types` joins with ``string``); the caller
    casts what it keeps (a few bounds) to the plain type.

    >>> plain_values(pa.array(["b", None], pa.string_view()).dictionary_encode()).type
    DataType(large_string)
    """
    if isinstance(values.type, pa.BaseExtensionType):
        return plain_values(values.storage)
    if pa.types.is_dictionary(values.type):  # a dictionary of views cannot be decoded as is
        return plain_values(values.dictionary).take(values.indices)
    if values.type in _VIEWS:
        large = pa.large_string() if pa.types.is_string_view(values.type) else pa.large_binary()
        return values.cast(large)
    return values


def _is_int(t: pa.DataType) -> bool:
    return pa.types.is_integer(t)


def unify_types(a: pa.DataType, b: pa.DataType, where: str, *,
                bounds: bool = False) -> pa.DataType:
    """The type both ``a`` and ``b`` convert to exactly, or a :class:`StatsError`.

    ``where``: the dotted prefix of the column, for the error message (``""`` at the top).
    ``bounds``: the types of statistics, which :func:`cast_bounds` converts (nanoseconds and
    another unit unify to microseconds, see the module doc).

    >>> import pyarrow as pa
    >>> unify_types(pa.uint32(), pa.int32(), ""), unify_types(pa.float32(), pa.float64(), "")
    (DataType(int64), DataType(double))
    >>> unify_types(pa.timestamp("ns"), pa.timestamp("ms"), "", bounds=True)
    TimestampType(timestamp[us])
    >>> unify_types(pa.string_view(), pa.large_string(), "")
    DataType(large_string)
    >>> unify_types(pa.int64(), pa.string(), "s.")
    Traceback (most recent call last):
    prune_engine.errors.StatsError: column s changes type across files: int64 vs string
    """
    a, b = plain_type(a), plain_type(b)  # an encoding is not a type (see the module doc)
    # ``==`` ignores the fields' element marks; a view inside is made plain below
    if a.equals(b, check_metadata=True) and not _holds_view(a):
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
                merged = unify_types(old.type, f.type, f"{where}{f.name}.", bounds=bounds)
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
        return pa.list_(unify_types(a.value_type, b.value_type, where, bounds=bounds))
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
        if bounds and "ns" in (a.unit, b.unit):  # the range of every date
            return pa.timestamp("us", a.tz)
        order = "smun"
        return a if order.index(a.unit[0]) >= order.index(b.unit[0]) else b
    if a.equals(b, check_metadata=True):  # a view inside a type no rule above walks
        return a
    raise StatsError(f"column {where.rstrip('.') or '?'} changes type across files: {a} vs {b}",
                     column=where.rstrip("."))


def _holds_view(t: pa.DataType) -> bool:
    """Whether a struct or list type holds a view (or a dictionary) somewhere inside."""
    if pa.types.is_struct(t):
        return any(_holds_view(f.type) for f in t)
    if pa.types.is_list(t):
        return _holds_view(t.value_type)
    return not plain_type(t).equals(t)


def conform(array: pa.Array, target: pa.DataType, side: str | None = None) -> pa.Array:
    """``array`` in the unified ``target`` type: missing struct fields become null (unknown).

    ``side``: what the leaves are: ``"min"`` / ``"max"`` bounds (:func:`cast_bounds`), or
    ``"set"`` value sets (a list whose values do not all convert exactly becomes null); None:
    values, cast exactly.

    >>> import pyarrow as pa
    >>> s = pa.array([{"a": 1}, None], pa.struct([("a", pa.int32())]))
    >>> conform(s, pa.struct([("a", pa.int64()), ("b", pa.string())])).to_pylist()
    [{'a': 1, 'b': None}, None]
    """
    if array.type == target:
        return array
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        names = [f.name for f in array.type]
        children = [conform(array.field(names.index(f.name)), f.type, side) if f.name in names
                    else pa.nulls(len(array), f.type) for f in target]
        mask = array.is_null() if array.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if side in ("min", "max"):
        return cast_bounds(array, target, side == "min")
    if side == "set" and pa.types.is_list(target) and pa.types.is_list(array.type):
        return _exact_sets(array, target)
    return array.cast(target)


def cast_bounds(bounds: pa.Array, target: pa.DataType, lower: bool) -> pa.Array:
    """Bounds in ``target``, still bounds: a timestamp in a coarser unit rounds a lower bound
    down and an upper bound up; a value ``target`` cannot hold (out of its range, or not
    exactly another type's) is null (unknown).

    >>> import pyarrow as pa
    >>> ns = pa.array([1_500, -1_500, None], pa.timestamp("ns"))
    >>> cast_bounds(ns, pa.timestamp("us"), lower=True).cast(pa.int64()).to_pylist()
    [1, -2, None]
    >>> cast_bounds(ns, pa.timestamp("us"), lower=False).cast(pa.int64()).to_pylist()
    [2, -1, None]
    """
    if bounds.type == target:
        return bounds
    source = bounds.type
    if pa.types.is_timestamp(source) and pa.types.is_timestamp(target) \
            and source.tz == target.tz:
        ticks = np.asarray(bounds.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False),
                           np.int64)
        missing = np.asarray(bounds.is_null().to_numpy(zero_copy_only=False), bool)
        have, want = UNIT_NS[source.unit], UNIT_NS[target.unit]
        if have < want:  # finer to coarser: round outward
            quotient, remainder = np.divmod(ticks, want // have)
            ticks = quotient + (0 if lower else (remainder > 0))
        else:  # coarser to finer: exact, unless out of range
            factor = have // want
            missing |= np.abs(ticks) > np.iinfo(np.int64).max // factor
            ticks = np.where(missing, 0, ticks) * factor
        return pa.array(ticks, pa.int64(), mask=missing).cast(target)
    try:
        return bounds.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        pass
    out = []
    for value in bounds.to_pylist():  # rare: only some fail; they become unknown
        try:
            out.append(pa.scalar(value, source).cast(target).as_py() if value is not None
                       else None)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError,
                OverflowError):
            out.append(None)
    return pa.array(out, target)


def _exact_sets(sets: pa.Array, target: pa.DataType) -> pa.Array:
    """Value sets (lists) in ``target``; a set with a value that does not convert exactly is
    null (unknown: a rounded value would claim one the container does not hold)."""
    try:
        return sets.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        pass
    offsets = np.asarray(sets.offsets.to_numpy(zero_copy_only=False), np.int64)
    values = sets.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    converted = values.cast(target.value_type, safe=False)
    try:
        exact = pc.equal(converted.cast(values.type, safe=False), values)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return pa.nulls(len(sets), target)
    wrong = np.asarray(pc.invert(pc.fill_null(exact, True)).to_numpy(zero_copy_only=False),
                       np.int64)
    parents = np.repeat(np.arange(len(sets)), np.diff(offsets))
    bad = np.bincount(parents, weights=wrong, minlength=len(sets)) > 0
    missing = np.asarray(sets.is_null().to_numpy(zero_copy_only=False), bool)
    lists = pa.ListArray.from_arrays(pa.array(offsets - offsets[0], pa.int32()), converted,
                                     mask=pa.array(bad | missing))
    return lists.cast(target)


def _sets_like_bounds(sets: pa.DataType, bounds: pa.DataType) -> pa.DataType:
    """The ``value_set`` struct type with each timestamp set in its bounds' unit (the sets
    of one lake's nanosecond files, where the bounds are microseconds)."""
    fields = []
    for f in sets:
        typ = bounds
        for name in f.name.split("."):  # a set's name is its leaf's dotted path
            typ = typ.field(name).type if pa.types.is_struct(typ) and \
                typ.get_field_index(name) >= 0 else None
            if typ is None:
                break
        if typ is not None and pa.types.is_list(f.type) and pa.types.is_timestamp(typ) \
                and pa.types.is_timestamp(f.type.value_type) and f.type.value_type != typ:
            f = pa.field(f.name, pa.list_(typ), metadata=f.metadata)
        fields.append(f)
    return pa.struct(fields)


#: what the leaves of each statistics column are, for :func:`conform`
_SIDES = {layout.MIN_VALUES: "min", layout.MAX_VALUES: "max", layout.VALUE_SET: "set"}


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
            first = columns.get(f.name, f)  # a first one too: its views become plain types
            merged = unify_types(first.type, f.type, "" if f.name in layout.STAT_STRUCTS
                                 else f"{f.name}.", bounds=True)
            columns[f.name] = f if f.name not in columns and merged.equals(f.type) else \
                pa.field(f.name, merged)
    if layout.VALUE_SET in columns and layout.MIN_VALUES in columns:
        columns[layout.VALUE_SET] = pa.field(layout.VALUE_SET, _sets_like_bounds(
            columns[layout.VALUE_SET].type, columns[layout.MIN_VALUES].type))
    schema = pa.schema(list(columns.values()))
    conformed = [conform_table(table, schema) for table in tables]
    return pa.concat_tables(conformed) if conformed else pa.table({})


def conform_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` (statistics) in ``schema``, a schema its own unifies with: each column
    brought to its type by :func:`conform` (bounds stay bounds), a column ``table`` lacks
    null (unknown), a column ``schema`` lacks left out.

    >>> import pyarrow as pa
    >>> t = pa.table({"container": ["a"], "min_values": pa.array([{"x": 1}])})
    >>> schema = pa.schema([("min_values", pa.struct([("x", pa.float64())])),
    ...                     ("num_records", pa.int64())])
    >>> conform_table(t, schema).to_pylist()
    [{'min_values': {'x': 1.0}, 'num_records': None}]
    """
    arrays = []
    for f in schema:
        if f.name in table.column_names:
            arrays.append(conform(table.column(f.name).combine_chunks(), f.type,
                                  _SIDES.get(f.name)))
        else:
            arrays.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)
