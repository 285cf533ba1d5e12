"""What statistics from a table format say about the snapshot they describe: its live data
files, and the rows deleted from them without rewriting them.

``stats_from_delta`` and ``stats_from_iceberg`` describe one snapshot of a table (a Delta
version, an Iceberg snapshot); they are recognized by ``metadata["delta"]`` or
``metadata["iceberg"]``. Their ``path`` column names the snapshot's live data files, and
only those: the table's folder also holds the files that a delete, an update, a compaction
or an overwrite removed from the table, kept on disk (for time travel) until ``VACUUM`` or
snapshot expiry. A reader given such statistics (``pe.scan``, ``pes.read``, ``pes.count``)
reads the files they name and no other (:meth:`Snapshot.covered`), so that it returns the
rows the snapshot holds, as the format's own reader does.

Rows can also leave a snapshot without their file: what is recorded, and what a reader makes
of it (:meth:`Snapshot.refusal`: a reason not to read a file's rows, or None):

- Delta deletion vectors: ``metadata["delta"]["deletion_vectors"]`` lists the ``path`` of
  every file whose add action carries one. They are not decoded here (RoaringBitmap files):
  such a file's live rows cannot be told, so a reader refuses to read it (a file the
  predicate prunes is never read, and needs nothing). Statistics without the key (collected
  before it was recorded) are checked against the table's protocol: a table whose readers
  need no ``deletionVectors`` feature has none; else which files have one is unknown, and
  every file is refused.
- Iceberg delete files: ``metadata["iceberg"]["deletes"]``, one dict per delete file of the
  snapshot (``path``, ``content`` ``"position"`` or ``"equality"``, ``file_format``,
  ``record_count``, ``equality_ids``, ``referenced_data_file``). Position deletes in Parquet
  (columns ``file_path`` and ``pos``: the data file and the row's position in it, counted
  from its first row) can be applied: :func:`read_position_deletes` gives the deleted
  positions per data file. A position delete file names its data file
  (``referenced_data_file``) or may name any (None). Equality deletes apply by value and by
  sequence number, which the statistics do not carry: every file is refused while the
  snapshot has one, and so are the files a position delete file of another format may name.
  Without the key: no deletes when ``delete_files`` is 0, else unknown (every file refused).

A file is named by :func:`location_key` wherever it is compared: a ``file:`` URI by its
path (as PyIceberg opens it, not percent-decoded), a local path made absolute.

The table's columns (:attr:`Snapshot.columns`, a :class:`TableColumns`): a reader returns the
snapshot's schema, not its files' (they may predate a rename, an added or dropped column, a
type widening or promotion):

- Delta: the table's schema at the version, with its Arrow types as ``deltalake`` gives them
  (``stats_from_delta``'s types), partition columns in their place. With column mapping
  (``delta.columnMapping.mode`` ``name`` or ``id``) the data files name every field, nested
  ones too, by its physical name (``delta.columnMapping.physicalName``; in ``id`` mode, by
  its field id first, ``PARQUET:field_id``, as the Delta protocol says): a reader renames
  what it reads (:meth:`TableColumns.rename`), so a renamed column keeps its data and a
  dropped one (still in old files) is not returned. The schema is taken from
  ``metadata["delta"]["schema"]`` (the log's ``schemaString``) and
  ``metadata["delta"]["column_mapping"]`` when the statistics record them, else from the
  table's log at the version (``deltalake``).
- Iceberg: the snapshot's schema (``metadata["iceberg"]["schema_id"]``), whose fields carry
  their ids (``PARQUET:field_id``): files match by id (:func:`match_field`; a file without
  ids by name), so a renamed column takes its current
  name, a dropped one is not returned and a promoted one (int to long, float to double,
  decimal precision) reads in its current type. It is taken from
  ``metadata["iceberg"]["schema"]`` (Iceberg's JSON of the schema) when recorded, else from
  the table's metadata files (``<table>/metadata/*.metadata.json`` above its data files: the
  newest that holds the statistics' snapshot and schema id). Types as the statistics have
  them: strings, binaries and lists not large, a uuid as its 16 bytes.
- Unknown (None: the reader unifies the files' schemas, as for a folder of files) when none
  of that can be read: a table whose log or metadata moved or was cleaned up.

A column the table adds after a file was written reads as nulls in it; a leaf's type is
cast to the table's (widening: a float file's values read as the doubles they are).

>>> import pyarrow as pa
>>> from prune_engine.stats.table import StatsTable
>>> stats = StatsTable(pa.table({"path": ["/t/a.parquet", "/t/b.parquet"]}),
...                    {"delta": {"table": "/t", "version": 3,
...                               "deletion_vectors": ["/t/b.parquet"]}})
>>> snap = table_snapshot(stats)
>>> snap.covered("/t"), snap.refusal("/t/a.parquet")
(['/t/a.parquet', '/t/b.parquet'], None)
>>> print(snap.refusal("/t/b.parquet"))
its Delta add action has a deletion vector, which only a Delta reader can apply
"""

