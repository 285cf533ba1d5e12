"""Table formats whose files do not name their columns as the table does, read by Spark's
Parquet reader as the table: a column-mapped Delta table and an Iceberg table.

Spark's Parquet reader matches a file's columns by name, and returns them under the names
and in the types it is asked for. Given statistics of a snapshot whose schema is known
(:class:`~prune_engine.stats.snapshot.TableColumns`: the table's schema at the statistics'
version or snapshot), ``pes.read`` and ``pes.count`` ask it for what each file holds under the
file's names, then rename, cast and fill that into the table's columns (:meth:`MappedRead.
logical`), so that the DataFrame has the rows and columns the format's own reader gives:

- **Delta with column mapping** (``delta.columnMapping.mode`` ``name`` or ``id``:
  :class:`DeltaRead`) stores every field, nested ones too, under a physical name
  (``col-<uuid>``) that no rename changes, keeps the columns it drops in the files written
  before, writes no partition value into a file or a folder name (its files sit in folders
  of random prefixes), and may have widened a column's type since a file was written. Every
  file has the same physical names, so one read serves: the source (a path of the table, or
  paths under it) with ``recursiveFileLookup`` (every Parquet file under it) and an explicit
  schema, the table's fields under their physical names in the table's types, without the
  partition columns; each partition column is the value the log records for the row's file.
- **Iceberg** (:class:`IcebergRead`) matches a file's columns to the table's by Parquet field
  id (``PARQUET:field_id``, in every file an Iceberg writer writes; a file without ids by
  name: :func:`~prune_engine.stats.snapshot.match_field`). A file written before a rename
  names the column by its old name, and one written after by its new one, so the files
  are read in groups of one naming: each kept live file's footer is read on the driver
  (its schema only), and the files that name the table's columns alike are read together
  with an explicit schema, the table's fields under that group's names in the table's
  types; the groups' rows, turned into the table's columns, are joined with ``unionByName``.
  A column a file lacks (added after it was written) is null there, at any depth (a nested
  field it lacks is asked for under a name no field of the file has, which Spark reads as
  nulls); but a top-level column whose statistics prove that every row of the file holds
  one value (``pe.stats_from_iceberg`` gives an identity-partition column ``min = max`` and
  no nulls from the file's partition value) is that value, as PyIceberg fills a column a
  file lacks from its identity partition. A dropped column (still in old files) is not
  returned; a field id that names a column of another kind in a file (a struct where the
  table has a list) is a :class:`~prune_engine.ScanError` naming the file.

In both, Spark's reader widens as the table says (an int file to long, a float file to the
doubles its floats are, a decimal to a wider precision), a struct, list or map is cast to
the table's type under the table's names (Spark casts struct fields by position, and each
read schema holds the table's fields in the table's order), and the ``where`` and
``order_by`` are read against a stand-in: a read of one live file under the table's schema,
analysed but never run, so that Spark's reading of them names the statistics' columns and
prunes as for any table (:mod:`._catalyst`). No session setting is changed (Spark's own
field-id matching, ``spark.sql.parquet.fieldId.read.enabled``, would change every other query
of the session, and is read when the plan runs, not when it is built).

So ``pes.read(spark, root, where, stats=pe.stats_from_delta(root))`` has the rows and columns
``deltalake`` reads for that version, and ``pes.read(spark, location, where,
stats=pe.stats_from_iceberg(table))`` those of ``table.scan().to_arrow()``, filtered by Spark.
A Delta DataFrame source is used as given: its columns are taken by physical name (a
physical name it lacks reads as nulls). An Iceberg source that is a DataFrame or a catalog
table, or given with an explicit ``schema=``, is read as Spark reads it (its own columns), as
is any snapshot whose schema is not known.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from concurrent.futures import ThreadPoolExecutor
from functools import reduce

import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._arrow_types import is_list_type
from prune_engine.errors import ScanError, about
from prune_engine.stats import layout
from prune_engine.stats.delta import physical_name
from prune_engine.stats.snapshot import TableColumns, location_key, match_field, table_snapshot
from prune_engine.stats.table import StatsTable
from prune_engine.spark._files import file_key, hadoop_path, spark_file_path
from prune_engine.spark._kept import file_path_column, kept_frame
from prune_engine.spark._session import functions
from prune_engine.spark._source import is_dataframe, is_table, source_frame

__all__ = ["MappedRead", "DeltaRead", "IcebergRead", "mapped_read", "read_schema"]

#: Spark's reader option that reads every file under a folder, whatever its name
RECURSIVE = "recursiveFileLookup"
#: the name, in a read schema, of a nested field a data file lacks (numbered to be unique)
ABSENT = "__pe_absent_"
#: how many footers are read at once on the driver
_THREADS = 16


def mapped_read(spark, source, stats: StatsTable | None, format: str,
                options: dict[str, str] | None = None, schema=None) -> "MappedRead | None":
    """How to read the snapshot ``stats`` describe as the table (see the module doc): a
    column-mapped Delta table, or an Iceberg table whose schema is known, read as Parquet
    files; None otherwise (Spark's reader sees the table's own columns, or the source is
    read as Spark reads it)."""
    if stats is None or format.lower() != "parquet":
        return None
    snap = table_snapshot(stats)
    if snap is None:
        return None
    if snap.format == "iceberg":
        if schema is not None or is_dataframe(source) or is_table(spark, source):
            return None
        columns = snap.columns
        return IcebergRead(columns, snap.paths, stats, options) if columns is not None \
            else None
    columns = snap.columns
    if columns is None or not columns.mapped:
        return None
    names = {name for values in snap.partitions.values() for name in values}
    values = {spark_file_path(file_key(location_key(p))): snap.partitions.get(location_key(p), {})
              for p in snap.paths}
    return DeltaRead(columns, [location_key(p) for p in snap.paths], names, values)


class MappedRead:
    """The table's columns, its live files, and how rows read from them under the files'
    names become the table's (see the module doc)."""

    def __init__(self, columns: TableColumns, paths: list[str]):
        self.columns = columns
        self.paths = paths  # the live files (keys)
        self.logical_fields = list(columns.reader_schema)

    def logical_schema(self):
        """The Spark schema of the table's rows."""
        from pyspark.sql.pandas.types import from_arrow_schema

        return from_arrow_schema(pa.schema(self.logical_fields))

    def stand_in(self, spark):
        """A DataFrame with the table's logical schema over one live file (analysed only,
        never run): what Spark reads the ``where`` and ``order_by`` against."""
        schema = self.logical_schema()
        if not self.paths:
            return spark.createDataFrame([], schema)
        return spark.read.format("parquet").schema(schema) \
            .load(hadoop_path(self.paths[0], literal=True))

    def logical(self, df, names: list[str | None], filled: set[str] = frozenset(),
                values: dict[str, dict[str, pa.Scalar]] | None = None):
        """``df`` (rows of data files, under the files' names) as the table's rows: each
        table column from the field of ``df`` named ``names[i]`` (None: the files lack it),
        cast to the table's type; a column in ``filled`` from ``values`` (per file, as Spark
        names it: its value of the column) for the row's file, null for a file not there."""
        from pyspark.sql.pandas.types import from_arrow_type

        F = functions(df)
        have = set(df.columns)
        path = None
        out = []
        for f, name in zip(self.logical_fields, names):
            spark_type = from_arrow_type(f.type)
            if f.name in filled:
                path = path if path is not None else file_path_column(df)
                value = _file_value(F, path, f, values or {})
            elif name is not None and name in have:
                value = F.col(_quoted(name)).cast(spark_type)
            else:
                value = F.lit(None).cast(spark_type)
            out.append(value.alias(f.name))
        return df.select(*out)


