"""Statistics from Parquet footers alone: no data page is read.

The footer is decoded by the numba kernels of :mod:`._thrift` (tens of microseconds per file,
without the GIL); pyarrow reads only the schema, once per distinct schema, and is given
nothing else of the footer (:func:`schema_file`): whether a file is accepted, and its
statistics, never depend on what the process read before. Each column chunk's statistics are
raw *physical* values; their meaning comes from the logical type. This module turns them into
true bounds of the column's Arrow type (the type ``pyarrow.parquet`` reads the column as,
INT96 as microseconds):

- Which bounds: ``min_value`` / ``max_value`` when the file has column orders (every writer
  since parquet-format 2.4), each side on its own (a missing side is unknown on that side);
  without column orders only the deprecated ``min`` / ``max``, and only for signed-order
  columns (booleans, signed integers, floats, decimals stored as integers), since they were
  compared as signed values. A chunk whose physical type is not the schema's is unknown.
- ``INT32`` / ``INT64``: signed, or unsigned (``UINT_64`` above 2**63 read as unsigned),
  decimals (unscaled), dates, times and timestamps of every unit; the zone is the one of the
  Arrow schema stored in the file, else ``"UTC"`` when ``isAdjustedToUTC``.
- ``BYTE_ARRAY`` / ``FIXED_LEN_BYTE_ARRAY``: strings and binaries as they are (a truncated min
  and an incremented max, as parquet-java writes, are still bounds; a min cut inside a UTF-8
  sequence is cut back to whole characters, such a max is unknown), decimals as big-endian
  two's complement of any width. A column whose stored Arrow schema says ``string_view`` or
  ``binary_view`` (deltalake in some versions) has ``string`` / ``binary`` statistics, and a
  dictionary column those of its values (:func:`~prune_engine.stats.unify.plain_type`).
- ``FLOAT`` / ``DOUBLE``: a min of ``+0.0`` may hide a ``-0.0``, so it widens to ``-0.0``; a max of
  ``-0.0`` widens to ``+0.0``; a NaN bound is unknown (parquet-java writes a NaN max when
  the chunk holds NaN; its min is still a bound). ``nan_count`` (for every float leaf; null =
  unknown) is the footer's ``Statistics.nan_count`` where the writer set it (field 9,
  parquet-format 2.13, PARQUET-2249; a count the chunk cannot hold is impossible, see
  below); else ``0`` where the chunk is all null, or where its dictionary page was read
  (``dictionaries=``) and holds no NaN, since every data page of such a chunk uses it; else
  unknown: pyarrow and parquet-java (so Spark) do not write it.
- ``INT96``, ``Float16`` and chunks without statistics are unknown; string bounds from
  writers with PARQUET-251 (parquet-mr before 1.8.0) are dropped. Null counts are read for
  every chunk that has them.
- Timestamps whose values may leave the nanosecond range (years 1677 to 2262) are held in
  microseconds (the zone kept), as Spark reads them: ``INT96`` (Spark's default; pyarrow reads
  it with ``coerce_int96_timestamp_unit="us"``) and a column stored coarser than an Arrow
  schema's nanoseconds. A far-future sentinel (``9999-12-31``) is then a value like any other,
  not a literal that folds to FALSE.
- Decimal bounds are exact at any width (Python integers, no decimal context); one with more
  digits than the type's precision, or a fixed-length one not of the column's width, is
  unknown.
- A chunk whose null count equals its value count is all-null (its null count is kept).
- **Impossible statistics are unknown, not trusted** (:mod:`.trust`: what, and why): a chunk
  whose counts or bounds cannot be, whose Bloom filter denies its own exact bounds or lies
  where no filter can, or whose dictionary page fails its CRC or lies outside the chunk, reads
  as unknown (bounds, counts, Bloom filter, dictionary), with the reason kept in its footer
  for one warning per file; a row count its value counts contradict is unknown.
- Leaves inside lists and maps become element statistics; a leaf's null count there counts
  every missing element slot (null or empty lists too), an upper bound of the null elements.
- With ``bloom=``, the chunks' Bloom filters are read while the file is open, at the offsets
  the footer gives (:mod:`prune_engine.bloom`), for leaves outside lists and maps.

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> buf = io.BytesIO()
>>> pq.write_table(pa.table({"x": [3, 1, None]}), buf, row_group_size=2)
>>> footer = read_footer(pa.BufferReader(buf.getvalue()), "mem")
>>> top, num_records, _ = group_stats([footer], "row_group")
>>> top[0].mins.to_pylist(), top[0].nulls.to_pylist(), num_records.tolist()
([1, None], [0, 1], [2, 1])
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import struct
import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from prune_engine._arrow_types import is_list_type, is_string_type
from prune_engine._lazy import LazyModule
from prune_engine._warm import Kernels
from prune_engine.bloom import encoding as bloom_encoding
from prune_engine.bloom.read import read_filters
from prune_engine.errors import StatsError, one_line
from prune_engine.stats import dictionary, trust
from prune_engine.stats.from_arrow import (
    LeafStats,
    element_stats,
    group_aggregate,
    struct_stats,
)
from prune_engine.stats.unify import plain_type

__all__ = ["read_footer", "group_stats", "FileFooter"]

#: the footer kernels' module, for its slot numbers: imported (with numba) on first use, so
#: that a process which only assembles or merges statistics (a Spark driver) never loads numba
_thrift = LazyModule("prune_engine.stats._thrift")

# how the physical statistics of a leaf are read
BOOL, INT, UINT, DEC_INT, DEC_BYTES, FLOAT, BYTES, UNKNOWN = (
    "bool", "int", "uint", "dec_int", "dec_bytes", "float", "bytes", "unknown")


@dataclass(frozen=True)
class LeafPlan:
    """How to read one Parquet leaf column's statistics into one Arrow-typed stats field."""

    index: int  # Parquet column index
    name: str  # Arrow field name
    kind: str  # one of BOOL ... UNKNOWN
    target: pa.DataType  # the stats field's type (the column's Arrow value type)
    via: pa.DataType | None  # intermediate Arrow type of the physical value, or None
    physical: str  # the Parquet physical type ("INT32", "BYTE_ARRAY", ...)
    scale: int = 0  # decimals
    width: int | None = None  # FIXED_LEN_BYTE_ARRAY
    path: str = ""  # the dotted Parquet column path, for messages
    repeated: bool = False  # inside a list or map: values per row vary

    @functools.cached_property
    def bloom(self) -> str | None:
        """How a Bloom filter of this leaf hashed its values (:func:`.bloom.encoding.token`)."""
        return bloom_encoding.token(self.physical, self.kind, self.via, self.scale, self.width)


@dataclass
class Node:
    """The Arrow schema as a tree whose leaves are :class:`LeafPlan` s."""

    name: str
    kind: str  # "leaf", "struct", "list", "map"
    plan: LeafPlan | None = None
    children: list["Node"] = field(default_factory=list)
    element_type: pa.DataType | None = None


