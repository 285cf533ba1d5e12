"""The scan's schema: the files' Arrow schemas unified, and each file's part of a selection.

What is read: each file's footer, once (the ``pyarrow.parquet.FileMetaData`` is kept and handed
to the reader, so a file's footer is never read twice). A file's Arrow schema is pyarrow's
(:func:`read_footer`), but for INT96 timestamps (Spark's legacy type): those are read as
``timestamp[us]``, as Spark reads them, not pyarrow's default ``timestamp[ns]``, whose range
ends in 2262 (a ``9999-12-31`` "valid until forever" would overflow).

How files match (schema evolution):

- Fields match by Parquet field id when both carry one (``PARQUET:field_id`` in the Arrow
  field metadata, as Iceberg, Paimon and Delta column mapping write them), else by name. With
  ids, a renamed leaf is still the same column; it takes the name of the last file (in listing
  order) that has it, the newest in the usual ``part-00001`` naming.
- A field missing from a file is read as nulls there; leaf types widen as in
  :func:`prune_engine.stats.unify.unify_types` (int32 to int64, float to double, ...); an
  incompatible change (a list in one file, a struct in another) is a :class:`ScanError`.
- Some types are one type to the scan, whatever encoding a writer chose
  (:func:`~prune_engine.stats.unify.plain_type`): a dictionary (pandas' categoricals, Arrow
  dictionaries) is its values, and ``string``, ``large_string`` and ``string_view`` are one
  string type (``binary``, ``large_binary`` and ``binary_view`` one binary type). A column of
  one such type in every file keeps it, but for the views, which are read as ``string`` /
  ``binary`` (pyarrow cannot filter or take views); where the files differ, the column is the
  plain type (``string``, or ``large_string`` when a file has that), and every file's values
  are cast to it.
- A timestamp column in nanoseconds in some files and a coarser unit in others (INT96, read
  as microseconds, or Spark's microseconds, against pandas' nanoseconds) is
  ``timestamp[us]``, as its statistics are (:func:`~prune_engine.stats.unify.unify_types`):
  Spark's unit, whose range holds every date where nanoseconds end in 2262. A nanosecond
  value it cannot hold is a :class:`ScanError` when read, never rounded.
- Structs gain the children of every file; lists and maps unify their elements.

:func:`file_columns` turns a selection (a trie over the unified schema, see
:mod:`~prune_engine.scanning.paths`) into the Parquet leaf-column indices of one file: exactly the
column chunks that hold the selected leaves, and nothing else (but one leaf of a struct or list none of whose selected
children the file has: its nulls and list lengths still hold).

>>> a = pa.schema([pa.field("s", pa.struct([pa.field("x", pa.int32())]))])
>>> b = pa.schema([pa.field("s", pa.struct([pa.field("x", pa.int64()), pa.field("y", pa.string())]))])
>>> unify_schemas([a, b])
s: struct<x: int64, y: string>
  child 0, x: int64
  child 1, y: string
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from prune_engine._arrow_types import is_list_type
from prune_engine.errors import ScanError, StatsError
from prune_engine.scanning.paths import WHOLE
from prune_engine.stats.snapshot import FIELD_ID
from prune_engine.stats.unify import plain_type, unify_types

__all__ = ["unify_schemas", "file_columns", "field_id", "match_child", "read_footer",
           "same_schema"]

def read_footer(location: str, filesystem=None) -> tuple[pq.FileMetaData, pa.Schema]:
    """The footer of the Parquet file at ``location`` and the Arrow schema the scan reads it
    as: pyarrow's, with INT96 leaves ``timestamp[us]`` (the file opened with
    ``coerce_int96_timestamp_unit="us"``, as the scan reads it). pyarrow's errors pass through.

    >>> import io, datetime as dt, pyarrow.parquet as pq
    >>> buf = io.BytesIO()
    >>> pq.write_table(pa.table({"ts": [dt.datetime(9999, 12, 30)]}), buf,
    ...                use_deprecated_int96_timestamps=True)
    >>> read_footer(buf)[1].field("ts").type
    TimestampType(timestamp[us])
    """
    pf = pq.ParquetFile(location, filesystem=filesystem, coerce_int96_timestamp_unit="us")
    try:
        return pf.metadata, pf.schema_arrow
    finally:
        pf.close()


def same_schema(pf: pq.ParquetFile, recorded: pa.Schema) -> bool:
    """Whether ``recorded`` (a schema the statistics recorded for the file) is the schema of
    the file ``pf`` as the scan reads it, or as older statistics recorded it (INT96 as
    nanoseconds, pyarrow's default)."""
    if pf.schema_arrow.equals(recorded):
        return True
    try:
        return pf.metadata.schema.to_arrow_schema().equals(recorded)
    except (pa.ArrowException, ValueError):
        return False


def field_id(f: pa.Field) -> bytes | None:
    """The Parquet field id of ``f`` (raw bytes), or None."""
    return f.metadata.get(FIELD_ID) if f.metadata else None


def match_child(target: pa.Field, candidates: Sequence[pa.Field]) -> int | None:
    """The index in ``candidates`` of the field that is ``target``: by field id when both sides
    carry ids, else by name; None when the file does not have it."""
    fid = field_id(target)
    if fid is not None:
        for i, c in enumerate(candidates):
            cid = field_id(c)
            if cid == fid:
                return i
        if any(field_id(c) is not None for c in candidates):
            return None
    for i, c in enumerate(candidates):
        if c.name == target.name:
            return i
    return None


def _kind(t: pa.DataType) -> str:
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_map(t):
        return "map"
    if is_list_type(t):
        return "list"
    return "leaf"


def _unify_field(a: pa.Field, b: pa.Field, where: str) -> pa.Field:
    """``a`` and ``b`` (the same column in two files, ``b`` the later) as one field."""
    ka, kb = _kind(a.type), _kind(b.type)
    if pa.types.is_null(a.type) or pa.types.is_null(b.type):
        t = b.type if pa.types.is_null(a.type) else a.type  # an all-null column has no type
    elif ka != kb:
        raise ScanError(f"column {where}: a {ka} in some files, a {kb} in others")
    elif ka == "struct":
        t = pa.struct(_unify_fields(list(a.type), list(b.type), where + "."))
    elif ka == "list":
        value = _unify_field(a.type.value_field, b.type.value_field, where + ".element")
        t = pa.large_list(value) if pa.types.is_large_list(a.type) or \
            pa.types.is_large_list(b.type) else pa.list_(value)
    elif ka == "map":
        key = _unify_field(a.type.key_field, b.type.key_field, where + ".key")
        item = _unify_field(a.type.item_field, b.type.item_field, where + ".value")
        t = pa.map_(key, item)
    else:
        t = _unify_leaf(a.type, b.type, where)
    metadata = b.metadata if b.metadata else a.metadata
    return pa.field(b.name, t, a.nullable or b.nullable, metadata)


def _unify_leaf(a: pa.DataType, b: pa.DataType, where: str) -> pa.DataType:
    """The type of a leaf column that is ``a`` in some files and ``b`` in others."""
    if a.equals(b):
        return a
    ta, tb = plain_type(a), plain_type(b)
    if pa.types.is_timestamp(ta) and pa.types.is_timestamp(tb) and ta.tz == tb.tz and \
            ta.unit != tb.unit and "ns" in (ta.unit, tb.unit):
        return pa.timestamp("us", ta.tz)  # every date, as Spark (see the module doc)
    try:
        return unify_types(ta, tb, where + ".")
    except StatsError:
        raise ScanError(f"column {where} changes type across files: {a} vs {b}") from None


def _unify_fields(old: list[pa.Field], new: list[pa.Field], where: str) -> list[pa.Field]:
    out = list(old)
    for f in new:
        i = match_child(f, out)
        if i is None:
            out.append(f)
        else:
            out[i] = _unify_field(out[i], f, where + f.name)
    return out


def unify_schemas(schemas: Sequence[pa.Schema]) -> pa.Schema:
    """One schema for all files (in listing order; see the module doc for the rules)."""
    fields: list[pa.Field] = []
    seen: set = set()
    for schema in schemas:
        key = schema.to_string(show_field_metadata=True)
        if key in seen:
            continue
        seen.add(key)
        fields = _unify_fields(fields, list(schema), "")
    return pa.schema([_without_views(f) for f in fields])


def _without_views(f: pa.Field) -> pa.Field:
    """``f`` with its string and binary views (at any depth) as ``string`` / ``binary``."""
    t = f.type
    if t in _VIEWS:
        return f.with_type(_VIEWS[t])
    if pa.types.is_struct(t):
        return f.with_type(pa.struct([_without_views(c) for c in t]))
    if pa.types.is_map(t):
        return f.with_type(pa.map_(_without_views(t.key_field), _without_views(t.item_field)))
    if is_list_type(t) and not _without_views(t.value_field).equals(t.value_field):
        element = _without_views(t.value_field)
        if pa.types.is_fixed_size_list(t):
            return f.with_type(pa.list_(element, t.list_size))
        return f.with_type(pa.large_list(element) if pa.types.is_large_list(t)
                           else pa.list_(element))
    return f


_VIEWS = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}


