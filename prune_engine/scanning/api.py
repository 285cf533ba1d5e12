"""``pe.scan`` / ``pe.scan_batches``: prune, then read only the kept row groups and only the
column chunks that the projection and the row filter need.

What is read, in order:

1. the source is listed as ``collect_stats`` lists it (a directory with Hive ``key=value``
   folders, a glob, a list of paths, or a ``pyarrow.dataset.Dataset`` with its filesystem);
   but given statistics of a table format's snapshot (``pe.stats_from_delta``,
   ``pe.stats_from_iceberg``: :mod:`prune_engine.stats.snapshot`), the files are the
   snapshot's live files under the source, and no other: a file that a delete, an update,
   a compaction or an overwrite removed from the table is not read, though it stays in the
   folder until ``VACUUM`` or snapshot expiry; Delta's partition values are the log's;
2. every file's footer, once (its schema; the metadata object is reused for the read), but
   for the files whose schema and row group count the given statistics recorded, unchanged
   since (:mod:`prune_engine.stats.footers`): those are opened only if read. The schemas
   unify by field id, else by name (:mod:`~prune_engine.scanning.schema`), and the
   partition keys become columns; but a snapshot's schema is its table's, whatever its
   files hold (:class:`~prune_engine.stats.snapshot.TableColumns`: the table's names,
   types and column order, so a file written before a rename, an added or dropped column
   or a type widening reads as the table reads it): a column-mapped Delta table's files
   name their fields by physical names, and what is read from them is renamed to the
   table's names before anything else sees it; Iceberg's files match by field id;
3. with ``where``: the statistics (``stats=``, or ``collect_stats`` of the columns the
   predicate names), pruned with ``pe.prune`` (:mod:`~prune_engine.scanning.pruning`: element
   predicates too); a file the statistics do not describe, or that changed since (size or
   modification time in ``stats.metadata["files"]``), is read whole;
4. per file, only the kept row groups, and of those only the Parquet leaf columns under the
   selected paths (``ParquetFile.reader.read_row_groups`` with column indices: a struct's
   unselected children and a list's unselected element fields are never read from disk),
   files in parallel threads; INT96 timestamps as microseconds (Spark's unit: years past
   2262 keep their value); with ``where``, of a file with a page index only the dictionary
   pages and the data pages that overlap the row ranges that may match
   (:func:`prune_engine.row_ranges.row_ranges`), the other rows dropped before the filter
   (:mod:`~prune_engine.scanning.pages`; a file with deletes to apply is read as without);
5. for a snapshot, its deletes: the Iceberg position delete files that may name a file
   read are read once, and their rows dropped (positions count from the file's first row,
   whatever row groups are read); a file read whose live rows cannot be told (a Delta
   deletion vector, an Iceberg equality delete) stops the scan before any row is read, with
   a :class:`ScanError` naming it (a file the predicate prunes is never read, and needs
   nothing).

A file that cannot be read (its footer, its pages, a value its column's unified type cannot
hold) is a :class:`ScanError` whose one-line message names the file.

What is kept: the rows for which ``where`` is TRUE with SQL semantics
(:mod:`~prune_engine.scanning.rows`), with the selected columns in the promised shape
(:mod:`~prune_engine.scanning.shape`). The result equals reading every row of every file
(of a snapshot: every live row of its files), filtering with DuckDB and selecting the same
paths; which row groups were skipped never shows
in it (a wrong prune would, and the tests compare with DuckDB to show it does not happen).

>>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
>>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
>>> pq.write_table(pa.table({"id": [1, 2, 3], "user": [{"name": "a", "age": 30},
...     {"name": "b", "age": 40}, None]}), path, row_group_size=1)
>>> pe.scan(path, where="id >= 2", columns=["user.name"]).to_pylist()
[{'user': {'name': 'b'}}, {'user': None}]
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator, Literal, Sequence, overload

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from prune_engine.api import OnInvalid, Predicate, Source, Stats
from prune_engine.errors import ColumnPathError, ScanError, about
from prune_engine.expr import nodes as n
from prune_engine.expr.convert import to_expr
from prune_engine.scanning.paths import (FieldPath, PathLike, add_path, resolve, resolve_names,
                                         select_schema)
from prune_engine.compiler import classify
from prune_engine.compiler.topk import OrderBy
from prune_engine.scanning import order
from prune_engine.scanning import pages as page_reading
from prune_engine.scanning.pruning import scan_codes
from prune_engine.scanning.rows import RowFilter
from prune_engine.scanning.schema import file_columns, read_footer, same_schema, unify_schemas
from prune_engine.scanning.shape import conform_table, extract
from prune_engine.stats import footers as footer_record
from prune_engine.stats import layout
from prune_engine.stats.collect import collect_stats
from prune_engine.stats.listing import (Listing, identify, list_source, partition_arrays,
                                        unchanged)
from prune_engine.stats.snapshot import (Snapshot, TableColumns, location_key,
                                         read_position_deletes, table_snapshot)
from prune_engine.stats.table import StatsTable, as_stats_table

__all__ = ["scan", "scan_batches", "ScanSummary"]

DEFAULT_BATCH_SIZE = 65_536


@dataclass
class _File:
    path: str  # its name (a URI for a remote file)
    location: str  # where to open it on the listing's filesystem
    metadata: pq.FileMetaData | None  # None: not opened (schema and row groups recorded)
    schema: pa.Schema
    partitions: dict  # name -> pa.Scalar
    num_row_groups: int = 0
    row_groups: list[int] | None = None  # None until planned; [] = nothing to read
    #: the schema its footer gives (``schema`` names its fields as the table does, when
    #: they differ: Delta column mapping)
    footer_schema: pa.Schema | None = None


@dataclass
class Unit:
    """What one read covers: row groups of one file; ``entire`` when every row of them
    matches the filter (``pe.classify`` said ``"all"``: the filter is not evaluated);
    ``index``: the statistics row that describes them (or the whole file they are in), if
    one does."""

    file: _File
    row_groups: list[int]
    entire: bool = False
    index: int | None = None


@dataclass(frozen=True)
class ScanSummary:
    """What a scan reads: the source's files and row groups, and those kept by the pruning;
    ``footers_read``: the files whose footer it opened (to plan, or to read their rows)."""

    files_total: int
    files_read: int
    row_groups_total: int
    row_groups_read: int
    footers_read: int = 0


class _Plan:
    """Everything decided before the first data page is read."""

    def __init__(self, source, where, columns, stats, flatten: bool, threads: int | None,
                 on_invalid: str, filesystem=None, order_by=None, described_only=False):
        stats = as_stats_table(stats) if stats is not None else None
        #: the table-format snapshot the statistics describe (None: a folder of files)
        self.snapshot: Snapshot | None = table_snapshot(stats) if stats is not None else None
        #: the snapshot's columns: the schema read, and how its files name them
        self.columns: TableColumns | None = \
            self.snapshot.columns if self.snapshot is not None else None
        listing, parts = self._listing(source, filesystem, stats)
        self.described_only = described_only  # skip files the statistics do not name
        self.filesystem = listing.filesystem
        self.threads = threads or min(8, os.cpu_count() or 2)
        self.changed, same = self._identities(listing, stats) if stats is not None \
            else (set(), set())
        self.files = self._open(listing, stats, same, parts)
        self.schema = self._unify(stats)
        self.rows = RowFilter(to_expr(where), self.schema) if where is not None else None
        self.paths = self._projection(columns)
        self.flatten = flatten
        proj: dict = {}
        order: list[int] = []
        for fp in self.paths:
            add_path(proj, fp)
            if fp.indices[0] not in order:
                order.append(fp.indices[0])
        self.selected = select_schema(self.schema, proj, order)
        self.order = OrderBy.parse(order_by) if order_by is not None else None
        self.order_path = resolve_names(self.schema, self.order.path) if self.order else None
        if self.order_path is not None and (self.order_path.through_elements or
                                            pa.types.is_nested(self.order_path.type)):
            raise ColumnPathError(f"order_by sorts by one value per row, not by a list, map "
                                  f"or struct or their elements: {self.order_path.text!r}",
                                  self.order_path.text)
        read = {}
        for fp in self.paths + (self.rows.paths if self.rows else []) + (
                [self.order_path] if self.order_path else []):
            add_path(read, fp)
        self.read_trie = read
        self.read_schema = select_schema(self.schema, read)
        self.output = self._output_schema()
        #: the units read so far by an ordered or limited scan (None: a full scan)
        self.units_read: list[Unit] | None = None
        self._plan_row_groups(listing, stats, source, on_invalid, filesystem)
        #: per file read (its location key): the row positions its delete files delete
        self.deleted = self._snapshot_deletes(filesystem)
        #: per file: what reading only its selected pages needs, read once
        self._pages = page_reading.FilePagesCache(self.rows.expr if self.rows else None,
                                                  self.filesystem)

    # footers and schema -------------------------------------------------------------------
    def _listing(self, source, filesystem, stats: StatsTable | None
                 ) -> tuple[Listing, list[dict]]:
        """The files to read and, per file, its partition values (name -> scalar).

        A folder of files: the source's listing, with its Hive ``key=value`` folders. A
        table format's snapshot (:mod:`prune_engine.stats.snapshot`): the live files the
        source covers (a file removed from the table but still on disk is not read), with
        the partition values the table records for them (Delta's; Iceberg's data files hold
        their partition columns)."""
        snap = self.snapshot
        if snap is None:
            listing = list_source(source, filesystem)
            typed = partition_arrays(listing.files, listing.typed)
            return listing, [{k: v[i] for k, v in typed.items()}
                             for i in range(len(listing.files))]
        paths = snap.covered(source, filesystem)
        if not paths:
            if snap.paths:
                raise ScanError(f"none of the {len(snap.paths)} data files of the {snap.format} "
                                f"snapshot that the statistics describe is under {source!r} "
                                f"(the first: {snap.paths[0]}): scan the table's folder",
                                str(source))
            return Listing([], None), []
        listing = list_source(paths, filesystem)
        if len(listing.files) != len(paths):
            raise ScanError(f"the {snap.format} statistics name {len(paths)} data files under "
                            f"{source!r}, which list as {len(listing.files)} files: a path "
                            "they name is a folder", str(source))
        return listing, [dict(snap.partitions.get(location_key(p), {})) for p in paths]

    def _open(self, listing, stats: StatsTable | None, same: set, parts: list[dict]
              ) -> list[_File]:
        """The files, with their schemas and row group counts: recorded by the statistics
        for the files whose identity is the one recorded (``same``; their footers are not
        opened: :mod:`prune_engine.stats.footers`), read from the footers of the others
        (:func:`~prune_engine.scanning.schema.read_footer`: INT96 as microseconds)."""
        def read(f):
            try:
                return read_footer(f.location, self.filesystem)
            except (OSError, pa.ArrowException, ValueError) as e:
                if isinstance(e, FileNotFoundError) and self.snapshot is not None:
                    raise ScanError(about(f.path, f"a data file of the {self.snapshot.format} "
                                          "snapshot is gone (removed by a VACUUM or a snapshot "
                                          "expiry?)"), f.path) from None
                raise ScanError(about(f.path, f"not a readable Parquet file: {e!s:.300}"),
                                f.path) from None

        known = footer_record.read(stats.metadata) if stats is not None else {}
        known = {p: v for p, v in known.items() if p in same}
        opened = [f for f in listing.files if f.path not in known]
        with ThreadPoolExecutor(self.threads) as pool:
            metas = dict(zip((f.path for f in opened), pool.map(read, opened)))
        out = []
        for i, f in enumerate(listing.files):
            meta, schema = metas.get(f.path, (None, None))
            if meta is None:
                schema, row_groups = known[f.path]
            else:
                row_groups = meta.num_row_groups
            named = self.columns.named(schema) if self.columns is not None else schema
            out.append(_File(f.path, f.location, meta, named, parts[i], row_groups,
                             footer_schema=schema))
        return out

    def _unify(self, stats: StatsTable | None) -> pa.Schema:
        """The schema read: a table format's snapshot's own (its names, types and
        partition columns, whatever its files hold), else the files' schemas unified with
        their partition keys."""
        if self.columns is not None:
            return self.columns.reader_schema
        if not self.files and self.snapshot is not None and stats is not None:
            return _described_schema(stats)  # an empty snapshot: the columns described
        schema = unify_schemas([f.schema for f in self.files])
        extra = []
        for name, value in (self.files[0].partitions.items() if self.files else []):
            if name not in schema.names:
                extra.append(pa.field(name, value.type))
        return pa.schema(list(schema) + extra)

    def _projection(self, columns) -> list[FieldPath]:
        if columns is None:
            return [resolve(self.schema, [i]) for i in range(len(self.schema))]
        if isinstance(columns, str) or (columns and isinstance(columns[0], int)):
            raise ColumnPathError("columns= takes a list of paths: ['a.b'] or [[0, 1]], not "
                                  f"{columns!r}", str(columns))
        if not columns:
            raise ColumnPathError("columns= selects nothing; leave it out to read every "
                                  "column", "")
        return [resolve(self.schema, c) for c in columns]

    def _output_schema(self) -> pa.Schema:
        if not self.flatten:
            return self.selected
        names: list[str] = []
        taken = set()
        for fp in self.paths:
            base = "_".join(fp.names)
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}_{k}"
            taken.add(name)
            names.append(name)
        self.flat_names = names
        empty = pa.Table.from_batches([], self.selected)
        return self._flat(empty).schema

    # pruning ------------------------------------------------------------------------------
    def _plan_row_groups(self, listing, stats, source, on_invalid: str, filesystem) -> None:
        for f in self.files:
            f.row_groups = list(range(f.num_row_groups))
        self.units_planned = [Unit(f, f.row_groups) for f in self.files]
        self.stats = None
        if self.rows is None and self.order is None and not self.described_only:
            return
        if stats is None:
            wanted = sorted({fp.names[0] for fp in (self.rows.paths if self.rows else [])}
                            | ({self.order.path[0]} if self.order else set()))
            equal, unequal = _equality_tests(self.rows.expr) if self.rows else (False, False)
            stats = collect_stats(source, granularity="row_group", columns=wanted,
                                  progress=False, threads=self.threads,
                                  filesystem=filesystem,
                                  bloom=True if equal else None,
                                  dictionaries=True if unequal else None)
        stats = self.stats = as_stats_table(stats)
        table = stats.table
        for name in (layout.PATH, layout.ROW_GROUP):
            if name not in table.column_names:
                raise ScanError(f"the statistics need a {name!r} column to say where each "
                                "container lives (collect_stats makes one)")
        self.codes = (scan_codes(stats, self.rows, on_invalid) if self.rows is not None
                      else classify.everything(stats))
        if self.snapshot is not None and self.snapshot.has_position_deletes:
            # num_records counts deleted rows too: a container of a file that position
            # deletes may name is never "all" (no row count to rely on, the filter runs)
            self.codes = np.array(self.codes, copy=True)
            touched = np.array([bool(self.snapshot.position_deletes(p))
                                for p in table.column(layout.PATH).to_pylist()], bool)
            self.codes[touched & (self.codes == classify.ALL_CODE)] = classify.SOME_CODE
        changed = self.changed
        by_path: dict[str, list[tuple[int | None, int]]] = {}
        for i, (path, rg) in enumerate(zip(table.column(layout.PATH).to_pylist(),
                                           table.column(layout.ROW_GROUP).to_pylist())):
            by_path.setdefault(path, []).append((rg, i))
        units = []
        for f in self.files:
            described = by_path.get(f.path)
            if described is None and self.described_only:
                f.row_groups = []
                continue
            if described is None or f.path in changed:
                units.append(Unit(f, f.row_groups))
                continue
            whole = [i for rg, i in described if rg is None]
            if whole:  # file-level statistics (the last row describing the file wins)
                i = whole[-1]
                f.row_groups = f.row_groups if self.codes[i] else []
                units.append(Unit(f, f.row_groups, self.codes[i] == classify.ALL_CODE, i))
                continue
            bad = [rg for rg, _ in described if rg >= f.num_row_groups]
            if bad:
                raise ScanError(f"{f.path}: the statistics name row group {bad[0]}, the file "
                                f"has {f.num_row_groups}: they describe another "
                                "version of it (pe.update_stats brings them up to date)",
                                f.path)
            kept = sorted((rg, i) for rg, i in described if self.codes[i])
            f.row_groups = [rg for rg, _ in kept]
            units.extend(Unit(f, [rg], self.codes[i] == classify.ALL_CODE, i)
                         for rg, i in kept)
        self.units_planned = units

    def _snapshot_deletes(self, filesystem) -> dict[str, np.ndarray]:
        """For a table format's snapshot: refuse a file to read whose live rows cannot be
        told (a Delta deletion vector, an Iceberg equality delete, ...), and read the
        position deletes of the others (:mod:`prune_engine.stats.snapshot`)."""
        snap = self.snapshot
        if snap is None:
            return {}
        read = [f for f in self.files if f.row_groups]
        for f in read:
            why = snap.refusal(f.path)
            if why is not None:
                raise ScanError(f"{f.path}: the scan cannot tell which of its rows the "
                                f"{snap.format} snapshot holds: {why}", f.path)
        named = {location_key(f.path): snap.position_deletes(f.path) for f in read}
        named = {k: v for k, v in named.items() if v}
        if not named:
            return {}
        files = list(dict.fromkeys(d for ds in named.values() for d in ds))
        return read_position_deletes(files, list(named), filesystem)

    @staticmethod
    def _identities(listing, stats: StatsTable) -> tuple[set, set]:
        """The listed files whose identity (size, modification time; inode and ctime of local
        files) differs from the statistics' record, and those whose identity agrees."""
        known = stats.metadata.get("files") or {}
        changed: set = set()
        same: set = set()
        if known:
            identify(listing.files, listing.filesystem)
            for f in listing.files:
                if f.path in known and f.size is not None:
                    (same if unchanged(known[f.path], f.identity) else changed).add(f.path)
        return changed, same

    def summary(self) -> ScanSummary:
        total = sum(f.num_row_groups for f in self.files)
        if self.units_read is not None:  # a limited scan: what it did read
            read = {id(u.file) for u in self.units_read}
            groups = sum(len(u.row_groups) for u in self.units_read)
        else:
            read = {id(f) for f in self.files if f.row_groups}
            groups = sum(len(f.row_groups) for f in self.files)
        footers = read | {id(f) for f in self.files if f.metadata is not None}
        return ScanSummary(len(self.files), len(read), total, groups, len(footers))

    # reading ------------------------------------------------------------------------------
    def units(self, per_row_group: bool) -> list[Unit]:
        """The reads, in file order: one per file (its kept row groups, the ones where every
        row matches apart), or (``per_row_group``) one per row group."""
        out: list[Unit] = []
        for u in self.units_planned:
            if not u.row_groups:
                continue
            if per_row_group:
                out.extend(Unit(u.file, [rg], u.entire, u.index) for rg in u.row_groups)
            elif out and out[-1].file is u.file and out[-1].entire == u.entire:
                out[-1] = Unit(u.file, out[-1].row_groups + u.row_groups, u.entire)
            else:
                out.append(Unit(u.file, list(u.row_groups), u.entire))
        return out

    def read_rows(self, unit: Unit) -> pa.Table:
        """The matching rows of ``unit``, with the columns the projection, the filter and
        the order read (:attr:`read_schema`)."""
        f, row_groups = unit.file, unit.row_groups
        indices = file_columns(self.schema, self.read_trie, f.schema)
        deleted = self.deleted.get(location_key(f.path)) if self.deleted else None
        # only the pages of the rows that may match (the page index), where that is sound
        pages = self._file_pages(f) if self.rows is not None and not unit.entire \
            and deleted is None else None
        try:
            pf = pq.ParquetFile(f.location, metadata=f.metadata, filesystem=self.filesystem,
                                coerce_int96_timestamp_unit="us")
            try:
                if f.metadata is None:  # planned from the recorded footer: check it
                    _same_footer(f, pf)
                if pages is not None:
                    data = page_reading.read_row_groups(pf, f.location, self.filesystem, pages,
                                                        row_groups, indices)
                else:
                    data = pf.reader.read_row_groups(row_groups, column_indices=indices,
                                                     use_threads=True)
                if self.columns is not None:
                    data = self.columns.rename(data)
                if deleted is not None:
                    data = _live_rows(data, pf.metadata, row_groups, deleted, f.path)
            finally:
                pf.close()
        except ScanError:
            raise
        except (OSError, pa.ArrowException, ValueError) as e:
            raise ScanError(about(f.path, f"cannot read row groups {_shown(row_groups)}: {e}"),
                            f.path) from None
        for name, value in f.partitions.items():
            if name in self.read_schema.names and name not in data.column_names:
                data = data.append_column(name, pa.repeat(value, data.num_rows))
        try:
            table = conform_table(data, self.read_schema)
        except ScanError as e:
            raise ScanError(about(f.path, str(e)), f.path) from None
        if self.rows is not None and not unit.entire:
            table = table.filter(self._mask(table))
        return table

    def _file_pages(self, f: _File) -> page_reading.FilePages | None:
        """What reading only the selected pages of ``f`` needs (read once per file), or None
        to read it as without a page index: a predicate on list or map elements (its page
        ranges would not be existential), a file whose columns are named otherwise than the
        table's (the predicate's names would not be the file's), a file that cannot be read
        so (the whole read then says why)."""
        if any(fp.through_elements for fp in self.rows.paths) or \
                (f.footer_schema is not None and not f.footer_schema.equals(f.schema)):
            return None
        tops = tuple(sorted({self.schema.names[k] for k in self.read_trie}
                            & set(f.schema.names)))
        return self._pages.get(f.path, f.location, tops, f.metadata)

    def project(self, table: pa.Table) -> pa.Table:
        """Rows of :attr:`read_schema` in the output's shape."""
        if self.flatten:
            return self._flat(conform_table(table, self.selected))
        return conform_table(table, self.output)

    def read(self, unit: Unit) -> pa.Table:
        return self.project(self.read_rows(unit))

    def _mask(self, table: pa.Table) -> pa.Array:
        masks = [self.rows.mask(b) for b in table.to_batches()]
        if not masks:
            return pa.array([], pa.bool_())
        return pa.chunked_array(masks, pa.bool_())

    def _flat(self, table: pa.Table) -> pa.Table:
        columns = [extract(table.column(fp.names[0]), fp) for fp in self.paths]
        return pa.table(columns, names=self.flat_names)

    def results(self, per_row_group: bool) -> Iterator[pa.Table]:
        """The units' tables in order, read ``threads`` at a time (a bounded window)."""
        units = self.units(per_row_group)
        if self.threads == 1 or len(units) <= 1:
            yield from map(self.read, units)
            return
        with ThreadPoolExecutor(self.threads) as pool:
            window = []
            for unit in units:
                window.append(pool.submit(self.read, unit))
                if len(window) > self.threads:
                    yield window.pop(0).result()
            for future in window:
                yield future.result()