from __future__ import annotations

import glob as globlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.errors import ScanError, StatsError
from prune_engine._arrow_types import is_list_type
from prune_engine.stats import layout
from prune_engine.stats.delta import MAPPING_MODE, PHYSICAL_NAME, physical_name
from prune_engine.stats.table import StatsTable

__all__ = ["DeleteFile", "Snapshot", "TableColumns", "table_snapshot", "location_key",
           "match_field", "read_position_deletes", "FORMATS", "FIELD_ID"]

#: the ``metadata`` keys of the table formats' statistics
FORMATS = ("delta", "iceberg")
#: the columns of an Iceberg position delete file
FILE_PATH, POS = "file_path", "pos"
#: field-metadata key of a Parquet field id (Iceberg, Delta column mapping ``id``)
FIELD_ID = b"PARQUET:field_id"
#: field-metadata key of a column-mapped Delta field's id
MAPPING_ID = b"delta.columnMapping.id"
#: how many folders above a data file an Iceberg table's ``metadata`` folder is looked for
_ICEBERG_DEPTH = 6

_DV = "its Delta add action has a deletion vector, which only a Delta reader can apply"


def location_key(location: str) -> str:
    """One name per file however it is written: a local ``file:`` URI's path (not
    percent-decoded, as PyIceberg opens it) and a local path, absolute and normalized; other
    URIs as given.

    >>> location_key("file:///data/t/a.parquet"), location_key("/data/t/./a.parquet")
    ('/data/t/a.parquet', '/data/t/a.parquet')
    >>> location_key("s3://bucket/t/a.parquet")
    's3://bucket/t/a.parquet'
    """
    text = os.fspath(location)
    if text.startswith("file:"):
        parts = urlsplit(text)
        if parts.netloc in ("", "localhost"):
            text = parts.path
    if "://" in text:
        return text
    return os.path.normpath(os.path.abspath(text))


@dataclass(frozen=True)
class DeleteFile:
    """An Iceberg delete file of the snapshot (see the module doc)."""

    path: str
    content: str  # "position" | "equality"
    file_format: str
    record_count: int | None = None
    referenced_data_file: str | None = None
    equality_ids: tuple[int, ...] = ()

    @property
    def applicable(self) -> bool:
        """Whether a reader can apply it: a position delete file in Parquet."""
        return self.content == "position" and self.file_format.lower() == "parquet"

    def why_not(self) -> str:
        """Why a reader cannot apply it."""
        what = "an equality" if self.content == "equality" else \
            f"a {self.file_format} position"
        return (f"{what} delete file ({os.path.basename(self.path)}) may delete rows of it, "
                "which only an Iceberg reader can apply")


_UNREAD = object()  # a lazily read attribute not read yet