class DeltaRead(MappedRead):
    """A column-mapped Delta table: one read under the physical names (module doc)."""

    def __init__(self, columns: TableColumns, paths: list[str], partitions: set[str],
                 values: dict[str, dict[str, pa.Scalar]]):
        super().__init__(columns, paths)
        self.partitions = partitions  # the partition columns' names
        self.values = values  # per file (Spark's file_path): its partition values
        self.physical_names = [physical_name(f) for f in columns.schema]

    def physical_schema(self):
        """The Spark schema of the data files: the table's data fields under their physical
        names (nested ones too), in the table's types."""
        from pyspark.sql.pandas.types import from_arrow_schema

        fields = [_named(f, physical_name) for f in self.columns.schema
                  if f.name not in self.partitions]
        return from_arrow_schema(pa.schema(fields))

    def source(self, spark, source, options: dict | None, schema=None):
        """The source read as the data files (see the module doc): a path or paths with
        ``recursiveFileLookup`` and the physical schema (or ``schema``, when given); a
        DataFrame or a catalog table as it is."""
        if is_dataframe(source) or is_table(spark, source):
            return source_frame(spark, source, "parquet", options, schema)
        return source_frame(spark, source, "parquet", {RECURSIVE: "true", **(options or {})},
                            schema if schema is not None else self.physical_schema())

    def table_frame(self, base, pruned: list[str], listed: list[str], roots: list[str], *,
                    lineage: bool = False):
        """``base`` (the source, :meth:`source`) without the files ``pruned`` (keys;
        :func:`~prune_engine.spark._kept.kept_frame`), as the table's rows."""
        frame = kept_frame(base, pruned, listed, roots, lineage=lineage)
        return self.logical(frame, self.physical_names, self.partitions, self.values)


