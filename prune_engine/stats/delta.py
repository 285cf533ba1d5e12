"""``stats_from_delta``: per-file statistics of a Delta table, from its transaction log.

A Delta table records every data file's row count, min / max values and null counts in its
log (the ``add`` actions). Reading them costs one metadata read, not one footer per file. The
result is laid out as ``collect_stats(..., granularity="file")`` lays out the same files: one
row per data file of the version, ``container`` and ``path`` the table root joined with the
file's URL-decoded relative path, ``row_group`` null, ``min_values`` / ``max_values`` /
``null_count`` structs mirroring the table schema (its Arrow types, as pyarrow reads the
files), typed ``partition_values``, and the partition columns as exact ``min = max``
statistics.

The log's statistics are turned into TRUE bounds (a wrong bound prunes a file that holds a
matching row); what Delta writers store, and what is done with it:

- Columns without statistics (past ``delta.dataSkippingNumIndexedCols``, binary columns,
  lists and maps) and files without any are unknown (null), never 0 or empty. Lists and maps
  get element fields (as ``collect_stats`` makes them) whose statistics are all unknown: a
  Delta null count of an array counts null rows, not null elements.
- Timestamps are stored to the millisecond, cut down (delta-rs and Spark): the min is a lower
  bound, the max is widened to the last instant of its millisecond.
- Strings: writers cut long values (delta-rs at 64 bytes, the max then incremented; Spark at
  ``delta.dataSkippingStringPrefixLength`` UTF-16 units, default 32, the max followed by a
  tie-breaker that is not above every continuation in UTF-8 order). A min is a prefix, so a
  lower bound. A max that may be cut (at least half the prefix length in code points) keeps
  only what every writer copies verbatim, all but its last character, and the last of those
  that can be is incremented: above every string with that prefix. Shorter maxes are exact.
- Decimals travel through float64 (delta-rs writes them as JSON numbers, and parses JSON
  numbers as float64; a value past int64 comes back clamped). Up to 15 digits of precision
  this is exact; above, a bound is widened by its float64 error and two units of its scale,
  and a bound whose unscaled value reaches 2**62 (maybe clamped) is unknown.
- Floats: a NaN bound is unknown; a zero min becomes ``-0.0`` and a zero max ``+0.0``; a
  float32 bound is widened by one float32 step (decimal text parsed through float64 may land
  one step off). ``nan_count`` stays unknown: the log has none.
- Binary columns: bounds unknown (Delta writers store none; the JSON form is undefined).
- ``num_records`` counts a file's rows before any deletion vector: an upper bound of its live
  rows, and null counts are too. Both are sound: fewer rows can only match less.
- Column mapping (``delta.columnMapping.mode`` ``name`` or ``id``): the log keys statistics by
  physical column names; each column of the current schema finds its statistics by the
  physical name its schema field records, so renamed columns keep theirs.

>>> import tempfile, pyarrow as pa, prune_engine as pe
>>> from deltalake import write_deltalake
>>> root = tempfile.mkdtemp()
>>> write_deltalake(root, pa.table({"x": [1, 5], "day": ["mon", "mon"]}), partition_by=["day"])
>>> write_deltalake(root, pa.table({"x": [9, 7], "day": ["tue", "tue"]}), partition_by=["day"],
...                 mode="append")
>>> stats = pe.stats_from_delta(root)
>>> sorted(zip(stats.column("min_values").to_pylist(), stats.column("max_values").to_pylist()),
...        key=str)
[({'x': 1, 'day': 'mon'}, {'x': 5, 'day': 'mon'}), ({'x': 7, 'day': 'tue'}, {'x': 9, 'day': 'tue'})]
>>> pe.prune(stats, "x > 6").to_pylist().count(True), stats.metadata["delta"]["version"]
(1, 1)
"""

from __future__ import annotations

import decimal
import os
from typing import Sequence
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import StatsError
from prune_engine.expr.like import successor
from prune_engine.stats import layout
from prune_engine.stats.collect import partition_stats
from prune_engine.stats.from_arrow import (
    LeafStats, column_stats, is_collection, stats_table, struct_stats,
)
from prune_engine.stats.table import StatsTable

__all__ = ["stats_from_delta"]