def _leaf_count(t: pa.DataType) -> int:
    if pa.types.is_struct(t):
        return sum(_leaf_count(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _leaf_count(t.key_type) + _leaf_count(t.item_type)
    if is_list_type(t):
        return _leaf_count(t.value_type)
    return 1


def _children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return list(t)
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    if is_list_type(t):
        return [t.value_field]
    return []


def file_columns(unified: pa.Schema, trie: dict, file_schema: pa.Schema) -> list[int]:
    """The Parquet leaf-column indices of ``file_schema`` that hold the parts of ``unified``
    selected by ``trie``, in file order. Parts the file lacks are skipped (read as nulls)."""
    out: list[int] = []

    def walk(target: pa.DataType, sub: dict | None, have: pa.DataType, base: int):
        before = len(out)
        visit(target, sub, have, base)
        if len(out) == before and have is not top:
            # none of the selected children is in this file: one leaf still carries the
            # nulls of the struct (or the lengths of the list) around them
            out.append(base)

    def visit(target: pa.DataType, sub: dict | None, have: pa.DataType, base: int):
        if sub is WHOLE:
            out.extend(range(base, base + _leaf_count(have)))
            return
        targets, haves = _children(target), _children(have)
        starts, at = [], base
        for h in haves:
            starts.append(at)
            at += _leaf_count(h.type)
        if pa.types.is_map(target) and pa.types.is_map(have):
            walk(target.key_type, WHOLE, have.key_type, starts[0])  # a map needs its keys
            if 1 in sub:
                walk(target.item_type, sub[1], have.item_type, starts[1])
            return
        for i, s in sub.items():
            j = match_child(targets[i], haves) if pa.types.is_struct(target) else \
                (i if i < len(haves) else None)
            if j is None:
                continue  # not in this file: nulls
            if pa.types.is_null(haves[j].type):
                out.append(starts[j])  # an all-null column: one chunk of nulls
            elif _kind(haves[j].type) == _kind(targets[i].type):
                walk(targets[i].type, s, haves[j].type, starts[j])

    top = pa.struct(list(file_schema))
    walk(pa.struct(list(unified)), trie, top, 0)
    return sorted(set(out))