class IcebergRead(MappedRead):
    """An Iceberg table: its kept files read in groups of one naming (module doc)."""

    def __init__(self, columns: TableColumns, paths: list[str], stats: StatsTable,
                 options: dict[str, str] | None = None):
        super().__init__(columns, [location_key(p) for p in paths])
        self.stats = stats
        #: the caller's reader options (but the paths), for every read of the files
        self.options = {k: v for k, v in (options or {}).items()
                        if k.lower() not in ("path", "paths")}

    def source(self, spark, source, options: dict | None, schema=None):
        """The source as Spark lists its files: a path or paths with ``recursiveFileLookup``
        (Iceberg's folders, ``p=a`` or hashed, hold no partition value Spark should infer),
        under the table's schema (nothing is read from it but its listing); ``options``
        are those given at :func:`mapped_read`, ``schema`` is None there."""
        return source_frame(spark, source, "parquet", {RECURSIVE: "true", **self.options},
                            self.logical_schema())

    def table_frame(self, base, pruned: list[str], listed: list[str], roots: list[str], *,
                    lineage: bool = False):
        """The files Spark lists for ``base`` but ``pruned`` (keys), read as the table's
        rows: a read per group of files that name the table's columns alike, joined."""
        gone = set(pruned)
        kept = sorted(k for k in {file_key(u) for u in listed} if k not in gone)
        spark = base.sparkSession
        if not kept:
            return spark.createDataFrame([], self.logical_schema())
        from pyspark.sql.pandas.types import from_arrow_schema

        groups: dict[str, tuple[pa.Schema, list[str | None], list[str]]] = {}
        for key, footer in zip(kept, _footers(kept)):
            schema, names = read_schema(self.columns.schema, footer, key)
            text = schema.to_string(show_field_metadata=False)
            groups.setdefault(text, (schema, names, []))[2].append(key)
        frames = []
        for schema, names, keys in groups.values():
            df = spark.read.format("parquet").options(**self.options) \
                .schema(from_arrow_schema(schema)) \
                .load([hadoop_path(k, literal=True) for k in keys])
            filled, values = self._filled(names, keys)
            frames.append(self.logical(df, names, filled, values))
        return reduce(lambda a, b: a.unionByName(b), frames)

    def _filled(self, names: list[str | None], keys: list[str]):
        """The top-level columns the files ``keys`` lack (``names`` None) whose statistics
        prove one value for every row of some of them, and those values per file (Spark's
        ``file_path``): ``(columns, values)``."""
        lacking = [f.name for f, name in zip(self.logical_fields, names) if name is None]
        if not lacking:
            return set(), {}
        table = self.stats.table
        if not {layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT} <= \
                set(table.column_names) or layout.PATH not in table.column_names:
            return set(), {}
        rows: dict[str, list[int]] = {}
        for i, p in enumerate(table.column(layout.PATH).to_pylist()):
            rows.setdefault(file_key(location_key(p)), []).append(i)
        wanted = [(k, rows[k]) for k in keys if k in rows]
        take = pa.array([i for _, found in wanted for i in found], pa.int64())
        filled, values = set(), {}
        for name in lacking:
            proven = _proven(table, name, take)
            if proven is None:
                continue
            at = 0
            for key, found in wanted:
                value = _one(proven[at:at + len(found)])
                at += len(found)
                if value is not None:
                    filled.add(name)
                    values.setdefault(spark_file_path(key), {})[name] = value
        return filled, values


