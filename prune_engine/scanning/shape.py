"""Arrays in the shape the scan promises: conform what a file gave to the selected type, and
flatten a selected path into one column.

:func:`conform` rebuilds an array read from one file (its names, only the read children,
pyarrow's ``list<item: struct<...>>`` for a partly read list, ``list<struct<key>>`` for a partly
read map) as the unified, selected type: struct children are matched by field id or name
(:func:`~prune_engine.scanning.schema.match_child`) and dropped when not selected, a child the file
lacks becomes nulls of its type, leaves are cast to the unified type (widening only: a value
that does not fit is a :class:`ScanError`, never a silent change), and every null at every
level is kept. The same function projects a filtered table down to the requested columns.

:func:`extract` is ``flatten=True``: one path as one column; through a list it stays a list
of the selected leaf (``orders.price`` -> ``list<double>``), a map's keys or values become a
list of them.

>>> s = pa.array([{"a": 1, "b": "x"}, None])
>>> conform(s, pa.struct([("a", pa.int64()), ("c", pa.string())])).to_pylist()
[{'a': 1, 'c': None}, None]
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._arrow_types import is_list_type
from prune_engine.errors import ScanError
from prune_engine.scanning.paths import ELEMENT, FIELD, KEY, FieldPath
from prune_engine.scanning.schema import match_child

__all__ = ["conform", "conform_table", "extract", "list_elements"]


def _validity(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def _offsets(array: pa.Array) -> pa.Array:
    """The offsets of a list or map array (absolute into its values child)."""
    return array.offsets


def _entries(array: pa.Array) -> tuple[pa.Array | None, pa.Array | None]:
    """(keys, items) of a map, or of the ``list<struct<key, value>>`` pyarrow gives for a
    partly read map; None for a part that was not read."""
    if isinstance(array, pa.MapArray):
        return array.keys, array.items
    entries = array.values
    names = [entries.type.field(i).name for i in range(entries.type.num_fields)]
    keys = entries.field(names.index("key")) if "key" in names else None
    items = entries.field(names.index("value")) if "value" in names else None
    return keys, items


def conform(array: pa.Array | pa.ChunkedArray, target: pa.DataType, where: str = ""):
    """``array`` as type ``target`` (see the module doc)."""
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([conform(c, target, where) for c in array.chunks], target)
    if array.type.equals(target, check_metadata=True):
        return array
    n = len(array)
    if pa.types.is_null(target):
        return pa.nulls(n, target)
    if pa.types.is_null(array.type):
        return pa.nulls(n, target)
    if pa.types.is_struct(target):
        if not pa.types.is_struct(array.type):
            raise ScanError(f"column {where or '?'}: a struct was expected, the file has "
                            f"{array.type}")
        have = list(array.type)
        children = []
        for f in target:
            j = match_child(f, have)
            if j is None:
                children.append(pa.nulls(n, f.type))
            else:
                children.append(conform(array.field(j), f.type, f"{where}.{f.name}"))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=_validity(array))
    if pa.types.is_map(target):
        keys, items = _entries(array)
        if keys is None:
            raise ScanError(f"column {where or '?'}: the map's keys were not read")
        keys = conform(keys, target.key_type, where + ".key")
        items = pa.nulls(len(keys), target.item_type) if items is None else \
            conform(items, target.item_type, where + ".value")
        return pa.MapArray.from_arrays(_offsets(array), keys, items, type=target,
                                       mask=_validity(array))
    if is_list_type(target):
        if not is_list_type(array.type) and not pa.types.is_map(array.type):
            raise ScanError(f"column {where or '?'}: a list was expected, the file has "
                            f"{array.type}")
        values = conform(array.values, target.value_type, where + ".element")
        cls = pa.LargeListArray if pa.types.is_large_list(target) else pa.ListArray
        offsets = _offsets(array)
        offsets = offsets.cast(pa.int64() if cls is pa.LargeListArray else pa.int32())
        return cls.from_arrays(offsets, values, type=target, mask=_validity(array))
    try:
        return array.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise ScanError(f"column {where or '?'}: cannot read {array.type} as {target}: "
                        f"{e}") from None


def conform_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with exactly the columns of ``schema``, each conformed to its type."""
    have = list(table.schema)
    columns = []
    for f in schema:
        j = match_child(f, have)
        columns.append(pa.chunked_array([], f.type) if j is None and table.num_rows == 0 else
                       pa.nulls(table.num_rows, f.type) if j is None else
                       conform(table.column(j), f.type, f.name))
    return pa.Table.from_arrays(columns, schema=schema)


def list_elements(array: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The elements of the non-null lists (or map entries) of ``array`` and, per element, the
    position of its list in ``array``. Null lists contribute nothing, whatever their offsets."""
    offsets = np.asarray(_offsets(array).to_numpy(zero_copy_only=False), np.int64)
    lengths = np.diff(offsets)
    if array.null_count:
        lengths = np.where(np.asarray(array.is_valid().to_numpy(zero_copy_only=False)),
                           lengths, 0)
    parent = np.repeat(np.arange(len(array), dtype=np.int64), lengths)
    values = array.values
    total = int(lengths.sum())
    if total == (offsets[-1] - offsets[0] if len(offsets) else 0):
        return values.slice(int(offsets[0]) if len(offsets) else 0, total), parent
    starts = np.repeat(offsets[:-1] - (np.cumsum(lengths) - lengths), lengths)
    return values.take(pa.array(starts + np.arange(total, dtype=np.int64))), parent


def struct_child(array: pa.Array, index: int) -> pa.Array:
    """Child ``index`` of a struct array, null wherever the struct is null."""
    return pc.struct_field(array, [index])


def extract(array: pa.Array | pa.ChunkedArray, path: FieldPath, start: int = 1):
    """The values at ``path`` (from step ``start``) below ``array`` as one column: struct
    steps pull the child by name (null where a parent is null); list and map steps keep the
    list shape around what follows."""
    steps = path.steps()
    if isinstance(array, pa.ChunkedArray):
        chunks = [extract(c, path, start) for c in array.chunks]
        if chunks:
            return pa.chunked_array(chunks)
        return pa.chunked_array([], extract(pa.nulls(0, array.type), path, start).type)
    for pos in range(start, len(steps)):
        kind, name = steps[pos]
        if kind == FIELD:
            array = struct_child(array, array.type.get_field_index(name))
            continue
        if kind == ELEMENT:
            inner = extract(array.values, path, pos + 1)
        else:
            keys, items = _entries(array)
            inner = extract(keys if kind == KEY else items, path, pos + 1)
        return pa.ListArray.from_arrays(_offsets(array).cast(pa.int32()), inner,
                                        mask=_validity(array))
    return array
