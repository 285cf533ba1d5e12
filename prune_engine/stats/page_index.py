"""Page statistics from the Parquet page index (ColumnIndex + OffsetIndex): no data page is read.

A writer that writes the page index (pyarrow with ``write_page_index=True``, parquet-java and
Spark, arrow-rs) records after the row groups, per column chunk, each page's min, max, null
count and whether it is all null (ColumnIndex), and its place and first row (OffsetIndex).
:func:`page_stats` reads each file's footer and that byte range (one read where the indexes
are contiguous, as writers put them), decodes it with the numba kernels of
:mod:`._page_thrift` (which only move bytes) and lays the pages out as statistics tables: one
per leaf column, one row per page, in the layout of ``collect_stats(granularity="row_group")``
(so ``pe.prune(pages.columns["a"], "a = 5")`` keeps exactly the pages that may hold a 5).

What is trusted, and why:

- A page's bounds are converted by the footer's conversion (:func:`.parquet.leaf_bounds`: the
  same types, signed / unsigned order, INT96 and Float16 unknown, decimals, truncated
  strings, NaN and zero rules), and only where the chunk's own ``min_value`` / ``max_value``
  would be read (column orders present, the physical type the schema's, not PARQUET-251):
  the page index follows the same column orders. A chunk whose footer statistics are
  impossible (:mod:`.trust`) has unknown pages too, as has every chunk of a file whose row
  counts contradict each other.
- A page's rows are ``[first_row_index, next page's first_row_index)`` of its row group
  (the last page's up to the row group's end): pages begin at row boundaries, so these are
  top-level rows, also for leaves inside lists, whose null counts count elements.
- An all-null page (``null_pages``) has unknown bounds; outside lists and maps its null count
  is its row count.
- **A page index that cannot be true is ignored for that chunk** (one row spanning the row
  group, unknown, as without a page index), with one warning per file: a place outside the
  file's pages, structs that do not decode or lists of different lengths, first row indexes
  not strictly increasing from 0 or past the row group, pages outside the column chunk or
  overlapping, a null count above the page's rows (outside lists and maps) or contradicting
  ``null_pages``, a min above its max, a boolean bound byte other than 0 or 1.
- A chunk without a page index (not written, or its column's statistics not trusted) is one
  unknown row spanning the row group, without a warning.

>>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
>>> path = os.path.join(tempfile.mkdtemp(), "a.parquet")
>>> pq.write_table(pa.table({"x": list(range(100))}), path, write_page_index=True,
...                data_page_size=1, write_batch_size=25)
>>> pages = page_stats(path)
>>> pages.columns["x"].select(["row_start", "row_count"]).to_pylist()[:2]
[{'row_start': 0, 'row_count': 25}, {'row_start': 25, 'row_count': 25}]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._lazy import LazyModule
from prune_engine._warm import Kernels
from prune_engine.errors import StatsError, one_line
from prune_engine.stats.from_arrow import LeafStats, stats_table
from prune_engine.stats.listing import list_source
from prune_engine.stats.parquet import (BOOL, FileFooter, LeafPlan, Node, build_stats,
                                        group_stats, impossible_bounds, leaf_bounds,
                                        read_footer)

__all__ = ["PageStats", "page_stats", "footer_page_stats", "PagePlaces", "page_places"]

_thrift = LazyModule("prune_engine.stats._thrift")
_pt = LazyModule("prune_engine.stats._page_thrift")


@dataclass
class PageStats:
    """The page statistics of a source: ``groups`` has every row group of every file
    (``path``, ``row_group``, ``num_rows``); ``columns`` one statistics table per leaf column
    (dotted path), one row per page (see the module doc)."""

    groups: pa.Table
    columns: dict[str, pa.Table] = field(default_factory=dict)


# ------------------------------------------------------------------------------ leaves


def _leaf_chains(nodes: Sequence[Node], prefix: str = ""):
    """``(dotted leaf path, top-level node holding only the way to that leaf, plan)`` of every
    leaf: struct fields add ``.name``; a list's elements are named by the list (as
    ``collect_stats`` names them); a map's are ``.key`` and ``.value``."""
    for node in nodes:
        for path, chain, plan in _chains(node, prefix + node.name):
            yield path, chain, plan


def _chains(node: Node, path: str):
    if node.kind == "leaf":
        yield path, node, node.plan
    elif node.kind == "list":
        for sub, chain, plan in _chains(node.children[0], path):
            yield sub, Node(node.name, "list", children=[chain],
                            element_type=node.element_type), plan
    else:  # struct or map
        for child in node.children:
            for sub, chain, plan in _chains(child, f"{path}.{child.name}"):
                yield sub, Node(node.name, node.kind, children=[chain]), plan