@dataclass
class Snapshot:
    """The snapshot that table-format statistics describe (see the module doc)."""

    format: str  # "delta" | "iceberg"
    paths: list[str]  # the live data files (the statistics' ``path`` values), distinct
    #: per live file (its location key): its Delta partition values, by column name
    partitions: dict[str, dict[str, pa.Scalar]] = field(default_factory=dict)
    #: Iceberg delete files
    deletes: list[DeleteFile] = field(default_factory=list)
    #: live files (location keys) whose rows cannot be read exactly, and why
    refused: dict[str, str] = field(default_factory=dict)
    #: why no file's rows can be read exactly (deletes that the statistics do not place)
    refused_all: str | None = None
    #: applicable position delete files, by the data file they name, and those naming any
    _named: dict[str, list[DeleteFile]] = field(default_factory=dict)
    _anywhere: list[DeleteFile] = field(default_factory=list)
    #: the statistics' ``metadata[format]`` (where the table's columns are looked up)
    meta: dict = field(default_factory=dict, repr=False)
    _columns: Any = field(default=_UNREAD, repr=False)
    _delta_table: Any = field(default=_UNREAD, repr=False)

    @property
    def columns(self) -> "TableColumns | None":
        """The table's columns at the snapshot, and how its files name them (module doc);
        None when they cannot be read. Read once, on first use (it may open the table).
        Recorded metadata that is malformed is a :class:`StatsError`."""
        if self._columns is _UNREAD:
            self._columns = _delta_columns(self) if self.format == "delta" else \
                _iceberg_columns(self.meta, self.paths)
        return self._columns

    def delta_table(self):
        """The Delta table at the statistics' version (``deltalake.DeltaTable``), opened once;
        None when it cannot be opened (no deltalake, a moved table, a cleaned-up log)."""
        if self._delta_table is _UNREAD:
            try:
                from deltalake import DeltaTable

                self._delta_table = DeltaTable(self.meta["table"],
                                               version=self.meta.get("version"))
            except Exception:  # noqa: BLE001 - deltalake's errors: the table cannot be read
                self._delta_table = None
        return self._delta_table

    def refusal(self, path: str) -> str | None:
        """Why the live rows of ``path`` cannot be read from its data file (None: they can,
        after its :meth:`position_deletes` are applied)."""
        return self.refused.get(location_key(path), self.refused_all)

    def position_deletes(self, path: str) -> list[DeleteFile]:
        """The position delete files that may delete rows of ``path``."""
        return self._named.get(location_key(path), []) + self._anywhere

    @property
    def has_position_deletes(self) -> bool:
        return bool(self._named or self._anywhere)

    def covered(self, source, filesystem=None) -> list[str]:
        """The live files that ``source`` covers, in the statistics' order: those in a folder
        it names (or below), or that it names. ``source``: a path or URI (a folder, a file or a
        glob), a list of them, or a ``pyarrow.dataset`` (its files)."""
        entries = _entries(source, filesystem)
        folders = tuple(e + "/" for e in entries)
        exact = set(entries)
        return [p for p in self.paths
                if (k := location_key(p)) in exact or k.startswith(folders)]


def _entries(source, filesystem) -> list[str]:
    """The location keys a source names (see :meth:`Snapshot.covered`)."""
    if isinstance(source, (str, os.PathLike)):
        texts = [os.fspath(source)]
    elif isinstance(source, (list, tuple)):
        texts = [os.fspath(s) for s in source]
    else:  # a pyarrow dataset: its files
        from prune_engine.stats.listing import list_source

        texts = [f.path for f in list_source(source, filesystem).files]
    out = []
    for text in texts:
        if filesystem is None and "://" not in text and any(ch in text for ch in "*?[") \
                and not os.path.exists(text):
            out.extend(location_key(p) for p in globlib.glob(text, recursive=True))
        else:
            out.append(location_key(text).rstrip("/") or "/")
    return out


# ------------------------------------------------------------------------------ reading


def table_snapshot(stats: StatsTable) -> Snapshot | None:
    """The snapshot ``stats`` describe, when they come from a table format (else None).
    Malformed table-format metadata is a :class:`StatsError`."""
    kinds = [k for k in FORMATS if k in stats.metadata]
    if not kinds:
        return None
    if len(kinds) > 1:
        raise StatsError("the statistics claim to describe both a Delta and an Iceberg table")
    kind = kinds[0]
    meta = stats.metadata[kind]
    if not isinstance(meta, dict):
        raise StatsError(f"the statistics' metadata[{kind!r}] is not a mapping")
    table = stats.table
    if layout.PATH not in table.column_names:
        raise StatsError(f"{kind} statistics need a 'path' column naming the data files",
                         column=layout.PATH)
    column = table.column(layout.PATH).combine_chunks()
    if column.null_count:
        raise StatsError("the statistics' 'path' column has nulls: every container needs "
                         "the file it lives in", column=layout.PATH)
    paths = list(dict.fromkeys(column.to_pylist()))
    snap = Snapshot(kind, paths, meta=meta)
    if kind == "delta":
        _delta(snap, meta, stats)
    else:
        _iceberg(snap, meta)
    return snap