@dataclass
class FooterPlan:
    """Per distinct file schema: the stats tree, the selected leaves, and the arrays the
    footer kernels take (one entry per selected leaf)."""

    nodes: list[Node]
    leaves: list[LeafPlan]
    known: list[str]  # every column name a ``columns=`` selection may use, in this file
    schema: pa.Schema  # the file's Arrow schema
    num_columns: int  # Parquet leaf columns in the file
    leaf_index: np.ndarray = field(init=False)  # Parquet column index
    leaf_type: np.ndarray = field(init=False)  # Thrift code of the physical type
    trust_new: np.ndarray = field(init=False)  # min_value / max_value are bounds
    trust_old: np.ndarray = field(init=False)  # the deprecated min / max are bounds
    is_bytes: np.ndarray = field(init=False)  # string / binary bounds (PARQUET-251)
    repeated: np.ndarray = field(init=False)  # leaves inside lists / maps
    paths: dict[int, str] = field(init=False)  # dotted path of each leaf outside lists / maps

    def __post_init__(self):
        leaves = self.leaves
        self.leaf_index = np.array([leaf.index for leaf in leaves], np.int64)
        self.leaf_type = np.array([PHYSICAL_CODES[leaf.physical] for leaf in leaves], np.int64)
        self.trust_new = np.array([leaf.kind != UNKNOWN for leaf in leaves], bool)
        # the deprecated fields were ordered as signed numbers: true bounds only for
        # signed-order kinds
        self.trust_old = np.array([leaf.kind in (BOOL, INT, FLOAT, DEC_INT) for leaf in leaves],
                                  bool)
        self.is_bytes = np.array([leaf.kind == BYTES for leaf in leaves], bool)
        self.repeated = np.array([leaf.repeated for leaf in leaves], bool)
        self.paths = dict(_struct_paths(self.nodes))

    def bloom_leaves(self, wanted) -> list[tuple[int, str]]:
        """``(j, dotted path)`` of the selected leaves whose Bloom filters are read: every
        leaf outside lists and maps with a known encoding (``wanted=True``) or those named in
        ``wanted`` (top-level names or dotted struct paths, as ``columns=``)."""
        return self._chosen(wanted, lambda leaf: leaf.bloom is not None)

    def dictionary_leaves(self, wanted) -> list[tuple[int, str]]:
        """As :meth:`bloom_leaves`, the leaves whose dictionary pages are read (every type but
        booleans, which are bit-packed, and types whose values are not read)."""
        return self._chosen(wanted, lambda leaf: leaf.kind not in (BOOL, UNKNOWN))

    def _chosen(self, wanted, usable) -> list[tuple[int, str]]:
        out = []
        for j, leaf in enumerate(self.leaves):
            path = self.paths.get(leaf.index)
            if path is None or not usable(leaf):
                continue
            if wanted is True or any(path == w or path.startswith(w + ".") for w in wanted):
                out.append((j, path))
        return out


@dataclass
class FileFooter:
    """The raw statistics of one file: ``rows`` has one row per (row group, selected leaf),
    row-group major (entry ``r * L + j`` is leaf ``j`` of row group ``r``), with the
    :mod:`._thrift` ``S_*`` slots; bound bytes are in ``data``."""

    path: str
    key: tuple
    plan: FooterPlan
    num_rows: np.ndarray  # per row group
    data: np.ndarray  # uint8
    rows: np.ndarray  # int64[R * L, NUM_SELECTED]
    #: per dotted leaf path: each row group's Bloom filter (u32 words), None where none
    blooms: dict[str, list[np.ndarray | None]] = field(default_factory=dict)
    bloom_tokens: dict[str, str] = field(default_factory=dict)
    bloom_bytes: int = 0  # bytes of Bloom filters read
    bloom_problems: list[str] = field(default_factory=list)  # filters left out, and why
    #: per dotted leaf path: each row group's dictionary values (Arrow), None where unknown
    dictionaries: dict[str, list[pa.Array | None]] = field(default_factory=dict)
    dictionary_problems: list[str] = field(default_factory=list)  # pages not used, and why
    #: dotted paths of the float leaves with a dictionary page that holds NaN (its set unknown)
    nan_dictionaries: set[str] = field(default_factory=set)
    #: chunks ``(row group, leaf j)`` whose statistics are impossible, so unknown: why
    untrusted: dict[tuple[int, int], str] = field(default_factory=dict)
    #: why the row groups' row counts are unknown (the file's contradicts their sum), or None
    rows_untrusted: str | None = None
    #: where the pages of every column chunk lie, when indexes are read
    layout: trust.Layout | None = None
    #: with ``page_index=True``: the bytes read where the chunks' page indexes lie, as
    #: ``(offset in the file, bytes)`` ranges (places outside the file's pages are not read)
    index_ranges: list[tuple[int, bytes]] | None = None

    def distrust(self, r: int, j: int, why: str) -> None:
        """Mark chunk ``(r, j)`` impossible (the first reason stays): its statistics, Bloom
        filter and dictionary are unknown."""
        self.untrusted.setdefault((r, j), why)
        path = self.plan.paths.get(self.plan.leaves[j].index)
        for index in (self.blooms, self.dictionaries):
            if path in index:
                index[path][r] = None

    def problems(self) -> list[str]:
        """What this file says that cannot be (each made unknown), one line each."""
        out = [] if self.rows_untrusted is None else [self.rows_untrusted]
        return out + [f"row group {r}: {why}" for (r, _), why in sorted(self.untrusted.items())]


# ------------------------------------------------------------------------------ plans


_UNITS = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}


def _wide_timestamp(target: pa.DataType) -> pa.DataType:
    """A nanosecond timestamp type as microseconds (same zone): the statistics' type of a leaf
    whose values may leave the nanosecond range (years 1677 to 2262), as Spark reads them."""
    if pa.types.is_timestamp(target) and target.unit == "ns":
        return pa.timestamp("us", target.tz)
    return target


def _leaf_plan(index: int, name: str, column, target: pa.DataType) -> LeafPlan:
    """Decide how the physical statistics of ``column`` (a ColumnSchema) become ``target``."""
    physical = column.physical_type
    logical = json.loads(column.logical_type.to_json())
    ltype = logical.get("Type")
    converted = column.converted_type
    where = {"path": column.path, "repeated": column.max_repetition_level > 0}
    if pa.types.is_null(target):
        return LeafPlan(index, name, UNKNOWN, target, None, physical, **where)
    if ltype == "Decimal" or converted == "DECIMAL":
        kind = DEC_INT if physical in ("INT32", "INT64") else DEC_BYTES
        return LeafPlan(index, name, kind, target, None, physical, scale=column.scale,
                        width=column.length if physical == "FIXED_LEN_BYTE_ARRAY" else None,
                        **where)
    if physical == "BOOLEAN":
        return LeafPlan(index, name, BOOL, target, pa.bool_(), physical, **where)
    if physical in ("INT32", "INT64"):
        unsigned = (ltype == "Int" and not logical.get("isSigned", True)) or (
            converted is not None and str(converted).startswith("UINT"))
        via = pa.int64()
        if ltype == "Timestamp" or converted in ("TIMESTAMP_MILLIS", "TIMESTAMP_MICROS"):
            unit = _UNITS.get(logical.get("timeUnit"), "ms" if converted == "TIMESTAMP_MILLIS"
                              else "us")
            zone = target.tz if pa.types.is_timestamp(target) else (
                "UTC" if logical.get("isAdjustedToUTC") else None)
            via = pa.timestamp(unit, zone)
            if unit != "ns":  # stored coarser than an Arrow schema's nanoseconds: any year
                target = _wide_timestamp(target)
        elif ltype == "Time" or converted in ("TIME_MILLIS", "TIME_MICROS"):
            unit = _UNITS.get(logical.get("timeUnit"), "ms" if converted == "TIME_MILLIS"
                              else "us")
            via = pa.time32(unit) if unit == "ms" else pa.time64(unit)
        elif ltype == "Date" or converted == "DATE":
            via = pa.date32()
        elif pa.types.is_duration(target):
            via = target
        kind = UINT if unsigned else INT
        return LeafPlan(index, name, kind, target, via, physical, **where)
    if physical in ("FLOAT", "DOUBLE"):
        return LeafPlan(index, name, FLOAT, target, pa.float64(), physical, **where)
    if physical == "BYTE_ARRAY" or (physical == "FIXED_LEN_BYTE_ARRAY" and ltype != "Float16"):
        return LeafPlan(index, name, BYTES, target, pa.binary(), physical,
                        width=column.length if physical == "FIXED_LEN_BYTE_ARRAY" else None,
                        **where)
    if physical == "INT96":  # Julian day and nanoseconds, any year: microseconds (as Spark)
        target = _wide_timestamp(target)
    return LeafPlan(index, name, UNKNOWN, target, None, physical, **where)  # INT96, Float16