# ------------------------------------------------------------------------------ decoding


@dataclass
class _Pages:
    """The decoded page indexes of files of one schema, end to end (files in order; a file's
    chunks row group major, as ``FileFooter.rows``): what every leaf's table is cut from."""

    footers: list[FileFooter]
    data: np.ndarray  # every file's index bytes (uint8)
    first: np.ndarray  # per chunk: its first page row
    count: np.ndarray  # per chunk: its pages (0 = unknown: one row spanning the row group)
    pages: np.ndarray  # int64[pages, NUM_PAGE]; bound places into ``data``
    row_count: np.ndarray  # per page
    num_rows: np.ndarray  # per row group
    file_of: np.ndarray  # per row group: its file (index into ``footers``)
    group_of: np.ndarray  # per row group: its number in its file
    rows_known: np.ndarray  # per row group: its row count is trusted


def index_places(footer: FileFooter) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The index bytes read (a zero byte after them), each chunk's places in them
    (``_page_thrift.I_*``), and the chunks whose footer gives a place that was not read
    (outside the file's pages)."""
    ranges = footer.index_ranges or []
    starts = np.array([r[0] for r in ranges], np.int64)
    sizes = np.array([len(r[1]) for r in ranges], np.int64)
    bases = np.cumsum(sizes) - sizes
    data = np.frombuffer(b"".join([r[1] for r in ranges]) + b"\0", np.uint8)
    rows = footer.rows
    places = np.full((len(rows), _pt.NUM_PLACE), -1, np.int64)
    unread = np.zeros(len(rows), bool)
    for off, size, pos_slot, len_slot in (
            (_thrift.S_COLUMN_INDEX_OFF, _thrift.S_COLUMN_INDEX_LEN, _pt.I_COLUMN_INDEX_POS,
             _pt.I_COLUMN_INDEX_LEN),
            (_thrift.S_OFFSET_INDEX_OFF, _thrift.S_OFFSET_INDEX_LEN, _pt.I_OFFSET_INDEX_POS,
             _pt.I_OFFSET_INDEX_LEN)):
        start, length = rows[:, off], rows[:, size]
        given = (start != -1) | (length != -1)
        if not len(starts):
            unread |= given
            continue
        k = np.searchsorted(starts, start, "right") - 1
        kk = np.where(k >= 0, k, 0)
        ok = given & (k >= 0) & (length > 0) & (start >= starts[kk]) \
            & (start - starts[kk] <= sizes[kk] - length)
        places[ok, pos_slot] = (start - starts[kk] + bases[kk])[ok]
        places[ok, len_slot] = length[ok]
        unread |= given & ~ok
    # a chunk with only one of the two structs (the column index left out: its bounds are
    # not trusted) has no usable page index; a place not read lies outside the file
    unread &= rows[:, _thrift.S_COLUMN_INDEX_OFF] != -1
    both = (places[:, _pt.I_COLUMN_INDEX_POS] >= 0) & (places[:, _pt.I_OFFSET_INDEX_POS] >= 0)
    places[~both] = -1
    return data, places, unread


def _decode(footers: list[FileFooter], kernels, problems: dict[str, list[str]]) -> _Pages:
    """Decode and check the page indexes of files of one schema (all but the bounds' order:
    that needs them converted, :func:`_leaf_table`); a chunk whose index cannot be true gets
    no pages, and its file a problem."""
    plan = footers[0].plan
    width = max(len(plan.leaves), 1)
    datas, chunk_rows, page_rows, unread = [], [], [], []
    base = page_base = 0
    for f in footers:
        data, places, misplaced = index_places(f)
        chunks, pages = kernels.decode_page_index(data, places)
        pages[:, _pt.P_MIN_START] += base
        pages[:, _pt.P_MAX_START] += base
        chunks[:, _pt.K_FIRST] += page_base
        base += len(data)
        page_base += len(pages)
        datas.append(data)
        chunk_rows.append(chunks)
        page_rows.append(pages)
        unread.append(misplaced)
    per_file = np.array([len(f.num_rows) for f in footers], np.int64)
    file_of = np.repeat(np.arange(len(footers)), per_file)
    group_of = np.arange(len(file_of)) - np.repeat(np.cumsum(per_file) - per_file, per_file)
    num_rows = np.concatenate([f.num_rows for f in footers]).astype(np.int64)
    rows = np.concatenate([f.rows for f in footers])
    chunks = np.concatenate(chunk_rows)
    pages = np.concatenate(page_rows)
    status = chunks[:, _pt.K_STATUS]
    first, count = chunks[:, _pt.K_FIRST], np.where(status == _pt.DECODED,
                                                     chunks[:, _pt.K_PAGES], 0)
    chunk_file = np.repeat(file_of, len(plan.leaves))

    def note(wrong_chunks: np.ndarray, why: str) -> None:
        """A problem for each file with a chunk in ``wrong_chunks`` (its first)."""
        files, at = np.unique(chunk_file[wrong_chunks], return_index=True)
        for i, c in zip(files.tolist(), wrong_chunks[at].tolist()):
            g = c // width
            problems[footers[i].path].append(
                f"row group {int(group_of[g])}, column "
                f"{plan.leaves[c % width].path or plan.leaves[c % width].name}: {why}")

    misplaced = np.concatenate(unread)
    bad = misplaced | (status == _pt.MALFORMED)
    note(np.flatnonzero(misplaced), "its page index lies outside the file's pages")
    note(np.flatnonzero(status == _pt.MALFORMED), "its page index does not decode")
    # per page: its chunk, the chunk's row group rows and extent
    chunk_of = np.repeat(np.arange(len(count)), count)
    offsets = np.cumsum(count) - count
    at = np.repeat(first, count) + (np.arange(len(chunk_of)) - np.repeat(offsets, count))
    pages = pages[at]
    group_rows = num_rows[chunk_of // width]
    fr = pages[:, _pt.P_FIRST_ROW]
    last = np.ones(len(chunk_of), bool)
    last[:-1] = chunk_of[1:] != chunk_of[:-1]
    head = np.ones(len(chunk_of), bool)
    head[1:] = chunk_of[1:] != chunk_of[:-1]
    row_count = np.where(last, group_rows, np.append(fr[1:], 0)) - fr
    start = rows[chunk_of, _thrift.S_START]
    data_start = rows[chunk_of, _thrift.S_DATA_OFF]
    total = rows[chunk_of, _thrift.S_TOTAL]
    offset, size = pages[:, _pt.P_OFFSET], pages[:, _pt.P_SIZE]
    page_end = offset + np.where(size > 0, size, 0)
    next_offset = np.where(last, start + np.maximum(total, 0), np.append(offset[1:], 0))
    nulls, null_page = pages[:, _pt.P_NULLS], pages[:, _pt.P_NULL_PAGE] == 1
    flat = ~plan.repeated[chunk_of % width] if len(plan.leaves) else np.zeros(0, bool)
    # a page of no rows (pyarrow ends some list chunks so) is left out where it provably
    # holds no value: all null, with a null count of 0
    empty = (row_count == 0) & null_page & (nulls == 0)
    checks = (
        ("its first row indexes are not strictly increasing from 0 within the row group",
         (head & (fr != 0)) | ((row_count <= 0) & ~empty) | (fr < 0)
         | (fr >= np.where(empty, group_rows + 1, group_rows))),
        ("a page lies outside its column chunk or overlaps the next",
         (start < 0) | (total <= 0) | (offset < np.maximum(start, data_start)) | (size <= 0)
         | (page_end > next_offset)),
        ("a page's null count cannot be",
         (nulls < -1) | (flat & (nulls > row_count))
         | (flat & null_page & (nulls >= 0) & (nulls != row_count))
         | (flat & ~null_page & (nulls >= row_count))),
    )
    for why, wrong in checks:
        if wrong.any():
            note(np.unique(chunk_of[wrong]), why)
            bad[chunk_of[wrong]] = True
    # an all-null page: no bounds; outside lists and maps, every row a null
    pages[null_page, _pt.P_MIN_LEN] = -1
    pages[null_page, _pt.P_MAX_LEN] = -1
    pages[:, _pt.P_NULLS] = np.where(flat & null_page & (nulls < 0), row_count, nulls)
    # statistics the footer's own checks found impossible: the pages' too
    rows_known = np.ones(len(num_rows), bool)
    chunk_base = (np.cumsum(per_file) - per_file) * len(plan.leaves)
    for i, f in enumerate(footers):
        if f.untrusted or f.rows_untrusted is not None:
            problems[f.path].extend(f.problems()[:1])
        for (r, j) in f.untrusted:
            bad[chunk_base[i] + r * width + j] = True
        if f.rows_untrusted is not None:
            bad[chunk_base[i]:chunk_base[i] + per_file[i] * len(plan.leaves)] = True
            rows_known[file_of == i] = False
    keep = ~bad[chunk_of] & ~empty
    count = np.bincount(chunk_of[keep], minlength=len(count)).astype(np.int64)
    return _Pages(footers, np.concatenate(datas), np.cumsum(count) - count, count, pages[keep],
                  row_count[keep], num_rows, file_of, group_of, rows_known)


# ------------------------------------------------------------------------------ tables


def _leaf_table(p: _Pages, j: int, plan: LeafPlan, chain: Node,
                problems: dict[str, list[str]]) -> pa.Table:
    """The page table of leaf ``j`` over the files of ``p``: one row per page of a chunk with
    a usable page index, one unknown row per other chunk."""
    width = len(p.footers[0].plan.leaves)
    c = np.arange(len(p.num_rows)) * width + j
    n_pages = p.count[c]
    rows_per = np.maximum(n_pages, 1)
    chunk = np.repeat(np.arange(len(c)), rows_per)  # the row group of each row
    has = np.repeat(n_pages > 0, rows_per)
    at = np.zeros(len(chunk), np.int64)
    at[has] = np.repeat(p.first[c], n_pages) + (np.arange(int(n_pages.sum())) - np.repeat(
        np.cumsum(n_pages) - n_pages, n_pages))
    if len(p.pages):
        pg, row_count = p.pages[at], p.row_count[at]
    else:
        pg, row_count = np.full((len(chunk), _pt.NUM_PAGE), -1, np.int64), np.zeros(len(chunk))
    start = np.where(has, pg[:, _pt.P_FIRST_ROW], 0)
    count = np.where(has, row_count, p.num_rows[chunk]).astype(np.int64)
    rows = np.full((len(chunk), _thrift.NUM_SELECTED), -1, np.int64)
    for src, dst in ((_pt.P_MIN_START, _thrift.S_MIN_START), (_pt.P_MIN_LEN, _thrift.S_MIN_LEN),
                     (_pt.P_MAX_START, _thrift.S_MAX_START), (_pt.P_MAX_LEN, _thrift.S_MAX_LEN)):
        rows[:, dst] = np.where(has, pg[:, src], -1)
    nulls = np.where(has, pg[:, _pt.P_NULLS], -1)
    mins, maxs = leaf_bounds(plan, p.data, rows)
    # a min above its max (or a boolean byte not 0 / 1): that chunk's page index is ignored
    wrong = impossible_bounds(plan, p.data, rows, mins, maxs)
    if wrong.any():
        what = "a boolean bound byte other than 0 or 1" if plan.kind == BOOL else \
            "a page's min is above its max"
        files, first_wrong = np.unique(p.file_of[chunk[wrong]], return_index=True)
        for i, k in zip(files.tolist(), np.flatnonzero(wrong)[first_wrong].tolist()):
            problems[p.footers[i].path].append(
                f"row group {int(p.group_of[chunk[k]])}, column {plan.path or plan.name}: {what}")
        in_bad = np.isin(chunk, np.unique(chunk[wrong]))
        head = np.ones(len(chunk), bool)
        head[1:] = chunk[1:] != chunk[:-1]
        reset = in_bad & head
        start = np.where(reset, 0, start)
        count = np.where(reset, p.num_rows[chunk], count)
        nulls = np.where(reset, -1, nulls)
        mask = pa.array(reset)
        mins = pc.if_else(mask, pa.scalar(None, mins.type), mins)
        maxs = pc.if_else(mask, pa.scalar(None, maxs.type), maxs)
        keep = ~in_bad | head
        idx = pa.array(np.flatnonzero(keep))
        mins, maxs = mins.take(idx), maxs.take(idx)
        chunk, start, count, nulls = chunk[keep], start[keep], count[keep], nulls[keep]
    return _table(p, chunk, start, count, chain, plan, mins, maxs,
                  pa.array(nulls, pa.int64(), mask=nulls < 0))


def _table(p: _Pages, chunk: np.ndarray, start: np.ndarray, count: np.ndarray, chain: Node,
           plan: LeafPlan, mins: pa.Array, maxs: pa.Array, nulls: pa.Array) -> pa.Table:
    """The statistics table of one leaf's pages (``chunk``: each row's row group in ``p``)."""
    n = len(chunk)
    leaf_stats = {plan.index: LeafStats(pa.field(plan.name, plan.target), mins, maxs,
                                        pa.field(plan.name, pa.int64()), nulls)}
    top = build_stats(chain, leaf_stats, n)
    paths = pa.array([f.path for f in p.footers], pa.string()).take(
        pa.array(p.file_of[chunk]))
    group = pa.array(p.group_of[chunk], pa.int32())
    starts = pa.array(start, pa.int64())
    ids = pc.binary_join_element_wise(paths, pa.scalar("#"), group.cast(pa.string()),
                                      pa.scalar("@"), starts.cast(pa.string()), "")
    known = p.rows_known[chunk]  # a row count the file contradicts is unknown
    return stats_table(ids, pa.array(count, pa.int64(), mask=~known), [top], leading={
        "path": paths, "row_group": group, "row_start": starts,
        "row_count": pa.array(count, pa.int64())})


def _warm_up(compiled) -> None:
    """Compile the page-index kernel (or load it from numba's cache) on a tiny file."""
    import io

    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.table({"x": [1, None, 3]}), sink, write_page_index=True)
    footer = read_footer(pa.BufferReader(sink.getvalue()), "warm-up", page_index=True)
    _decode([footer], compiled, {"warm-up": []})


#: the page-index kernel: compiled, or its Python twin while numba compiles
PAGE_KERNELS = Kernels("prune_engine.stats._page_thrift", ("decode_page_index",), _warm_up,
                       "prune_engine.stats.page_index:PAGE_KERNELS")


def _read(f, tops, filesystem) -> FileFooter:
    try:
        return read_footer(f.location, f.path, tops, filesystem, page_index=True)
    except StatsError as e:
        raise StatsError(one_line(f"{f.path}: {e}", 390), containers=[f.path]) from None
    except (OSError, pa.ArrowException, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise StatsError(one_line(f"{f.path}: not a readable Parquet file: {reason}", 390),
                         containers=[f.path]) from None


def page_stats(source, columns: Sequence[str] | None = None, filesystem=None) -> PageStats:
    """The page statistics of the Parquet files of ``source`` (a path, a folder or a list of
    paths, as ``collect_stats`` takes them), from their page indexes (module doc).

    ``columns``: leaf column paths (``"a"``, ``"s.x"``; a list's elements by the list's name)
    to read; None reads every leaf. A file that cannot be read raises
    :class:`~prune_engine.errors.StatsError` naming it; a page index that cannot be true is
    ignored for its chunk with one warning per file.
    """
    listing = list_source(source, filesystem)
    files = listing.files
    wanted = None if columns is None else ([columns] if isinstance(columns, str)
                                           else list(columns))
    tops = None if wanted is None else tuple(sorted({c.split(".")[0] for c in wanted}))
    footers = [_read(f, tops, listing.filesystem) for f in files]
    return footer_page_stats(footers, wanted)


def footer_page_stats(footers: list[FileFooter], columns: Sequence[str] | None = None,
                      missing_ok: bool = False) -> PageStats:
    """:func:`page_stats` of footers already read (``read_footer(..., page_index=True)``,
    their files in order); ``missing_ok``: a leaf of ``columns`` no file has is left out
    (else a :class:`~prune_engine.errors.StatsError`). The footers' own trust checks are
    run on them (:func:`.parquet.group_stats`), as :func:`page_places` wants them run."""
    wanted = None if columns is None else list(columns)
    kernels = PAGE_KERNELS.get(len(footers))
    # the footer's own trust checks (impossible counts and bounds), per schema
    by_key: dict[tuple, list[int]] = {}
    for i, f in enumerate(footers):
        by_key.setdefault(f.key, []).append(i)
    for idx in by_key.values():
        group = [footers[i] for i in idx]
        if any(len(f.num_rows) for f in group):
            group_stats([f for f in group if len(f.num_rows)], "row_group")
    problems: dict[str, list[str]] = {f.path: [] for f in footers}
    known: dict[str, tuple[Node, LeafPlan]] = {}
    parts: dict[str, list[tuple[np.ndarray, pa.Table]]] = {}
    for idx in by_key.values():
        plan = footers[idx[0]].plan
        decoded = _decode([footers[i] for i in idx], kernels, problems)
        j_of = {leaf.index: j for j, leaf in enumerate(plan.leaves)}
        for path, chain, leaf in _leaf_chains(plan.nodes):
            if wanted is not None and path not in wanted:
                continue
            table = _leaf_table(decoded, j_of[leaf.index], leaf, chain, problems)
            parts.setdefault(path, []).append((np.array(idx), table))
            known.setdefault(path, (chain, leaf))
    if wanted is not None and not missing_ok:
        missing = [c for c in wanted if c not in known]
        if missing:
            every = sorted({name for f in footers for name in f.plan.known})
            raise StatsError(one_line(f"unknown column(s) {missing}: the files' columns are "
                                      f"{every}", 390), column=missing[0])
    for path, why in problems.items():
        if why:
            more = f" (and {len(why) - 1} more)" if len(why) > 1 else ""
            warnings.warn(one_line(f"{path}: a page index that cannot be true is ignored "
                                   f"(those row groups read whole): {why[0]}", 370) + more,
                          stacklevel=2)
    names = [f.path for f in footers]
    num_rows = [f.num_rows for f in footers]
    groups = pa.table({
        "path": pa.array(np.repeat(np.array(names, dtype=object),
                                   [len(n) for n in num_rows]), pa.string()),
        "row_group": pa.array(np.concatenate([np.arange(len(n)) for n in num_rows])
                              if num_rows else [], pa.int32()),
        "num_rows": pa.array(np.concatenate(num_rows) if num_rows else [], pa.int64())})
    out = {}
    for path, pieces in parts.items():
        out[path] = _assemble(path, pieces, footers, known[path])
    return PageStats(groups, out)


@dataclass
class PagePlaces:
    """Where the data pages of one file's column chunks lie, from its OffsetIndex (checked
    as for :func:`page_stats`). Chunk ``c = r * L + j`` is leaf ``j`` of the footer's plan
    (``plan.leaves``, ``L`` of them) in row group ``r``; its pages are
    ``first[c]:first[c] + count[c]`` of the per-page arrays (``count[c] == 0``: no usable
    page index, read the chunk whole). ``start`` is where a chunk begins (its dictionary
    page, if any), ``codec`` its Thrift codec."""

    first: np.ndarray
    count: np.ndarray
    start: np.ndarray
    codec: np.ndarray
    offset: np.ndarray  # per page: in the file, its header included
    size: np.ndarray  # per page: its bytes, header included
    first_row: np.ndarray  # per page: its first row within its row group
    row_count: np.ndarray  # per page


def page_places(footer: FileFooter) -> PagePlaces:
    """The page places of ``footer``'s chunks (read with ``page_index=True``; call it after
    :func:`footer_page_stats` on the same footer, which warns of an index that cannot be true:
    such a chunk has no pages here)."""
    p = _decode([footer], PAGE_KERNELS.get(1), {footer.path: []})
    rows = footer.rows
    return PagePlaces(p.first, p.count, rows[:, _thrift.S_START], rows[:, _thrift.S_CODEC],
                      p.pages[:, _pt.P_OFFSET],
                      p.pages[:, _pt.P_SIZE], p.pages[:, _pt.P_FIRST_ROW], p.row_count)


def _assemble(path: str, pieces: list, footers: list[FileFooter], known: tuple) -> pa.Table:
    """One leaf's tables of every schema as one, in file order; files without the leaf get
    one unknown row per row group."""
    covered = np.zeros(len(footers), bool)
    for idx, _ in pieces:
        covered[idx] = True
    tables = [t for _, t in pieces]
    if not covered.all():
        chain, plan = known
        tables.extend(_unknown_rows(footers[i], chain, plan)
                      for i in np.flatnonzero(~covered).tolist())
    if len(tables) == 1:
        return tables[0]
    try:
        table = pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise StatsError(one_line(f"column {path}: the files' types cannot be joined: {e}",
                                  390), column=path) from None
    rank = {p: k for k, p in enumerate(f.path for f in footers)}
    file_rank = np.array([rank[p] for p in table.column("path").to_pylist()])
    return table.take(pa.array(np.argsort(file_rank, kind="stable")))


def _unknown_rows(footer: FileFooter, chain: Node, plan: LeafPlan) -> pa.Table:
    """One unknown row per row group of ``footer``'s file, for a leaf that file lacks."""
    n = len(footer.num_rows)
    p = _Pages([footer], np.zeros(1, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64),
               np.zeros((0, _pt.NUM_PAGE), np.int64), np.zeros(0, np.int64),
               footer.num_rows.astype(np.int64), np.zeros(n, np.int64), np.arange(n),
               np.full(n, footer.rows_untrusted is None))
    return _table(p, np.arange(n), np.zeros(n, np.int64), p.num_rows, chain, plan,
                  pa.nulls(n, plan.target), pa.nulls(n, plan.target), pa.nulls(n, pa.int64()))
