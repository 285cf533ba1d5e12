"""Statistics from Parquet footers alone: no data page is read.

Each column chunk's footer statistics are raw *physical* values (``min_raw`` / ``max_raw``);
their meaning comes from the logical type. This module turns them into true bounds of the
column's Arrow type (the type ``pyarrow.parquet`` reads the column as):

- ``INT32`` / ``INT64``: signed, or unsigned (``UINT_64`` above 2**63 comes back negative and is
  reinterpreted), decimals (unscaled), dates, times and timestamps of every unit; the zone is
  the one of the Arrow schema stored in the file, else ``"UTC"`` when ``isAdjustedToUTC``.
- ``BYTE_ARRAY`` / ``FIXED_LEN_BYTE_ARRAY``: strings and binaries as they are (a truncated min
  and an incremented max, as parquet-java writes, are still bounds), decimals as big-endian
  two's complement of any width.
- ``FLOAT`` / ``DOUBLE``: a min of ``+0.0`` may hide a ``-0.0``, so it widens to ``-0.0``; a max of
  ``-0.0`` widens to ``+0.0``; a NaN bound is unknown (parquet-java writes a NaN max when
  the chunk holds NaN; its min is still a bound). ``nan_count`` stays
  unknown (pyarrow does not expose a footer NaN count).
- ``INT96``, ``Float16``, chunks without statistics, and bounds pyarrow reports as unreliable
  (deprecated sort order) are unknown; string bounds from writers with PARQUET-251
  (parquet-mr before 1.8.0) are dropped.
- A chunk whose null count equals its value count is all-null (its null count is kept).
- Leaves inside lists and maps become element statistics; a leaf's null count there counts
  every missing element slot (null or empty lists too), an upper bound of the null elements.

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> buf = io.BytesIO()
>>> pq.write_table(pa.table({"x": [3, 1, None]}), buf, row_group_size=2)
>>> footer = read_footer(pa.BufferReader(buf.getvalue()), "mem")
>>> top, num_records, _ = group_stats([footer], "row_group")
>>> top[0].mins.to_pylist(), top[0].nulls.to_pylist(), num_records.tolist()
([1, None], [0, 1], [2, 1])
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from prune_engine.errors import StatsError
from prune_engine.stats.from_arrow import (
    LeafStats,
    element_stats,
    group_aggregate,
    struct_stats,
)

__all__ = ["read_footer", "group_stats", "FileFooter"]

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
    scale: int = 0  # decimals


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
    """Per distinct file schema: the stats tree and the selected leaves."""

    nodes: list[Node]
    leaves: list[LeafPlan]
    known: list[str]  # every column name a ``columns=`` selection may use, in this file
    schema: pa.Schema  # the file's Arrow schema


@dataclass
class FileFooter:
    """The raw statistics of one file, flat and row-group major: entry ``r * L + j`` is leaf
    ``j`` (of ``L = len(plan.leaves)``) in row group ``r``."""

    path: str
    key: tuple
    plan: FooterPlan
    num_rows: list[int]
    mins: list
    maxs: list
    nulls: list
    empty: list


# ------------------------------------------------------------------------------ plans


def _value_type(typ: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(typ):
        return _value_type(typ.value_type)
    if isinstance(typ, pa.BaseExtensionType):
        return _value_type(typ.storage_type)
    return typ


_UNITS = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}


def _leaf_plan(index: int, name: str, column, target: pa.DataType) -> LeafPlan:
    """Decide how the physical statistics of ``column`` (a ColumnSchema) become ``target``."""
    physical = column.physical_type
    logical = json.loads(column.logical_type.to_json())
    ltype = logical.get("Type")
    converted = column.converted_type
    if pa.types.is_null(target):
        return LeafPlan(index, name, UNKNOWN, target, None)
    if ltype == "Decimal" or converted == "DECIMAL":
        kind = DEC_INT if physical in ("INT32", "INT64") else DEC_BYTES
        return LeafPlan(index, name, kind, target, None, scale=column.scale)
    if physical == "BOOLEAN":
        return LeafPlan(index, name, BOOL, target, pa.bool_())
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
        elif ltype == "Time" or converted in ("TIME_MILLIS", "TIME_MICROS"):
            unit = _UNITS.get(logical.get("timeUnit"), "ms" if converted == "TIME_MILLIS"
                              else "us")
            via = pa.time32(unit) if unit == "ms" else pa.time64(unit)
        elif ltype == "Date" or converted == "DATE":
            via = pa.date32()
        elif pa.types.is_duration(target):
            via = target
        kind = UINT if unsigned else INT
        return LeafPlan(index, name, kind, target, via)
    if physical in ("FLOAT", "DOUBLE"):
        return LeafPlan(index, name, FLOAT, target, pa.float64())
    if physical == "BYTE_ARRAY" or (physical == "FIXED_LEN_BYTE_ARRAY" and ltype != "Float16"):
        return LeafPlan(index, name, BYTES, target, pa.binary())
    return LeafPlan(index, name, UNKNOWN, target, None)  # INT96, Float16, ...


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
        if (pa.types.is_list(typ) or pa.types.is_large_list(typ)
                or pa.types.is_fixed_size_list(typ) or pa.types.is_list_view(typ)
                or pa.types.is_large_list_view(typ)):
            return Node(f.name, "list", children=[walk(typ.value_field)],
                        element_type=typ.value_type)
        index = next(counter, None)
        if index is None:
            raise StatsError("the Parquet schema has fewer leaf columns than its Arrow schema")
        target = _value_type(typ)
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


def _plan(metadata: pq.FileMetaData, columns: tuple[str, ...] | None) -> tuple[tuple, FooterPlan]:
    arrow_bytes = (metadata.metadata or {}).get(b"ARROW:schema")
    # str() starts with the object's address: the schema text is the rest
    key = (str(metadata.schema).partition("\n")[2], arrow_bytes, columns)
    plan = _PLANS.get(key)
    if plan is None:
        try:
            schema = metadata.schema.to_arrow_schema()
        except (pa.ArrowException, ValueError) as e:
            raise StatsError(f"cannot derive an Arrow schema from the Parquet schema: {e}") \
                from None
        every = _schema_nodes(schema, metadata.schema)
        nodes = _select(every, columns)
        plan = FooterPlan(nodes, _leaves(nodes), known_columns(every), schema)
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


def read_footer(source, path: str, columns: tuple[str, ...] | None = None,
                filesystem=None) -> FileFooter:
    """Read one file's footer and its raw per-row-group statistics (raises pyarrow/OS errors).

    ``source`` is what ``pyarrow.parquet.read_metadata`` accepts; ``path`` names the file in
    the result.
    """
    metadata = pq.read_metadata(source, filesystem=filesystem)
    key, plan = _plan(metadata, columns)
    leaves = plan.leaves
    drop_bytes = bad_string_stats(metadata.created_by)
    columns = [(leaf.index, leaf.kind != UNKNOWN and not (drop_bytes and leaf.kind == BYTES))
               for leaf in leaves]
    # flat lists, row-group major: entry r * len(leaves) + j is leaf j of row group r
    mins: list = []
    maxs: list = []
    nulls: list = []
    empty: list = []
    add_min, add_max, add_null, add_empty = mins.append, maxs.append, nulls.append, empty.append
    num_rows = []
    for r in range(metadata.num_row_groups):
        group = metadata.row_group(r)
        num_rows.append(group.num_rows)
        for index, bounds in columns:
            chunk = group.column(index)
            stats = chunk.statistics
            lo = hi = count = None
            if stats is not None:
                if stats.has_null_count:
                    count = stats.null_count
                if bounds and stats.has_min_max:
                    lo, hi = stats.min_raw, stats.max_raw
            add_min(lo)
            add_max(hi)
            add_null(count)
            add_empty(count is not None and count == chunk.num_values)
    return FileFooter(path, key, plan, num_rows, mins, maxs, nulls, empty)


# ------------------------------------------------------------------------------ conversion


def _decimals(values: list, scale: int, target: pa.DataType) -> pa.Array:
    """Unscaled integers (None = unknown) as a decimal array of ``target``."""
    n = len(values)
    valid = [v is not None and -(10**76) < v < 10**76 for v in values]
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


def _bytes(values: list, target: pa.DataType, lower: bool) -> pa.Array:
    binary = pa.array(values, pa.binary())
    try:
        return binary.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if not (pa.types.is_string(target) or pa.types.is_large_string(target)
                or pa.types.is_string_view(target)):
            raise
    # a bound cut inside a UTF-8 sequence: a prefix of a min is still a lower bound; an
    # invalid max is dropped
    fixed = []
    for v in values:
        if v is None:
            fixed.append(None)
            continue
        try:
            v.decode("utf-8")
            fixed.append(v)
        except UnicodeDecodeError:
            fixed.append(_valid_utf8_prefix(v) if lower else None)
    return pa.array(fixed, pa.binary()).cast(target)


def _bounds(plan: LeafPlan, values: list, lower: bool) -> pa.Array:
    """One bound per row group, in the leaf's Arrow type; null = unknown."""
    n = len(values)
    kind, target = plan.kind, plan.target
    try:
        if kind == UNKNOWN:
            return pa.nulls(n, target)
        if kind == BOOL:
            return pa.array(values, pa.bool_()).cast(target)
        if kind in (INT, UINT):
            ints = pa.array(values, pa.int64())
            if kind == UINT:
                mask = ints.is_null()
                raw = ints.fill_null(0).to_numpy().view(np.uint64)
                if pa.types.is_integer(target) and target.bit_width <= 32:
                    raw = raw & np.uint64(0xFFFFFFFF)
                ints = pa.array(raw, pa.uint64(), mask=mask.to_numpy(zero_copy_only=False))
                return ints.cast(target)
            via = plan.via
            if pa.types.is_date32(via) or pa.types.is_time32(via):
                ints = ints.cast(pa.int32())
            return ints.cast(via).cast(target)
        if kind == DEC_INT:
            return _decimals(values, plan.scale, target)
        if kind == DEC_BYTES:
            ints = [None if v is None else int.from_bytes(v, "big", signed=True) for v in values]
            return _decimals(ints, plan.scale, target)
        if kind == FLOAT:
            raw = np.array([np.nan if v is None else v for v in values], np.float64)
            raw = np.where(raw == 0, -0.0 if lower else 0.0, raw)
            return pa.array(raw, pa.float64(), mask=np.isnan(raw)).cast(target)
        if kind == BYTES:
            return _bytes(values, target, lower)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
        pass  # a value this type cannot hold exactly: unknown
    return pa.nulls(n, target)