def _schema_nodes(schema: pa.Schema, pq_schema) -> list[Node]:
    counter = iter(range(len(pq_schema)))

    def walk(f: pa.Field) -> Node:
        typ = f.type
        if isinstance(typ, pa.BaseExtensionType) and pa.types.is_nested(typ.storage_type):
            typ = typ.storage_type
        if pa.types.is_struct(typ):
            return Node(f.name, "struct", children=[walk(typ.field(i))
                                                    for i in range(typ.num_fields)])
        if pa.types.is_map(typ):
            key, value = walk(typ.key_field), walk(typ.item_field)
            key.name, value.name = "key", "value"
            return Node(f.name, "map", children=[key, value])
        if is_list_type(typ):
            return Node(f.name, "list", children=[walk(typ.value_field)],
                        element_type=typ.value_type)
        index = next(counter, None)
        if index is None:
            raise StatsError("the Parquet schema has fewer leaf columns than its Arrow schema")
        target = plain_type(typ)  # what a dictionary or a view holds (see the module doc)
        return Node(f.name, "leaf", plan=_leaf_plan(index, f.name, pq_schema.column(index),
                                                    target))

    nodes = [walk(f) for f in schema]
    if next(counter, None) is not None:
        raise StatsError("the Parquet schema has more leaf columns than its Arrow schema")
    return nodes


def _select(nodes: list[Node], columns: Sequence[str] | None) -> list[Node]:
    """Keep the top-level columns (or dotted struct paths) in ``columns``."""
    if columns is None:
        return nodes
    out = []
    for node in nodes:
        wanted = [c for c in columns if c == node.name or c.startswith(node.name + ".")]
        if not wanted:
            continue
        if node.name in wanted or node.kind != "struct":
            out.append(node)
        else:
            rest = [c[len(node.name) + 1:] for c in wanted]
            children = _select(node.children, rest)
            if children:
                out.append(Node(node.name, "struct", children=children))
    return out


def _struct_paths(nodes: list[Node], prefix: str = ""):
    """``(Parquet column index, dotted path)`` of the leaves reached through structs only."""
    for node in nodes:
        if node.kind == "leaf":
            yield node.plan.index, prefix + node.name
        elif node.kind == "struct":
            yield from _struct_paths(node.children, prefix + node.name + ".")


def _leaves(nodes: list[Node]) -> list[LeafPlan]:
    out = []
    for node in nodes:
        out.extend([node.plan] if node.kind == "leaf" else _leaves(node.children))
    return out


def known_columns(nodes: list[Node], prefix: str = "") -> list[str]:
    """Top-level names and dotted struct paths a ``columns=`` selection may use."""
    out = []
    for node in nodes:
        out.append(prefix + node.name)
        if node.kind == "struct":
            out.extend(known_columns(node.children, prefix + node.name + "."))
    return out


_PLANS: dict[tuple, FooterPlan] = {}
_PLANS_LOCK = threading.Lock()
MAGIC = b"PAR1"
PHYSICAL_CODES = {"BOOLEAN": 0, "INT32": 1, "INT64": 2, "INT96": 3, "FLOAT": 4, "DOUBLE": 5,
                  "BYTE_ARRAY": 6, "FIXED_LEN_BYTE_ARRAY": 7}


#: the key of the Arrow schema pyarrow stores in a footer's key-value metadata
ARROW_SCHEMA = b"ARROW:schema"


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _binary(raw: bytes) -> bytes:
    return _uvarint(len(raw)) + raw


@dataclass(frozen=True)
class ChunkMeta:
    """The ``ColumnMetaData`` of one column chunk of a file :func:`schema_file` writes:
    ``type`` and ``codec`` are Thrift codes, ``encodings`` too; offsets are in that file."""

    type: int
    encodings: tuple[int, ...]
    path: tuple[str, ...]
    codec: int
    num_values: int
    uncompressed: int
    compressed: int
    data_offset: int
    dictionary_offset: int | None = None


def _zigzag(n: int) -> bytes:
    return _uvarint((n << 1) ^ (n >> 63))


def _list_header(size: int, kind: int) -> bytes:
    return bytes([size << 4 | kind]) if size < 15 else bytes([0xF0 | kind]) + _uvarint(size)


def _chunk(c: ChunkMeta) -> bytes:
    """A Thrift ``ColumnChunk`` (file_offset, meta_data) holding ``c``."""
    meta = bytearray(b"\x15" + _zigzag(c.type))  # 1: type
    meta += b"\x19" + _list_header(len(c.encodings), 5) + b"".join(
        _zigzag(e) for e in c.encodings)  # 2: encodings
    meta += b"\x19" + _list_header(len(c.path), 8) + b"".join(
        _binary(p.encode()) for p in c.path)  # 3: path_in_schema
    meta += b"\x15" + _zigzag(c.codec)  # 4: codec
    for value in (c.num_values, c.uncompressed, c.compressed):  # 5, 6, 7
        meta += b"\x16" + _zigzag(value)
    meta += b"\x26" + _zigzag(c.data_offset)  # 9: data_page_offset
    if c.dictionary_offset is not None:
        meta += b"\x26" + _zigzag(c.dictionary_offset)  # 11: dictionary_page_offset
    meta += b"\x00"
    start = c.dictionary_offset if c.dictionary_offset is not None else c.data_offset
    return b"\x26" + _zigzag(start) + b"\x1c" + bytes(meta) + b"\x00"  # 2: file_offset, 3