def _delta(snap: Snapshot, meta: dict, stats: StatsTable) -> None:
    vectors = meta.get("deletion_vectors")
    if vectors is None:
        if _delta_may_have_vectors(snap):
            snap.refused_all = ("the statistics do not say which files have deletion "
                                "vectors, and the table allows them: collect them again "
                                "with pe.stats_from_delta")
    elif not isinstance(vectors, (list, tuple)) or \
            not all(isinstance(v, str) for v in vectors):
        raise StatsError("the statistics' metadata['delta']['deletion_vectors'] must be a "
                         "list of paths")
    else:
        snap.refused.update((location_key(v), _DV) for v in vectors)
    table = stats.table
    if layout.PARTITION_VALUES in table.column_names:
        values = table.column(layout.PARTITION_VALUES).combine_chunks()
        if pa.types.is_struct(values.type) and values.type.num_fields:
            fields = [values.type.field(i) for i in range(values.type.num_fields)]
            children = [pc.struct_field(values, [i]) for i in range(len(fields))]
            for row, path in enumerate(table.column(layout.PATH).to_pylist()):
                snap.partitions[location_key(path)] = {
                    f.name: c[row] for f, c in zip(fields, children)}


def _delta_may_have_vectors(snap: Snapshot) -> bool:
    """Whether the Delta table's protocol, at the statistics' version, allows deletion
    vectors (True when the table cannot be opened to tell)."""
    table = snap.delta_table()
    try:
        protocol = table.protocol()
    except Exception:  # noqa: BLE001 - no table (None), or deltalake cannot tell
        return True
    return protocol.min_reader_version >= 3 and \
        "deletionVectors" in (protocol.reader_features or [])


def _iceberg(snap: Snapshot, meta: dict) -> None:
    deletes = meta.get("deletes")
    if deletes is None:
        count = meta.get("delete_files")
        if count != 0:
            snap.refused_all = ("the statistics do not list the snapshot's delete files "
                                f"({'how many is unknown' if count is None else count}): "
                                "collect them again with pe.stats_from_iceberg")
        return
    if not isinstance(deletes, (list, tuple)):
        raise StatsError("the statistics' metadata['iceberg']['deletes'] must be a list")
    for d in map(_delete_file, deletes):
        snap.deletes.append(d)
        key = location_key(d.referenced_data_file) if d.referenced_data_file else None
        if not d.applicable:
            if key is None:
                snap.refused_all = snap.refused_all or d.why_not()
            else:
                snap.refused.setdefault(key, d.why_not())
        elif key is None:
            snap._anywhere.append(d)
        else:
            snap._named.setdefault(key, []).append(d)


def _delete_file(d: Any) -> DeleteFile:
    bad = StatsError(f"the statistics' metadata['iceberg']['deletes'] holds a malformed "
                     f"entry: {str(d)[:200]!r}")
    if not isinstance(d, dict) or not isinstance(d.get("path"), str) or \
            d.get("content") not in ("position", "equality"):
        raise bad
    referenced = d.get("referenced_data_file")
    ids = d.get("equality_ids") or ()
    count = d.get("record_count")
    if (referenced is not None and not isinstance(referenced, str)) or \
            not isinstance(ids, (list, tuple)) or \
            (count is not None and (isinstance(count, bool) or not isinstance(count, int))):
        raise bad
    return DeleteFile(d["path"], d["content"], str(d.get("file_format") or "parquet"),
                      count, referenced, tuple(ids))