def _same_footer(f: _File, pf: pq.ParquetFile) -> None:
    """A file planned from the statistics' record of its footer (its identity unchanged)
    must still have that schema and row group count; else the scan stops, saying so. (A
    record that typed INT96 as nanoseconds, as statistics of older versions did, is the same
    footer: its values are then cast to nanoseconds, exactly or with a ScanError.)"""
    if pf.metadata.num_row_groups != f.num_row_groups or \
            not same_schema(pf, f.footer_schema or f.schema):
        raise ScanError(f"{f.path}: its footer is not the one the statistics recorded, though "
                        "its size and modification time are: the file was rewritten in place "
                        "(pe.update_stats cannot see it either; collect the statistics again)",
                        f.path)


def _live_rows(data: pa.Table, metadata: pq.FileMetaData, row_groups: list[int],
               deleted: np.ndarray, path: str) -> pa.Table:
    """``data`` (``row_groups`` of a file, read in that order) without the rows at the
    ``deleted`` positions (counted from the file's first row, across all row groups)."""
    counts = np.array([metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)],
                      np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    if int(counts[row_groups].sum()) != data.num_rows:
        raise ScanError(f"{path}: row groups {_shown(row_groups)} gave {data.num_rows} rows, "
                        f"the footer says {int(counts[row_groups].sum())}", path)
    positions = np.concatenate([np.arange(starts[rg], starts[rg] + counts[rg], dtype=np.int64)
                                for rg in row_groups]) if row_groups else np.zeros(0, np.int64)
    live = ~np.isin(positions, deleted, assume_unique=False)
    return data if live.all() else data.filter(pa.array(live))