def schema_file(schema: bytes, arrow: bytes | None, pages: bytes = b"",
                chunks: Sequence[ChunkMeta] = (), num_rows: int = 0,
                created_by: str | None = None) -> bytes:
    """A Parquet file whose ``FileMetaData`` holds the version, the raw bytes of a footer's
    schema (its list, as :func:`._thrift.decode_footer` delimits it), the footer's
    ``ARROW:schema`` entry, if any, and ``created_by``: all pyarrow is given of a footer.
    Without ``chunks`` it has no row groups; with them (one per leaf column), one row group of
    ``num_rows`` rows whose column chunks they describe, their pages being ``pages`` (which
    follow the leading magic bytes: offsets count from the file's start).

    pyarrow thus reads the schema, the one part it must (logical types, the Arrow schema), and
    never the row groups, whose verdict is the kernels' alone: so a footer is accepted or
    refused, with the same statistics, whatever the process read before (the plans are cached
    by exactly these bytes). The scan reads selected pages of a column chunk through such a
    file (:mod:`prune_engine.scanning.pages`): the same schema, so the same Arrow types.

    >>> import io, pyarrow as pa, pyarrow.parquet as pq
    >>> from prune_engine.stats import _thrift
    >>> buf = io.BytesIO(); pq.write_table(pa.table({"x": [1]}), buf)
    >>> footer = _tail(lambda n, at: buf.getvalue()[at:at + n], len(buf.getvalue()))
    >>> info, _, _ = _thrift.decode_footer(footer)
    >>> raw = footer[info[_thrift.F_SCHEMA_START]:info[_thrift.F_SCHEMA_END]].tobytes()
    >>> pq.read_metadata(pa.BufferReader(schema_file(raw, None))).schema.names
    ['x']
    """
    meta = bytearray(b"\x15\x02")  # 1: version 1 (i32)
    meta += b"\x19" + schema  # 2: schema (list<SchemaElement>)
    meta += b"\x16" + _zigzag(num_rows if chunks else 0)  # 3: num_rows (i64)
    if chunks:  # 4: row_groups, one RowGroup: 1 columns, 2 total_byte_size, 3 num_rows
        meta += b"\x19\x1c\x19" + _list_header(len(chunks), 12) + b"".join(
            _chunk(c) for c in chunks)
        meta += b"\x16" + _zigzag(len(pages)) + b"\x16" + _zigzag(num_rows) + b"\x00"
    else:
        meta += b"\x19\x0c"  # 4: row_groups, an empty list<RowGroup>
    last = 4
    if arrow is not None:  # 5: key_value_metadata, one KeyValue
        meta += b"\x19\x1c\x18" + _binary(ARROW_SCHEMA) + b"\x18" + _binary(arrow) + b"\x00"
        last = 5
    if created_by is not None:  # 6: created_by
        meta += bytes([(6 - last) << 4 | 8]) + _binary(created_by.encode())
    meta += b"\x00"
    return MAGIC + pages + bytes(meta) + struct.pack("<I", len(meta)) + MAGIC


def _plan(footer: np.ndarray, info: np.ndarray, columns: tuple[str, ...] | None
          ) -> tuple[tuple, FooterPlan]:
    """The plan of a footer's schema, made once per distinct schema (by its raw bytes and
    those of its ``ARROW:schema``: pyarrow sees nothing else, :func:`schema_file`)."""
    schema_bytes = footer[info[_thrift.F_SCHEMA_START]:info[_thrift.F_SCHEMA_END]].tobytes()
    arrow_off, arrow_len = info[_thrift.F_ARROW_OFF], info[_thrift.F_ARROW_LEN]
    arrow_bytes = footer[arrow_off:arrow_off + arrow_len].tobytes() if arrow_off >= 0 else None
    key = (schema_bytes, arrow_bytes, columns)
    plan = _PLANS.get(key)
    if plan is None:
        # INT96 read as microseconds, as Spark reads it: no wrap-around past 2262
        try:
            parquet_file = pq.ParquetFile(pa.BufferReader(schema_file(schema_bytes,
                                                                      arrow_bytes)),
                                          coerce_int96_timestamp_unit="us")
            parquet_schema = parquet_file.metadata.schema
            schema = parquet_file.schema_arrow
        except (pa.ArrowException, OSError, ValueError) as e:
            raise StatsError(f"cannot derive an Arrow schema from the Parquet schema: "
                             f"{one_line(str(e))}") from None
        every = _schema_nodes(schema, parquet_schema)
        nodes = _select(every, columns)
        plan = FooterPlan(nodes, _leaves(nodes), known_columns(every), schema,
                          len(parquet_schema))
        with _PLANS_LOCK:
            if len(_PLANS) > 1000:
                _PLANS.clear()
            _PLANS[key] = plan
    return key, plan


# ------------------------------------------------------------------------------ reading

_PARQUET_MR = re.compile(r"parquet-mr(?: compatible [^ ]+)? version (\d+)\.(\d+)\.(\d+)")


def bad_string_stats(created_by: str | None) -> bool:
    """PARQUET-251: parquet-mr before 1.8.0 wrote wrong min/max for binary columns.

    >>> bad_string_stats("parquet-mr version 1.6.0 (build abcd)"), bad_string_stats("parquet-mr version 1.12.3")
    (True, False)
    """
    match = _PARQUET_MR.search(created_by or "")
    return bool(match) and tuple(int(g) for g in match.groups()) < (1, 8, 0)


#: bytes read at once from the end of a file on a filesystem with latency (an object store):
#: the footer and its length in one request, unless the footer is larger
TAIL_GUESS = 64 << 10


def _tail(read_at, size: int, guess: int = 0) -> np.ndarray:
    """The footer bytes of a file of ``size`` bytes and one zero byte (as
    :func:`._thrift.decode_footer` takes them); ``read_at(nbytes, offset)`` reads. With a
    ``guess``, the last ``guess`` bytes are read first (one request where each costs one)."""
    if size < 12:
        raise ValueError(f"a Parquet file has at least 12 bytes; this one has {size}")
    ahead = read_at(min(guess, size), size - min(guess, size)) if guess else b""
    end = ahead[-8:] if ahead else read_at(8, size - 8)
    if end[4:] != MAGIC:
        if end[4:] == b"PARE":
            raise ValueError("the footer is encrypted (PARE); encrypted footers are not "
                             "supported")
        raise ValueError("no Parquet magic bytes (PAR1) at the end of the file")
    length = struct.unpack("<I", end[:4])[0]
    if length > size - 12:
        raise ValueError(f"the footer length ({length} bytes) exceeds the file "
                         f"({size} bytes): a truncated file?")
    footer = np.zeros(length + 1, np.uint8)
    if length + 8 <= len(ahead):
        footer[:length] = np.frombuffer(ahead[len(ahead) - 8 - length:len(ahead) - 8], np.uint8)
    else:
        footer[:length] = np.frombuffer(read_at(length, size - 8 - length), np.uint8)
    return footer


@contextlib.contextmanager
def _opened(source, filesystem):
    """``(read_at, size)`` of a file: ``read_at(nbytes, offset)`` reads it while open."""
    if filesystem is None and isinstance(source, (str, os.PathLike)):
        with open(source, "rb", buffering=0) as f:
            def read_at(n, offset):
                f.seek(offset)
                return f.read(n)

            yield read_at, os.fstat(f.fileno()).st_size
    elif filesystem is not None:
        with filesystem.open_input_file(source) as f:
            yield (lambda n, offset: f.read_at(n, offset)), f.size()
    else:
        if not isinstance(source, pa.NativeFile):  # a Python binary file: the caller closes it
            source = pa.PythonFile(source, mode="r")
        yield (lambda n, offset: source.read_at(n, offset)), source.size()