def read_position_deletes(files: Iterable[DeleteFile], wanted: Sequence[str],
                          filesystem=None) -> dict[str, np.ndarray]:
    """The row positions that the position delete ``files`` delete, per data file of
    ``wanted`` (location keys) they name: sorted, distinct, int64. Each file is read once
    (its ``file_path`` and ``pos`` columns); one that cannot be read, or whose columns are
    not a path and a non-negative position, is a :class:`ScanError` naming it."""
    from prune_engine.stats.filesystems import resolve

    wanted_set = set(wanted)
    found: dict[str, list[np.ndarray]] = {}
    for d in dict.fromkeys(files):
        location = d.path
        key = location_key(location)
        where = key if "://" not in key else location
        try:
            resolved, path = resolve(where, filesystem)
            import pyarrow.parquet as pq

            table = pq.read_table(path, columns=[FILE_PATH, POS],
                                  filesystem=resolved.filesystem if resolved else None)
        except (OSError, pa.ArrowException, ValueError, StatsError) as e:
            raise ScanError(f"{d.path}: cannot read the Iceberg position delete file: "
                            f"{_first_line(e)}", d.path) from None
        names, positions = table.column(FILE_PATH), table.column(POS)
        if not (pa.types.is_string(names.type) or pa.types.is_large_string(names.type)) \
                or not pa.types.is_integer(positions.type) or positions.null_count \
                or names.null_count:
            raise ScanError(f"{d.path}: not an Iceberg position delete file (its file_path "
                            f"is {names.type}, its pos {positions.type}, with "
                            f"{names.null_count + positions.null_count} nulls)", d.path)
        pos = np.asarray(positions.combine_chunks().cast(pa.int64())
                         .to_numpy(zero_copy_only=False), np.int64)
        if pos.size and pos.min() < 0:
            raise ScanError(f"{d.path}: the Iceberg position delete file holds a negative "
                            "position", d.path)
        encoded = names.combine_chunks().dictionary_encode()
        indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False))
        for j, name in enumerate(encoded.dictionary.to_pylist()):
            key = location_key(name)
            if key in wanted_set:
                found.setdefault(key, []).append(pos[indices == j])
    return {k: np.unique(np.concatenate(v)) for k, v in found.items()}


