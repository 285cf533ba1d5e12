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
  files). A column of another type (e.g. ``variant``) is left out. A bound serialized in a
  promoted column's older type (int before long, float before double) is read in that type.
- ``num_records`` is the file's ``record_count``. With position or equality delete files the
  file's live rows are fewer: every statistic then describes a superset of the live rows,
  which is still sound for pruning (nothing the file holds matches, so nothing left in it does);
  ``metadata["iceberg"]["delete_files"]`` counts them.

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
  no bound and a zero float partition ``[-0.0, +0.0]``.
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
with the full schema. A table name the catalog does not have is a :class:`StatsError`.
``metadata["iceberg"]`` records the table, snapshot and schema ids, and the delete-file count;
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
import math
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import StatsError
from prune_engine.stats import layout
from prune_engine.stats.from_arrow import LeafStats, stats_table, struct_stats
from prune_engine.stats.manifests import (LOWER_BOUNDS, NAN_COUNTS, NULL_COUNTS, UPPER_BOUNDS,
                                          DataFiles, MapColumn, data_files, manifest_list)
from prune_engine.stats.table import StatsTable

__all__ = ["stats_from_iceberg"]

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


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
    if isinstance(t, it.DecimalType):
        return pa.decimal128(t.precision, t.scale)
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


def _partition_value(t, raw):
    """A partition value as Avro gave it (an int, float, bool, str or bytes), as the Python
    value the Arrow type of :func:`_arrow_type` takes (None: no usable value)."""
    from pyiceberg import types as it

    if isinstance(t, it.DecimalType) and isinstance(raw, bytes):
        return decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-t.scale)
    return _normalize(t, raw)


# ------------------------------------------------------------------------------ bounds

#: fixed-width Arrow types: the byte widths a serialized bound may have (a promoted column's
#: older type is the narrower one), each with the numpy type it is read in
_WIDTHS = {pa.bool_(): {1: "u1"}, pa.int32(): {4: "<i4"}, pa.date32(): {4: "<i4"},
           pa.int64(): {8: "<i8", 4: "<i4"}, pa.float32(): {4: "<f4"},
           pa.float64(): {8: "<f8", 4: "<f4"}}


def _fixed_width(raw: pa.Array, widths: dict[int, str], dtype) -> tuple[np.ndarray, np.ndarray]:
    """Values of a binary array whose entries are little-endian numbers of ``widths`` bytes,
    as ``dtype``; and where an entry had one of those widths."""
    offsets = np.frombuffer(raw.buffers()[1], np.int32)[raw.offset:raw.offset + len(raw) + 1]
    data = np.frombuffer(raw.buffers()[2], np.uint8) if raw.buffers()[2] is not None \
        else np.zeros(0, np.uint8)
    sizes = np.diff(offsets)
    values = np.zeros(len(raw), dtype)
    valid = np.zeros(len(raw), bool)
    for width, source in widths.items():
        hit = sizes == width
        if hit.any():
            idx = offsets[:-1][hit, None] + np.arange(width)
            values[hit] = np.ascontiguousarray(data[idx]).view(source).ravel()
            valid |= hit
    return values, valid


def _decode_bounds(t, atype: pa.DataType, raw: pa.Array) -> pa.Array:
    """Serialized Iceberg bounds (a binary array) as an array of ``atype``; an entry that
    cannot be read in the column's type is null (unknown)."""
    from pyiceberg import types as it

    base = atype if not pa.types.is_temporal(atype) or pa.types.is_date(atype) else pa.int64()
    if base in _WIDTHS:
        dtype = {pa.bool_(): bool, pa.int32(): np.int32, pa.date32(): np.int32,
                 pa.int64(): np.int64, pa.float32(): np.float32,
                 pa.float64(): np.float64}[base]
        values, valid = _fixed_width(raw, _WIDTHS[base], np.dtype(dtype) if dtype is not bool
                                     else np.uint8)
        if dtype is bool:
            values = values != 0
        if pa.types.is_floating(atype):
            valid &= ~np.isnan(values)
        out = pa.array(values, mask=~valid)
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
        limit = 10 ** t.precision
        unscaled = [int.from_bytes(b, "big", signed=True) if b else None for b in items]
        return pa.array([decimal.Decimal(u).scaleb(-t.scale) if u is not None and abs(u) < limit
                         else None for u in unscaled], atype)
    if pa.types.is_fixed_size_binary(atype):
        return pa.array([b if b is not None and len(b) == atype.byte_width else None
                         for b in items], atype)
    return pa.nulls(len(raw), atype)


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


def _entries(column: MapColumn, field_id: int) -> tuple[np.ndarray, Any]:
    """The files and values of one column's entries in a manifest map."""
    hit = column.key == field_id
    value = column.value.filter(pa.array(hit)) if isinstance(column.value, pa.Array) \
        else column.value[hit]
    return column.file[hit], value


def _counts(column: MapColumn, field_id: int, n: int) -> pa.Array:
    files, value = _entries(column, field_id)
    return _scatter(pa.array(value, mask=value < 0), files, n)