def read_footer(source, path: str, columns: tuple[str, ...] | None = None,
                filesystem=None, bloom=None, dictionaries=None,
                dictionary_bytes: int = dictionary.MAX_BYTES,
                page_index: bool = False, footer_size: int | None = None) -> FileFooter:
    """Read one file's footer and its raw per-row-group statistics.

    ``source`` is a path (on ``filesystem``, else local), a ``pyarrow.NativeFile`` or a binary
    file object; ``path`` names the file in the result. ``bloom`` (True, or column names):
    also read those leaves' Bloom filters, while the file is open; ``dictionaries`` likewise
    their dictionary pages of at most ``dictionary_bytes`` (:mod:`.dictionary`). A Bloom filter
    or dictionary page that cannot be where the footer puts it, or that contradicts the
    chunk's bounds, makes that chunk's statistics unknown (``FileFooter.untrusted``).
    ``page_index``: also read the bytes of the selected leaves' page indexes
    (``FileFooter.index_ranges``; one read where they are contiguous, as writers put them
    after the row groups), decoded by :mod:`.page_index`. ``footer_size``: the footer's
    length where the caller knows it (pyarrow's ``FileMetaData.serialized_size``): exactly
    those bytes are read, in one request, instead of a guess. Raises
    ``OSError`` when the file cannot be read and ``ValueError`` / ``pyarrow.ArrowException`` /
    :class:`~prune_engine.errors.StatsError` when it is not valid Parquet.
    """
    with _opened(source, filesystem) as (read_at, size):
        guess = footer_size + 8 if footer_size else TAIL_GUESS if filesystem is not None else 0
        footer = _tail(read_at, size, guess)
        indexes = bool(bloom or dictionaries)
        # the footer (and its length and magic) starts where the pages end
        result = _decode(footer, path, columns, pages_end=size - 8 - (footer.size - 1)
                         if indexes else None)
        if bloom:
            _read_blooms(result, bloom, read_at, size)
        if dictionaries:
            _read_dictionaries(result, dictionaries, read_at, dictionary_bytes)
        if page_index:
            result.index_ranges = _read_index_ranges(result.rows, read_at,
                                                     size - 8 - (footer.size - 1))
    return result


#: index places closer than this are read in one request (writers put them end to end)
INDEX_GAP = 64 << 10


def _read_index_ranges(rows: np.ndarray, read_at, pages_end: int) -> list[tuple[int, bytes]]:
    """The bytes of the page-index places of ``rows`` (:mod:`._thrift` ``S_*`` rows) that lie
    inside the file's pages ``[4, pages_end)``, places at most :data:`INDEX_GAP` apart read
    as one range."""
    places = []
    for off, size in ((_thrift.S_COLUMN_INDEX_OFF, _thrift.S_COLUMN_INDEX_LEN),
                      (_thrift.S_OFFSET_INDEX_OFF, _thrift.S_OFFSET_INDEX_LEN)):
        start, length = rows[:, off], rows[:, size]
        inside = (start >= 4) & (length > 0) & (start < pages_end) \
            & (length <= pages_end - np.maximum(start, 0))
        places.extend(zip(start[inside].tolist(), (start + length)[inside].tolist()))
    ranges: list[list[int]] = []
    for start, stop in sorted(places):
        if ranges and start <= ranges[-1][1] + INDEX_GAP:
            ranges[-1][1] = max(ranges[-1][1], stop)
        else:
            ranges.append([start, stop])
    return [(start, bytes(read_at(stop - start, start))) for start, stop in ranges]


def _warm_up(compiled) -> None:
    """Compile the footer kernels (or load them from numba's cache) on a tiny file, with the
    argument types every real footer gives them."""
    import io

    sink = io.BytesIO()
    pq.write_table(pa.table({"x": [1, None], "s": ["a", "b"]}), sink)
    data = sink.getvalue()
    _decode(_tail(lambda n, offset: data[offset:offset + n], len(data)), "warm-up", None,
            compiled)


#: the footer kernels: compiled, or their Python twins while numba compiles (:mod:`.._warm`)
FOOTER_KERNELS = Kernels("prune_engine.stats._thrift", ("decode_footer", "select_stats"),
                         _warm_up, "prune_engine.stats.parquet:FOOTER_KERNELS")

#: row counts at or past this are impossible (they would not even sum exactly)
MAX_ROWS = 1 << 53


def _decode(footer: np.ndarray, path: str, columns: tuple[str, ...] | None,
            kernels=None, pages_end: int | None = None) -> FileFooter:
    """The :class:`FileFooter` of footer bytes (as :func:`_tail` gives them); with
    ``pages_end`` (where the footer starts in the file), also the chunks' layout
    (:class:`.trust.Layout`)."""
    kernels = kernels or FOOTER_KERNELS.get()
    try:
        info, chunks, num_rows = kernels.decode_footer(footer)
    except (ValueError, IndexError, OverflowError) as e:  # the latter two: from the twins
        raise ValueError(f"corrupt footer: {e}") from None
    if (num_rows < 0).any():
        raise ValueError("corrupt footer: a row group has no row count")
    key, plan = _plan(footer, info, columns)
    if len(num_rows) and info[_thrift.F_COLUMNS] != plan.num_columns:
        raise ValueError(f"corrupt footer: row groups have {info[_thrift.F_COLUMNS]} column "
                         f"chunks, the schema {plan.num_columns} columns")
    created = info[_thrift.F_CREATED_BY_OFF]
    created_by = footer[created:created + info[_thrift.F_CREATED_BY_LEN]].tobytes().decode(
        "utf-8", "replace") if created >= 0 else None
    trust_new = plan.trust_new & ~plan.is_bytes if bad_string_stats(created_by) \
        else plan.trust_new
    trust_old = plan.trust_old
    orders = info[_thrift.F_COLUMN_ORDERS]
    # min_value / max_value follow the column orders; without them only the deprecated
    # min / max exist (sorted as signed values)
    use_new = orders == plan.num_columns and info[_thrift.F_TYPE_ORDERS] == orders
    data, rows = kernels.select_stats(footer, chunks, plan.num_columns, plan.leaf_index,
                                      plan.leaf_type, trust_new, trust_old, use_new)
    result = FileFooter(path, key, plan, num_rows, data, rows)
    total = sum(num_rows.tolist())
    said = int(info[_thrift.F_NUM_ROWS])
    if total >= MAX_ROWS:
        result.rows_untrusted = f"the row counts (sum {total}) are too large to be true"
    elif said >= 0 and said != total:
        result.rows_untrusted = (f"the row groups' row counts (sum {total}) contradict the "
                                 f"file's ({said})")
    if pages_end is not None:
        result.layout = trust.Layout.of(chunks, pages_end)
    return result