def _first_line(e: BaseException) -> str:
    """An exception's message as one short line."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 300 else text[:297] + "..."


# ------------------------------------------------------------------------------ columns


@dataclass(frozen=True)
class TableColumns:
    """The columns of a table's snapshot and how its data files name them (module doc).

    ``schema``: the table's names and types; a column-mapped Delta table's fields carry their
    physical name (``delta.columnMapping.physicalName``) and id, an Iceberg table's their
    field id (``PARQUET:field_id``). ``mapped``: data files name the fields by physical name
    (Delta column mapping; then ``by_id``: by field id first, the ``id`` mode).

    >>> meta = lambda name: {PHYSICAL_NAME: name.encode()}
    >>> table = pa.schema([pa.field("user", pa.struct([pa.field("age", pa.int64(),
    ...     metadata=meta("col-2"))]), metadata=meta("col-1"))])
    >>> columns = TableColumns(table, mapped=True)
    >>> read = pa.table({"col-1": pa.array([{"col-2": 41}], pa.struct([("col-2", pa.int32())])),
    ...                  "col-9": [1]})
    >>> columns.rename(read).to_pylist()
    [{'user': {'age': 41}, 'col-9': 1}]
    >>> columns.reader_schema
    user: struct<age: int64>
      child 0, age: int64
    """

    schema: pa.Schema
    mapped: bool = False
    by_id: bool = False

    @property
    def reader_schema(self) -> pa.Schema:
        """The schema a reader returns: the table's names and types, every field nullable,
        no field metadata but field ids (Iceberg's files match by them)."""
        return pa.schema([_bare(f) for f in self.schema])

    def named(self, schema: pa.Schema) -> pa.Schema:
        """A data file's schema (or the part of it that was read) with each field named as
        the table names it; a field the table does not have (a dropped column) keeps its
        name. ``schema`` itself when the files use the table's names."""
        if not self.mapped:
            return schema
        return pa.schema(self._fields(list(schema), list(self.schema)), schema.metadata)

    def rename(self, table: pa.Table) -> pa.Table:
        """Rows read from a data file, their fields named as the table names them
        (:meth:`named`; zero-copy: only the names change)."""
        schema = self.named(table.schema)
        if schema is table.schema or schema.equals(table.schema, check_metadata=True):
            return table
        columns = [pa.chunked_array([c.view(f.type) for c in column.chunks], f.type)
                   for column, f in zip(table.columns, schema)]
        return pa.Table.from_arrays(columns, schema=schema)

    def _fields(self, have: list[pa.Field], table: list[pa.Field]) -> list[pa.Field]:
        by_name = {physical_name(f): f for f in table}
        by_id = {i: f for f in table if (i := _number(f, MAPPING_ID)) is not None} \
            if self.by_id else {}
        out = []
        for f in have:
            fid = _number(f, FIELD_ID) if by_id else None
            match = by_id.get(fid) if fid is not None else None
            if match is None:
                match = by_name.get(f.name)
            out.append(f if match is None else
                       pa.field(match.name, self._type(f.type, match.type), f.nullable,
                                f.metadata))
        return out

    def _type(self, have: pa.DataType, table: pa.DataType) -> pa.DataType:
        """``have`` (a file's type) with its struct fields named as in ``table``."""
        if pa.types.is_struct(have) and pa.types.is_struct(table):
            return pa.struct(self._fields(list(have), list(table)))
        if pa.types.is_map(have) and pa.types.is_map(table):
            return pa.map_(have.key_field.with_type(self._type(have.key_type, table.key_type)),
                           have.item_field.with_type(self._type(have.item_type,
                                                                table.item_type)),
                           have.keys_sorted)
        if is_list_type(have) and (is_list_type(table) or pa.types.is_map(table)):
            # a map read in part is a list of its entries: struct<key, value>
            inner = table.value_type if is_list_type(table) else \
                pa.struct([table.key_field.with_name("key"),
                           table.item_field.with_name("value")])
            value = have.value_field.with_type(self._type(have.value_type, inner))
            if pa.types.is_list(have):
                return pa.list_(value)
            if pa.types.is_large_list(have):
                return pa.large_list(value)
            if pa.types.is_fixed_size_list(have):
                return pa.list_(value, have.list_size)
        return have


def match_field(target: pa.Field, candidates: Sequence[pa.Field]) -> int | None:
    """The index among ``candidates`` (a data file's fields at one level) of the field that
    is the table's ``target``: the one with its Parquet field id when both sides carry ids
    (Iceberg: a renamed column keeps its id, a dropped and re-added one gets a new one), else
    the one with its name; None when the file does not have it.

    >>> field = lambda name, i=None: pa.field(name, pa.int64(),
    ...                                       metadata={FIELD_ID: str(i).encode()} if i else None)
    >>> file = [field("x", 1), field("y", 2)]
    >>> match_field(field("renamed", 1), file)
    0
    >>> print(match_field(field("y", 3), file))  # y dropped, and a new y added
    None
    >>> match_field(field("y"), [field("x"), field("y")])  # no ids: by name
    1
    """
    fid = (target.metadata or {}).get(FIELD_ID)
    if fid is not None:
        ids = [(c.metadata or {}).get(FIELD_ID) for c in candidates]
        if fid in ids:
            return ids.index(fid)
        if any(i is not None for i in ids):
            return None
    for i, c in enumerate(candidates):
        if c.name == target.name:
            return i
    return None


def _number(f: pa.Field, key: bytes) -> int | None:
    """An integer field-metadata value (a field id), or None."""
    raw = (f.metadata or {}).get(key)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _bare(f: pa.Field) -> pa.Field:
    """``f`` nullable, with no metadata but its field id, all the way down."""
    t = f.type
    if pa.types.is_struct(t):
        t = pa.struct([_bare(c) for c in t])
    elif pa.types.is_map(t):
        t = pa.map_(_bare(t.key_field).with_nullable(False), _bare(t.item_field),
                    t.keys_sorted)
    elif pa.types.is_large_list(t):
        t = pa.large_list(_bare(t.value_field))
    elif pa.types.is_fixed_size_list(t):
        t = pa.list_(_bare(t.value_field), t.list_size)
    elif is_list_type(t):
        t = pa.list_(_bare(t.value_field))
    fid = (f.metadata or {}).get(FIELD_ID)
    return pa.field(f.name, t, True, {FIELD_ID: fid} if fid is not None else None)


def _delta_columns(snap: Snapshot) -> TableColumns | None:
    """The Delta table's columns (module doc): recorded, or from its log at the version."""
    meta = snap.meta
    text, mode = meta.get("schema"), meta.get("column_mapping")
    if text is not None:
        if not isinstance(text, str) or (mode is not None and not isinstance(mode, str)):
            raise StatsError("the statistics' metadata['delta']['schema'] and "
                             "['column_mapping'] must be text")
        try:
            from deltalake import Schema

            schema = pa.schema(Schema.from_json(text).to_arrow())
        except Exception as e:  # noqa: BLE001 - deltalake's errors
            raise StatsError(f"the statistics' metadata['delta']['schema'] is not a Delta "
                             f"schema: {_first_line(e)}") from None
    else:
        table = snap.delta_table()
        if table is None:
            return None
        try:
            schema = pa.schema(table.schema().to_arrow())
            mode = dict(table.metadata().configuration or {}).get(MAPPING_MODE)
        except Exception:  # noqa: BLE001 - deltalake's errors: the columns are unknown
            return None
    mode = mode or "none"
    return TableColumns(schema, mapped=mode in ("name", "id"), by_id=mode == "id")


def _iceberg_columns(meta: dict, paths: Sequence[str]) -> TableColumns | None:
    """The Iceberg snapshot's columns (module doc): recorded, or from the table's metadata
    files."""
    recorded = meta.get("schema")
    found = recorded if recorded is not None else _iceberg_schema(meta, paths)
    if found is None:
        return None
    try:
        from pyiceberg.io.pyarrow import schema_to_pyarrow
        from pyiceberg.schema import Schema

        schema = Schema.model_validate_json(found) if isinstance(found, (str, bytes)) else \
            Schema.model_validate(found)
        arrow = schema_to_pyarrow(schema)
    except Exception as e:  # noqa: BLE001 - pyiceberg's errors (or no pyiceberg)
        if recorded is None:
            return None
        raise StatsError(f"the statistics' metadata['iceberg']['schema'] is not an Iceberg "
                         f"schema: {_first_line(e)}") from None
    return TableColumns(pa.schema([_plain(f) for f in arrow]))


def _plain(f: pa.Field) -> pa.Field:
    """An Arrow field of PyIceberg's in the types the statistics use: strings, binaries and
    lists not large, an extension type (uuid) as its storage."""
    t = f.type
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_large_string(t):
        t = pa.string()
    elif pa.types.is_large_binary(t):
        t = pa.binary()
    elif pa.types.is_struct(t):
        t = pa.struct([_plain(c) for c in t])
    elif pa.types.is_map(t):
        t = pa.map_(_plain(t.key_field), _plain(t.item_field), t.keys_sorted)
    elif is_list_type(t) and not pa.types.is_fixed_size_list(t):
        t = pa.list_(_plain(t.value_field))
    return f.with_type(t)


def _iceberg_schema(meta: dict, paths: Sequence[str]) -> dict | None:
    """The schema ``meta["schema_id"]`` of a local Iceberg table, from the newest of its
    metadata files (``metadata/*.metadata.json`` in a folder above its first data file) that
    holds the statistics' snapshot; None when none is found."""
    schema_id, snapshot_id = meta.get("schema_id"), meta.get("snapshot_id")
    if not paths or isinstance(schema_id, bool) or not isinstance(schema_id, int):
        return None
    folder = os.path.dirname(location_key(paths[0]))
    if "://" in folder:
        return None
    for _ in range(_ICEBERG_DEPTH):
        found = globlib.glob(os.path.join(globlib.escape(folder), "metadata",
                                          "*.metadata.json"))
        for path in sorted(found, key=_metadata_order, reverse=True):
            try:
                with open(path, "rb") as f:
                    doc = json.load(f)
            except (OSError, ValueError, RecursionError):
                continue
            if not isinstance(doc, dict):
                continue
            snapshots = doc.get("snapshots") or []
            if snapshot_id is not None and not any(
                    isinstance(s, dict) and s.get("snapshot-id") == snapshot_id
                    for s in snapshots):
                continue
            for schema in doc.get("schemas") or [doc.get("schema")]:
                if isinstance(schema, dict) and schema.get("schema-id", 0) == schema_id:
                    return schema
        if found:
            return None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _metadata_order(path: str) -> tuple[int, float]:
    """Newest last: the version an Iceberg metadata file's name starts with (``00003-...``
    or ``v3``), then its modification time."""
    match = re.match(r"v?(\d+)", os.path.basename(path))
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        mtime = 0.0
    return (int(match.group(1)) if match else -1, mtime)
