"""Read the given rows of a row group from the selected data pages only (the page index).

A writer that writes the page index (:mod:`prune_engine.stats.page_index`) records where each
data page of a column chunk lies and which rows it holds. Given the row ranges of a row group
where the predicate may be TRUE (:func:`prune_engine.row_ranges.row_ranges`), this module reads,
for each projected leaf column, only the bytes of the data pages that overlap those ranges
(adjacent pages in one request, through the file's random-access reads) and of its dictionary
page where one of those pages refers to it (a writer whose dictionary fills up writes plain
pages from then on: those need none), and decodes them with pyarrow: it hands pyarrow an in-memory Parquet file whose one
column chunk holds just those pages, with a footer written to match
(:func:`prune_engine.stats.parquet.schema_file`: the file's own schema bytes and Arrow schema,
so every column reads with exactly the types a whole read gives). The rows of the ranges are
then taken from each leaf (its pages begin at their first row index), so that every column
holds exactly the rows of the ranges, in order; the scan's row filter then runs as before.

What is trusted, and why:

- The ranges: a row outside them cannot match (:mod:`prune_engine.row_ranges`); only those
  rows are dropped, so the filtered result is the one a whole read gives.
- The page places of the OffsetIndex, as checked by :func:`.page_index.page_places` (inside
  the chunk, in order, not overlapping; a chunk whose index cannot be true has no places).
  Each page read is checked again by its own header before pyarrow sees it: a data page
  (v1 or v2) whose header and compressed size fill exactly the place the index gives, whose
  value count (and v2 row count) is the page's row count; the bytes before the first data
  page must be exactly one dictionary page. So an index that lies about a page's rows, or
  points between pages, is caught, not decoded into rows shifted against the other columns.
- Leaves inside lists and maps, whose value counts are not row counts, are read whole (their
  top-level column, for the row group) and then cut to the ranges; so is a leaf whose
  pages fail a check above, whose header does not parse, or that pyarrow refuses in the
  in-memory file. Reading whole loses nothing: it only reads more bytes.
- A struct's leaves are read one by one and put back together; each leaf carries the
  struct's nulls (its definition levels), so the struct's validity is the first leaf's, as
  a whole read gives it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from prune_engine._compact import ThriftError, read_struct
from prune_engine.errors import PruneEngineError
from prune_engine.expr import nodes as n
from prune_engine.row_ranges import row_ranges
from prune_engine.stats.page_index import PagePlaces, footer_page_stats, page_places
from prune_engine.stats.parquet import (PHYSICAL_CODES, ChunkMeta, FileFooter, read_footer,
                                        schema_file)

__all__ = ["FilePages", "FilePagesCache", "file_pages", "read_row_groups"]

#: Thrift codes of the encodings pyarrow names
ENCODINGS = {"PLAIN": 0, "PLAIN_DICTIONARY": 2, "RLE": 3, "BIT_PACKED": 4,
             "DELTA_BINARY_PACKED": 5, "DELTA_LENGTH_BYTE_ARRAY": 6, "DELTA_BYTE_ARRAY": 7,
             "RLE_DICTIONARY": 8, "BYTE_STREAM_SPLIT": 9}
#: page header types
DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 2, 3
#: the encodings of data pages whose values are dictionary indices
DICTIONARY_ENCODINGS = (ENCODINGS["PLAIN_DICTIONARY"], ENCODINGS["RLE_DICTIONARY"])


class PageError(Exception):
    """The selected pages of a chunk cannot be read on their own: read it whole."""


@dataclass
class FilePages:
    """What reading the selected pages of one file needs, read once: its footer (the leaves
    of the top-level columns read), where each chunk's pages lie, and per row group the row
    ranges (``(starts, counts)``, within the row group) where the predicate may be TRUE."""

    footer: FileFooter
    places: PagePlaces
    ranges: dict[int, tuple[np.ndarray, np.ndarray]]
    leaf_of: dict[int, int]  # Parquet column index -> its leaf number in footer.plan.leaves


def file_pages(footer: FileFooter, predicate: n.Expr) -> FilePages:
    """The :class:`FilePages` of a file from its footer (read with ``page_index=True``, with
    at least the top-level columns of the predicate and of the leaves to read)."""
    referenced = sorted({".".join(c.path) for c in n.columns_of(predicate)})
    pages = footer_page_stats([footer], referenced, missing_ok=True)
    table = row_ranges(pages, predicate)
    groups = table.column("row_group").to_numpy()
    starts = table.column("row_start").to_numpy()
    counts = table.column("row_count").to_numpy()
    ranges = {}
    for rg in range(len(footer.num_rows)):
        at = groups == rg
        ranges[rg] = (starts[at].astype(np.int64), counts[at].astype(np.int64))
    leaf_of = {leaf.index: j for j, leaf in enumerate(footer.plan.leaves)}
    return FilePages(footer, page_places(footer), ranges, leaf_of)


class FilePagesCache:
    """The :class:`FilePages` of each file a scan reads with ``predicate``, read once per
    file (by the first thread that asks; files apart in parallel); None for a file read
    without them: no page index in its first row group's footer, or a footer or page index
    that cannot be read (the whole read then says what is wrong with the file)."""

    def __init__(self, predicate: n.Expr | None, filesystem=None):
        self.predicate = predicate
        self.filesystem = filesystem
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._found: dict[str, FilePages | None] = {}

    def get(self, path: str, location: str, tops: tuple[str, ...],
            metadata: pq.FileMetaData | None) -> FilePages | None:
        """``tops``: the top-level columns read (their leaves' pages are placed)."""
        if self.predicate is None or (metadata is not None and metadata.num_row_groups
                                      and not any(metadata.row_group(0).column(i).has_offset_index
                                                  for i in range(metadata.num_columns))):
            return None
        with self._lock:
            lock = self._locks.setdefault(path, threading.Lock())
        with lock:
            if path not in self._found:
                try:
                    footer = read_footer(location, path, tops, self.filesystem,
                                         page_index=True, footer_size=metadata.serialized_size
                                         if metadata is not None else None)
                    self._found[path] = file_pages(footer, self.predicate)
                except (PruneEngineError, OSError, pa.ArrowException, ValueError):
                    self._found[path] = None
            return self._found[path]


def read_row_groups(pf: pq.ParquetFile, location: str, filesystem, pages: FilePages,
                    row_groups: Sequence[int], indices: list[int]) -> pa.Table:
    """The rows of ``row_groups`` of ``pf`` (columns ``indices``, Parquet leaf indices in file
    order) that lie in the ranges of ``pages``, in order: a row group whose ranges cover all
    its rows is read whole; of the others only the pages of the ranges (module doc), read
    from the file at ``location`` (on ``filesystem``; None: local) opened for random access."""
    source = _Source(location, filesystem)
    try:
        return _read_row_groups(pf, source, pages, row_groups, indices)
    finally:
        source.close()


class _Source:
    """The file, opened for random-access reads on the first one."""

    def __init__(self, location: str, filesystem):
        self.location, self.filesystem = location, filesystem
        self.file: pa.NativeFile | None = None

    def read_at(self, size: int, offset: int) -> bytes:
        if self.file is None:
            self.file = self.filesystem.open_input_file(self.location) \
                if self.filesystem is not None else pa.OSFile(self.location)
        return self.file.read_at(size, offset)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _read_row_groups(pf: pq.ParquetFile, source: _Source, pages: FilePages,
                     row_groups: Sequence[int], indices: list[int]) -> pa.Table:
    tables = []
    whole: list[int] = []
    for rg in row_groups:
        starts, counts = pages.ranges[rg]
        if not len(counts):  # no row of it may match
            continue
        if int(counts.sum()) >= int(pages.footer.num_rows[rg]):
            whole.append(rg)
            continue
        if whole:
            tables.append(pf.reader.read_row_groups(whole, column_indices=indices,
                                                    use_threads=True))
            whole = []
        tables.append(_row_group(pf, source, pages, rg, starts, counts, indices))
    if whole or not tables:
        tables.append(pf.reader.read_row_groups(whole, column_indices=indices,
                                                use_threads=True))
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def _rows(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Every row of the ranges, in order."""
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts
    return np.repeat(starts - offsets, counts) + np.arange(total, dtype=np.int64)


def _row_group(pf: pq.ParquetFile, source, pages: FilePages, rg: int, starts: np.ndarray,
               counts: np.ndarray, indices: list[int]) -> pa.Table:
    """The rows of the ranges of row group ``rg``, column by column (module doc)."""
    paths = pf.reader.column_paths
    tops: dict[str, list[int]] = {}
    for i in indices:
        tops.setdefault(paths[i][0], []).append(i)
    rows = _rows(starts, counts)
    fields, columns, metadata = [], [], None
    for leaves in tops.values():
        if any(pf.schema.column(i).max_repetition_level > 0 for i in leaves):
            parts = [_whole(pf, rg, leaves, rows)]
        else:
            parts = []
            for i in leaves:
                try:
                    parts.append(_selected(pf, source, pages, rg, i, starts, counts))
                except (PageError, IndexError, KeyError, TypeError, ValueError,
                        pa.ArrowException):  # (an I/O error is the scan's to report)
                    parts.append(_whole(pf, rg, [i], rows))
        metadata = parts[0].schema.metadata
        field = parts[0].schema.field(0)
        column = parts[0].column(0)
        for part in parts[1:]:
            column = pa.chunked_array([_merge(column.combine_chunks(),
                                              part.column(0).combine_chunks())])
        fields.append(pa.field(field.name, column.type, field.nullable, field.metadata))
        columns.append(column)
    return pa.table(columns, schema=pa.schema(fields, metadata=metadata))


def _whole(pf: pq.ParquetFile, rg: int, leaves: list[int], rows: np.ndarray) -> pa.Table:
    """Leaves ``leaves`` of row group ``rg`` read whole, cut to ``rows``."""
    table = pf.reader.read_row_groups([rg], column_indices=leaves, use_threads=False)
    return table.take(pa.array(rows))


def _merge(a: pa.Array, b: pa.Array) -> pa.Array:
    """Two reads of the same struct column with different leaves, as one: ``a``'s fields, then
    those only ``b`` has, fields of both merged; the validity is ``a``'s (every leaf carries
    the struct's nulls)."""
    if not pa.types.is_struct(a.type):
        return a
    fields = {a.type.field(k).name: (a.type.field(k), a.field(k)) for k in range(a.type.num_fields)}
    for k in range(b.type.num_fields):
        f, child = b.type.field(k), b.field(k)
        if f.name in fields:
            g, mine = fields[f.name]
            merged = _merge(mine, child)
            fields[f.name] = (pa.field(g.name, merged.type, g.nullable, g.metadata), merged)
        else:
            fields[f.name] = (f, child)
    mask = pc.is_null(a) if a.null_count else None
    return pa.StructArray.from_arrays([c for _, c in fields.values()],
                                      fields=[f for f, _ in fields.values()], mask=mask)


def _selected(pf: pq.ParquetFile, source, pages: FilePages, rg: int, i: int,
              starts: np.ndarray, counts: np.ndarray) -> pa.Table:
    """Leaf ``i`` of row group ``rg``, rows of the ranges, from its dictionary page and the
    data pages that overlap them; :class:`PageError` where that cannot be done safely."""
    j = pages.leaf_of.get(i)
    if j is None:
        raise PageError("no page places")
    p = pages.places
    c = rg * len(pages.footer.plan.leaves) + j
    count = int(p.count[c])
    if count == 0:
        raise PageError("no usable page index")
    k = slice(int(p.first[c]), int(p.first[c]) + count)
    offset, size = p.offset[k], p.size[k]
    first, rows = p.first_row[k], p.row_count[k]
    # a page overlaps the ranges if the last range starting before its end ends after its start
    ends = starts + counts
    before = np.searchsorted(starts, first + rows, "left") - 1
    chosen = np.flatnonzero((before >= 0) & (ends[np.maximum(before, 0)] > first))
    if not len(chosen):
        raise PageError("no page selected")
    chunk_start, data_start = int(p.start[c]), int(offset[0])
    if chunk_start > data_start:
        raise PageError("the first data page is before the chunk")
    num_values = 0
    run_start = run_end = -1
    pieces: list[tuple[int, int]] = []
    for at in chosen.tolist():
        o, s = int(offset[at]), int(size[at])
        if o == run_end:
            run_end += s
        else:
            if run_end > run_start:
                pieces.append((run_start, run_end))
            run_start, run_end = o, o + s
    pieces.append((run_start, run_end))
    data = b"".join(_read(source, a, b - a) for a, b in pieces)
    uncompressed = 0
    at_byte = 0
    encoded = False  # a selected page refers to the dictionary
    for at in chosen.tolist():
        s = int(size[at])
        page_size, by_dictionary = _data_page(data[at_byte:at_byte + s], int(rows[at]))
        uncompressed += page_size
        encoded |= by_dictionary
        at_byte += s
        num_values += int(rows[at])
    # the dictionary page only where a selected page needs it (a writer falls back to plain
    # pages once its dictionary is full: those pages are read alone)
    prefix = _read(source, chunk_start, data_start - chunk_start) if encoded else b""
    uncompressed += _dictionary_size(prefix)
    body = bytearray(prefix) + data
    meta = pf.metadata
    column = meta.row_group(rg).column(i)
    chunks = []
    for m in range(meta.num_columns):
        kind = PHYSICAL_CODES[meta.schema.column(m).physical_type]
        if m != i:  # a placeholder, never read
            chunks.append(ChunkMeta(kind, (0,), (meta.schema.column(m).name,), 0, 0, 0, 0, 4))
            continue
        encodings = tuple(ENCODINGS[e] for e in column.encodings if e in ENCODINGS)
        chunks.append(ChunkMeta(kind, encodings or (0,), tuple(pf.reader.column_paths[i]),
                                int(p.codec[c]), num_values, uncompressed, len(body),
                                4 + len(prefix), 4 if prefix else None))
    schema, arrow = pages.footer.key[0], pages.footer.key[1]
    file = schema_file(schema, arrow, bytes(body), chunks, num_values, meta.created_by)
    try:
        small = pq.ParquetFile(pa.BufferReader(file), coerce_int96_timestamp_unit="us")
        table = small.reader.read_row_groups([0], column_indices=[i], use_threads=False)
    except (pa.ArrowException, OSError, ValueError) as e:  # (in memory: not an I/O error)
        raise PageError(str(e)) from None
    if table.num_rows != num_values:
        raise PageError("the pages hold other rows than the index says")
    # each row of the ranges, in the selected pages laid end to end
    wanted = _rows(starts, counts)
    page_first = first[chosen]
    page_base = np.cumsum(rows[chosen]) - rows[chosen]
    page = np.searchsorted(page_first, wanted, "right") - 1
    return table.take(pa.array(page_base[page] + wanted - page_first[page]))


def _read(source, offset: int, size: int) -> bytes:
    if size == 0:
        return b""
    data = source.read_at(size, offset)
    if len(data) != size:
        raise PageError("the file ends before the pages")
    return bytes(data)


def _header(page: bytes) -> tuple[dict, int]:
    try:
        return read_struct(page, 0)
    except ThriftError as e:
        raise PageError(str(e)) from None


def _dictionary_size(prefix: bytes) -> int:
    """The uncompressed size (header included) of the one dictionary page ``prefix`` must be
    (0 for no bytes)."""
    if not prefix:
        return 0
    header, end = _header(prefix)
    if header.get(1) != DICTIONARY_PAGE or end + header.get(3, -1) != len(prefix) \
            or not isinstance(header.get(2), int):
        raise PageError("the bytes before the first data page are not one dictionary page")
    return end + header[2]


def _data_page(page: bytes, rows: int) -> tuple[int, bool]:
    """The uncompressed size (header included) of a data page of a flat column, and whether
    its values refer to the dictionary, checked: its header fills its place with its
    compressed size, its values (v2: rows) are ``rows``."""
    header, end = _header(page)
    kind = header.get(1)
    sub = header.get(5 if kind == DATA_PAGE else 8)
    if kind not in (DATA_PAGE, DATA_PAGE_V2) or not isinstance(sub, dict) \
            or end + header.get(3, -1) != len(page) or not isinstance(header.get(2), int) \
            or sub.get(1) != rows or (kind == DATA_PAGE_V2 and sub.get(3) != rows):
        raise PageError("a data page's header disagrees with the page index")
    encoding = sub.get(2 if kind == DATA_PAGE else 4)
    if not isinstance(encoding, int):
        raise PageError("a data page's header names no encoding")
    return end + header[2], encoding in DICTIONARY_ENCODINGS