def _read_blooms(footer: FileFooter, wanted, read_at, size: int) -> None:
    """Read the Bloom filters of the wanted leaves of every row group into ``footer``; a
    filter out of place, or one that answers "absent" for its chunk's own exact min or max,
    makes the chunk untrusted."""
    plan = footer.plan
    width = len(plan.leaves)
    offsets = footer.rows[:, _thrift.S_BLOOM_OFF].tolist()
    lengths = footer.rows[:, _thrift.S_BLOOM_LEN].tolist()
    # with bloom=True, only the leaves this file wrote filters for
    chosen = [(j, p) for j, p in plan.bloom_leaves(wanted)
              if wanted is not True or any(o != -1 for o in offsets[j::width])]
    groups = len(footer.num_rows)
    chunks = [(r, j) for j, _ in chosen for r in range(groups)]
    places = [(offsets[r * width + j], lengths[r * width + j]) for r, j in chunks]
    layout = footer.layout
    words, problems, impossible = read_filters(
        read_at, size, places, layout.misplaced if layout is not None else None)
    for k, (j, leaf_path) in enumerate(chosen):
        footer.blooms[leaf_path] = words[k * groups:(k + 1) * groups]
        footer.bloom_tokens[leaf_path] = plan.leaves[j].bloom
    for i, why in impossible.items():
        r, j = chunks[i]
        footer.distrust(r, j, f"the Bloom filter of {plan.leaves[j].path} {why}")
    footer.bloom_bytes = sum(4 * len(w) for w in words if w is not None)
    footer.bloom_problems = [f"{footer.path}: {p}" for p in problems]
    for i, w in enumerate(words):
        if w is not None:
            r, j = chunks[i]
            leaf, row = plan.leaves[j], footer.rows[r * width + j]
            bounds = [(side, footer.data[row[at]:row[at] + row[n]].tobytes(), int(row[exact]))
                      for side, at, n, exact in (
                          ("min", _thrift.S_MIN_START, _thrift.S_MIN_LEN, _thrift.S_MIN_EXACT),
                          ("max", _thrift.S_MAX_START, _thrift.S_MAX_LEN, _thrift.S_MAX_EXACT))
                      if row[n] >= 0]
            side = trust.bloom_denies(w, leaf.physical, leaf.width, bounds)
            if side:
                footer.distrust(r, j, f"the Bloom filter of {leaf.path} answers 'absent' for "
                                      f"the chunk's own {side}")


def _read_dictionaries(footer: FileFooter, wanted, read_at, cap: int) -> None:
    """Read the dictionary pages of the wanted leaves of every row group into ``footer``: the
    values in the leaf's Arrow type, or None (unknown). A page that cannot be where the
    footer puts it (outside its chunk's pages), or whose checksum fails, makes the chunk
    untrusted."""
    plan = footer.plan
    width = len(plan.leaves)
    for j, leaf_path in plan.dictionary_leaves(wanted):
        rows = footer.rows[j::width]
        places = []
        for r, row in enumerate(rows):
            offset, length, codec = (int(row[_thrift.S_DICT_OFF]), int(row[_thrift.S_DICT_LEN]),
                                     int(row[_thrift.S_CODEC]))
            why = trust.misplaced_dictionary(footer.layout, offset, length,
                                             int(row[_thrift.S_TOTAL]))
            if why is not None:
                footer.distrust(r, j, f"the dictionary page of {plan.leaves[j].path} {why}")
                offset = -1
            places.append((offset, length, codec))
        pages, problems, impossible = dictionary.read_dictionaries(read_at, places, cap)
        footer.dictionary_problems.extend(f"{footer.path}: {p}" for p in problems)
        values = [None if page is None else _dictionary_values(footer, plan.leaves[j], leaf_path,
                                                               *page) for page in pages]
        if wanted is not True or any(v is not None for v in values):
            footer.dictionaries[leaf_path] = values
        for r, why in impossible.items():
            footer.distrust(r, j, f"the dictionary page of {plan.leaves[j].path} {why}")


def _dictionary_values(footer: FileFooter, leaf: LeafPlan, leaf_path: str, count: int,
                       body: bytes) -> pa.Array | None:
    """A dictionary page's PLAIN values in the leaf's Arrow type, converted as bounds are;
    None when one does not convert (the set would miss it) or the page does not decode."""
    try:
        raw = Bounds(*dictionary.split_plain(body, count, leaf.physical, leaf.width))
    except dictionary.PageError as e:
        footer.dictionary_problems.append(f"{footer.path}: the dictionary page of {leaf_path} "
                                          f"is not usable: {e}")
        return None
    converted = _bounds(leaf, raw, False)
    if converted.null_count and leaf.kind == FLOAT:  # a float bound is null only for NaN
        footer.nan_dictionaries.add(leaf_path)
    return converted if converted.null_count == 0 else None


# ------------------------------------------------------------------------------ conversion


def _decimals(values: list, scale: int, target: pa.DataType) -> pa.Array:
    """Unscaled integers at ``scale`` (None = unknown) as a decimal array of ``target``,
    exactly (integers of any width, no decimal context); a value with more digits than the
    type's precision is unknown (no reader takes it as a value of the column).

    >>> values = [10**38 - 1, -(10**38 - 1), 10**38, None]
    >>> _decimals(values, 38, pa.decimal128(38, 38)).to_pylist()[1:]
    [Decimal('-0.99999999999999999999999999999999999999'), None, None]
    """
    n = len(values)
    digits = 10 ** min(target.precision, 76) if pa.types.is_decimal(target) else 10 ** 76
    valid = [v is not None and -digits < v < digits for v in values]
    data = b"".join((v if ok else 0).to_bytes(32, "little", signed=True)
                    for v, ok in zip(values, valid))
    mask = pa.array(valid, pa.bool_())
    wide = pa.Array.from_buffers(pa.decimal256(76, scale), n,
                                 [mask.buffers()[1] if not all(valid) else None,
                                  pa.py_buffer(data)])
    return wide.cast(target)


def _valid_utf8_prefix(raw: bytes) -> bytes:
    for cut in range(len(raw), max(len(raw) - 4, -1), -1):
        try:
            raw[:cut].decode("utf-8")
            return raw[:cut]
        except UnicodeDecodeError:
            continue
    return b""


def _bytes(binary: pa.Array, target: pa.DataType, lower: bool) -> pa.Array:
    try:
        return binary.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if not is_string_type(target):
            raise
    # a bound cut inside a UTF-8 sequence: a prefix of a min is still a lower bound; an
    # invalid max is dropped
    fixed = []
    for v in binary.to_pylist():
        if v is None:
            fixed.append(None)
            continue
        try:
            v.decode("utf-8")
            fixed.append(v)
        except UnicodeDecodeError:
            fixed.append(_valid_utf8_prefix(v) if lower else None)
    return pa.array(fixed, pa.binary()).cast(target)


@dataclass
class Bounds:
    """One side's bounds of one leaf over containers: byte strings ``data[start:start+length]``
    (length -1 = unknown)."""

    data: np.ndarray  # uint8
    start: np.ndarray  # int64
    length: np.ndarray  # int64

    def fixed(self, dtype: str) -> tuple[np.ndarray, np.ndarray]:
        """(values, known): each bound read as one little-endian ``dtype`` value; a bound of
        another width is unknown."""
        width = np.dtype(dtype).itemsize
        known = self.length == width
        values = np.zeros(len(known), dtype)
        if known.any():
            at = self.start[known, None] + np.arange(width)
            values[known] = self.data[at].view(dtype)[:, 0]
        return values, known

    def binary(self) -> pa.Array:
        """The bounds as a ``large_binary`` array (null = unknown)."""
        known = self.length >= 0
        sizes = np.where(known, self.length, 0)
        offsets = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        at = np.repeat(self.start - offsets[:-1], sizes) + np.arange(offsets[-1])
        validity = pa.py_buffer(np.packbits(known, bitorder="little"))
        return pa.Array.from_buffers(pa.large_binary(), len(sizes), [
            validity, pa.py_buffer(offsets), pa.py_buffer(self.data[at])])


_INT_DTYPES = {("INT32", False): "<i4", ("INT64", False): "<i8", ("INT32", True): "<u4",
               ("INT64", True): "<u8"}