def read_schema(table: pa.Schema, file: pa.Schema, name: str = "a data file"
                ) -> tuple[pa.Schema, list[str | None]]:
    """The schema Spark reads a data file of an Iceberg table with (module doc), and the
    file's name of each top-level column of the table (None: the file lacks it, and the
    schema leaves it out). ``table``: the table's schema (its fields carry their field ids);
    ``file``: the file's, as pyarrow reads its footer. The table's fields in its order and
    its types, each under the file's name (matched by field id, else by name); a nested
    field the file lacks under a name none of its fields has. A field id whose field is of
    another kind in the file (a struct where the table has a list) is a
    :class:`~prune_engine.ScanError` naming ``name``.

    >>> fid = lambda i: {b"PARQUET:field_id": str(i).encode()}
    >>> table = pa.schema([pa.field("x2", pa.int64(), metadata=fid(1)),
    ...     pa.field("s", pa.struct([pa.field("alpha", pa.int64(), metadata=fid(4)),
    ...                              pa.field("new", pa.string(), metadata=fid(6))]),
    ...              metadata=fid(2)),
    ...     pa.field("y", pa.string(), metadata=fid(5))])
    >>> old = pa.schema([pa.field("x", pa.int32(), metadata=fid(1)),
    ...     pa.field("s", pa.struct([pa.field("a", pa.int32(), metadata=fid(4))]),
    ...              metadata=fid(2)),
    ...     pa.field("y", pa.int64(), metadata=fid(3))])  # a dropped y, not the new one
    >>> schema, names = read_schema(table, old)
    >>> names
    ['x', 's', None]
    >>> schema
    x: int64
    s: struct<a: int64, __pe_absent_0: string>
      child 0, a: int64
      child 1, __pe_absent_0: string
    """
    out, names = [], []
    for f in table:
        j = match_field(f, list(file))
        if j is None:
            names.append(None)
            continue
        names.append(file.field(j).name)
        out.append(pa.field(file.field(j).name, _read_type(f.type, file.field(j), name), True))
    return pa.schema(out), names


def _read_type(table: pa.DataType, have: pa.Field, name: str) -> pa.DataType:
    """The table's type ``table`` with its struct fields under the names of the file's
    field ``have`` (module doc)."""
    if _kind(table) != _kind(have.type):
        raise ScanError(about(name, f"its field {have.name!r} is a {_kind(have.type)} where "
                                    f"the table's column of its field id is a "
                                    f"{_kind(table)}"), name)
    if pa.types.is_struct(table):
        files = list(have.type)
        taken = {c.name.lower() for c in files}
        out, absent = [], 0
        for child in table:
            j = match_field(child, files)
            if j is not None:
                out.append(pa.field(files[j].name, _read_type(child.type, files[j], name)))
                continue
            while f"{ABSENT}{absent}".lower() in taken:
                absent += 1
            out.append(pa.field(f"{ABSENT}{absent}", _named(child, lambda f: f.name).type))
            absent += 1
        return pa.struct(out)
    if pa.types.is_map(table):
        return pa.map_(_read_type(table.key_type, have.type.key_field, name),
                       _read_type(table.item_type, have.type.item_field, name))
    if is_list_type(table):
        return pa.list_(_read_type(table.value_type, have.type.value_field, name))
    return _named(pa.field("", table), lambda f: f.name).type


def _kind(t: pa.DataType) -> str:
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_map(t):
        return "map"
    return "list" if is_list_type(t) else "leaf"