def _described_schema(stats: StatsTable) -> pa.Schema:
    """The columns of an empty snapshot: those the statistics describe (``min_values``),
    but for lists and maps (their statistics describe elements, not the column's type)."""
    column = layout.MIN_VALUES if layout.MIN_VALUES in stats.schema.names else None
    if column is None:
        return pa.schema([])
    fields = [f for f in stats.schema.field(column).type
              if not any(kind for _, _, kind in layout.leaves(pa.struct([f])))]
    return pa.schema(fields)


def _shown(row_groups: list[int]) -> str:
    return str(row_groups) if len(row_groups) <= 8 else \
        f"{row_groups[:8]}".rstrip("]") + f", ... ({len(row_groups)} in all)]"


def _equality_tests(e: n.Expr) -> tuple[bool, bool]:
    """Does ``e`` (in negation normal form) test ``=`` / ``IN`` (then the files' Bloom filters
    are worth reading), and ``!=`` / ``NOT IN`` (then their dictionaries are)?"""
    equal = unequal = False
    for x in e.walk():
        if isinstance(x, n.Compare) and x.op in ("=", "!="):
            equal, unequal = equal or x.op == "=", unequal or x.op == "!="
        elif isinstance(x, n.InList):
            equal, unequal = equal or not x.negated, unequal or x.negated
    return equal, unequal