def _bounds(plan: LeafPlan, raw: Bounds, lower: bool) -> pa.Array:
    """One bound per container, in the leaf's Arrow type; null = unknown."""
    n = len(raw.length)
    kind, target = plan.kind, plan.target
    try:
        if kind == UNKNOWN:
            return pa.nulls(n, target)
        if kind == BOOL:  # one byte, 0 or 1 (:func:`impossible_bounds`)
            values, known = raw.fixed("u1")
            return pa.array(values == 1, pa.bool_(), mask=~(known & (values <= 1))).cast(target)
        if kind in (INT, UINT):
            values, known = raw.fixed(_INT_DTYPES[plan.physical, kind == UINT])
            if kind == UINT:
                return pa.array(values.astype(np.uint64), mask=~known).cast(target)
            ints = pa.array(values.astype(np.int64), mask=~known)
            via = plan.via
            if pa.types.is_date32(via) or pa.types.is_time32(via):
                ints = ints.cast(pa.int32())
            return ints.cast(via).cast(target)
        if kind == DEC_INT:
            values, known = raw.fixed(_INT_DTYPES[plan.physical, False])
            return _decimals([int(v) if ok else None for v, ok in zip(values, known)],
                             plan.scale, target)
        if kind == DEC_BYTES:  # big-endian two's complement; a FIXED_LEN one of its width
            ints = [None if not v or (plan.width and len(v) != plan.width) else
                    int.from_bytes(v, "big", signed=True) for v in raw.binary().to_pylist()]
            return _decimals(ints, plan.scale, target)
        if kind == FLOAT:
            values, known = raw.fixed("<f4" if plan.physical == "FLOAT" else "<f8")
            values = np.where(known, values.astype(np.float64), np.nan)
            values = np.where(values == 0, -0.0 if lower else 0.0, values)
            return pa.array(values, pa.float64(), mask=np.isnan(values)).cast(target)
        if kind == BYTES:
            return _bytes(raw.binary(), target, lower)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
        pass  # a value this type cannot hold exactly: unknown
    return pa.nulls(n, target)


@dataclass
class RawLeaf:
    """One leaf's statistics over containers: bounds, null and NaN counts (``nans`` None
    for a leaf that is not a float), and proven emptiness."""

    mins: pa.Array
    maxs: pa.Array
    nulls: pa.Array
    empty: np.ndarray  # no non-null value at all (bounds null for that reason)
    nans: pa.Array | None = None


def _raw_leaf(plan: LeafPlan, data: np.ndarray, rows: np.ndarray,
              no_nan: np.ndarray | None = None,
              bounds: tuple[pa.Array, pa.Array] | None = None,
              untrusted: np.ndarray | None = None) -> RawLeaf:
    """``rows``: this leaf's :mod:`._thrift` ``S_*`` rows, one per row group; ``no_nan``:
    the row groups proven free of NaN otherwise (a dictionary without NaN); ``bounds``: the
    min and max already converted (:func:`leaf_bounds`); ``untrusted``: the chunks whose
    statistics are all unknown (:mod:`.trust`)."""
    mins, maxs = bounds if bounds is not None else leaf_bounds(plan, data, rows)
    nulls = rows[:, _thrift.S_NULLS]
    values = rows[:, _thrift.S_NUM_VALUES]
    known = nulls >= 0
    if untrusted is not None and untrusted.any():
        mask = pa.array(untrusted)
        mins = pc.if_else(mask, pa.scalar(None, mins.type), mins)
        maxs = pc.if_else(mask, pa.scalar(None, maxs.type), maxs)
        known = known & ~untrusted
    empty = known & (nulls == values)
    nans = None
    if plan.kind == FLOAT:
        counts = rows[:, _thrift.S_NANS] if untrusted is None else \
            np.where(untrusted, -1, rows[:, _thrift.S_NANS])
        proven = empty if no_nan is None else empty | no_nan
        nans = _nan_counts(counts, values, np.where(known, nulls, 0),
                           proven if untrusted is None else proven & ~untrusted)
    return RawLeaf(mins, maxs, pa.array(nulls, pa.int64(), mask=~known), empty, nans)


def leaf_bounds(plan: LeafPlan, data: np.ndarray, rows: np.ndarray) -> tuple[pa.Array, pa.Array]:
    """The min and max of one leaf's chunks (``rows`` as :func:`_raw_leaf` takes them) in its
    Arrow type; null = unknown."""
    return (_bounds(plan, Bounds(data, rows[:, _thrift.S_MIN_START],
                                 rows[:, _thrift.S_MIN_LEN]), True),
            _bounds(plan, Bounds(data, rows[:, _thrift.S_MAX_START],
                                 rows[:, _thrift.S_MAX_LEN]), False))


def impossible_bounds(plan: LeafPlan, data: np.ndarray, rows: np.ndarray, mins: pa.Array,
                       maxs: pa.Array) -> np.ndarray:
    """Chunks of one leaf whose bounds cannot be (:mod:`.trust`): a min above the max, or a
    boolean bound byte other than 0 or 1."""
    bad = trust.impossible_order(mins, maxs)
    if plan.kind == BOOL:
        for start, length in ((_thrift.S_MIN_START, _thrift.S_MIN_LEN),
                              (_thrift.S_MAX_START, _thrift.S_MAX_LEN)):
            values, known = Bounds(data, rows[:, start], rows[:, length]).fixed("u1")
            bad |= known & (values > 1)
    return bad


def _nan_counts(counts: np.ndarray, values: np.ndarray, nulls: np.ndarray,
                no_nan: np.ndarray) -> pa.Array:
    """A float leaf's NaN counts (null = unknown): the footer's where it is one the chunk can
    hold (NaNs and nulls are at most its values), else 0 where ``no_nan`` proves it.

    >>> _nan_counts(np.array([2, -1, 9, -1]), np.array([5, 5, 5, 5]), np.array([0, 0, 0, 5]),
    ...             np.array([False, False, False, True])).to_pylist()
    [2, None, None, 0]
    """
    valid = (counts >= 0) & (values >= 0) & (counts + nulls <= values)
    counts = np.where(valid, counts, 0)
    return pa.array(counts, pa.int64(), mask=~(valid | no_nan))


def _per_file(leaf: RawLeaf, file_ids: np.ndarray, n: int) -> RawLeaf:
    """File statistics from row-group statistics: min of mins, sum of counts; a side is unknown
    if any row group that holds values has it unknown (a null or NaN count if any is
    unknown)."""
    counts = np.bincount(file_ids, minlength=n)

    def any_per_file(flags: np.ndarray) -> np.ndarray:
        return np.bincount(file_ids, weights=flags, minlength=n) > 0

    def unknown(bounds: pa.Array) -> pa.Array:
        return pa.array(any_per_file(~leaf.empty & np.asarray(
            bounds.is_null().to_numpy(zero_copy_only=False))))

    def count_sum(per_group: pa.Array) -> pa.Array:
        """Per file, the sum of its row groups' counts; unknown if one of them is."""
        total = group_aggregate({"c": per_group}, [("c", "sum")], file_ids, n)["c_sum"]
        unknown = any_per_file(np.asarray(per_group.is_null().to_numpy(zero_copy_only=False)))
        return pc.if_else(pa.array(unknown), pa.scalar(None, pa.int64()), pc.fill_null(total, 0))

    all_empty = np.bincount(file_ids, weights=leaf.empty, minlength=n) == counts
    out = group_aggregate({"lo": leaf.mins, "hi": leaf.maxs}, [("lo", "min"), ("hi", "max")],
                          file_ids, n)
    if out is None:
        mins, maxs = pa.nulls(n, leaf.mins.type), pa.nulls(n, leaf.maxs.type)
    else:
        mins, maxs = out["lo_min"], out["hi_max"]
    mins = pc.if_else(unknown(leaf.mins), pa.scalar(None, mins.type), mins)
    maxs = pc.if_else(unknown(leaf.maxs), pa.scalar(None, maxs.type), maxs)
    nans = None if leaf.nans is None else count_sum(leaf.nans)
    return RawLeaf(mins, maxs, count_sum(leaf.nulls), all_empty, nans)


