"""``stats_from_iceberg``: per-data-file statistics of an Iceberg table, from its manifests.

An Iceberg table already records, per data file, what ``collect_stats`` would read from the
footers: row count, null / NaN counts and serialized lower / upper bounds per column field id.
Reading them costs one metadata read (the manifest list and manifests of the current snapshot)
instead of one footer per file. The result has the layout of
``pe.collect_stats(..., granularity="file")``: one row per live data file of the current
snapshot in commit order (data sequence number, then as listed), ``container`` = ``path``,
``row_group`` null.

How the manifests map onto the layout:

- Columns are matched by FIELD ID to the table's current schema: a renamed column keeps its
  statistics; a column a file does not describe (added after the file was written, metrics
  mode ``none``, a writer that recorded nothing) is unknown in that file. Nested structs
  become nested stats structs; leaves inside lists and maps are element fields whose
  statistics are all unknown.
- Types: boolean, int, long, float, double, decimal, date, time (us), timestamp (us, no zone),
  timestamptz (us, ``"UTC"``), the nanosecond timestamps, string, binary, fixed and uuid map to
  ``bool``, ``int32``, ``int64``, ``float32``, ``float64``, ``decimal128``, ``date32``,
  ``time64[us]``, ``timestamp[us]``, ``timestamp[us, tz=UTC]``, ``timestamp[ns(, tz=UTC)]``,
  ``string``, ``binary``, ``fixed_size_binary`` (the types ``collect_stats`` gives the same
  files; Iceberg decimals have at most 38 digits, a wider one would be ``decimal256``). A
  column of another type (e.g. ``variant``) is left out.
- Statistics are read in the type they were WRITTEN in, which the bound's size tells (Iceberg
  bounds are binary, one size per type): after a promotion a 4-byte bound of a ``long`` column
  is the ``int`` it was, of a ``double`` column the ``float`` it was (read as float32, then
  widened exactly: the double a float32 reads as), of a ``timestamp`` / ``timestamp_ns``
  column the ``date`` it was (v3: midnight of that day; a day past the nanosecond range is
  unknown). A decimal's unscaled integer is the same at any precision of the same scale
  (widening keeps the scale). Decimals are exact to their 38 digits: built from the unscaled
  integer, never through a rounding context. A bound of a size the column's types cannot
  have, a boolean byte other than 0 or 1, a decimal of more digits than its precision, or a
  string that is not UTF-8 is unknown.
- A manifest records the table schema it was written under (its ``schema`` metadata): a
  column whose type there is none its current type can be promoted from (the field id was
  another column's: ids reassigned in a corrupt or hand-edited table) is unknown in that
  manifest's files, with a warning, rather than its bytes read as the wrong type.
- ``num_records`` is the file's ``record_count`` (null when not recorded). With position or
  equality delete files the file's live rows are fewer: every statistic then describes a
  superset of the live rows, which is still sound for pruning (nothing the file holds
  matches, so nothing left in it does); ``metadata["iceberg"]`` lists them (below).
- Impossible statistics are unknown, not trusted, with a warning naming the file: a null or
  NaN count above the record count (or the two together above it), a lower bound above the
  upper bound, a column given twice in one file's map, bounds beside a null count that says
  every row is null (the null count is then unknown).

Bound rules (every bound must be TRUE; anything doubtful becomes unknown):

- Floats: a NaN bound is unknown; a lower bound of ``+0.0`` widens to ``-0.0`` and an upper
  bound of ``-0.0`` to ``+0.0`` (``-0.0 == 0.0``: PyIceberg takes the min of the row groups'
  zeros in whichever order they come). ``nan_count`` is the file's NaN count when recorded
  (PyIceberg records none: unknown, so a float file may hold NaN).
- Strings, binary and fixed: the Iceberg default metrics mode ``truncate(16)`` keeps a prefix as
  the lower bound and a prefix with its last character incremented as the upper bound (PyIceberg
  does so by code point, and records no upper bound when nothing can be incremented): both
  true bounds. But PyIceberg builds a file's bounds from the Parquet writer's row-group
  statistics and silently skips a row group whose min/max the writer dropped (pyarrow drops
  them for a value longer than 4 KiB), so a file of several row groups can get bounds that
  exclude its own values. Byte-array bounds are therefore used only for files that the
  manifest shows to have exactly one row group (``split_offsets`` of length 1); otherwise
  they are unknown.
- uuid bounds are unknown (some writers compared UUIDs as signed numbers); their null counts
  are kept.
- Identity partitions: every row of the file holds the partition value, so the source column
  gets exact ``min = max`` statistics from it (null count = ``num_records`` for a null partition,
  else 0), replacing the file's (possibly truncated or missing) bounds; a NaN partition gives
  no bound and a zero float partition ``[-0.0, +0.0]``. A partition value that cannot be read
  as the column's type (a string that is not UTF-8, a value of another Avro type, a decimal
  of too many digits) leaves that column unknown in that file (and its ``partition_values``
  entry null) with a warning: never a replaced or guessed "exact" value.
- Transform partitions (``day(ts)``, ``bucket(16, id)``, ``truncate(4, s)``, ...): their
  values are not column values, so they give no column statistics. They are listed in
  ``partition_values`` under the partition field's name with the transform's result type
  (``day`` a date32, ``year`` / ``month`` / ``hour`` / ``bucket`` an int32 ordinal,
  ``truncate`` and identity the source type); a predicate on the source column uses that
  column's own bounds.

``path``: a ``file:`` URI (``file:///...`` as PyIceberg writes for a local warehouse, or
``file:/...``) becomes the local path PyIceberg itself opens (the URI's path, not
percent-decoded, as PyIceberg's ``PyArrowFileIO`` reads it), so ``pe.collect_stats`` and
pyarrow open it; other locations (``s3://``, plain paths, ...) are kept as the catalog gives
them.

A table without a current snapshot (nothing ever appended) gives an empty statistics table
with the full schema. Every failure to read the table is a :class:`StatsError` with a
one-line message naming what failed: the manifest list or manifest (missing, unreadable,
corrupt: see :mod:`.manifests` and :mod:`.avro`), the table's metadata JSON (anything else
that fails while reading the snapshot), or the table and catalog (a name the catalog does not
have, metadata the catalog cannot load or parse).

Manifests whose statistics maps cannot be matched to the schema without doubt (see
:mod:`.manifests`; e.g. key and value field ids that are not the spec's) leave those
statistics unknown in their files, with one warning per manifest saying why;
``metadata["iceberg"]["unused_statistics"]`` lists them, one entry per manifest and map:
``{"manifest": str, "why": str, "files": [the data files' paths, as the path column]}``.

``metadata["iceberg"]`` (JSON values only):

- ``table`` (str), ``snapshot_id`` (int or null), ``schema_id`` (int), ``schema`` (the
  table's schema, Iceberg's JSON with field ids: what a reader of the files names and types
  their columns by, :mod:`.snapshot`);
- ``delete_files`` (int): how many live delete files the snapshot has;
- ``deletes``: one dict per live delete file of the snapshot, in manifest-list order:
  ``"path"`` (written as the ``path`` column writes data files: the local path of a
  ``file:`` URI, other locations as given), ``"content"`` (``"position"`` or
  ``"equality"``), ``"file_format"`` (lower case, as the manifest names it: ``"parquet"``,
  ``"avro"``, ``"orc"``, ``"puffin"``), ``"record_count"`` (int, or null when not recorded),
  ``"equality_ids"`` (the field ids of the equality columns; equality deletes only),
  ``"referenced_data_file"`` (the one data file a position delete file applies to, as
  ``"path"``; null: it may name any), ``"sequence_number"`` (its data sequence number, or
  null) and ``"spec_id"`` (its partition spec);
- ``unused_statistics`` (above), when there are any.

``metadata["files"]`` is not written (Iceberg records no modification times, which
``update_stats`` and ``pe.scan`` compare).

>>> import tempfile, pyarrow as pa, prune_engine as pe
>>> from pyiceberg.catalog.sql import SqlCatalog
>>> d = tempfile.mkdtemp()
>>> catalog = SqlCatalog("t", uri=f"sqlite:///{d}/c.db", warehouse=f"file://{d}")
>>> catalog.create_namespace("db")
>>> table = catalog.create_table("db.events", schema=pa.schema([("x", pa.int64())]))
>>> table.append(pa.table({"x": [1, 5]}))
>>> table.append(pa.table({"x": [7, None]}))
>>> stats = pe.stats_from_iceberg(catalog, "db.events")
>>> stats.column("min_values").to_pylist(), stats.column("null_count").to_pylist()
([{'x': 1}, {'x': 7}], [{'x': 0}, {'x': 1}])
>>> pe.prune(stats, "x > 6").to_pylist()
[False, True]
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import uuid
import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import PruneEngineError, StatsError
from prune_engine.stats import layout
from prune_engine.stats.avro import stats_error
from prune_engine.stats.from_arrow import LeafStats, stats_table, struct_stats
from prune_engine.stats.manifests import (EQUALITY_DELETES, LOWER_BOUNDS, NAN_COUNTS,
                                          NULL_COUNTS, UNREADABLE, UPPER_BOUNDS, DataFiles,
                                          MapColumn, data_files, manifest_list)
from prune_engine.stats.table import StatsTable

__all__ = ["stats_from_iceberg"]

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_DAY_US = 86_400 * 10**6
_DAY_NS = 86_400 * 10**9
#: the most files the impossible-statistics warnings name one by one (then one summary)
_WARN_FILES = 10


# ------------------------------------------------------------------------------ types


def _arrow_type(t) -> pa.DataType | None:
    """The Arrow type of an Iceberg type (None: a type the statistics leave out)."""
    from pyiceberg import types as it

    primitive = {
        it.BooleanType: pa.bool_(), it.IntegerType: pa.int32(), it.LongType: pa.int64(),
        it.FloatType: pa.float32(), it.DoubleType: pa.float64(), it.DateType: pa.date32(),
        it.TimeType: pa.time64("us"), it.TimestampType: pa.timestamp("us"),
        it.TimestamptzType: pa.timestamp("us", tz="UTC"), it.StringType: pa.string(),
        it.BinaryType: pa.binary(), it.UUIDType: pa.binary(16),
    }
    for cls in (getattr(it, "TimestampNanoType", None), getattr(it, "TimestamptzNanoType", None)):
        if cls is not None:
            primitive[cls] = pa.timestamp("ns", tz="UTC" if "tz" in cls.__name__ else None)
    for cls, arrow in primitive.items():
        if isinstance(t, cls):
            return arrow
    if isinstance(t, it.DecimalType):  # (past 38 digits, not in the spec: decimal256)
        try:
            return (pa.decimal128 if t.precision <= 38 else pa.decimal256)(t.precision,
                                                                         t.scale)
        except (ValueError, TypeError):
            return None
    if isinstance(t, it.FixedType):
        return pa.binary(len(t))
    if isinstance(t, it.StructType):
        fields = [(f.name, _arrow_type(f.field_type)) for f in t.fields]
        return pa.struct([f for f in fields if f[1] is not None])
    if isinstance(t, it.ListType):
        element = _arrow_type(t.element_type)
        return None if element is None else pa.list_(element)
    if isinstance(t, it.MapType):
        key, value = _arrow_type(t.key_type), _arrow_type(t.value_type)
        return None if key is None or value is None else pa.map_(key, value)
    return None


def _normalize(t, value):
    """A decoded Iceberg value (a bound or a partition value) as the Python value the Arrow
    type of :func:`_arrow_type` takes; None for a value that is no usable bound."""
    from pyiceberg import types as it

    if value is None:
        return None
    if isinstance(t, it.DateType) and isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    if isinstance(t, (it.TimestampType, it.TimestamptzType, it.TimeType)) or \
            type(t).__name__.startswith("Timestamp"):
        if isinstance(value, dt.datetime):
            aware = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
            delta = aware - _EPOCH
            micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
            return micros * 1000 if "Nano" in type(t).__name__ else micros
        if isinstance(value, dt.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 \
                + value.microsecond
        return int(value)
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (str, bytes, bool, int, float, decimal.Decimal)):
        return value
    return None


def _decimal(unscaled: int, t) -> decimal.Decimal | None:
    """The decimal ``unscaled * 10**-scale`` of type ``t``, exactly (a digit tuple: no
    context, so no rounding at 28 digits); None when it has more digits than the precision.

    >>> from pyiceberg.types import DecimalType
    >>> str(_decimal(12345678945678901234567890123456, DecimalType(36, 23)))
    '123456789.45678901234567890123456'
    >>> _decimal(10**38, DecimalType(38, 0)) is None
    True
    """
    if abs(unscaled) >= 10 ** t.precision:
        return None
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return decimal.Decimal((int(unscaled < 0), digits, -t.scale))


def _partition_value(t, raw):
    """A partition value as Avro gave it (an int, float, bool, str or bytes; None for a null
    partition), as the Python value the Arrow type of :func:`_arrow_type` takes (a NaN
    stays NaN); ``UNREADABLE`` when it cannot be read as ``t`` (another Avro type, a string
    that is not UTF-8, a decimal of more digits than its precision)."""
    from pyiceberg import types as it

    if raw is None or raw is UNREADABLE:
        return raw
    if isinstance(t, it.DecimalType):
        if not isinstance(raw, bytes):
            return UNREADABLE
        value = _decimal(int.from_bytes(raw, "big", signed=True), t) if raw else None
        return UNREADABLE if value is None else value
    if isinstance(t, it.BooleanType):
        ok = isinstance(raw, bool)
    elif isinstance(t, (it.FloatType, it.DoubleType)):
        ok = isinstance(raw, float)
    elif isinstance(t, it.StringType):
        if isinstance(raw, bytes):  # (PyIceberg promotes binary to string)
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                return UNREADABLE
        ok = isinstance(raw, str)
    elif isinstance(t, it.BinaryType):
        raw = raw.encode("utf-8") if isinstance(raw, str) else raw  # (string promoted)
        ok = isinstance(raw, bytes)
    elif isinstance(t, (it.FixedType, it.UUIDType)):
        ok = isinstance(raw, bytes) and len(raw) == (16 if isinstance(t, it.UUIDType)
                                                     else len(t))
    else:  # the integer types: int, long, date, time, the timestamps, transform ordinals
        ok = isinstance(raw, int) and not isinstance(raw, bool)
        if ok and isinstance(t, (it.IntegerType, it.DateType)):
            ok = -2**31 <= raw < 2**31
    if not ok:
        return UNREADABLE
    if isinstance(raw, float):  # (NaN too: every row of the file is NaN)
        return raw
    return _normalize(t, raw)


# ------------------------------------------------------------------------------ bounds

#: fixed-width Arrow types: per byte width a serialized bound may have (a promoted column's
#: older type is the narrower one), the numpy type it is read in and the factor to the
#: column's unit (a date bound of a column promoted to a timestamp counts days)
_WIDTHS = {pa.bool_(): {1: ("u1", 1)}, pa.int32(): {4: ("<i4", 1)},
           pa.date32(): {4: ("<i4", 1)}, pa.int64(): {8: ("<i8", 1), 4: ("<i4", 1)},
           pa.float32(): {4: ("<f4", 1)}, pa.float64(): {8: ("<f8", 1), 4: ("<f4", 1)},
           pa.time64("us"): {8: ("<i8", 1)},
           pa.timestamp("us"): {8: ("<i8", 1), 4: ("<i4", _DAY_US)},
           pa.timestamp("ns"): {8: ("<i8", 1), 4: ("<i4", _DAY_NS)}}


#: the Arrow storage type of the fixed-width types that are no temporal type
_STORAGE = {pa.int32(): pa.int32(), pa.date32(): pa.int32(), pa.int64(): pa.int64(),
            pa.float32(): pa.float32(), pa.float64(): pa.float64()}


def _fixed_width(raw: pa.Array, widths: dict[int, tuple[str, int]],
                 dtype) -> tuple[np.ndarray, np.ndarray]:
    """Values of a binary array whose entries are little-endian numbers of ``widths`` bytes,
    as ``dtype`` (times the width's factor); and where an entry had one of those widths (and
    its value times the factor fits in 64 bits)."""
    offsets = np.frombuffer(raw.buffers()[1], np.int32)[raw.offset:raw.offset + len(raw) + 1]
    data = np.frombuffer(raw.buffers()[2], np.uint8) if raw.buffers()[2] is not None \
        else np.zeros(0, np.uint8)
    sizes = np.diff(offsets)
    if raw.null_count:
        sizes = np.where(raw.is_valid().to_numpy(zero_copy_only=False), sizes, -1)
    values = np.zeros(len(raw), dtype)
    valid = np.zeros(len(raw), bool)
    for width, (source, factor) in widths.items():
        hit = sizes == width
        if not hit.any():
            continue
        idx = offsets[:-1][hit, None] + np.arange(width)
        read = np.ascontiguousarray(data[idx]).view(source).ravel()
        if factor != 1:  # (days to the column's unit: past 64 bits is unknown)
            read = read.astype(np.int64)
            fits = np.abs(read) <= np.iinfo(np.int64).max // factor
            read = read[fits] * factor
            hit[np.flatnonzero(hit)[~fits]] = False
        values[hit] = read
        valid |= hit
    return values, valid


def _decode_bounds(t, atype: pa.DataType, raw: pa.Array) -> pa.Array:
    """Serialized Iceberg bounds (a binary array) as an array of ``atype``, each read in the
    type it was written in (module doc); an entry that cannot be read is null (unknown)."""
    from pyiceberg import types as it

    base = pa.timestamp(atype.unit) if pa.types.is_timestamp(atype) else atype
    if base in _WIDTHS:
        storage = _STORAGE.get(base, pa.int64())  # (time and timestamps: int64)
        dtype = np.dtype(np.uint8) if base == pa.bool_() else storage.to_pandas_dtype()
        values, valid = _fixed_width(raw, _WIDTHS[base], dtype)
        if base == pa.bool_():
            valid &= values <= 1  # (0 or 1: any other byte is no boolean)
            values = values != 0
        if pa.types.is_floating(atype):
            valid &= ~np.isnan(values)
        out = pa.array(values, pa.bool_() if base == pa.bool_() else storage, mask=~valid)
        return out.view(atype) if out.type != atype else out
    if pa.types.is_string(atype):
        try:
            return raw.cast(pa.string())
        except pa.ArrowInvalid:  # invalid UTF-8 somewhere: those bounds are unknown
            return pa.array([_utf8(b) for b in raw.to_pylist()], pa.string())
    if pa.types.is_binary(atype):
        return raw
    items = raw.to_pylist()
    if isinstance(t, it.DecimalType):
        return _decimals([int.from_bytes(b, "big", signed=True) if b else None for b in items],
                         t, atype)
    if pa.types.is_fixed_size_binary(atype):
        return pa.array([b if b is not None and len(b) == atype.byte_width else None
                         for b in items], atype)
    return pa.nulls(len(raw), atype)


def _decimals(unscaled: list, t, atype: pa.DataType) -> pa.Array:
    """Unscaled integers (None: unknown) as an exact ``decimal128`` / ``decimal256`` array of
    ``atype``: each integer's two's-complement bytes are the array's buffer (no rounding
    anywhere); one of more digits than the precision is null."""
    width = atype.byte_width
    limit = 10 ** t.precision
    valid = np.array([u is not None and abs(u) < limit for u in unscaled], bool)
    data = b"".join((u if ok else 0).to_bytes(width, "little", signed=True)
                    for u, ok in zip(unscaled, valid.tolist()))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())
    return pa.Array.from_buffers(atype, len(unscaled), [bitmap, pa.py_buffer(data)],
                                 null_count=int((~valid).sum()))


def _utf8(raw: bytes | None) -> str | None:
    try:
        return None if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scatter(values: pa.Array, files: np.ndarray, n: int) -> pa.Array:
    """``values[j]`` at container ``files[j]``; null elsewhere."""
    index = np.full(n, -1, np.int64)
    index[files] = np.arange(len(files))
    return values.take(pa.array(index, mask=index < 0))


# ------------------------------------------------------------------------------ columns


@dataclass
class _Leaf:
    """One primitive column of the current schema and its statistics, one entry per file
    (null arrays until :func:`_fill` sets them)."""

    field_id: int
    name: str
    itype: Any
    atype: pa.DataType
    mins: pa.Array
    maxs: pa.Array
    nulls: pa.Array
    nans: pa.Array | None

    @property
    def is_float(self) -> bool:
        return pa.types.is_floating(self.atype)

    @property
    def byte_array(self) -> bool:
        return pa.types.is_string(self.atype) or pa.types.is_binary(self.atype) \
            or pa.types.is_fixed_size_binary(self.atype)

    def stats(self) -> LeafStats:
        nan_field = pa.field(self.name, pa.int64()) if self.nans is not None else None
        return LeafStats(pa.field(self.name, self.atype), self.mins, self.maxs,
                         pa.field(self.name, pa.int64()), self.nulls, nan_field, self.nans)


def _unknown(name: str, atype: pa.DataType, n: int) -> LeafStats:
    """All-unknown statistics of a column of Arrow type ``atype`` (lists and maps: elements)."""
    if pa.types.is_struct(atype):
        return struct_stats(name, [_unknown(f.name, f.type, n) for f in atype], n)
    if pa.types.is_map(atype):
        entry = pa.struct([pa.field("key", atype.key_type), pa.field("value", atype.item_type)])
        return _unknown(name, entry, n).renamed(name, "map")
    if pa.types.is_list(atype):
        return _unknown(name, atype.value_type, n).renamed(name, "list")
    nan_field = nans = None
    if pa.types.is_floating(atype):
        nan_field, nans = pa.field(name, pa.int64()), pa.nulls(n, pa.int64())
    return LeafStats(pa.field(name, atype), pa.nulls(n, atype), pa.nulls(n, atype),
                     pa.field(name, pa.int64()), pa.nulls(n, pa.int64()), nan_field, nans)


def _plan(fields, n: int, leaves: dict[int, _Leaf]) -> list:
    """The stats tree of ``fields``: per field a :class:`_Leaf` (filled later), a list
    ``(name, children)`` for a struct, or a finished all-unknown :class:`LeafStats`."""
    from pyiceberg import types as it

    out = []
    for f in fields:
        t = f.field_type
        atype = _arrow_type(t)
        if atype is None:
            continue
        if isinstance(t, it.StructType):
            out.append((f.name, _plan(t.fields, n, leaves)))
        elif isinstance(t, (it.ListType, it.MapType)):
            out.append(_unknown(f.name, atype, n))
        else:
            unknown = _unknown(f.name, atype, n)
            leaf = _Leaf(f.field_id, f.name, t, atype, unknown.mins, unknown.maxs,
                         unknown.nulls, unknown.nans)
            leaves[f.field_id] = leaf
            out.append(leaf)
    return out


def _assemble(plan: list, n: int) -> list[LeafStats]:
    out = []
    for item in plan:
        if isinstance(item, _Leaf):
            out.append(item.stats())
        elif isinstance(item, tuple):
            out.append(struct_stats(item[0], _assemble(item[1], n), n))
        else:
            out.append(item)
    return out


# ------------------------------------------------------------------------------ files


def _entries(column: MapColumn, field_id: int, doubled: np.ndarray) -> tuple[np.ndarray, Any]:
    """The files and values of one column's entries in a manifest map; a file that gives the
    column twice (no telling which entry is right) is marked in ``doubled`` and left out."""
    hit = column.key == field_id
    files = column.file[hit]
    value = column.value.filter(pa.array(hit)) if isinstance(column.value, pa.Array) \
        else column.value[hit]
    if len(files) > 1:
        seen, count = np.unique(files, return_counts=True)
        twice = seen[count > 1]
        if len(twice):
            doubled[twice] = True
            once = ~np.isin(files, twice)
            files = files[once]
            value = value.filter(pa.array(once)) if isinstance(value, pa.Array) else value[once]
    return files, value


def _counts(column: MapColumn, field_id: int, n: int, doubled: np.ndarray) -> pa.Array:
    files, value = _entries(column, field_id, doubled)
    return _scatter(pa.array(value, mask=value < 0), files, n)


def _fill(leaf: _Leaf, files: DataFiles, odd: np.ndarray) -> None:
    """The statistics of ``leaf`` in every file, from the manifests' maps; impossible ones
    (module doc) are unknown, and their files marked in ``odd``."""
    from pyiceberg import types as it

    n = len(files.paths)
    doubled = np.zeros(n, bool)
    leaf.nulls = _counts(files.maps[NULL_COUNTS], leaf.field_id, n, doubled)
    if leaf.nans is not None:
        leaf.nans = _counts(files.maps[NAN_COUNTS], leaf.field_id, n, doubled)
    if not isinstance(leaf.itype, it.UUIDType):
        for which, bound in ((LOWER_BOUNDS, "mins"), (UPPER_BOUNDS, "maxs")):
            where, raw = _entries(files.maps[which], leaf.field_id, doubled)
            if leaf.byte_array:  # bounds of several row groups: PyIceberg may have skipped one
                single = files.split_counts[where] == 1
                where, raw = where[single], raw.filter(pa.array(single))
            values = _decode_bounds(leaf.itype, leaf.atype, raw)
            if leaf.is_float:  # a zero bound may be either zero (module doc)
                zero = pc.equal(values, 0)
                values = pc.if_else(zero, pa.scalar(-0.0 if bound == "mins" else 0.0,
                                                    leaf.atype), values)
            setattr(leaf, bound, _scatter(values, where, n))
    foreign = [m for m, types in enumerate(files.written) if types is not None and
               leaf.field_id in types and not _promotable(types[leaf.field_id], leaf.itype)]
    if foreign:  # the field id was another column when the manifest was written
        doubled |= np.isin(files.manifest, foreign)
        for bound in ("mins", "maxs"):
            setattr(leaf, bound, pc.if_else(pa.array(doubled), pa.nulls(n, leaf.atype),
                                            getattr(leaf, bound)))
    _drop_impossible(leaf, files.record_count, doubled, odd)


#: the promotions the Iceberg spec allows (v3: date to the timestamps), and PyIceberg's own
#: (string and binary both ways, fixed[16] to uuid); decimals keep their scale and widen
_PROMOTIONS = {("int", "long"), ("float", "double"), ("date", "timestamp"),
               ("date", "timestamp_ns"), ("string", "binary"), ("binary", "string"),
               ("fixed[16]", "uuid")}


def _type_text(text: str) -> str:
    return "".join(text.split()).lower()


def _promotable(written: str, t) -> bool:
    """Whether a column whose type was ``written`` (an Iceberg type text) when a manifest was
    written can have the type ``t`` now (the same, or one of :data:`_PROMOTIONS`).

    >>> from pyiceberg.types import DecimalType, LongType, StringType
    >>> _promotable("int", LongType()), _promotable("long", StringType())
    (True, False)
    >>> _promotable("decimal(9, 2)", DecimalType(38, 2))
    True
    >>> _promotable("decimal(9,2)", DecimalType(38, 3))  # (the scale never changes)
    False
    """
    old, new = _type_text(written), _type_text(str(t))
    if old == new or old == "unknown" or (old, new) in _PROMOTIONS:
        return True
    old_decimal = re.fullmatch(r"decimal\((\d+),(\d+)\)", old)
    new_decimal = re.fullmatch(r"decimal\((\d+),(\d+)\)", new)
    if old_decimal and new_decimal:
        (p, s), (q, r) = (map(int, m.groups()) for m in (old_decimal, new_decimal))
        return s == r and p <= q
    return False


def _known(array: pa.Array) -> np.ndarray:
    return array.is_valid().to_numpy(zero_copy_only=False)


def _ints(array: pa.Array) -> np.ndarray:
    return array.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _drop_impossible(leaf: _Leaf, records: np.ndarray, doubled: np.ndarray,
                     odd: np.ndarray) -> None:
    """Statistics that contradict each other (module doc) become unknown; their files are
    marked in ``odd`` (for one warning each)."""
    rows = records >= 0
    nulls, known_nulls = _ints(leaf.nulls), _known(leaf.nulls)
    bad_nulls = known_nulls & rows & (nulls > records)
    if leaf.nans is not None:
        nans, known_nans = _ints(leaf.nans), _known(leaf.nans)
        bad_nans = known_nans & rows & ((nans > records) |
                                        (known_nulls & (nans + nulls > records)))
        bad_nulls |= bad_nans & known_nulls & (nans + nulls > records)
    else:
        bad_nans = np.zeros(len(records), bool)
    both = _known(leaf.mins) & _known(leaf.maxs)
    crossed = both & pc.fill_null(pc.greater(leaf.mins, leaf.maxs), False) \
        .to_numpy(zero_copy_only=False)
    # bounds beside "every row is null": one of them is wrong; the bounds keep more
    bounded = _known(leaf.mins) | _known(leaf.maxs)
    bad_nulls |= known_nulls & rows & bounded & (nulls == records) & (records > 0)
    bad_bounds = crossed | doubled
    bad_nulls |= doubled
    bad_nans |= doubled
    if bad_bounds.any():
        mask = pa.array(bad_bounds)
        leaf.mins = pc.if_else(mask, pa.nulls(len(mask), leaf.atype), leaf.mins)
        leaf.maxs = pc.if_else(mask, pa.nulls(len(mask), leaf.atype), leaf.maxs)
    if bad_nulls.any():
        leaf.nulls = pc.if_else(pa.array(bad_nulls), pa.nulls(len(records), pa.int64()),
                                leaf.nulls)
    if leaf.nans is not None and bad_nans.any():
        leaf.nans = pc.if_else(pa.array(bad_nans), pa.nulls(len(records), pa.int64()),
                               leaf.nans)
    odd |= bad_bounds | bad_nulls | bad_nans


def _identity(leaf: _Leaf, files: np.ndarray, values: list, records: np.ndarray) -> None:
    """Exact statistics of an identity-partition column in ``files`` (values from
    :func:`_partition_value`): every row holds the file's partition value (a null partition:
    every row is null; NaN: every row is NaN, no bound; a value that cannot be read: the
    column is unknown in that file)."""
    n = len(leaf.mins)
    lows, highs, nulls, nans = [None] * n, [None] * n, [None] * n, [None] * n
    hit = np.zeros(n, bool)
    hit[files] = True
    for i, value in zip(files.tolist(), values):
        rows = int(records[i]) if records[i] >= 0 else None
        if value is UNREADABLE:
            continue
        if value is None:
            nulls[i], nans[i] = rows, 0
        elif isinstance(value, float) and math.isnan(value):
            nulls[i], nans[i] = 0, rows
        else:
            nulls[i], nans[i] = 0, 0
            if leaf.is_float and value == 0:
                lows[i], highs[i] = -0.0, 0.0
            else:
                lows[i] = highs[i] = value
    mask = pa.array(hit)
    leaf.mins = pc.if_else(mask, _array(lows, leaf.atype), leaf.mins)
    leaf.maxs = pc.if_else(mask, _array(highs, leaf.atype), leaf.maxs)
    leaf.nulls = pc.if_else(mask, pa.array(nulls, pa.int64()), leaf.nulls)
    if leaf.nans is not None:
        leaf.nans = pc.if_else(mask, pa.array(nans, pa.int64()), leaf.nans)


#: a local ``file:`` URI's scheme and authority (``file:///p``, ``file://localhost/p``,
#: ``file:/p``), which PyIceberg's ``PyArrowFileIO`` strips to open the file
_FILE_URI = r"^file:(?://(?:localhost)?)?/"


def _local_paths(locations: pa.Array) -> pa.Array:
    """The paths to open the data files at: a local ``file:`` URI's path (not percent-decoded,
    as PyIceberg opens it); other locations as the catalog gives them."""
    locations = locations.cast(pa.string())
    local = pc.match_substring_regex(locations, r"^file:(///|//localhost/|/[^/]|/$)")
    paths = pc.if_else(local, pc.replace_substring_regex(locations, _FILE_URI, "/"), locations)
    odd = pc.and_(local, pc.match_substring_regex(locations, r"[?#]"))
    if pc.any(odd).as_py():  # a query or fragment: urlparse, as PyIceberg
        return pa.array([urlparse(u).path if o else p for u, p, o in
                         zip(locations.to_pylist(), paths.to_pylist(), odd.to_pylist())],
                        pa.string())
    return paths


def _partitions(table, schema, files: DataFiles, leaves: dict[int, _Leaf],
                odd: np.ndarray) -> dict[str, pa.Array]:
    """``partition_values`` (one typed array per partition field name); sets the identity
    columns' exact statistics on the way. A value that cannot be read is null there (and
    its file marked in ``odd``)."""
    from pyiceberg.transforms import IdentityTransform

    specs = table.specs()
    n = len(files.paths)
    names: dict[tuple[int, int], str] = {}  # (spec id, position) -> column name
    columns: dict[str, tuple[Any, pa.DataType, list]] = {}
    spec_ids = [table.spec().spec_id] + sorted(set(files.spec_ids.tolist()))
    for spec_id in dict.fromkeys(spec_ids):
        spec = specs.get(spec_id)
        if spec is None:
            continue
        for pos, pf in enumerate(spec.fields):
            try:
                rtype = pf.transform.result_type(schema.find_type(pf.source_id))
            except Exception:  # noqa: BLE001 - a source column dropped from the schema
                continue
            atype = _arrow_type(rtype)
            if atype is None:
                continue
            name = pf.name
            if name in columns and columns[name][1] != atype:
                name = f"{pf.name}__spec{spec_id}"
            columns.setdefault(name, (rtype, atype, [None] * n))
            names[(spec_id, pos)] = name
    identity: dict[int, tuple[list, list]] = {}
    for i, (spec_id, record) in enumerate(zip(files.spec_ids.tolist(), files.partitions)):
        spec = specs.get(spec_id)
        if spec is None or not record:
            continue
        for pos, pf in enumerate(spec.fields):
            key = pf.field_id if pf.field_id in record else pf.name
            if key not in record:
                continue
            try:
                rtype = pf.transform.result_type(schema.find_type(pf.source_id))
            except Exception:  # noqa: BLE001 - a source column dropped from the schema
                continue
            value = _partition_value(rtype, record[key])
            if value is UNREADABLE:
                odd[i] = True
            name = names.get((spec_id, pos))
            if name is not None and value is not UNREADABLE:
                columns[name][2][i] = value
            if pf.source_id in leaves and isinstance(pf.transform, IdentityTransform):
                where, values = identity.setdefault(pf.source_id, ([], []))
                where.append(i)
                values.append(value)
    for source_id, (where, values) in identity.items():
        _identity(leaves[source_id], np.asarray(where, np.int64), values, files.record_count)
    return {name: _array(values, atype) for name, (_, atype, values) in columns.items()}


def _array(values: list, atype: pa.DataType) -> pa.Array:
    """``values`` as an array of ``atype``; a value that does not fit it is null."""
    try:
        return pa.array(values, atype)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        out = []
        for v in values:
            try:
                out.append(pa.scalar(v, atype).as_py())
            except (pa.ArrowException, OverflowError, TypeError, ValueError):
                out.append(None)
        return pa.array(out, atype)


# ------------------------------------------------------------------------------ entry point


def _load(table, name):
    try:
        from pyiceberg.catalog import Catalog
        from pyiceberg.table import Table
    except ImportError:  # pragma: no cover - pyiceberg is a dev dependency
        raise StatsError("stats_from_iceberg needs pyiceberg (pip install pyiceberg)") from None
    if isinstance(table, Table):
        if name is not None:
            raise StatsError("name= is for a catalog; a pyiceberg Table was given")
        return table
    if isinstance(table, Catalog):
        if name is None:
            raise StatsError("a catalog was given: name= must name the table, e.g. 'db.events'")
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

        ident = name if isinstance(name, str) else ".".join(map(str, name))
        where = f"Iceberg table {ident!r} of catalog {table.name!r}"
        try:
            return table.load_table(name)
        except (NoSuchTableError, NoSuchNamespaceError) as e:
            raise stats_error(where, f"it does not exist ({e})") from None
        except Exception as e:  # noqa: BLE001 - metadata the catalog cannot read or parse
            file = _metadata_file(e)
            if file is None:
                raise stats_error(where, f"its metadata cannot be loaded: "
                                         f"{type(e).__name__}: {e}") from None
            raise stats_error(file, f"the metadata of {where} cannot be loaded: "
                                    f"{type(e).__name__}: {e}") from None
    raise StatsError("stats_from_iceberg takes a pyiceberg Table, or a Catalog and name=, not "
                     f"{type(table).__name__}")


def _metadata_file(error: BaseException) -> str | None:
    """The metadata file a catalog was reading when it raised ``error``, when a frame of the
    traceback names it (PyIceberg's catalogs hold it as ``metadata_location``, its reader as
    ``input_file``); None otherwise. For the message only."""
    found = None
    tb = error.__traceback__
    while tb is not None:
        names = tb.tb_frame.f_locals
        location = names.get("metadata_location")
        if isinstance(location, str):
            found = location
        location = getattr(names.get("input_file"), "location", None)
        if isinstance(location, str):
            found = location
        tb = tb.tb_next
    return found


def stats_from_iceberg(table, name=None) -> StatsTable:
    """Per-data-file statistics of an Iceberg table's current snapshot, from its manifests.

    ``table`` is a pyiceberg ``Table``, or a pyiceberg ``Catalog`` with ``name`` the table
    identifier (``"db.events"``). The layout is ``collect_stats(..., granularity="file")``'s;
    the mapping, the bound rules and ``metadata["iceberg"]`` are in the module
    documentation. Every failure to read the table is a :class:`StatsError` naming the file.

    Example::

        from pyiceberg.catalog import load_catalog
        import prune_engine as pe

        stats = pe.stats_from_iceberg(load_catalog("local"), "db.events")
        pe.prune(stats, "user_id IN (7, 9)")
    """
    table = _load(table, name)
    try:
        return _stats(table)
    except PruneEngineError:
        raise
    except Exception as e:  # noqa: BLE001 - never a third-party exception (module doc)
        where = getattr(table, "metadata_location", None) or "the Iceberg table"
        raise stats_error(where, f"cannot read the Iceberg table's statistics: "
                                 f"{type(e).__name__}: {e}") from None


def _stats(table) -> StatsTable:
    schema = table.schema()
    snapshot = table.current_snapshot()
    files = data_files(table.io, manifest_list(table.io, snapshot) if snapshot else [])
    n = len(files.paths)
    leaves: dict[int, _Leaf] = {}
    plan = _plan(schema.fields, n, leaves)
    odd = np.zeros(n, bool)
    for leaf in leaves.values():
        _fill(leaf, files, odd)
    parts = _partitions(table, schema, files, leaves, odd)
    paths = _local_paths(files.paths)
    _warn(paths, odd, files.unused)
    extra = {}
    if parts:
        extra[layout.PARTITION_VALUES] = pa.StructArray.from_arrays(
            list(parts.values()), names=list(parts)) if n else \
            pa.array([], pa.struct([(k, v.type) for k, v in parts.items()]))
    records = pa.array(files.record_count, pa.int64(), mask=files.record_count < 0)
    out = stats_table(paths, records, _assemble(plan, n), extra=extra,
                      leading={layout.PATH: paths, layout.ROW_GROUP: pa.nulls(n, pa.int32())})
    meta: dict[str, Any] = {
        "table": ".".join(table.name()) if hasattr(table, "name") else None,
        "snapshot_id": snapshot.snapshot_id if snapshot is not None else None,
        "schema_id": schema.schema_id, "schema": json.loads(schema.model_dump_json()),
        "delete_files": files.delete_files, "deletes": _deletes(files)}
    if files.unused:
        where = {m: i for i, m in enumerate(files.manifest_paths)}
        meta["unused_statistics"] = [
            {"manifest": m, "why": why,
             "files": paths.filter(pa.array(files.source == where[m])).to_pylist()}
            for m, why in files.unused]
    return StatsTable(out, {"iceberg": meta})


def _deletes(files: DataFiles) -> list[dict]:
    """``metadata["iceberg"]["deletes"]`` (module doc)."""
    if not files.deletes:
        return []
    located = _local_paths(pa.array([d.path for d in files.deletes] +
                                    [d.referenced_data_file for d in files.deletes],
                                    pa.string())).to_pylist()
    k = len(files.deletes)
    out = []
    for d, path, referenced in zip(files.deletes, located[:k], located[k:]):
        entry = {"path": path,
                 "content": "equality" if d.content == EQUALITY_DELETES else "position",
                 "file_format": d.file_format, "record_count": d.record_count,
                 "referenced_data_file": referenced, "sequence_number": d.sequence_number,
                 "spec_id": d.spec_id}
        if d.content == EQUALITY_DELETES:
            entry["equality_ids"] = list(d.equality_ids)
        out.append(entry)
    return out


def _warn(paths: pa.Array, odd: np.ndarray, unused: list[tuple[str, str]]) -> None:
    """One warning per data file whose statistics were impossible or unreadable (up to
    :data:`_WARN_FILES`, then one for the rest), and one per manifest whose statistics maps
    could not be matched."""
    bad = np.flatnonzero(odd)
    names = paths.take(pa.array(bad[:_WARN_FILES])).to_pylist() if len(bad) else []
    for name in names:
        warnings.warn(f"prune_engine: {name}: its Iceberg statistics are impossible or "
                      "unreadable in part; those are left unknown", stacklevel=4)
    if len(bad) > _WARN_FILES:
        warnings.warn(f"prune_engine: {len(bad) - _WARN_FILES} more data files have Iceberg "
                      "statistics that are impossible or unreadable in part; those are left "
                      "unknown", stacklevel=4)
    why: dict[str, list[str]] = {}
    for manifest, text in unused:
        why.setdefault(manifest, []).append(text)
    for manifest, texts in why.items():
        warnings.warn(f"prune_engine: {manifest}: statistics left unused, unknown in its "
                      f"files: {'; '.join(texts)}", stacklevel=4)