@dataclass
class RawLeaf:
    """One leaf's statistics over containers: bounds, null counts, and proven emptiness."""

    mins: pa.Array
    maxs: pa.Array
    nulls: pa.Array
    empty: np.ndarray  # no non-null value at all (bounds null for that reason)


def _raw_leaf(plan: LeafPlan, flat: dict[str, list], j: int, width: int) -> RawLeaf:
    def gather(attr):
        return flat[attr][j::width]

    mins, maxs = _bounds(plan, gather("mins"), True), _bounds(plan, gather("maxs"), False)
    empty = np.array(gather("empty"), dtype=bool)
    return RawLeaf(mins, maxs, pa.array(gather("nulls"), pa.int64()), empty)


def _per_file(leaf: RawLeaf, file_ids: np.ndarray, n: int) -> RawLeaf:
    """File statistics from row-group statistics: min of mins, sum of counts; unknown if any
    row group that holds values has unknown bounds (or any null count is unknown)."""
    unknown = ~leaf.empty & np.asarray(leaf.mins.is_null().to_numpy(zero_copy_only=False))
    unknown |= ~leaf.empty & np.asarray(leaf.maxs.is_null().to_numpy(zero_copy_only=False))
    counts = np.bincount(file_ids, minlength=n)
    any_unknown = np.bincount(file_ids, weights=unknown, minlength=n) > 0
    null_unknown = np.bincount(file_ids, weights=np.asarray(
        leaf.nulls.is_null().to_numpy(zero_copy_only=False)), minlength=n) > 0
    all_empty = np.bincount(file_ids, weights=leaf.empty, minlength=n) == counts
    out = group_aggregate({"lo": leaf.mins, "hi": leaf.maxs, "nc": leaf.nulls},
                          [("lo", "min"), ("hi", "max"),
                           ("nc", "sum", pc.ScalarAggregateOptions(min_count=0))],
                          file_ids, n)
    if out is None:
        mins, maxs = pa.nulls(n, leaf.mins.type), pa.nulls(n, leaf.maxs.type)
        nc = group_aggregate({"nc": leaf.nulls}, [("nc", "sum")], file_ids, n)["nc_sum"]
    else:
        mins, maxs, nc = out["lo_min"], out["hi_max"], out["nc_sum"]
    drop = pa.array(any_unknown)
    mins = pc.if_else(drop, pa.scalar(None, mins.type), mins)
    maxs = pc.if_else(drop, pa.scalar(None, maxs.type), maxs)
    nc = pc.if_else(pa.array(null_unknown), pa.scalar(None, pa.int64()), pc.fill_null(nc, 0))
    return RawLeaf(mins, maxs, nc, all_empty)


