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

import pyarrow as pa

from prune_engine.errors import StatsError
from prune_engine.stats import layout
from prune_engine.stats.from_arrow import LeafStats, stats_table, struct_stats
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


def _decode(t, raw: bytes | None):
    """A serialized Iceberg bound, decoded in the column's type (or the type it was promoted
    from, told by the byte length); None when it cannot be read."""
    from pyiceberg import types as it
    from pyiceberg.conversions import from_bytes

    if raw is None:
        return None
    raw = bytes(raw)
    if isinstance(t, it.LongType) and len(raw) == 4:
        t = it.IntegerType()
    elif isinstance(t, it.DoubleType) and len(raw) == 4:
        t = it.FloatType()
    try:
        return _normalize(t, from_bytes(t, raw))
    except Exception:  # noqa: BLE001 - a bound that cannot be read is an unknown bound
        return None


# ------------------------------------------------------------------------------ columns


@dataclass
class _Leaf:
    """One primitive column of the current schema and its statistics, one entry per file."""

    field_id: int
    name: str
    itype: Any
    atype: pa.DataType
    mins: list
    maxs: list
    nulls: list
    nans: list | None

    @property
    def is_float(self) -> bool:
        return pa.types.is_floating(self.atype)

    @property
    def byte_array(self) -> bool:
        return pa.types.is_string(self.atype) or pa.types.is_binary(self.atype) \
            or pa.types.is_fixed_size_binary(self.atype)

    def stats(self) -> LeafStats:
        mins = pa.array(self.mins, self.atype)
        maxs = pa.array(self.maxs, self.atype)
        nulls = pa.array(self.nulls, pa.int64())
        nan_field = nans = None
        if self.nans is not None:
            nan_field, nans = pa.field(self.name, pa.int64()), pa.array(self.nans, pa.int64())
        return LeafStats(pa.field(self.name, self.atype), mins, maxs,
                         pa.field(self.name, pa.int64()), nulls, nan_field, nans)


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
            leaf = _Leaf(f.field_id, f.name, t, atype, [None] * n, [None] * n, [None] * n,
                         [None] * n if pa.types.is_floating(atype) else None)
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


def _fill(leaf: _Leaf, i: int, data_file) -> None:
    """The statistics of ``leaf`` in file ``i`` from the file's manifest entry."""
    from pyiceberg import types as it

    fid = leaf.field_id
    leaf.nulls[i] = (data_file.null_value_counts or {}).get(fid)
    if leaf.nans is not None:
        leaf.nans[i] = (data_file.nan_value_counts or {}).get(fid)
    if isinstance(leaf.itype, it.UUIDType):
        return
    if leaf.byte_array and len(data_file.split_offsets or ()) != 1:
        return  # bounds of several row groups: PyIceberg may have skipped one (module doc)
    lo = _decode(leaf.itype, (data_file.lower_bounds or {}).get(fid))
    hi = _decode(leaf.itype, (data_file.upper_bounds or {}).get(fid))
    if leaf.is_float:
        lo = -0.0 if lo == 0 else lo
        hi = 0.0 if hi == 0 else hi
    leaf.mins[i], leaf.maxs[i] = lo, hi


def _identity(leaf: _Leaf, i: int, value, num_records: int | None) -> None:
    """Exact statistics of an identity-partition column: every row holds ``value``."""
    if value is None:  # a null partition: every row is null
        leaf.mins[i] = leaf.maxs[i] = None
        leaf.nulls[i] = num_records
        return
    value = _normalize(leaf.itype, value)
    if value is None:  # NaN: no bound
        leaf.mins[i] = leaf.maxs[i] = None
        leaf.nulls[i] = 0
        return
    if leaf.is_float and value == 0:
        leaf.mins[i], leaf.maxs[i] = -0.0, 0.0
    else:
        leaf.mins[i] = leaf.maxs[i] = value
    leaf.nulls[i] = 0


def _local_path(location: str) -> str:
    """The path to open a data file at: a ``file:`` URI's path as PyIceberg opens it."""
    if location.startswith("file:"):
        parsed = urlparse(location)
        if parsed.netloc in ("", "localhost"):
            return parsed.path
    return location


def _data_files(table, snapshot) -> tuple[list, int]:
    """The live data files of ``snapshot`` and the number of its live delete files."""
    from pyiceberg.manifest import DataFileContent, ManifestContent

    files, deletes = [], 0
    for manifest in snapshot.manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            data_file = entry.data_file
            if manifest.content == ManifestContent.DATA and \
                    data_file.content == DataFileContent.DATA:
                sequence = entry.sequence_number
                files.append((-1 if sequence is None else sequence, len(files), data_file))
            else:
                deletes += 1
    files.sort(key=lambda item: item[:2])  # in commit order, then as listed
    return [f for _, _, f in files], deletes


def _partitions(table, schema, files: list, leaves: dict[int, _Leaf]) -> dict[str, pa.Array]:
    """``partition_values`` (one typed array per partition field name); fills the identity
    columns' exact statistics on the way."""
    from pyiceberg.transforms import IdentityTransform

    specs = table.specs()
    n = len(files)
    names: dict[tuple[int, int], str] = {}  # (spec id, position) -> column name
    columns: dict[str, tuple[Any, pa.DataType, list]] = {}
    spec_ids = [table.spec().spec_id] + sorted({f.spec_id for f in files})
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
    for i, data_file in enumerate(files):
        spec = specs.get(data_file.spec_id)
        if spec is None:
            continue
        record = data_file.partition
        for pos, pf in enumerate(spec.fields):
            try:
                value = record[pos]
            except (IndexError, TypeError):
                continue
            name = names.get((spec.spec_id, pos))
            if name is not None:
                rtype, _, values = columns[name]
                values[i] = _normalize(rtype, value)
            leaf = leaves.get(pf.source_id)
            if leaf is not None and isinstance(pf.transform, IdentityTransform):
                _identity(leaf, i, value, data_file.record_count)
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
    files, deletes = _data_files(table, snapshot) if snapshot is not None else ([], 0)
    n = len(files)
    leaves: dict[int, _Leaf] = {}
    plan = _plan(schema.fields, n, leaves)
    for i, data_file in enumerate(files):
        for leaf in leaves.values():
            _fill(leaf, i, data_file)
    parts = _partitions(table, schema, files, leaves)
    paths = [_local_path(f.file_path) for f in files]
    extra = {}
    if parts:
        extra[layout.PARTITION_VALUES] = pa.StructArray.from_arrays(
            list(parts.values()), names=list(parts)) if n else \
            pa.array([], pa.struct([(k, v.type) for k, v in parts.items()]))
    out = stats_table(paths, [f.record_count for f in files], _assemble(plan, n), extra=extra,
                      leading={layout.PATH: pa.array(paths, pa.string()),
                               layout.ROW_GROUP: pa.nulls(n, pa.int32())})
    metadata = {"iceberg": {
        "table": ".".join(table.name()) if hasattr(table, "name") else None,
        "snapshot_id": snapshot.snapshot_id if snapshot is not None else None,
        "schema_id": schema.schema_id, "delete_files": deletes}}
    return StatsTable(out, metadata)