#: field-metadata key under which a column-mapped Delta schema records a column's physical name
PHYSICAL_NAME = b"delta.columnMapping.physicalName"
#: Spark's default prefix length (UTF-16 units) of string statistics
DEFAULT_STRING_PREFIX = 32
#: up to this many decimal digits, a decimal survives float64 exactly
EXACT_DECIMAL_DIGITS = 15

_MS_MINUS_ONE = {"s": 0, "ms": 0, "us": 999, "ns": 999_999}


# ------------------------------------------------------------------------------ opening


def _open(source: str, version):
    try:
        from deltalake import DeltaTable
    except ImportError:  # pragma: no cover - deltalake is installed with the dev tools
        raise StatsError("stats_from_delta needs the deltalake package "
                         "(pip install deltalake)") from None
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)
                                or version < 0):
        raise StatsError(f"version must be a non-negative int (a table version), "
                         f"not {version!r}")
    try:
        latest = DeltaTable(source)
    except Exception as e:  # deltalake raises TableNotFoundError, DeltaError, OSError
        raise StatsError(f"{source}: not a Delta table (no readable _delta_log): "
                         f"{_first_line(e)}", containers=[source]) from None
    if version is None or version == latest.version():
        return latest
    try:
        return DeltaTable(source, version=version)
    except Exception as e:
        raise StatsError(f"{source}: the Delta table has no loadable version {version}; its "
                         f"newest is {latest.version()} (old versions vanish when their log "
                         f"files are cleaned up): {_first_line(e)}", containers=[source]) from None


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _file_path(root: str, relative: str) -> str:
    """Where a file of the log lives, as ``collect_stats`` names a listed file: the root
    joined with the URL-decoded relative path (an absolute URI stays absolute)."""
    decoded = unquote(relative)
    if "://" in relative or relative.startswith("file:"):
        url = urlparse(relative)
        return unquote(url.path) if url.scheme == "file" else decoded
    if "://" in root:
        return root.rstrip("/") + "/" + decoded
    return os.path.join(root, decoded)


# ------------------------------------------------------------------------------ bounds


def _string_max(maxs: pa.Array, cut_at: int) -> pa.Array:
    """Maxes of at least ``cut_at`` code points may be cut: made upper bounds of every value
    they may stand for (see the module doc)."""
    long = pc.fill_null(pc.greater_equal(pc.utf8_length(maxs), cut_at), False)
    if not pc.any(long).as_py():
        return maxs
    values = maxs.to_pylist()
    for i in np.flatnonzero(np.asarray(long.to_numpy(zero_copy_only=False))):
        values[i] = successor(values[i][:-1])
    return pa.array(values, maxs.type)


def _float_bound(bound: pa.Array, lower: bool) -> pa.Array:
    typ = bound.type
    raw = np.asarray(bound.to_numpy(zero_copy_only=False),
                     dtype=np.float32 if typ == pa.float32() else np.float64)
    unknown = np.asarray(bound.is_null().to_numpy(zero_copy_only=False)) | np.isnan(raw)
    if typ == pa.float32():
        with np.errstate(invalid="ignore"):
            raw = np.nextafter(raw, np.float32(-np.inf if lower else np.inf))
    raw = np.where(raw == 0, -0.0 if lower else 0.0, raw).astype(raw.dtype)
    return pa.array(np.where(unknown, 0, raw).astype(raw.dtype), typ, mask=unknown)