@overload
def scan(source: Source, where: Predicate | None = ...,
         columns: Sequence[PathLike] | None = ..., stats: Stats | None = ..., *,
         flatten: bool = ..., threads: int | None = ..., on_invalid: OnInvalid = ...,
         return_summary: Literal[False] = ..., filesystem=..., order_by: str | None = ...,
         limit: int | None = ...) -> pa.Table: ...


@overload
def scan(source: Source, where: Predicate | None = ...,
         columns: Sequence[PathLike] | None = ..., stats: Stats | None = ..., *,
         flatten: bool = ..., threads: int | None = ..., on_invalid: OnInvalid = ...,
         return_summary: Literal[True], filesystem=..., order_by: str | None = ...,
         limit: int | None = ...) -> tuple[pa.Table, ScanSummary]: ...


def scan(source: Source, where: Predicate | None = None,
         columns: Sequence[PathLike] | None = None, stats: Stats | None = None, *,
         flatten: bool = False, threads: int | None = None, on_invalid: OnInvalid = "raise",
         return_summary: bool = False, filesystem=None, order_by: str | None = None,
         limit: int | None = None) -> pa.Table | tuple[pa.Table, ScanSummary]:
    """Prune with ``where``, then read only the kept row groups and only the column chunks
    the projection and the filter need; the rows where ``where`` is TRUE, as one table.

    ``source``: a Parquet file, directory (Hive ``key=value`` folders become columns), glob,
    list of paths or ``pyarrow.dataset.Dataset``; a URI of any filesystem (``s3://...``) or
    paths on ``filesystem`` (pyarrow or fsspec), as ``collect_stats`` takes them. ``where``: SQL text, a builder expression or
    a ``pyarrow.compute.Expression``; a predicate on list or map elements (``orders.price >
    100``) holds when some element meets it (see :mod:`prune_engine.scanning.rows`). ``columns``:
    paths (``"user.address.city"``, ``"`a.b`.c"``, ``"orders.price"``, ``"attrs.key"``, or
    integer paths ``[2, 0, 1]``); the struct shape is kept with only the selected children,
    unless ``flatten=True``: one top-level column per path, named by joining it with ``_``
    (``_2``, ``_3`` on collisions). ``stats``: the statistics to prune with (default: collected
    from the footers for the columns ``where`` names); statistics of a Delta or Iceberg
    snapshot also say which files the table holds (only those are read, their deletes
    applied or refused: see the module doc). ``threads``: files read at once.
    ``return_summary=True`` returns ``(table, ScanSummary)``: the files and row groups of the
    source and how many of them were read. ``on_invalid``: as for :func:`~prune_engine.prune`
    (``"keep"``: a container with impossible statistics is read, with a warning).

    Containers where every row matches (``pe.classify`` says ``"all"``) are read without
    evaluating ``where`` on their rows. ``limit=k`` returns ``k`` matching rows (any, without
    ``order_by``), reading those containers first and stopping once ``k`` rows are in.
    ``order_by="ts DESC"`` with ``limit=k`` (``column [ASC|DESC] [NULLS FIRST|LAST]``; NULLS
    LAST unless told, NaN above every number) returns the first ``k`` rows in that order: the
    statistics skip the containers that cannot hold one, and the rest are read best bound
    first until the ``k``-th row's key rules out the others (:mod:`prune_engine.scanning.order`).

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "orders.parquet")
    >>> pq.write_table(pa.table({"orders": [[{"price": 120.0, "qty": 1}], [{"price": 5.0,
    ...     "qty": 2}]]}), path)
    >>> pe.scan(path, where="orders.price > 100", columns=["orders.price"]).to_pylist()
    [{'orders': [{'price': 120.0}]}]
    >>> pe.scan(path, columns=["orders.qty"], flatten=True).to_pylist()
    [{'orders_qty': [1]}, {'orders_qty': [2]}]
    >>> pe.scan(path, where="orders.qty > 5", return_summary=True)[1].row_groups_read
    0
    >>> ts = os.path.join(tempfile.mkdtemp(), "ts.parquet")
    >>> pq.write_table(pa.table({"ts": list(range(100))}), ts, row_group_size=10)
    >>> table, summary = pe.scan(ts, order_by="ts DESC", limit=3, return_summary=True)
    >>> table.column("ts").to_pylist(), summary.row_groups_read
    ([99, 98, 97], 1)
    """
    if order_by is not None and limit is None:
        raise ScanError("order_by= needs limit= (a top-k scan); sort the result to order it all")
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise ScanError(f"limit must be an integer of at least 0, not {limit!r}")
    plan = _Plan(source, where, columns, stats, flatten, threads, on_invalid, filesystem,
                 order_by)
    if limit is not None:
        plan.units_read = []
        table = order.top(plan, limit) if plan.order else order.limited(plan, limit)
    else:
        tables = list(plan.results(per_row_group=False))
        table = pa.concat_tables(tables) if tables else plan.output.empty_table()
    return (table, plan.summary()) if return_summary else table