def _fill(leaf: _Leaf, files: DataFiles) -> None:
    """The statistics of ``leaf`` in every file, from the manifests' maps."""
    from pyiceberg import types as it

    n = len(files.paths)
    leaf.nulls = _counts(files.maps[NULL_COUNTS], leaf.field_id, n)
    if leaf.nans is not None:
        leaf.nans = _counts(files.maps[NAN_COUNTS], leaf.field_id, n)
    if isinstance(leaf.itype, it.UUIDType):
        return
    for which, bound in ((LOWER_BOUNDS, "mins"), (UPPER_BOUNDS, "maxs")):
        where, raw = _entries(files.maps[which], leaf.field_id)
        if leaf.byte_array:  # bounds of several row groups: PyIceberg may have skipped one
            single = files.split_counts[where] == 1
            where, raw = where[single], raw.filter(pa.array(single))
        values = _decode_bounds(leaf.itype, leaf.atype, raw)
        if leaf.is_float:  # a zero bound may be either zero (module doc)
            zero = pc.equal(values, 0)
            values = pc.if_else(zero, pa.scalar(-0.0 if bound == "mins" else 0.0, leaf.atype),
                                values)
        setattr(leaf, bound, _scatter(values, where, n))


def _identity(leaf: _Leaf, files: np.ndarray, values: list, records: np.ndarray) -> None:
    """Exact statistics of an identity-partition column in ``files``: every row holds the
    file's partition value (a null partition: every row is null; NaN: no bound)."""
    n = len(leaf.mins)
    lows, highs, nulls = [None] * n, [None] * n, [None] * n
    hit = np.zeros(n, bool)
    hit[files] = True
    for i, value in zip(files.tolist(), values):
        if value is None:
            nulls[i] = int(records[i])
            continue
        nulls[i] = 0
        value = _normalize(leaf.itype, value)
        if value is not None and leaf.is_float and value == 0:
            lows[i], highs[i] = -0.0, 0.0
        else:
            lows[i] = highs[i] = value
    mask = pa.array(hit)
    leaf.mins = pc.if_else(mask, pa.array(lows, leaf.atype), leaf.mins)
    leaf.maxs = pc.if_else(mask, pa.array(highs, leaf.atype), leaf.maxs)
    leaf.nulls = pc.if_else(mask, pa.array(nulls, pa.int64()), leaf.nulls)


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


def _partitions(table, schema, files: DataFiles, leaves: dict[int, _Leaf]) -> dict[str, pa.Array]:
    """``partition_values`` (one typed array per partition field name); sets the identity
    columns' exact statistics on the way."""
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
            name = names.get((spec_id, pos))
            if name is not None:
                columns[name][2][i] = _normalize(columns[name][0], value)
            if pf.source_id in leaves and isinstance(pf.transform, IdentityTransform):
                where, values = identity.setdefault(pf.source_id, ([], []))
                where.append(i)
                values.append(value)
    for source_id, (where, values) in identity.items():
        _identity(leaves[source_id], np.asarray(where, np.int64), values, files.record_count)
    return {name: pa.array(values, atype) for name, (_, atype, values) in columns.items()}


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

        try:
            return table.load_table(name)
        except (NoSuchTableError, NoSuchNamespaceError) as e:
            ident = name if isinstance(name, str) else ".".join(name)
            raise StatsError(f"Iceberg table {ident!r} does not exist in catalog "
                             f"{table.name!r}: {e}", containers=[ident]) from None
    raise StatsError("stats_from_iceberg takes a pyiceberg Table, or a Catalog and name=, not "
                     f"{type(table).__name__}")


def stats_from_iceberg(table, name=None) -> StatsTable:
    """Per-data-file statistics of an Iceberg table's current snapshot, from its manifests.

    ``table`` is a pyiceberg ``Table``, or a pyiceberg ``Catalog`` with ``name`` the table
    identifier (``"db.events"``). The layout is ``collect_stats(..., granularity="file")``'s;
    the mapping and the bound rules are in the module documentation.

    Example::

        from pyiceberg.catalog import load_catalog
        import prune_engine as pe

        stats = pe.stats_from_iceberg(load_catalog("local"), "db.events")
        pe.prune(stats, "user_id IN (7, 9)")
    """
    table = _load(table, name)
    schema = table.schema()
    snapshot = table.current_snapshot()
    files = data_files(table.io, manifest_list(table.io, snapshot) if snapshot else [])
    n = len(files.paths)
    leaves: dict[int, _Leaf] = {}
    plan = _plan(schema.fields, n, leaves)
    for leaf in leaves.values():
        _fill(leaf, files)
    parts = _partitions(table, schema, files, leaves)
    paths = _local_paths(files.paths)
    extra = {}
    if parts:
        extra[layout.PARTITION_VALUES] = pa.StructArray.from_arrays(
            list(parts.values()), names=list(parts)) if n else \
            pa.array([], pa.struct([(k, v.type) for k, v in parts.items()]))
    out = stats_table(paths, files.record_count, _assemble(plan, n), extra=extra,
                      leading={layout.PATH: paths, layout.ROW_GROUP: pa.nulls(n, pa.int32())})
    metadata = {"iceberg": {
        "table": ".".join(table.name()) if hasattr(table, "name") else None,
        "snapshot_id": snapshot.snapshot_id if snapshot is not None else None,
        "schema_id": schema.schema_id, "delete_files": files.delete_files}}
    return StatsTable(out, metadata)