def _timestamp_max(maxs: pa.Array) -> pa.Array:
    """A max cut to the millisecond, widened to the last instant of that millisecond."""
    step = _MS_MINUS_ONE[maxs.type.unit]
    if not step:
        return maxs
    ints = np.asarray(pc.fill_null(maxs.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
    unknown = np.asarray(maxs.is_null().to_numpy(zero_copy_only=False)) | \
        (ints > np.iinfo(np.int64).max - step)  # no room to widen: unknown
    widened = np.where(unknown, 0, ints) + step
    return pa.array(widened, pa.int64(), mask=unknown).cast(maxs.type)


def _decimal_bound(bound: pa.Array, lower: bool) -> pa.Array:
    """A decimal that went through float64: exact up to 15 digits, else widened by the
    float64 error (generously, 2**-50 of the value) and two units of the scale."""
    typ = bound.type
    if typ.precision <= EXACT_DECIMAL_DIGITS:
        return bound
    limit = 10 ** typ.precision - 1
    out = []
    for value in bound.to_pylist():
        if value is None:
            out.append(None)
            continue
        unscaled = int(value.scaleb(typ.scale))
        if abs(unscaled) >= 2 ** 62:  # maybe clamped to int64 on the way: unknown
            out.append(None)
            continue
        margin = (abs(unscaled) >> 50) + 2
        unscaled = max(-limit, unscaled - margin) if lower else min(limit, unscaled + margin)
        out.append(decimal.Decimal(unscaled).scaleb(-typ.scale))
    return pa.array(out, typ)


def _bounds(mins: pa.Array, maxs: pa.Array, cut_at: int) -> tuple[pa.Array, pa.Array]:
    """The log's min and max of one leaf made true bounds of its Arrow type."""
    typ = mins.type
    if pa.types.is_floating(typ):
        return _float_bound(mins, True), _float_bound(maxs, False)
    if pa.types.is_timestamp(typ):
        return mins, _timestamp_max(maxs)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return mins, _string_max(maxs, cut_at)
    if pa.types.is_decimal(typ):
        return _decimal_bound(mins, True), _decimal_bound(maxs, False)
    if pa.types.is_integer(typ) or pa.types.is_boolean(typ) or pa.types.is_date(typ):
        return mins, maxs
    n = len(mins)  # binary and anything else: no trusted bounds
    return pa.nulls(n, typ), pa.nulls(n, typ)


# ------------------------------------------------------------------------------ columns


def _child(parent: pa.Array | None, name: str) -> pa.Array | None:
    """The child ``name`` of a struct array of the log's statistics, None when absent. A
    null parent makes the child null."""
    if parent is None or not pa.types.is_struct(parent.type) \
            or parent.type.get_field_index(name) < 0:
        return None
    child = parent.field(name)
    if parent.null_count:
        child = pc.if_else(parent.is_valid(), child, pa.scalar(None, child.type))
    return child


def _stat_name(field: pa.Field) -> str:
    meta = field.metadata or {}
    return meta[PHYSICAL_NAME].decode() if PHYSICAL_NAME in meta else field.name


def _as_type(values: pa.Array | None, typ: pa.DataType, n: int) -> pa.Array:
    if values is None or pa.types.is_null(values.type):
        return pa.nulls(n, typ)
    if values.type == typ:
        return values
    try:
        return values.cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return pa.nulls(n, typ)


def _unknown_elements(field: pa.Field, n: int) -> LeafStats:
    """Element statistics of a list or map column, all unknown, shaped as ``collect_stats``
    shapes them."""
    shaped = column_stats(field.name, pa.array([], field.type), np.zeros(0, np.int64), n)
    return LeafStats(shaped.min_field, pa.nulls(n, shaped.mins.type),
                     pa.nulls(n, shaped.maxs.type), shaped.null_field,
                     pa.nulls(n, shaped.nulls.type), shaped.nan_field,
                     None if shaped.nans is None else pa.nulls(n, shaped.nans.type))


def _field_stats(field: pa.Field, mins, maxs, nulls, n: int, cut_at: int) -> LeafStats:
    name, typ = field.name, field.type
    if is_collection(typ):
        return _unknown_elements(field, n)
    key = _stat_name(field)
    mins, maxs, nulls = _child(mins, key), _child(maxs, key), _child(nulls, key)
    if pa.types.is_struct(typ):
        children = [_field_stats(typ.field(i), mins, maxs, nulls, n, cut_at)
                    for i in range(typ.num_fields)]
        return struct_stats(name, children, n)
    low, high = _bounds(_as_type(mins, typ, n), _as_type(maxs, typ, n), cut_at)
    return LeafStats(pa.field(name, typ), low, high, pa.field(name, pa.int64()),
                     _as_type(nulls, pa.int64(), n))


def _partition_values(raw: pa.Array | None, typ: pa.DataType, n: int
                      ) -> tuple[pa.Array, np.ndarray]:
    """A partition column's values as ``typ``, and where they are known: a value the log has
    but that does not read as ``typ`` (or a column the log lacks) is unknown, not a null
    partition, which would claim that every row of the file is NULL.

    >>> values, known = _partition_values(pa.array(["2024-01-02", "x", None]), pa.date32(), 3)
    >>> values.to_pylist()[0], known.tolist()
    (datetime.date(2024, 1, 2), [True, False, True])
    """
    if raw is None:
        return pa.nulls(n, typ), np.zeros(n, bool)
    was_null = np.asarray(raw.is_null().to_numpy(zero_copy_only=False))
    try:
        values = raw if raw.type == typ else raw.cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):  # value by value
        values = pa.array([_cast_one(v, typ) for v in raw.to_pylist()], typ)
    is_null = np.asarray(values.is_null().to_numpy(zero_copy_only=False))
    return values, ~(is_null & ~was_null)


def _cast_one(value, typ: pa.DataType):
    try:
        return pa.scalar(value).cast(typ).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None


def _column(actions: pa.Table, name: str) -> pa.Array | None:
    if name not in actions.column_names:
        return None
    return actions.column(name).combine_chunks()


def _prefix_length(configuration: dict) -> int:
    try:
        return int(configuration.get("delta.dataSkippingStringPrefixLength",
                                     DEFAULT_STRING_PREFIX))
    except (TypeError, ValueError):
        return DEFAULT_STRING_PREFIX


# ------------------------------------------------------------------------------ entry point


def stats_from_delta(path, version: int | None = None) -> StatsTable:
    """Per-file statistics of the Delta table at ``path`` (a directory or a URI deltalake
    opens), at ``version`` (default: the newest), read from its transaction log.

    One row per data file, laid out as ``collect_stats(files, granularity="file")`` lays out
    those files (see the module doc for how the log's values become true bounds);
    ``metadata["delta"]`` records the table root and the version read. A path that is no
    Delta table, or a version the log does not have, is a :class:`StatsError`.

    >>> import tempfile, pyarrow as pa, prune_engine as pe
    >>> from deltalake import write_deltalake
    >>> root = tempfile.mkdtemp()
    >>> write_deltalake(root, pa.table({"s": ["apple", "kiwi"]}))
    >>> write_deltalake(root, pa.table({"s": ["pear"]}), mode="append")
    >>> pe.stats_from_delta(root, version=0).column("max_values").to_pylist()
    [{'s': 'kiwi'}]
    """
    root = os.fspath(path)
    table = _open(root, version)
    schema = pa.schema(table.schema().to_arrow())
    meta = table.metadata()
    partition_names: Sequence[str] = list(meta.partition_columns)
    cut_at = max(1, _prefix_length(dict(meta.configuration or {})) // 2)
    actions = pa.table(table.get_add_actions(flatten=False))
    n = actions.num_rows
    paths = [_file_path(root, p) for p in actions.column("path").to_pylist()]
    num_records = _as_type(_column(actions, "num_records"), pa.int64(), n)
    mins, maxs, nulls = (_column(actions, c) for c in ("min", "max", "null_count"))
    top = [_field_stats(f, mins, maxs, nulls, n, cut_at) for f in schema
           if f.name not in partition_names]
    extra = {}
    if partition_names:
        raw = _column(actions, "partition")
        counts = np.asarray(pc.fill_null(num_records, 0).to_numpy(zero_copy_only=False))
        unknown_count = np.asarray(num_records.is_null().to_numpy(zero_copy_only=False))
        values = {}
        for name in partition_names:
            field = schema.field(name)
            found = _child(raw, name)
            values[name], known = _partition_values(
                found if found is not None else _child(raw, _stat_name(field)), field.type, n)
            is_null = np.asarray(values[name].is_null().to_numpy(zero_copy_only=False))
            top.append(partition_stats(name, values[name], known & ~(is_null & unknown_count),
                                       counts))
        extra[layout.PARTITION_VALUES] = pa.StructArray.from_arrays(
            list(values.values()), names=list(values)) if n else \
            pa.array([], pa.struct([(k, v.type) for k, v in values.items()]))
    out = stats_table(paths, num_records, top, extra=extra, leading={
        layout.PATH: pa.array(paths, pa.string()), layout.ROW_GROUP: pa.nulls(n, pa.int32())})
    return StatsTable(out, {"delta": {"table": root, "version": table.version()}})