def _build(node: Node, leaf_stats: dict[int, LeafStats], n: int) -> LeafStats:
    if node.kind == "leaf":
        return leaf_stats[node.plan.index].renamed(node.name)
    if node.kind == "struct":
        return struct_stats(node.name, [_build(c, leaf_stats, n) for c in node.children], n)
    if node.kind == "list":
        inner = _build(node.children[0], leaf_stats, n)
        return element_stats(node.name, inner, node.element_type, "list", n)
    inner = struct_stats(node.name, [_build(c, leaf_stats, n) for c in node.children], n)
    return element_stats(node.name, inner, inner.min_field.type, "map", n)


def group_stats(footers: Sequence[FileFooter], granularity: str
                ) -> tuple[list[LeafStats], np.ndarray, np.ndarray]:
    """Top-level statistics of files that share one schema (``footer.key``).

    Returns ``(top-level LeafStats, num_records, row_group)`` with one entry per row group
    (``granularity="row_group"``, files in order) or per file (``"file"``; ``row_group`` is
    then empty).
    """
    plan = footers[0].plan
    per_file = np.array([len(f.num_rows) for f in footers], np.int64)
    file_ids = np.repeat(np.arange(len(footers), dtype=np.int64), per_file)
    num_rows = np.array([r for f in footers for r in f.num_rows], np.int64)
    by_file = granularity == "file"
    n = len(footers) if by_file else len(num_rows)
    flat: dict[str, list] = {"mins": [], "maxs": [], "nulls": [], "empty": []}
    for f in footers:
        flat["mins"] += f.mins
        flat["maxs"] += f.maxs
        flat["nulls"] += f.nulls
        flat["empty"] += f.empty
    leaf_stats = {}
    width = len(plan.leaves)
    for j, leaf in enumerate(plan.leaves):
        raw = _raw_leaf(leaf, flat, j, width)
        if by_file:
            raw = _per_file(raw, file_ids, n)
        field = pa.field(leaf.name, leaf.target)
        leaf_stats[leaf.index] = LeafStats(field, raw.mins, raw.maxs,
                                           pa.field(leaf.name, pa.int64()), raw.nulls)
    top = [_build(node, leaf_stats, n) for node in plan.nodes]
    if by_file:
        num_records = np.bincount(file_ids, weights=num_rows, minlength=n).astype(np.int64)
        row_group = np.zeros(0, np.int32)
    else:
        num_records = num_rows
        starts = np.repeat(np.cumsum(per_file) - per_file, per_file)
        row_group = (np.arange(len(num_rows)) - starts).astype(np.int32)
    return top, num_records, row_group