def _footers(keys: list[str]) -> list[pa.Schema]:
    """The Arrow schemas of the Parquet files ``keys`` (their footers, read on the driver in
    threads); a file that cannot be read is a :class:`~prune_engine.ScanError` naming it."""
    import pyarrow.parquet as pq

    from prune_engine.stats.filesystems import resolve

    remote = [k for k in keys if "://" in k]  # file keys: local paths, or URIs
    location, paths = resolve(remote) if remote else (None, [])
    located = dict(zip(remote, paths))

    def footer(key: str) -> pa.Schema:
        try:
            if key in located:
                return pq.read_schema(located[key], filesystem=location.filesystem)
            return pq.read_schema(key)
        except (OSError, pa.ArrowException, ValueError) as e:
            raise ScanError(about(key, f"cannot read the Parquet footer: {e}"), key) from None

    with ThreadPoolExecutor(min(_THREADS, len(keys))) as pool:
        return list(pool.map(footer, keys))


def _proven(table: pa.Table, name: str, take: pa.Array) -> list[pa.Scalar | None] | None:
    """Per container of ``take`` (row indices of the statistics): the one value its
    statistics prove every row of the top-level column ``name`` holds (``min = max``, no
    nulls), else None; None for all when the statistics have no bounds for it."""
    mins, maxs, nulls = (table.column(c).combine_chunks()
                         for c in (layout.MIN_VALUES, layout.MAX_VALUES, layout.NULL_COUNT))
    if not all(pa.types.is_struct(a.type) and a.type.get_field_index(name) >= 0
               for a in (mins, maxs, nulls)):
        return None
    low, high, count = (pc.struct_field(a, [a.type.get_field_index(name)]).take(take)
                        for a in (mins, maxs, nulls))
    if pa.types.is_nested(low.type):
        return None
    out = []
    for lo, hi, n in zip(low, high, count.to_pylist()):
        a, b = lo.as_py(), hi.as_py()
        same = a is not None and n == 0 and type(a) is type(b) and repr(a) == repr(b)
        out.append(lo if same else None)
    return out


def _one(values: list) -> pa.Scalar | None:
    """The value every container of a file proves, when they all prove the same one."""
    texts = {repr(v.as_py()) if v is not None else None for v in values}
    return values[0] if values and None not in texts and len(texts) == 1 else None


def _file_value(F, path, f: pa.Field, values: dict[str, dict[str, pa.Scalar]]):
    """The column ``f`` of each row: its file's value in ``values`` (one map literal from
    Spark's file path to the value's text), cast to the column's type."""
    from pyspark.sql.pandas.types import from_arrow_type

    binary = pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) or \
        pa.types.is_fixed_size_binary(f.type)
    texts = {p: _text(v.get(f.name)) for p, v in values.items()}
    found = F.element_at(F.from_json(F.lit(json.dumps(texts)), "map<string,string>"), path)
    return F.unhex(found) if binary else found.cast(from_arrow_type(f.type))


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _named(f: pa.Field, name) -> pa.Field:
    """``f`` under ``name(field)`` all the way down (a column-mapped Delta table's physical
    names, or its own), in types Spark reads (strings and binaries not large), without
    metadata."""
    t = f.type
    if pa.types.is_struct(t):
        t = pa.struct([_named(c, name) for c in t])
    elif pa.types.is_map(t):
        t = pa.map_(t.key_field.with_type(_named(t.key_field, name).type),
                    t.item_field.with_type(_named(t.item_field, name).type), t.keys_sorted)
    elif is_list_type(t):
        t = pa.list_(t.value_field.with_type(_named(t.value_field, name).type))
    elif pa.types.is_large_string(t) or pa.types.is_string_view(t):
        t = pa.string()
    elif pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        t = pa.binary()
    return pa.field(name(f), t, True)


def _text(value: pa.Scalar | None) -> str | None:
    """A partition value as text Spark casts back to it (binary as hex)."""
    if value is None or not value.is_valid:
        return None
    v = value.as_py()
    t = value.type
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity") \
            if math.isinf(v) else repr(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, dt.datetime):
        if pa.types.is_timestamp(t) and t.tz is not None:
            v = v.astimezone(dt.timezone.utc)
            return v.replace(tzinfo=None).isoformat(" ") + "+00:00"
        return v.isoformat(" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    return str(v)