def scan_batches(source: Source, where: Predicate | None = None,
                 columns: Sequence[PathLike] | None = None, stats: Stats | None = None, *,
                 flatten: bool = False, batch_size: int = DEFAULT_BATCH_SIZE,
                 threads: int | None = None, on_invalid: OnInvalid = "raise", filesystem=None
                 ) -> Iterator[pa.RecordBatch]:
    """:func:`scan`, as record batches of at most ``batch_size`` rows, one kept row group in
    memory per thread: for results larger than memory. Everything is planned (footers,
    schema, pruning, errors) before the first batch is yielded.

    ``source``, ``where``, ``columns``, ``stats``, ``flatten``, ``threads``, ``on_invalid``
    and ``filesystem`` are those of :func:`scan`.

    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq, prune_engine as pe
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> pq.write_table(pa.table({"x": list(range(10))}), path, row_group_size=4)
    >>> [b.num_rows for b in pe.scan_batches(path, where="x >= 3", batch_size=3)]
    [1, 3, 1, 2]
    """
    if batch_size < 1:
        raise ScanError(f"batch_size must be at least 1, not {batch_size}")
    plan = _Plan(source, where, columns, stats, flatten, threads, on_invalid, filesystem)
    return _batches(plan, batch_size)


def _batches(plan: _Plan, batch_size: int) -> Iterator[pa.RecordBatch]:
    for table in plan.results(per_row_group=True):
        for batch in table.to_batches(max_chunksize=batch_size):
            if batch.num_rows:
                yield batch