def build_stats(node: Node, leaf_stats: dict[int, LeafStats], n: int) -> LeafStats:
    """The statistics of ``node`` (a column or a subtree of one) from its leaves' (by Parquet
    column index), laid out as ``collect_stats`` lays them out."""
    if node.kind == "leaf":
        return leaf_stats[node.plan.index].renamed(node.name)
    if node.kind == "struct":
        return struct_stats(node.name, [build_stats(c, leaf_stats, n) for c in node.children], n)
    if node.kind == "list":
        inner = build_stats(node.children[0], leaf_stats, n)
        return element_stats(node.name, inner, node.element_type, "list", n)
    inner = struct_stats(node.name, [build_stats(c, leaf_stats, n) for c in node.children], n)
    return element_stats(node.name, inner, inner.min_field.type, "map", n)


def _dictionary_known(footers: Sequence[FileFooter], leaf_path: str | None) -> np.ndarray | None:
    """Per row group of ``footers`` (in order): was the leaf's dictionary read as a value set?
    None when no footer read it. A set is known only when every data page uses the
    dictionary and no value failed to convert (a float NaN does), so then the chunk holds no
    NaN."""
    if leaf_path is None or not any(leaf_path in f.dictionaries for f in footers):
        return None
    return np.array([values is not None for f in footers
                     for values in f.dictionaries.get(leaf_path) or [None] * len(f.num_rows)],
                    bool)


def group_stats(footers: Sequence[FileFooter], granularity: str
                ) -> tuple[list[LeafStats], np.ndarray, np.ndarray]:
    """Top-level statistics of files that share one schema (``footer.key``).

    Returns ``(top-level LeafStats, num_records, row_group)`` with one entry per row group
    (``granularity="row_group"``, files in order) or per file (``"file"``; ``row_group`` is
    then empty); a row count of -1 is unknown.

    Impossible statistics are unknown (:mod:`.trust`): a chunk whose counts or bounds cannot
    be, or that reading its Bloom filter or dictionary page found so, has unknown bounds and
    counts; its Bloom filter and dictionary are dropped from its footer and the reason kept
    there (``FileFooter.untrusted``), for one warning per file. A row group whose row count
    its value counts contradict, and every row group of a file whose row count contradicts
    theirs, has an unknown row count. Each chunk is judged on its own bytes alone: another
    file never changes a file's statistics.
    """
    plan = footers[0].plan
    per_file = np.array([len(f.num_rows) for f in footers], np.int64)
    file_ids = np.repeat(np.arange(len(footers), dtype=np.int64), per_file)
    num_rows = np.concatenate([f.num_rows for f in footers]).astype(np.int64)
    by_file = granularity == "file"
    n = len(footers) if by_file else len(num_rows)
    bases = np.cumsum([0] + [f.data.size for f in footers[:-1]])
    data = np.concatenate([f.data for f in footers])
    rows = np.concatenate([f.rows for f in footers])
    width = len(plan.leaves)
    shift = np.repeat(bases, [len(f.rows) for f in footers])
    rows[:, _thrift.S_MIN_START] += shift
    rows[:, _thrift.S_MAX_START] += shift
    group_rows = np.repeat(num_rows, width)
    untrusted, contradicted = trust.impossible_counts(rows, group_rows,
                                                      np.tile(plan.repeated, len(num_rows)))
    counted = untrusted.copy()  # (for the reasons: the counts are why)
    first_group = np.cumsum(per_file) - per_file
    for f, base in zip(footers, first_group.tolist()):
        for r, j in f.untrusted:
            untrusted[(base + r) * width + j] = True
    rows_known = ~contradicted.reshape(len(num_rows), width).any(axis=1) if width else \
        np.ones(len(num_rows), bool)
    rows_known &= np.repeat([f.rows_untrusted is None for f in footers], per_file).astype(bool)
    leaf_stats = {}
    judged = {}  # leaf j -> (mins, maxs, bounds impossible)
    for j, leaf in enumerate(plan.leaves):
        mine = rows[j::width]
        mins, maxs = leaf_bounds(leaf, data, mine)
        order = impossible_bounds(leaf, data, mine, mins, maxs)
        judged[j] = (mins, maxs, order)
        bad = untrusted[j::width] | order
        untrusted[j::width] = bad
        proven = _dictionary_known(footers, plan.paths.get(leaf.index)) \
            if leaf.kind == FLOAT else None
        raw = _raw_leaf(leaf, data, mine, proven, (mins, maxs), bad)
        if by_file:
            raw = _per_file(raw, file_ids, n)
        field = pa.field(leaf.name, leaf.target)
        counted_field = pa.field(leaf.name, pa.int64())
        leaf_stats[leaf.index] = LeafStats(field, raw.mins, raw.maxs, counted_field, raw.nulls,
                                           None if raw.nans is None else counted_field,
                                           raw.nans)
    _note_untrusted(footers, untrusted, counted, judged, rows, group_rows, first_group)
    top = [build_stats(node, leaf_stats, n) for node in plan.nodes]
    if by_file:
        num_records = np.bincount(file_ids, weights=num_rows, minlength=n).astype(np.int64)
        unknown = np.bincount(file_ids, weights=~rows_known, minlength=n) > 0
        num_records[unknown] = -1
        row_group = np.zeros(0, np.int32)
    else:
        num_records = np.where(rows_known, num_rows, -1)
        starts = np.repeat(np.cumsum(per_file) - per_file, per_file)
        row_group = (np.arange(len(num_rows)) - starts).astype(np.int32)
    return top, num_records, row_group


def _note_untrusted(footers: Sequence[FileFooter], untrusted: np.ndarray, counted: np.ndarray,
                    judged: dict, rows: np.ndarray, group_rows: np.ndarray,
                    first_group: np.ndarray) -> None:
    """Record in each footer the chunks :func:`group_stats` found impossible, and why."""
    plan = footers[0].plan
    width = len(plan.leaves)
    owner = np.repeat(np.arange(len(footers)), [len(f.num_rows) for f in footers])
    for i in np.flatnonzero(untrusted).tolist():
        g, j = divmod(i, width)
        f = footers[owner[g]]
        r = g - int(first_group[owner[g]])
        if (r, j) in f.untrusted:
            continue
        mins, maxs, order = judged[j]
        leaf = plan.leaves[j]
        f.distrust(r, j, trust.describe(leaf.path or leaf.name, leaf.kind == BOOL, leaf.repeated,
                                        rows[i], int(group_rows[i]), mins[g].as_py(),
                                        maxs[g].as_py(), bool(order[g]) and not counted[i]))
